"""Markdown of what a cleaning kept: the decided tree, walked once, with its structure.

Headings by level (``#`` … ``######``), nested ``-`` and ``1.`` lists indented under their item,
pipe tables (the first row as header, ``|`` escaped in cells), fenced code with its language
when the page names it (``class="language-python"``, ``lang-js``), inline code, block quotes,
emphasis; links (``[text](url)``, made absolute against the page's URL) and images
(``![alt](src)``) only when asked. ``*`` and ``_`` in text are escaped, as markdownify does.

The walk is :func:`lxml.etree.iterwalk` with a stack of open boxes (a paragraph's container, a
list item, a quote, a table cell): no recursion, so a page nested thousands deep renders.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import urljoin

from lxml import etree

from .render import BLOCK_TAGS, VERBATIM_RESTORE, verbatim_text

__all__ = ["render_markdown"]

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_EMPHASIS = {"em": "*", "i": "*", "strong": "**", "b": "**"}
#: Tags that open a box of their own (the rest of BLOCK_TAGS only end a paragraph).
_BOXES = frozenset(("li", "blockquote", "td", "th"))
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")
_ESCAPE = re.compile(r"([*_\\])")
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
#: A hard line break (``<br>``) while whitespace is collapsed: a Unicode noncharacter.
_BREAK = "\ufdd3"


@dataclass
class _Box:
    """An open container: its finished blocks and the pieces of its current paragraph."""

    tag: str
    blocks: list[str] = field(default_factory=list)
    inline: list[str] = field(default_factory=list)

    def flush(self) -> None:
        """End the current paragraph."""
        text = _SPACES.sub(" ", "".join(self.inline)).strip().replace(f" {_BREAK} ", _BREAK)
        self.inline.clear()
        text = text.replace(f"{_BREAK} ", _BREAK).replace(f" {_BREAK}", _BREAK).strip(_BREAK)
        if text:
            self.blocks.append(text.replace(_BREAK, "\n"))

    def text(self, joiner: str = "\n\n") -> str:
        """The box's blocks, its last paragraph ended, joined by ``joiner``."""
        self.flush()
        return joiner.join(self.blocks)


@dataclass
class _List:
    """An open list: its kind, the indent of its items, the items written so far."""

    ordered: bool
    indent: str
    items: list[str] = field(default_factory=list)


def render_markdown(root: etree._Element, removed: Collection[etree._Element] = (), *,
                    links: bool = False, images: bool = False,
                    base_url: str | None = None) -> str:
    """Markdown of ``root`` without the subtrees in ``removed`` (their tails are kept)."""
    walk = _Walk(removed, links, images, base_url)
    for event, element in (walker := etree.iterwalk(root, events=("start", "end"))):
        if not isinstance(element.tag, str):
            continue
        if event == "start":
            if element in removed or walk.start(element):
                walker.skip_subtree()
        else:
            if element not in removed:
                walk.end(element)
            if element is not root and element.tail:
                walk.add_text(element.tail)
    return walk.boxes[0].text().translate(VERBATIM_RESTORE)


