"""Text → an lxml tree: libxml2's parser (fast; nesting deeper than it takes flattened first,
and a parse that swallowed the page into one element repaired) or html5lib's
(spec-conformant). Every traversal is iterative.
"""

from __future__ import annotations

import re

from lxml import etree

from ..errors import InputError
from ..settings import MAX_PARSE_DEPTH

_TAG = re.compile(r"<(/?)([a-zA-Z][^\s/>]*)[^>]*>")


_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


def flatten_deep(text: str, max_depth: int = MAX_PARSE_DEPTH) -> str:
    """Remove the tags nested deeper than ``max_depth`` (a best effort on absurd markup)."""
    out: list[str] = []
    kept: list[bool] = []  # per open element: was its start tag kept?
    last = 0
    for match in _TAG.finditer(text):
        closing, name = match.group(1), match.group(2).lower()
        if name in _VOID or match.group(0).endswith("/>"):
            continue
        if closing:
            if kept and not kept.pop():
                out.append(text[last:match.start()])
                last = match.end()
        else:
            keep = len(kept) < max_depth
            kept.append(keep)
            if not keep:
                out.append(text[last:match.start()])
                last = match.end()
    out.append(text[last:])
    return "".join(out)


def parse_lxml(text: str, raw: bytes | None = None, encoding: str | None = None
                ) -> etree._Element:
    """Parse with libxml2; ``raw`` bytes in a known ``encoding`` are parsed as they are (UTF-8
    bytes parse about a quarter faster than the same text as str, which lxml re-encodes)."""
    # lxml refuses str input that carries an XML encoding declaration.
    text = re.sub(r"^\s*<\?xml[^>]*>", "", text, count=1)
    source: str | bytes = text
    if raw is not None and encoding in ("utf-8", "ascii") and b"\x00" not in raw:
        source = raw
    for attempt in range(2):
        # huge_tree lifts libxml2's limits on text size.
        # etree's parser, not lxml.html's: plain elements are created several times faster
        # than lxml.html's classes, and nothing here needs their extra methods.
        # collect_ids=False: libxml2 need not hash every id attribute of the page (nothing
        # looks elements up by id); the tree is the same, the parse about 5 % faster.
        parser = etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True,
                                  collect_ids=False,
                                  encoding="utf-8" if isinstance(source, bytes) else None)
        root = etree.fromstring(source, parser=parser)
        if root is None:
            raise InputError("the parser found no document in the input")
        too_deep = any("Excessive depth" in e.message for e in parser.error_log)
        if not too_deep or attempt:
            return root
        source = flatten_deep(text)
    return root


def too_deep_for_libxml2(text: str) -> bool:
    """Whether libxml2's parse of ``text`` stops at its depth limit (a few ms a page)."""
    parser = etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True,
                              collect_ids=False)
    try:
        etree.fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return False
    return any("Excessive depth" in e.message for e in parser.error_log)


def repaired(root: etree._Element, text: str, parse) -> etree._Element:
    """``root``, or when an element without its end tag swallowed the rest of the page (see
    :func:`_swallower`), the page parsed again by ``parse`` with that end tag put back (once
    per element: a page may leave several open)."""
    for _ in range(len(_RAW_TEXT_TAGS)):
        swallower = _swallower(root, moved=parse is parse_html5lib)
        if swallower is None:
            return root
        repaired = _close_swallower(text, swallower.tag)
        if repaired is None:
            return root
        root, text = parse(repaired), repaired
    return root


#: Elements whose content the parser reads as text up to their end tag: one whose end tag is
#: missing swallows the rest of the page (an unclosed ``<title>`` leaves an empty body).
_RAW_TEXT_TAGS = ("title", "textarea", "script", "style", "xmp", "noembed", "noframes",
                  "iframe", "noscript")


#: The end of a document, as a swallowing element's text ends.
_DOCUMENT_END = re.compile(r"</\s*(?:body|html)\s*>\s*$", re.I)


#: Where the markup a swallowing element ran over starts: for title and textarea, whose text
#: holds no tag, at the first tag; for a script or style, at the end of the head, the body's
#: start, or the first block element (their code may hold a ``<`` or even ``"<b>"``).
_RESUME = {
    "text": re.compile(r"<[a-zA-Z/!]"),
    "code": re.compile(r"</head\b|<body\b|<(?:div|p|table|h[1-6]|ul|ol|article|section|main|"
                       r"header|nav|center|font|form)\b", re.I),
}


def _swallower(root: etree._Element, moved: bool = False) -> etree._Element | None:
    """The raw-text element whose missing end tag made it swallow the rest of the page: its
    text runs to the document's end tags. None on a well-formed page. Its text is the
    document's last, and a raw-text element has no children: in libxml2's tree it is the last
    element in document order, the only one checked (checking every script's text cost 0.14 ms
    a dragnet page). ``moved``: the parser may have moved it (html5lib puts an element met in a
    table before the table, and implies an empty ``<body/>`` after a swallowed head): then the
    last raw-text element whose text runs to the end, of all. Either way a closed ``<textarea>``
    showing a whole page earlier on is not taken for it."""
    if moved:
        found = [element for element in root.iter(*_RAW_TEXT_TAGS) if _runs_to_the_end(element)]
        return found[-1] if found else None
    element = _last_element(root)
    return element if element.tag in _RAW_TEXT_TAGS and _runs_to_the_end(element) else None


def _runs_to_the_end(element: etree._Element) -> bool:
    """Whether an element's text ends with the document's end tags."""
    text = element.text
    return bool(text and len(text) > 64 and _DOCUMENT_END.search(text[-64:]))


def _last_element(element: etree._Element) -> etree._Element:
    """The last element of ``element``'s subtree in document order (itself when a leaf)."""
    while len(element):
        element = element[-1]
    return element


def _close_swallower(text: str, tag: str) -> str | None:
    """``text`` with the end tag of the last unclosed ``<tag>`` put where the markup it
    swallowed starts; None when it cannot be placed, or when the element has its end tag
    after all (a ``<textarea>`` or a template holding a whole example page is closed)."""
    starts = list(re.finditer(rf"<{tag}\b[^>]*>", text, re.I))
    if not starts:
        return None
    start = starts[-1].end()
    if re.search(rf"</{tag}\s*>", text[start:], re.I):
        return None
    kind = "text" if tag in ("title", "textarea") else "code"
    resume = _RESUME[kind].search(text, start)
    if resume is None:
        return None
    return f"{text[:resume.start()]}</{tag}>{text[resume.start():]}"


def parse_html5lib(text: str) -> etree._Element:
    """``text`` parsed by html5lib (the WHATWG algorithm, as a browser parses it) into lxml."""
    import html5lib

    root = html5lib.parse(text, treebuilder="lxml", namespaceHTMLElements=False)
    return root.getroot() if hasattr(root, "getroot") else root
