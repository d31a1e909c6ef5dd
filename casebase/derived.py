"""What a stored page's cases are derived from, stored once per page.

A case is a reference: its page and the ``position`` of its element in the page's element table
(plus its label, label source, count and history). What a case *shows* is derived from its page
and stored once per page, compactly, never once per case:

``Page.vectors``   every element's feature vector (:func:`noisecbr.features.vectorize`) under
                   ``Page.vector_schema``: one float32 matrix, stored transposed (one feature's
                   values side by side: long runs of zeros and repeated values) and
                   zlib-compressed. Exact, so training arrays and explanations are bit for bit
                   what they were when each case carried its own 884 bytes.
``Page.outline``   every element's path, tag and text (whitespace-normalised, cut to
                   :data:`~casebase.models.MAX_TEXT_CHARS`), joined and zlib-compressed.

Measured on the first 40 wcxb-dev pages (940 elements a page): the vectors 36 KB a page
(48 KB row by row; float16 26 KB but inexact; lzma 24 KB but twice as slow to read), the
outline 12 KB; one case row instead of 1.4 KB is some 50 bytes.

Both are derived data: ``casebase revectorize`` computes them again from ``Page.html`` after a
change of the vector schema. A case that is no element of its page as stored (a case written
by hand with a path of its own, a page that no longer parses) is kept as an *extra* row after
the page's elements, with its own path, tag, text and vector (:func:`with_extras`): every case
is a position in its page's blobs, and nothing a case held is dropped.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA, vectorize
from noisecbr.prepare.strings import normalize_space
from noisecbr.prepare.subtrees import ElementTable

from .models import MAX_TEXT_CHARS

__all__ = [
    "OUTLINE_FORMAT",
    "Extra",
    "Outline",
    "OutlineEntries",
    "PageDerived",
    "decode_outline",
    "decode_vectors",
    "decode_vectors_once",
    "derive",
    "encode_outline",
    "encode_vectors",
    "stored_entries",
    "stored_outline",
    "stored_paths",
    "subtree_texts",
    "with_extras",
]

#: zlib level of both blobs: 9 reads as fast as 6 and is 1 % smaller (measured, 40 pages).
_LEVEL = 9
#: Header of a vectors blob: rows (elements) and columns (features), little-endian uint32.
_HEADER = struct.Struct("<II")
#: The outline's format (its first byte): a reader refuses another (the blob is unreadable).
OUTLINE_FORMAT = 2
#: Separators of an outline's strings and of its lists (ASCII unit and record separators).
_UNIT, _RECORD = "\x1f", "\x1e"
#: Decoded blobs kept per process (by their bytes): a listing or an explanation reads many
#: cases of the same few pages. A decoded page is ~1 MB of vectors and ~0.3 MB of outline
#: for a 1 000-element page (17 MB of vectors at 20 000 elements): streaming reads
#: (:meth:`~casebase.arrays.ArraysMixin.iter_arrays`) decode without this cache.
_CACHED_PAGES = 16


def subtree_texts(table: ElementTable, max_chars: int = MAX_TEXT_CHARS) -> list[str]:
    """Each subtree's text: its pieces whitespace-normalised and joined by one space, cut to
    ``max_chars``. Only the pieces that reach ``max_chars`` are joined, so the body (the whole
    page's text) costs no more than a paragraph."""
    pieces = [normalize_space(piece) for piece in table.piece_text]
    lengths = np.fromiter((len(p) + 1 for p in pieces), dtype=np.int64, count=len(pieces))
    cumulative = np.concatenate([[0], np.cumsum(lengths)])
    start, end = table.piece_start, table.piece_end
    # Pieces start..k-1 joined are cumulative[k] - cumulative[start] - 1 characters long.
    enough = np.searchsorted(cumulative, cumulative[start] + max_chars + 1, side="left")
    stop = np.minimum(enough, end)
    return [" ".join(pieces[a:b])[:max_chars] for a, b in zip(start.tolist(), stop.tolist())]


def encode_vectors(vectors: np.ndarray) -> bytes:
    """A page's vectors (elements × features) as stored in ``Page.vectors``."""
    matrix = np.asarray(vectors, dtype="<f4")
    if matrix.ndim != 2:
        raise ValueError("vectors must be a matrix: one row per element")
    rows, columns = matrix.shape
    return _HEADER.pack(rows, columns) + zlib.compress(
        np.ascontiguousarray(matrix.T).tobytes(), _LEVEL)


@lru_cache(maxsize=_CACHED_PAGES)
def decode_vectors(blob: bytes) -> np.ndarray:
    """The read-only float32 matrix (elements × features) of a ``Page.vectors`` blob; raises
    ``ValueError`` for a damaged one. Kept in a small cache: :func:`decode_vectors_once`
    decodes without it."""
    return decode_vectors_once(blob)


def decode_vectors_once(blob: bytes) -> np.ndarray:
    """:func:`decode_vectors` without the cache (a stream of pages read once each)."""
    if len(blob) < _HEADER.size:
        raise ValueError("vectors blob too short")
    rows, columns = _HEADER.unpack_from(blob)
    try:
        raw = zlib.decompress(blob[_HEADER.size:])
    except zlib.error as error:
        raise ValueError(f"damaged vectors blob: {error}") from None
    if len(raw) != 4 * rows * columns:
        raise ValueError(f"vectors blob holds {len(raw)} bytes, not {rows} × {columns} values")
    matrix = np.frombuffer(raw, dtype="<f4").reshape(columns, rows).T
    out = np.ascontiguousarray(matrix)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class Outline:
    """Each element's path, tag and text, in table order."""

    paths: tuple[str, ...]
    tags: tuple[str, ...]
    texts: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.paths)


