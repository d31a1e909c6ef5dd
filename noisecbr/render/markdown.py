"""Markdown of what a cleaning kept: the decided tree, walked once, with its structure.

Headings by level (``#`` … ``######``), nested ``-`` and ``1.`` lists indented under their item,
pipe tables (the table's header row as header, else an empty one; ``|`` escaped in cells), hard
line breaks for ``<br>`` (a backslash ending the line), fenced code with its language when the
page names it (``class="language-python"``, ``lang-js``), inline code, block quotes (nested
as ``> >``), definition lists (the term on its line, each definition's first paragraph after it as
``:   …``, the syntax of PHP Markdown Extra, Pandoc and markdown-it's deflist; plain CommonMark
shows it as text), emphasis; links (``[text](url)``, made absolute against the page's URL) and
images (``![alt](src)``) only when asked, and only of the http(s), mailto or relative kinds (never a
``javascript:`` one). ``*``, ``_``, ``[``, ``]`` and ``<`` in text are escaped, so that a page's
text can make neither emphasis nor a link nor raw HTML. A table whose cells hold blocks, or of a
single column (the layout tables of older pages), is written as its cells' blocks, not as a
pipe table.

The walk is :func:`lxml.etree.iterwalk` with a stack of open boxes (a paragraph's container, a
list item, a quote, a table cell): no recursion, so a page nested thousands deep renders.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import urljoin

from lxml import etree

from .text import BLOCK_TAGS, verbatim_text

__all__ = ["render_markdown"]

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
#: Lists: ``menu`` and ``dir`` are the old names of ``ul``.
_LISTS = frozenset(("ul", "ol", "menu", "dir"))
_EMPHASIS = {"em": "*", "i": "*", "strong": "**", "b": "**"}
#: Tags that open a box of their own (the rest of BLOCK_TAGS only end a paragraph).
_BOXES = frozenset(("li", "blockquote", "td", "th", "dd"))
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")
_ESCAPE = re.compile(r"([*_\\\[\]<])")


def escape_inline(text: str) -> str:
    """``text`` with the characters Markdown would read as markup escaped.

    >>> escape_inline("a *b* [c]")
    'a \\\\*b\\\\* \\\\[c\\\\]'
    """
    return _ESCAPE.sub(r"\\\1", text)


#: The URL schemes a link or an image may have (a relative URL has none).
_SAFE_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
#: What starts a Markdown block other than a paragraph (a heading, a list, a fence, a quote, a
#: table, a rule): a definition so started is not written as one.
_BLOCK_START = re.compile(r"(?:#|[-*+] |\d+\. |```|~~~|>|\||---)")
_UNESCAPE = re.compile(r"\\([*_\\\[\]<])")
#: A hard line break (``<br>``) while whitespace is collapsed: a Unicode noncharacter.
_BREAK = "\ufdd3"


@dataclass
class _Box:
    """An open container: its finished blocks and the pieces of its current paragraph."""

    blocks: list[str] = field(default_factory=list)
    inline: list[str] = field(default_factory=list)

    def flush(self) -> None:
        """End the current paragraph."""
        text = _SPACES.sub(" ", "".join(self.inline)).strip()
        self.inline.clear()
        text = text.replace(f"{_BREAK} ", _BREAK).replace(f" {_BREAK}", _BREAK).strip(_BREAK)
        if text:
            # A hard line break: a backslash before the newline (CommonMark), which no
            # editor strips as it strips two trailing spaces; a bare newline would join the
            # lines into one run of text when rendered.
            self.blocks.append(text.replace(_BREAK, "\\\n"))

    def text(self, joiner: str = "\n\n") -> str:
        """The box's blocks, its last paragraph ended, joined by ``joiner``."""
        self.flush()
        return joiner.join(self.blocks)


@dataclass
class _List:
    """An open list: its kind, its first number, the items written so far."""

    ordered: bool
    start: int = 1
    items: list[str] = field(default_factory=list)


@dataclass
class _Cell:
    """A table cell: its text on one line, its blocks, and whether it heads its column (a
    ``<th>``, or a cell of the ``<thead>``)."""

    line: str
    blocks: str
    header: bool = False

    @property
    def blocky(self) -> bool:
        """Whether the cell holds more than a line (a layout table's cell)."""
        return "\n" in self.blocks


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
    return walk.boxes[0].text()


