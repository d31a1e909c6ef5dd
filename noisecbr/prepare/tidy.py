"""HTML bytes or text → the tidied lxml ``<body>`` every later stage works on.

Tidying decodes the input (BOM, then a declared charset, then a detector), parses it with lxml
(fast, the default) or html5lib (spec-conformant, about 40× slower), and removes what a reader
never sees: script, style, noscript, template, comments, processing instructions, what an
``<iframe>`` holds, and elements hidden by ``hidden``, ``aria-hidden="true"`` or an inline
``display:none``/``visibility:hidden``.
Whitespace is normalised when text is read (see ``normalize_space``), not in the tree, so that
``<pre>`` keeps its layout in the HTML output.

Every traversal here is iterative: a page nested 100 000 levels deep must not reach Python's
recursion limit.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import Literal

from lxml import etree

from .. import errors

# The input errors live in errors.py (limits.py and sniff.py raise them too): tidy, where
# callers have always found them, re-exports them all.
from ..errors import *  # noqa: F403
from ..errors import EmptyInputError, InputError
from ..native.backend import BACKEND
from ..settings import MAX_PARSE_DEPTH, NOSCRIPT_CONTENT_CHARS
from .limits import DEFAULT_MAX_BYTES, check_elements, check_size, limit_attributes
from .sniff import SNIFF_BYTES, contradicted_charset, refuse_non_html

__all__ = [
    *errors.__all__,
    "DEFAULT_MAX_BYTES",
    "decode",
    "tidy",
    "normalize_space",
    "drop_elements",
    "printable",
    "xml_safe",
]

Parser = Literal["lxml", "html5lib"]

#: Elements whose content is never shown to a reader. (``noembed`` and ``noframes`` hold the
#: fallback of browsers without plugins or frames, read by the parser as raw text: ad markup
#: such as ``<a href=…><img …>`` came out as article text on dev pages.)
INVISIBLE_TAGS = ("script", "style", "noscript", "template", "head", "link", "meta", "object",
                  "embed", "param", "canvas", "map", "datalist", "dialog", "title", "base",
                  "noembed", "noframes")


#: React streams server-rendered Suspense segments as ``<div hidden id="S:n">`` and moves them into
#: view with script: they are what a reader sees, so ``hidden`` does not remove them. React
#: numbers them in hexadecimal ("S:1a": a Turkish news agency's whole article was dropped).
#: Moving each segment to its ``<template>`` placeholder, as the script does, was tried on the
#: 23 development pages that stream (2026-11-25): F1 −0.005 a page on average, so they stay.
_STREAMED_SEGMENT = re.compile(r"S:[0-9a-f]+$")

#: Elements that belong in <head>; anything else found there (libxml2 leaves body content in the
#: head of some malformed pages) is moved to the start of the body.
_HEAD_TAGS = frozenset(("title", "meta", "link", "style", "script", "base", "noscript",
                        "template"))

_HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.I)
_SPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


def decode(data: bytes | str) -> str:
    """Decode page bytes: BOM first, then a ``<meta charset>``/http-equiv, then detection.

    A declared charset that fails to decode the bytes (a mis-declared page) falls through to
    UTF-8, then to UTF-8 with its few broken bytes replaced (see :func:`_mostly_utf8`), and
    then to charset-normalizer's guess, so a wrong declaration never loses the page.
    """
    return _decode(data)[0]


def _decode(data: bytes | str) -> tuple[str, str | None]:
    """The text and, when the bytes can be handed to the parser as they are, their encoding."""
    if isinstance(data, str):
        # A lone surrogate (from text decoded with surrogateescape, or a bad \\u escape) cannot
        # be encoded for libxml2, which would stop the page there.
        if not data.isascii() and _SURROGATE.search(data):
            data = _SURROGATE.sub("\ufffd", data)
        return data, None
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace"), None
    for encoding in [*_declared_candidates(data), "utf-8"]:
        try:
            return data.decode(encoding), encoding
        except UnicodeError:  # UnicodeDecodeError, and the bare one of codecs such as "undefined"
            continue
    text = _mostly_utf8(data)
    if text is not None:
        return text, None
    from charset_normalizer import from_bytes

    best = from_bytes(data[:200_000]).best()
    encoding = best.encoding if best is not None else "cp1252"
    return data.decode(encoding, errors="replace"), None


#: Codecs Python knows but a page's bytes are never in, whatever its meta tag says: the HTML
#: standard reads a declared UTF-16/32 as UTF-8 (an ASCII-compatible tag could not be read
#: otherwise), and the rest are Python's transformations, not charsets of the web.
_NOT_PAGE_CHARSETS = ("utf-16", "utf-32", "utf-7", "undefined", "unicode-escape",
                      "raw-unicode-escape", "punycode", "idna", "mbcs", "oem")


def _declared_candidates(data: bytes) -> list[str]:
    """The charsets to try first by what the page declares: the declared one, or the one the
    bytes show instead (:func:`noisecbr.prepare.sniff.contradicted_charset`); a windows-1252 page
    with one of its five undefined bytes is then read as ISO-8859-1, as it always was."""
    declared = _declared_charset(data)
    if declared is None:
        return []
    corrected = contradicted_charset(data, declared)
    if corrected is not None:
        return [corrected]
    return [declared, "iso8859-1"] if declared == "cp1252" else [declared]


def _declared_charset(data: bytes) -> str | None:
    """The Python codec name of the charset a ``<meta>`` tag of the page declares, or None
    when there is none or it names no charset a page can be in."""
    declared = _META_CHARSET.search(data[:8192])
    if not declared:
        return None
    try:
        codec = codecs.lookup(declared.group(1).decode("ascii", "ignore"))
    except LookupError:
        return None
    # Not a text encoding: rot13, zlib, base64, hex…
    if not getattr(codec, "_is_text_encoding", True):
        return None
    if codec.name.replace("_", "-").startswith(_NOT_PAGE_CHARSETS):
        return None
    # The HTML standard reads the label iso-8859-1 as windows-1252, as browsers do: pages so
    # labelled use its curly quotes and œ (bytes 0x80-0x9f, C1 controls in ISO-8859-1).
    return "cp1252" if codec.name in ("iso8859-1", "latin-1") else codec.name


def _mostly_utf8(data: bytes) -> str | None:
    """The page as UTF-8 with its broken bytes replaced, when it is UTF-8 with a few broken
    bytes (a truncated character, a pasted fragment in another encoding): more well-formed
    multi-byte characters than malformed bytes. Otherwise None.

    A detector would read such a page in a legacy encoding and garble every accented letter of
    it ("café" → "cafÃ©"). Text really in a legacy single-byte encoding almost never forms a
    well-formed UTF-8 sequence (a lead byte followed by the right number of continuation bytes
    is mojibake, not prose), so its well-formed count stays near zero.
    """
    text = data.decode("utf-8", errors="replace")
    # U+FFFD written in the page itself is not a broken byte.
    broken = text.count("\ufffd") - data.count("\ufffd".encode())
    well_formed = len(text) - len(text.encode("ascii", "ignore")) - text.count("\ufffd")
    return text if well_formed > broken else None


_TAG = re.compile(r"<(/?)([a-zA-Z][^\s/>]*)[^>]*>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


def _flatten_deep(text: str, max_depth: int = MAX_PARSE_DEPTH) -> str:
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


def _parse_lxml(text: str, raw: bytes | None = None, encoding: str | None = None
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
        source = _flatten_deep(text)
    return root


def _too_deep_for_libxml2(text: str) -> bool:
    """Whether libxml2's parse of ``text`` stops at its depth limit (a few ms a page)."""
    parser = etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True,
                              collect_ids=False)
    try:
        etree.fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return False
    return any("Excessive depth" in e.message for e in parser.error_log)