def encode_outline(outline: Outline) -> bytes:
    """An outline as stored in ``Page.outline``: its length and its three lists' strings, each
    list's joined by U+001F and the parts by U+001E, behind a format byte, zlib-compressed.
    Neither separator can be in a path, tag or text: the parsed tree holds only XML
    characters. Splitting reads an outline faster than JSON would (an explanation reads one
    for each page its neighbours come from)."""
    for strings in (outline.paths, outline.tags, outline.texts):
        if any(_UNIT in item or _RECORD in item for item in strings):
            raise ValueError("an outline string holds a separator character")
    joined = _RECORD.join([str(len(outline)), *(_UNIT.join(strings) for strings in
                                                (outline.paths, outline.tags, outline.texts))])
    return bytes([OUTLINE_FORMAT]) + zlib.compress(joined.encode("utf-8"), _LEVEL)


def _inflated_outline(blob: bytes) -> bytes:
    """The joined UTF-8 bytes of a ``Page.outline`` blob (its format byte checked, the rest
    decompressed); ``ValueError`` for a blob of another format or damaged."""
    if not blob or blob[0] != OUTLINE_FORMAT:
        raise ValueError("outline blob of an unknown format")
    try:
        return zlib.decompress(blob[1:])
    except zlib.error as error:
        raise ValueError(f"damaged outline blob: {error}") from None


@lru_cache(maxsize=_CACHED_PAGES)
def decode_outline(blob: bytes) -> Outline:
    """The outline of a ``Page.outline`` blob; raises ``ValueError`` for a damaged one."""
    try:
        joined = _inflated_outline(blob).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"damaged outline blob: {error}") from None
    parts = joined.split(_RECORD)
    if len(parts) != 4 or not parts[0].isdigit():
        raise ValueError("damaged outline blob: not a count and three lists")
    n = int(parts[0])
    paths, tags, texts = (tuple(part.split(_UNIT)) if n else () for part in parts[1:])
    if not len(paths) == len(tags) == len(texts) == n:
        raise ValueError("outline blob with lists of another length than its count")
    return Outline(paths, tags, texts)


def stored_outline(blob: bytes | None) -> Outline | None:
    """The outline of a page as stored (``Page.outline``), None when it has none or it cannot
    be read: what every reader of a stored page's paths and texts takes."""
    if blob is None:
        return None
    try:
        return decode_outline(blob)
    except ValueError:
        return None