class _Walk:
    """The walk's state: the open boxes, lists, tables and inline marks."""

    def __init__(self, removed, links: bool, images: bool, base_url: str | None) -> None:
        self.removed, self.links, self.images, self.base = removed, links, images, base_url
        self.boxes: list[_Box] = [_Box()]
        self.lists: list[_List] = []
        self.tables: list[list[list[_Cell]]] = []
        self.in_head = 0  # open <thead> elements
        #: the box and its block count right after a term or a definition was written: a
        #: definition that follows there is written as one (a definition whose term was removed
        #: is a paragraph)
        self.defined: tuple[_Box, int] | None = None
        #: the box and its block count when the open <dt> began
        self.term_at: tuple[_Box, int] | None = None
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
            src = self._url(image_source(element)) if self.images else None
            if src:
                alt = _ESCAPE.sub(r"\\\1", _SPACES.sub(" ", element.get("alt") or "").strip())
                self.box.inline.append(f"![{alt}]({src})")
        elif tag in _LISTS:
            self.box.flush()
            start = element.get("start", "1").strip()
            self.lists.append(_List(tag == "ol", int(start) if start.isdigit() else 1))
        elif tag == "table":
            self.box.flush()
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag == "thead":
            self.in_head += 1
        elif tag in _BOXES or tag in _HEADINGS:
            self.box.flush()
            self.boxes.append(_Box())
        elif tag in BLOCK_TAGS or tag == "dt":
            self.box.flush()
            if tag == "dl":
                self.defined = None
            elif tag == "dt":  # a term is what the dt itself writes (nothing: no term)
                self.term_at = (self.box, len(self.box.blocks))
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
        elif tag == "thead" and self.in_head:
            self.in_head -= 1
        elif tag == "dd":
            self._definition(self.boxes.pop().text())
        elif tag in ("td", "th"):
            box = self.boxes.pop()
            blocks = box.text()
            line = _SPACES.sub(" ", blocks.replace("\\\n", " ")).replace("|", "\\|")
            cell = _Cell(line, blocks, header=tag == "th" or self.in_head > 0)
            if self.tables and self.tables[-1]:
                self.tables[-1][-1].append(cell)
            elif blocks:
                self.box.blocks.append(blocks)
        elif tag == "table" and self.tables:
            self.box.blocks.extend(_table_blocks(self.tables.pop()))
        elif tag in _LISTS and self.lists:
            items = self.lists.pop().items
            if items:
                self.box.flush()
                self.box.blocks.append("\n".join(items))
        elif tag in BLOCK_TAGS or tag == "dt":
            self.box.flush()
            if tag == "dt":
                wrote = self.term_at is not None and self.term_at[0] is self.box \
                    and len(self.box.blocks) > self.term_at[1]
                self.defined = (self.box, len(self.box.blocks)) if wrote else None

    def _definition(self, content: str) -> None:
        """A finished ``<dd>``: after its term (or the definition before it), ``:   `` before its
        first block when that is a paragraph; its further blocks follow as they are, unindented:
        indented, a code fence or a list in a definition became a paragraph's lazy lines for a
        CommonMark reader without the extension (wcxb-dev's code blocks lost 0.015). Without a
        term before it, or starting with another block, it is written as its blocks alone."""
        self.box.flush()
        if not content:
            return
        follows = self.defined is not None and self.defined[0] is self.box \
            and self.defined[1] == len(self.box.blocks)
        written_as_one = follows and not _BLOCK_START.match(content)
        if written_as_one:
            content = f":   {content}"
        self.box.blocks.append(content)
        # Only a one-block definition keeps the list going: a second block of its own, or one
        # written as plain blocks, would make the next term's place ambiguous.
        one_block = written_as_one and "\n\n" not in content
        self.defined = (self.box, len(self.box.blocks)) if one_block else None

    def _item(self, box: _Box) -> None:
        """A finished list item: its marker, its first block, every further line indented
        under its text (a nested list, a code block's lines)."""
        content = box.text("\n")
        if not content:
            return
        if not self.lists:  # an item outside a list: its text, as a paragraph
            self.box.flush()
            self.box.blocks.append(content)
            return
        current = self.lists[-1]
        marker = (f"{current.start + len(current.items)}. " if current.ordered else "- ")
        lines = content.split("\n")
        pad = " " * len(marker)
        current.items.append("\n".join([marker + lines[0]]
                                       + [pad + line if line else line for line in lines[1:]]))

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
            plain = _UNESCAPE.sub(r"\1", stripped)
            run = max((len(r) for r in re.findall("`+", plain)), default=0)
            fence = "`" * (run + 1)
            pad = " " if plain.startswith("`") or plain.endswith("`") else ""
            wrapped = f"{fence}{pad}{plain}{pad}{fence}"
        elif tag == "a":
            href = self._url(element.get("href")) if self.links else None
            wrapped = f"[{stripped}]({href})" if href and not href.startswith("#") else stripped
        else:
            wrapped = f"{_EMPHASIS[tag]}{stripped}{_EMPHASIS[tag]}"
        pieces.append(f"{lead}{wrapped}{trail}")

    def _url(self, value: str | None) -> str | None:
        """``value`` made absolute against the page's URL and safe to write in Markdown; None
        for a URL of a scheme that may run something (``javascript:``, ``data:``, …)."""
        url = _SPACES.sub("", value or "")
        if not url:
            return None
        if self.base:
            url = urljoin(self.base, url)
        scheme = _SCHEME.match(url)
        if scheme and scheme.group(1).lower() not in _SAFE_SCHEMES:
            return None
        return url.replace("(", "%28").replace(")", "%29").replace("<", "%3C")