def _repaired(root: etree._Element, text: str, parse) -> etree._Element:
    """``root``, or when an element without its end tag swallowed the rest of the page (see
    :func:`_swallower`), the page parsed again by ``parse`` with that end tag put back (once
    per element: a page may leave several open)."""
    for _ in range(len(_RAW_TEXT_TAGS)):
        swallower = _swallower(root, moved=parse is _parse_html5lib)
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


def _parse_html5lib(text: str) -> etree._Element:
    import html5lib

    root = html5lib.parse(text, treebuilder="lxml", namespaceHTMLElements=False)
    return root.getroot() if hasattr(root, "getroot") else root


def _is_hidden(element: etree._Element) -> bool:
    # element.get, not element.attrib: no attribute-mapping object per element.
    get = element.get
    if get("hidden") is not None and not _STREAMED_SEGMENT.match(get("id", "")):
        return True
    if get("aria-hidden", "").strip().lower() == "true":
        return True
    style = get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


#: The hiding attributes of the elements below the body, in document order. Selecting the
#: attributes (a plain attribute-axis step per element) is cheaper in libxml2 than testing a
#: predicate on every element (``descendant::*[@hidden or ...]``, which builds a node set per
#: test). Stepping back to their elements in XPath (``@hidden/..``) would spare a getparent()
#: per attribute but is quadratic in their number (libxml2 deduplicates the parent step's node
#: set pairwise: 100 000 hidden elements took 15 s, against 0.06 s here).
_HIDING_ATTRIBUTES = etree.XPath(
    "descendant::*/@hidden | descendant::*/@aria-hidden | descendant::*/@style")


