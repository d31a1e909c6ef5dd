"""Bounds on the work one page may cost: bytes, elements, attributes of one element.

Together with tidy's depth flattening (``MAX_PARSE_DEPTH``) these make the work of a page at
most linear in its bytes with a small constant: a page of up to :data:`DEFAULT_MAX_BYTES` is
cleaned in seconds and under 1 GB (``benchmarks/sizes.py``). Over the byte or element limit a
page is refused with :class:`InputTooLargeError`; an element's attributes beyond
:data:`MAX_ATTRIBUTES` are dropped before parsing (a degraded but complete result: no page has
a reason to carry that many, and libxml2 checks each new attribute against all earlier ones
of its element, so 100 000 of them took 17 s).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from typing import BinaryIO

from lxml import etree

from ..errors import InputError, InputTooLargeError
from ..native.backend import BACKEND
from ..settings import DEFAULT_MAX_BYTES, MAX_ATTRIBUTES, MAX_ELEMENTS

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_ELEMENTS",
    "MAX_ATTRIBUTES",
    "check_size",
    "check_elements",
    "limit_attributes",
    "read_file_limited",
    "read_limited",
    "reading_problem",
]


#: A start tag is checked for too many attributes only when it runs this long without a ``<``
#: or ``>``: 1 000 attributes take at least 2 000 characters, and finding such runs is one
#: C-level regex scan of the page. (A tag whose quoted values hold ``<`` or ``>`` escapes the
#: test: libxml2 then meets all its attributes.)
_LONG_TAG_CHARS = 2 * MAX_ATTRIBUTES
_LONG_TAG = re.compile(rf"<[a-zA-Z][^<>]{{{_LONG_TAG_CHARS},}}")
_TAG_NAME = re.compile(r"<[a-zA-Z][^\s/>]*")
#: One attribute as libxml2 reads it (separators optional: ``a="1"b="2"`` is two). Matched one
#: at a time: a single pattern repeating it would backtrack exponentially on tags that fall
#: short of the limit (``x=a/b`` splits two ways).
_ATTRIBUTE = re.compile(
    r"""[\s/]*[^\s/>"'=][^\s/>=]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"'][^\s>]*))?""")
_COUNT_ELEMENTS = etree.XPath("count(//*)")


def check_size(size: int, max_bytes: int) -> None:
    """Raise :class:`InputTooLargeError` when ``size`` bytes exceed ``max_bytes``."""
    if size > max_bytes:
        raise InputTooLargeError(f"input is {size:,} bytes, over the limit of {max_bytes:,} "
                                 "(raise it with max_bytes= or --max-bytes)")


def check_elements(root: etree._Element, max_elements: int | None = None) -> None:
    """Raise :class:`InputTooLargeError` when the parsed page has more than ``max_elements``
    (default :data:`MAX_ELEMENTS`) elements, counted by libxml2 without a Python object per
    element."""
    if max_elements is None:
        max_elements = MAX_ELEMENTS
    count = _count_elements(root)
    if count > max_elements:
        raise InputTooLargeError(f"page has {count:,} elements, over the limit of "
                                 f"{max_elements:,} (raise it with max_elements= or "
                                 "--max-elements)")


def limit_attributes(text: str, utf8: bytes | None = None) -> str:
    """``text`` with the attributes of each start tag beyond :data:`MAX_ATTRIBUTES` removed
    (the text itself when no tag has that many, the common case, found by one scan).

    ``utf8``: ``text`` encoded in UTF-8, if at hand. A tag that long in the text is at least as
    long in the bytes (a character is one byte or more; ``<``, ``>`` and ASCII letters are one
    byte and no part of another character), so a page whose bytes hold none is passed by
    scanning bytes, which the compiled kernel does at memchr's speed."""
    first = _first_long_tag(text, utf8)
    if first < 0:
        return text
    out: list[str] = []
    last = 0
    for start in _long_tags(text, first):
        cut, end = _attribute_span(text, start)
        if cut is not None:
            out.append(text[last:cut])
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _first_long_tag_pure(text: str, utf8: bytes | None = None) -> int:
    """Where the first start tag long enough to hold too many attributes begins, or -1 (the
    pure Python path of the compiled kernel's scan, which is about ten times faster)."""
    match = _LONG_TAG.search(text)
    return -1 if match is None else match.start()


def _first_long_tag_compiled(text: str, utf8: bytes | None = None) -> int:
    scan = BACKEND.kernel.first_long_tag
    if utf8 is not None and scan(utf8, _LONG_TAG_CHARS) < 0:
        return -1  # no tag that long in the bytes, so none in the text
    return scan(text, _LONG_TAG_CHARS)


_first_long_tag = BACKEND.dispatch(_first_long_tag_pure, _first_long_tag_compiled)


def _long_tags_pure(text: str, first: int) -> list[int]:
    """Where every start tag long enough to hold too many attributes begins, from ``first``
    on (the reference of the kernel's one pass)."""
    return [match.start() for match in _LONG_TAG.finditer(text, first)]


def _long_tags_compiled(text: str, first: int) -> list[int]:
    return BACKEND.kernel.long_tags(text, _LONG_TAG_CHARS, first)


_long_tags = BACKEND.dispatch(_long_tags_pure, _long_tags_compiled)


def _count_elements_pure(root: etree._Element) -> int:
    """The elements below ``root`` (libxml2's XPath count: a node set first)."""
    return int(_COUNT_ELEMENTS(root))


def _count_elements_compiled(root: etree._Element) -> int:
    # One walk over the nodes, no node set.
    return BACKEND.kernel.count_elements(root)


_count_elements = BACKEND.dispatch(_count_elements_pure, _count_elements_compiled)


def _attribute_span(text: str, start: int) -> tuple[int | None, int]:
    """For the start tag at ``start``: where its MAX_ATTRIBUTES-th attribute ends (None when
    it has no more than that many) and where its last attribute ends."""
    position = _TAG_NAME.match(text, start).end()
    count, cut = 0, None
    while (attribute := _ATTRIBUTE.match(text, position)) is not None:
        count += 1
        position = attribute.end()
        if count == MAX_ATTRIBUTES:
            cut = position
    return (cut if count > MAX_ATTRIBUTES else None), position


#: Decompressed bytes read per step (1 MiB: few steps, little memory beyond the page).
_CHUNK = 1 << 20


def read_limited(stream: BinaryIO, max_bytes: int) -> bytes:
    """Up to ``max_bytes`` of ``stream``, gunzipped as it is read when it starts with the gzip
    magic; :class:`InputTooLargeError` as soon as there is more (a 1 GB gzip bomb is stopped
    after ``max_bytes``, never decompressed whole). A damaged gzip stream is an
    :class:`InputError`."""
    if not hasattr(stream, "peek"):  # e.g. a BytesIO standing in for standard input
        stream = io.BufferedReader(stream)
    compressed = stream.peek(2)[:2] == b"\x1f\x8b"
    data: BinaryIO = gzip.GzipFile(fileobj=stream, mode="rb") if compressed else stream
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= max_bytes:
            chunk = data.read(min(_CHUNK, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise InputError(f"cannot decompress the gzip input: {error}") from error
    if size > max_bytes:
        what = "decompresses to" if compressed else "is"
        raise InputTooLargeError(f"input {what} more than {max_bytes:,} bytes, the limit "
                                 "(raise it with max_bytes= or --max-bytes)")
    return b"".join(chunks)


def read_file_limited(path: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A page file's bytes, gunzipped when they are gzip (by their magic, whatever the name),
    bounded as :func:`read_limited`: the one reader of page files for every entry point (clean,
    the case base's imports, the datasets). A damaged or oversized file is an
    :class:`InputError`, which each caller reports as a skipped page."""
    with open(path, "rb") as handle:
        return read_limited(handle, max_bytes)


def reading_problem(error: InputError | OSError) -> str:
    """How a page file that could not be read (:func:`read_file_limited`) is reported: the
    :class:`InputError`'s reason, or "cannot read: " and the system's."""
    if isinstance(error, InputError):
        return str(error)
    return f"cannot read: {error.strerror or error}"