class OutlineEntries:
    """A stored outline read entry by entry: an element's path, tag or text is decoded when
    asked. A list of cases (an explanation's neighbours: a few cases of each of ~40 pages)
    reads a few entries of many outlines; splitting each whole outline into strings took a
    third of an explanation's time (cProfile, 40 wcxb-dev pages against all development
    pages). Raises ``ValueError`` for a damaged blob, as :func:`decode_outline` does, but for
    bytes that are not UTF-8: an entry is decoded alone, those bytes replaced (U+FFFD)."""

    __slots__ = ("_raw", "_bounds", "_count")

    def __init__(self, blob: bytes) -> None:
        raw = _inflated_outline(blob)
        # The separators are ASCII: no byte of a multi-byte UTF-8 character can equal them.
        codes = np.frombuffer(raw, dtype=np.uint8)
        records = np.flatnonzero(codes == ord(_RECORD))
        if len(records) != 3 or not raw[:records[0]].isdigit():
            raise ValueError("damaged outline blob: not a count and three lists")
        count = int(raw[:records[0]])
        # Every separator after the count, then the end: entry k lies between bounds k and k+1.
        bounds = np.flatnonzero((codes == ord(_UNIT)) | (codes == ord(_RECORD)))
        bounds = np.append(bounds, len(raw)).astype(np.int64)
        if count and (len(bounds) != 3 * count + 1 or bounds[count] != records[1]
                      or bounds[2 * count] != records[2]):
            raise ValueError("outline blob with lists of another length than its count")
        self._raw, self._count, self._bounds = raw, count, bounds

    def __len__(self) -> int:
        return self._count

    def _entry(self, list_index: int, position: int) -> str:
        if not 0 <= position < self._count:
            raise IndexError(f"no element {position} in an outline of {self._count}")
        k = list_index * self._count + position
        start, end = self._bounds[k:k + 2].tolist()
        return self._raw[start + 1:end].decode("utf-8", "replace")

    def path(self, position: int) -> str:
        """The path of the element at ``position`` (0 ≤ position < len, else IndexError)."""
        return self._entry(0, position)

    def tag(self, position: int) -> str:
        """The tag of the element at ``position``."""
        return self._entry(1, position)

    def text(self, position: int) -> str:
        """The text of the element at ``position``."""
        return self._entry(2, position)


@lru_cache(maxsize=4 * _CACHED_PAGES)
def _outline_entries(blob: bytes) -> OutlineEntries:
    return OutlineEntries(blob)


def stored_entries(blob: bytes | None) -> OutlineEntries | None:
    """A page's stored outline read entry by entry (:class:`OutlineEntries`; the last 64 pages
    read are kept: an entry view holds the outline's bytes, not a string per entry), None
    when the page has none or it cannot be read."""
    if blob is None:
        return None
    try:
        return _outline_entries(blob)
    except ValueError:
        return None


def stored_paths(blob: bytes | None) -> tuple[str, ...]:
    """The element paths of a page's stored outline (none when :func:`stored_outline` has
    none)."""
    outline = stored_outline(blob)
    return outline.paths if outline is not None else ()


@dataclass(frozen=True)
class PageDerived:
    """The blobs stored with a page: its vectors (under ``vector_schema``) and outline."""

    vectors: bytes
    outline: bytes
    vector_schema: int


def derive(table: ElementTable, vectors: np.ndarray | None = None) -> PageDerived:
    """The stored blobs of a page's element table (``vectors``: its vectors when the caller
    has them already)."""
    if vectors is None:
        vectors = vectorize(table)
    outline = Outline(tuple(table.paths()), tuple(tag[:64] for tag in table.tags),
                      tuple(subtree_texts(table)))
    return PageDerived(encode_vectors(vectors), encode_outline(outline), VECTOR_SCHEMA)


@dataclass(frozen=True)
class Extra:
    """A case that is no element of its page as stored (written by hand with a path of its
    own, or its page no longer parses), kept with its own path, tag, text and vector."""

    path: str
    tag: str
    text: str
    vector: np.ndarray
    #: the vector schema of ``vector``
    schema: int


def with_extras(derived: PageDerived | None, extras: list[Extra]) -> tuple[PageDerived, int]:
    """``derived`` with ``extras`` (at least one) appended after its elements, and the position
    of the first. ``derived`` None: a page without elements (its HTML no longer parses), whose
    blobs are then of its extras' most common schema, as wide as that schema's vectors. An
    extra whose vector is of another schema than the page's (or of another width) is stored
    without it (NaN): it cannot be computed again, its path naming no element, and it would
    be trained on as a vector of the page's schema; ``load_arrays`` leaves the case out,
    saying so."""
    if derived is None:
        schemas = [e.schema for e in extras]
        schema = max(set(schemas), key=schemas.count)
        width = (len(FEATURE_NAMES) if schema == VECTOR_SCHEMA
                 else max(len(e.vector) for e in extras if e.schema == schema))
        outline, vectors = Outline((), (), ()), np.zeros((0, width), dtype=np.float32)
    else:
        outline, vectors = decode_outline(derived.outline), decode_vectors(derived.vectors)
        width, schema = vectors.shape[1], derived.vector_schema
    rows = [np.asarray(e.vector, dtype=np.float32)
            if e.schema == schema and len(e.vector) == width
            else np.full(width, np.nan, dtype=np.float32) for e in extras]
    first = len(outline)
    outline = Outline(outline.paths + tuple(e.path for e in extras),
                      outline.tags + tuple(e.tag[:64] for e in extras),
                      outline.texts + tuple(e.text for e in extras))
    matrix = np.vstack([vectors, *rows]) if rows else vectors
    return PageDerived(encode_vectors(matrix), encode_outline(outline), schema), first
