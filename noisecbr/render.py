"""Document-order text and HTML of what a cleaning kept.

Text is assembled the way the shingle metric reads it: an element's text, then each kept child
followed by that child's tail, so nothing is reordered or glued. Block elements are separated by
a blank line, list items, table rows and line breaks start a new line, table cells are separated
by a space, and runs of whitespace inside a line collapse to one space.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from lxml import etree, html

__all__ = ["BLOCK_TAGS", "LINE_TAGS", "render_text", "render_html"]

#: Elements that end a paragraph: the text around them is separated by a blank line.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend main menu nav ol p "
    "pre section summary table tbody thead tfoot ul caption".split()
)
#: Elements that start a new line but not a new paragraph.
LINE_TAGS = frozenset("li tr dt option br".split())
#: Elements whose text is separated from their neighbours by a space.
CELL_TAGS = frozenset("td th img input button label select textarea".split())

_PARAGRAPH = "\x00P"
_LINE = "\x00L"
_SPACES = re.compile(r"[ \t\r\f\v\n\u00a0\u200b]+")


def _join(parts: list[str]) -> str:
    """Turn text parts and break markers into lines and paragraphs."""
    paragraphs: list[str] = []
    lines: list[str] = []
    current: list[str] = []
    pending_paragraph = False

    def close_line() -> None:
        line = _SPACES.sub(" ", "".join(current)).strip()
        current.clear()
        if line:
            lines.append(line)

    def close_paragraph() -> None:
        close_line()
        if lines:
            paragraphs.append("\n".join(lines))
            lines.clear()

    for part in parts:
        if part == _PARAGRAPH:
            pending_paragraph = True
        elif part == _LINE:
            close_line()
        else:
            if pending_paragraph:
                close_paragraph()
                pending_paragraph = False
            current.append(part)
    close_paragraph()
    return "\n\n".join(paragraphs)


def render_text(root: etree._Element, removed: Collection[etree._Element] = (),
                dropped_text: Collection[etree._Element] = ()) -> str:
    """Text of ``root`` without the subtrees in ``removed`` (their tails are kept) and without
    the own text (``.text`` and the children's tails) of the elements in ``dropped_text``."""
    parts: list[str] = []
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = element.tag
        if event == "start":
            if element in removed:
                walker.skip_subtree()  # its "end" event still comes, and emits the tail
                continue
            if tag in BLOCK_TAGS:
                parts.append(_PARAGRAPH)
            elif tag in LINE_TAGS:
                parts.append(_LINE)
            elif tag in CELL_TAGS:
                parts.append(" ")
            if element.text and not (dropped_text and element in dropped_text):
                parts.append(element.text)
        else:
            if element in removed:
                pass
            elif tag in BLOCK_TAGS:
                parts.append(_PARAGRAPH)
            elif tag in LINE_TAGS and tag != "br":
                parts.append(_LINE)
            elif tag in CELL_TAGS:
                parts.append(" ")
            if element is not root and element.tail and not (
                    dropped_text and element.getparent() in dropped_text):
                parts.append(element.tail)
    return _join(parts)


def render_html(body: etree._Element, title: str | None = None) -> str:
    """Serialise a body as a complete, re-parseable HTML document."""
    document = etree.Element("html")
    head = etree.SubElement(document, "head")
    etree.SubElement(head, "meta", charset="utf-8")
    if title:
        etree.SubElement(head, "title").text = title
    # Serialise the body on its own so the caller's tree is not re-parented.
    body_html = html.tostring(body, encoding="unicode", method="html")
    head_html = html.tostring(head, encoding="unicode", method="html")
    return f"<!DOCTYPE html>\n<html>{head_html}{body_html}</html>\n"