class _Walk:
    """The walk's state: the open boxes, lists, tables and inline marks."""

    def __init__(self, removed, links: bool, images: bool, base_url: str | None) -> None:
        self.removed, self.links, self.images, self.base = removed, links, images, base_url
        self.boxes: list[_Box] = [_Box("root")]
        self.lists: list[_List] = []
        self.tables: list[list[list[str]]] = []
        #: per open inline element: where its text starts in the box's pieces
        self.marks: list[int] = []

    @property
    def box(self) -> _Box:
        """The innermost open box: where text goes."""
        return self.boxes[-1]

    def add_text(self, text: str) -> None:
        self.box.inline.append(_ESCAPE.sub(r"\\\1", text))

    def start(self, element: etree._Element) -> bool:
        """Open ``element``; True when its subtree is done already (skip it)."""
        tag = element.tag
        if tag == "pre":
            self.box.flush()
            self.box.blocks.append(_fence(element, self.removed))
            return True
        if tag == "br":
            self.box.inline.append(_BREAK)
        elif tag == "hr":
            self.box.flush()
            self.box.blocks.append("---")
        elif tag == "img":
            if self.images and element.get("src"):
                alt = _ESCAPE.sub(r"\\\1", _SPACES.sub(" ", element.get("alt") or "").strip())
                self.box.inline.append(f"![{alt}]({self._url(element.get('src'))})")
        elif tag in ("ul", "ol"):
            self.box.flush()
            parent = self.lists[-1].indent + " " * self._marker_width() if self.lists else ""
            self.lists.append(_List(tag == "ol", parent))
        elif tag == "table":
            self.box.flush()
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in _BOXES or tag in _HEADINGS:
            self.box.flush()
            self.boxes.append(_Box(tag))
        elif tag in BLOCK_TAGS or tag == "dt":
            self.box.flush()
        if tag in _EMPHASIS or tag in ("a", "code"):
            self.marks.append(len(self.box.inline))
        if element.text:
            self.add_text(element.text)
        return False

    def end(self, element: etree._Element) -> None:
        """Close ``element``."""
        tag = element.tag
        if tag in _EMPHASIS or tag in ("a", "code"):
            self._wrap(element, self.marks.pop())
        if tag in _HEADINGS:
            heading = self.boxes.pop().text(" ")
            if heading:
                self.box.blocks.append(f"{'#' * _HEADINGS[tag]} {heading}")
        elif tag == "li":
            self._item(self.boxes.pop())
        elif tag == "blockquote":
            quote = self.boxes.pop().text()
            if quote:
                self.box.blocks.append("\n".join(f"> {line}".rstrip()
                                                 for line in quote.split("\n")))
        elif tag in ("td", "th"):
            cell = self.boxes.pop().text(" ").replace("|", "\\|").replace("\n", " ")
            if self.tables and self.tables[-1]:
                self.tables[-1][-1].append(cell)
            else:
                self.box.inline.append(f" {cell} ")
        elif tag == "table" and self.tables:
            table = _pipe_table(self.tables.pop())
            if table:
                self.box.blocks.append(table)
        elif tag in ("ul", "ol") and self.lists:
            items = self.lists.pop().items
            if items:
                self.box.flush()
                self.box.blocks.append("\n".join(items))
        elif tag in BLOCK_TAGS or tag == "dt":
            self.box.flush()

    def _marker_width(self) -> int:
        return 3 if self.lists[-1].ordered else 2

    def _item(self, box: _Box) -> None:
        """A finished list item: its marker, its first block, the rest indented under it."""
        if not self.lists:
            self.box.blocks.extend(box.blocks)
            return
        current = self.lists[-1]
        content = box.text("\n")
        if not content:
            return
        marker = f"{len(current.items) + 1}. " if current.ordered else "- "
        lines = content.split("\n")
        pad = current.indent + " " * len(marker)
        current.items.append("\n".join(
            [current.indent + marker + lines[0]]
            + [line if line.startswith(pad) or not line else pad + line
               for line in lines[1:]]))

    def _wrap(self, element: etree._Element, start: int) -> None:
        """Put the inline pieces since ``start`` inside the element's marks (emphasis, code,
        a link), the spaces at either end outside."""
        pieces = self.box.inline
        inner = "".join(pieces[start:])
        del pieces[start:]
        stripped = _SPACES.sub(" ", inner).strip()
        lead = " " if inner[:1].isspace() else ""
        trail = " " if inner[-1:].isspace() else ""
        tag = element.tag
        if not stripped:
            pieces.append(inner)
            return
        if tag == "code":
            plain = stripped.replace("\\*", "*").replace("\\_", "_").replace("\\\\", "\\")
            fence = "``" if "`" in plain else "`"
            wrapped = f"{fence}{plain}{fence}"
        elif tag == "a":
            href = element.get("href")
            wrapped = (f"[{stripped}]({self._url(href)})" if self.links and href
                       and not href.startswith(("javascript:", "#")) else stripped)
        else:
            wrapped = f"{_EMPHASIS[tag]}{stripped}{_EMPHASIS[tag]}"
        pieces.append(f"{lead}{wrapped}{trail}")

    def _url(self, value: str) -> str:
        url = value.strip()
        if self.base:
            url = urljoin(self.base, url)
        return url.replace(" ", "%20").replace(")", "%29")


def _fence(pre: etree._Element, removed: Collection[etree._Element]) -> str:
    """A ``<pre>`` as fenced code, with the language its class (or its code's) names."""
    code = verbatim_text(pre, removed).translate(VERBATIM_RESTORE)
    language = ""
    for element in (pre, *pre.iterchildren("code")):
        found = _LANGUAGE.search(element.get("class") or "")
        if found:
            language = found.group(1)
            break
    fence = "````" if "```" in code else "```"
    return f"{fence}{language}\n{code}\n{fence}"


def _pipe_table(rows: list[list[str]]) -> str:
    """A pipe table: the first row as its header, every row as wide as the widest."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        return ""
    width = max(map(len, rows))
    lines = []
    for k, row in enumerate(rows):
        cells = [cell.strip() for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if k == 0:
            lines.append("|" + "|".join([" --- "] * width) + "|")
    return "\n".join(lines)
