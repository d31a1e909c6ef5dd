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

from typing import Literal

from lxml import etree

from .. import errors

# The input errors live in errors.py (limits.py and sniff.py raise them too): tidy, where
# callers have always found them, re-exports them all.
from ..errors import *  # noqa: F403
from ..errors import EmptyInputError, InputError
from .decode import text_and_charset
from .limits import DEFAULT_MAX_BYTES, check_elements, check_size, limit_attributes
from .parse import flatten_deep, parse_html5lib, parse_lxml, repaired, too_deep_for_libxml2
from .sniff import SNIFF_BYTES, refuse_non_html
from .strings import drop_elements
from .visibility import keep_declarations, remove_invisible

__all__ = [
    *errors.__all__,
    "DEFAULT_MAX_BYTES",
    "Parser",
    "tidy",
]

Parser = Literal["lxml", "html5lib"]


#: Elements that belong in <head>; anything else found there (libxml2 leaves body content in the
#: head of some malformed pages) is moved to the start of the body.
_HEAD_TAGS = frozenset(("title", "meta", "link", "style", "script", "base", "noscript",
                        "template"))


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
    text, encoding = text_and_charset(source)
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
            if too_deep_for_libxml2(limited):
                limited = flatten_deep(limited)
            root = repaired(parse_html5lib(limited), limited, parse_html5lib)
        else:
            root = repaired(parse_lxml(limited, raw, encoding), limited, parse_lxml)
    except (etree.ParserError, ValueError) as error:
        raise InputError(f"cannot parse input as HTML: {error}") from error
    check_elements(root, max_elements)
    body = _body_of(root)
    keep_declarations(root, body)
    remove_invisible(body)
    return body