#: Where lazy-loading pages keep an image's real address while ``src`` holds a placeholder.
_LAZY_SOURCES = ("data-src", "data-lazy-src", "data-original", "data-url")
_LAZY_SOURCE_SETS = ("srcset", "data-srcset", "data-lazy-srcset")


def image_source(img: etree._Element) -> str | None:
    """An image's address: its ``src``, or where a lazy-loading page keeps the real one while
    ``src`` is missing or a ``data:`` placeholder (``data-src`` and its kin, else the first
    candidate of a ``srcset``).

    >>> from lxml import etree
    >>> image_source(etree.fromstring('<img src="data:image/gif;base64,R0" data-src="/a.jpg"/>'))
    '/a.jpg'
    >>> image_source(etree.fromstring('<img data-srcset="/s.jpg 480w, /l.jpg 960w"/>'))
    '/s.jpg'
    """
    src = (img.get("src") or "").strip()
    if src and not src.lower().startswith("data:"):
        return src
    for name in _LAZY_SOURCES:
        found = (img.get(name) or "").strip()
        if found and not found.lower().startswith("data:"):
            return found
    for name in _LAZY_SOURCE_SETS:
        first = (img.get(name) or "").split(",")[0].strip().split(" ")[0]
        if first and not first.lower().startswith("data:"):
            return first
    return None


def _fence(pre: etree._Element, removed: Collection[etree._Element]) -> str:
    """A ``<pre>`` as fenced code, with the language its class (or its code's) names."""
    code = verbatim_text(pre, removed)
    language = ""
    for element in (pre, *pre.iterchildren("code")):
        found = _LANGUAGE.search(element.get("class") or "")
        if found:
            language = found.group(1)
            break
    fence = "````" if "```" in code else "```"
    return f"{fence}{language}\n{code}\n{fence}"


def _table_blocks(rows: list[list[_Cell]]) -> list[str]:
    """A table's Markdown: a pipe table, or, for a layout table (a cell holding blocks, or a
    single column), its cells' blocks one after the other."""
    rows = [row for row in rows if any(cell.line for cell in row)]
    if not rows:
        return []
    if max(map(len, rows)) == 1 or any(cell.blocky for row in rows for cell in row):
        return [cell.blocks for row in rows for cell in row if cell.blocks]
    headed = all(cell.header for cell in rows[0])
    return [_pipe_table([[cell.line for cell in row] for row in rows], headed)]


def _pipe_table(rows: list[list[str]], headed: bool = True) -> str:
    """A pipe table, every row as wide as the widest: the first row as its header when
    ``headed`` (the table's own header: ``<th>`` cells or its ``<thead>``), else an empty
    header above all of them (a pipe table needs one; a data row made header would read as
    the columns' names)."""
    width = max(map(len, rows))
    if not headed:
        rows = [[""] * width, *rows]
    lines = []
    for k, row in enumerate(rows):
        cells = [cell.strip() for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if k == 0:
            lines.append("|" + "|".join([" --- "] * width) + "|")
    return "\n".join(lines)