def _hiding_carriers_pure(body: etree._Element, noscripts: list[etree._Element],
                          iframes: list[etree._Element]) -> Iterable[etree._Element]:
    """The elements below ``body`` that carry a hiding attribute, once each (in document
    order; the compiled kernel walks the nodes in C, about ten times faster than the XPath).
    ``noscripts`` and ``iframes`` receive the ``noscript`` and ``iframe`` elements below
    ``body`` (the kernel finds them in the same walk)."""
    noscripts.extend(_NOSCRIPTS(body))
    iframes.extend(_IFRAMES(body))
    return dict.fromkeys(attribute.getparent() for attribute in _HIDING_ATTRIBUTES(body))


def _hiding_carriers_compiled(body: etree._Element, noscripts: list[etree._Element],
                              iframes: list[etree._Element]) -> Iterable[etree._Element]:
    # Of the styled elements, only those whose style may hide them: _is_hidden decides.
    return BACKEND.kernel.hiding_carriers(body, noscripts, iframes, hiding_styles=True)


_hiding_carriers = BACKEND.dispatch(_hiding_carriers_pure, _hiding_carriers_compiled)


#: The page's ``<noscript>`` elements in document order: libxml2's XPath finds them in less than
#: half the time of ``body.iter("noscript")`` (0.10 vs 0.26 ms per modernweb-dev page).
_NOSCRIPTS = etree.XPath("descendant::noscript")
_IFRAMES = etree.XPath("descendant::iframe")


#: Characters lxml refuses in a text it is given (XML 1.0's excluded code points), though
#: libxml2's HTML parser puts them in the text it reads (from the raw bytes and from character
#: references such as ``&#12;``). The form feed is HTML whitespace and becomes a space.
_XML_INCOMPATIBLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters lxml refuses to store in a tree (see above)."""
    return _XML_INCOMPATIBLE.sub("", text.replace("\x0c", " "))


#: What no output holds: the C0 controls but tab and newline, DEL and the C1 controls (a page's
#: raw bytes or references such as ``&#127;`` or ``&#133;`` put them in the text; a terminal
#: would act on them), with what lxml refuses.
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` as every output gives it: a form feed is a space, a carriage return and C1's
    "next line" are line ends, and no other control character (:data:`_NOT_PRINTABLE`) is
    left."""
    if _NOT_PRINTABLE.search(text) is None:  # nearly every page: no copy
        return text
    text = (text.replace("\x0c", " ").replace("\r\n", "\n").replace("\r", "\n")
            .replace("\x85", "\n"))
    return _NOT_PRINTABLE.sub("", text)


def _set_text(element: etree._Element, attribute: str, text: str) -> None:
    """Set an element's ``text`` or ``tail``, dropping the control characters lxml refuses
    when the parser left some there (rare: most text never needs the second try)."""
    try:
        setattr(element, attribute, text)
    except ValueError:
        setattr(element, attribute, xml_safe(text))


def drop_elements(elements: Iterable[etree._Element]) -> None:
    """Detach elements from their tree, keeping each one's tail text (it belongs to the parent).

    The tails of a run of dropped siblings are joined once, onto the kept sibling before the
    run (or the parent's text): appending them one by one to the same growing string was
    quadratic (100 000 hidden spans in one paragraph took 52 s; now 0.1 s). One pass over the
    children of each parent that loses some keeps the tails in document order whatever the
    order of ``elements``.
    """
    # Each element once: a hidden <noscript> is doomed twice over, and removing it twice fails.
    by_parent: dict[etree._Element, dict[etree._Element, None]] = {}
    for element in elements:
        parent = element.getparent()
        if parent is not None:
            by_parent.setdefault(parent, {})[element] = None
    for parent, children in by_parent.items():
        doomed = set(children)
        target, attribute, pieces = parent, "text", [parent.text or ""]
        for child in parent:
            if child in doomed:
                if child.tail:
                    pieces.append(child.tail)
                continue
            if len(pieces) > 1:
                _set_text(target, attribute, "".join(pieces))
            target, attribute, pieces = child, "tail", [child.tail or ""]
        if len(pieces) > 1:
            _set_text(target, attribute, "".join(pieces))
        for child in children:
            parent.remove(child)


def _body_of(root: etree._Element) -> etree._Element:
    """The page's body, with content that libxml2 left outside it on malformed pages moved in:
    elements in the head that do not belong there go to the body's start, elements beside the
    body (after a premature ``</html>`` or ``</body>``) to its end, each in document order."""
    body = root.find("body")
    if body is None:
        body = root.find(".//body")
    if body is None:
        body = etree.SubElement(root, "body")
    elif body.getparent() is not root:
        # A body nested in a stray element (``<meta><d><body>`` puts it inside <head>): lift
        # it to the top level first, so that moving the stray element into it makes no cycle.
        drop_elements([body])
        root.append(body)
    head = root.find("head")
    if head is not None:
        stray = [c for c in head if isinstance(c.tag, str) and c.tag not in _HEAD_TAGS]
        for position, element in enumerate(stray):
            body.insert(position, element)
    for child in list(root):
        if child is not body and child is not head and isinstance(child.tag, str):
            body.append(child)
    # After a premature </html>, libxml2 starts a second top-level <html> beside the first.
    for sibling in list(root.itersiblings()):
        if isinstance(sibling.tag, str):
            for child in list(sibling):
                if isinstance(child.tag, str) and child.tag not in ("head",):
                    body.append(child)
    return body


def tidy(
    source: bytes | str,
    *,
    parser: Parser = "lxml",
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_elements: int | None = None,
) -> etree._Element:
    """Parse a page and return its tidied ``<body>`` element.

    Raises :class:`EmptyInputError`, :class:`BinaryInputError` or :class:`InputTooLargeError`
    for input that is not a page; malformed HTML is repaired by the parser, never refused. The
    work is bounded (see :mod:`noisecbr.prepare.limits`): over ``max_bytes`` bytes or
    ``max_elements`` elements (default :data:`~noisecbr.prepare.limits.MAX_ELEMENTS`) a page is
    refused, and an element's attributes beyond :data:`~noisecbr.prepare.limits.MAX_ATTRIBUTES` are
    dropped.
    """
    if parser not in ("lxml", "html5lib"):
        raise ValueError(f"unknown parser {parser!r}: use 'lxml' or 'html5lib'")
    check_size(len(source.encode("utf-8", "ignore")) if isinstance(source, str) else len(source),
               max_bytes)
    if isinstance(source, bytes):
        refuse_non_html(source)
    text, encoding = _decode(source)
    # The bytes spell the text exactly when they are UTF-8 or ASCII without a NUL to remove:
    # the attribute limit then scans them. (UTF-8 text has a NUL character exactly where its
    # bytes have a zero byte: the byte search spares the scan of the often wider decoded text.)
    utf8 = (source if isinstance(source, bytes) and encoding in ("utf-8", "ascii")
            and b"\x00" not in source else None)
    if not (encoding == "utf-8" and utf8 is not None):
        text = text.replace("\x00", "")
    if not text or text.isspace():  # what `not text.strip()` tests, without copying the page
        raise EmptyInputError("input is empty")
    if isinstance(source, str):
        refuse_non_html(text[:SNIFF_BYTES].encode("utf-8", "ignore"))
    limited = limit_attributes(text, utf8)
    raw = source if isinstance(source, bytes) and limited is text else None
    try:
        if parser == "html5lib":
            # html5lib's tree building is quadratic in the nesting depth (20 000 levels took
            # 28 s): markup libxml2 finds too deep is flattened first, as for lxml's parse.
            if _too_deep_for_libxml2(limited):
                limited = _flatten_deep(limited)
            root = _repaired(_parse_html5lib(limited), limited, _parse_html5lib)
        else:
            root = _repaired(_parse_lxml(limited, raw, encoding), limited, _parse_lxml)
    except (etree.ParserError, ValueError) as error:
        raise InputError(f"cannot parse input as HTML: {error}") from error
    check_elements(root, max_elements)
    body = _body_of(root)
    _keep_declarations(root, body)
    _remove_invisible(body)
    return body


#: What a page declares about itself that it may write in its body: JSON-LD blocks and named
#: ``<meta>`` elements (``og:type``, ``author``…; not microdata's ``itemprop`` metas, which
#: describe whatever box they sit in, a teaser's date as well as the article's).
_LD_JSON_TYPE = ("translate(normalize-space(@type), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', "
                 "'abcdefghijklmnopqrstuvwxyz') = 'application/ld+json'")
_DECLARATIONS = etree.XPath(
    f"descendant::script[{_LD_JSON_TYPE}] | descendant::meta[@property or @name]")
#: A script's test of :data:`_DECLARATIONS`, for the few the kernel leaves to it.
_LD_JSON_SCRIPT = etree.XPath(f"self::script[{_LD_JSON_TYPE}]")


def _declarations_pure(body: etree._Element) -> list[etree._Element]:
    """The declarations written in ``body`` (:data:`_DECLARATIONS`), in document order."""
    return _DECLARATIONS(body)


def _declarations_compiled(body: etree._Element) -> list[etree._Element]:
    # One C walk: the XPath's string functions over every script cost 2 % of a dragnet page.
    unsure: list[etree._Element] = []
    found = BACKEND.kernel.declarations(body, unsure)
    if unsure:  # a type attribute that is not one text node: the XPath decides, in order
        sure, asked = set(found), set(unsure)
        found = [element for element in body.iter("script", "meta")
                 if element in sure or (element in asked and _LD_JSON_SCRIPT(element))]
    return found


_declarations = BACKEND.dispatch(_declarations_pure, _declarations_compiled)


def _keep_declarations(root: etree._Element, body: etree._Element) -> None:
    """Move the declarations written in the body (:data:`_DECLARATIONS`) to the head, where
    the metadata and the page's convention (:mod:`noisecbr.decide.convention`) read them: tidying
    removes scripts and metas from the body (a JSON-LD ``NewsArticle`` is in the body of 12 of
    fundus's 176 pages, 16 of modernweb-dev's 790)."""
    found = _declarations(body)
    if not found:
        return
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    drop_elements(found)  # their tails stay in the body
    for element in found:
        element.tail = None
        head.append(element)


def _remove_invisible(body: etree._Element) -> None:
    # Comments and processing instructions (html5lib keeps them) and invisible tags go in C
    # (strip_elements keeps each removed element's tail); lxml's iterators never recurse.
    etree.strip_elements(body, etree.Comment, etree.ProcessingInstruction,
                         *(t for t in INVISIBLE_TAGS if t != "noscript"), with_tail=False)
    noscripts: list[etree._Element] = []
    iframes: list[etree._Element] = []
    # Only elements carrying one of the hiding attributes are inspected.
    carriers = _hiding_carriers(body, noscripts, iframes)
    # What an <iframe> holds is never shown: the frame shows another document. Parsers read it
    # as raw text, and pages put ad markup there for browsers without frames (29 dragnet pages:
    # cnet's "<SCRIPT language='JavaScript1.1' SRC=…>" came out as article text). The element
    # stays, an empty leaf of its type.
    for iframe in iframes:
        if iframe.text is not None or len(iframe):
            iframe.text = None
            del iframe[:]
    doomed = [element for element in noscripts if not _noscript_content(element)]
    doomed.extend(filter(_is_hidden, carriers))
    drop_elements(doomed)


#: A tag written out as text: how a ``<noscript>`` read as raw text holds its markup.
_TAG_TEXT = re.compile(r"</?[a-zA-Z][^<>]*>")


def _noscript_content(noscript: etree._Element) -> bool:
    """Whether a ``<noscript>`` is the page's no-JavaScript rendering, to keep: more than
    NOSCRIPT_CONTENT_CHARS characters of text that is not markup. Markup its text holds (a
    parser may read a noscript's content as text: ``<img height="1" …>`` tracking pixels) is
    taken out of the kept one's text, never shown as words."""
    texts = [(node, attribute, getattr(node, attribute))
             for node in noscript.iter() for attribute in ("text", "tail")
             if node is not noscript or attribute == "text"]
    marked = [(node, attribute, value) for node, attribute, value in texts
              if value and "<" in value and _TAG_TEXT.search(value)]
    plain = sum(len(value) for _, _, value in texts if value) - sum(
        sum(map(len, _TAG_TEXT.findall(value))) for _, _, value in marked)
    if plain < NOSCRIPT_CONTENT_CHARS:
        return False
    for node, attribute, value in marked:
        _set_text(node, attribute, _TAG_TEXT.sub(" ", value))
    return True
