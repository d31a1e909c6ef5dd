"""Lexical cues the network learns: hashed tokens of a subtree's markup and text.

The hand-written vocabularies of the dense vector know page furniture in a few languages; the
words that mark it on the web are many more ("Most read", "Foto:", "Lesezeit",
"Actualizado") and so are the class names (``rail``, ``kicker``, ``dek``, ``credit``,
``outbrain``). Here every token is *hashed* into one of 2**BUCKET_BITS buckets (feature
hashing: no vocabulary to ship or to keep in step with the pages), and the model holds a
learned vector for each bucket its training saw on enough sites (:class:`Lexicon`). A subtree
is described by five pooled fields, each the mean of the vectors of its known tokens:

``attr``  the tokens of the subtree root's class, id, role and aria-label (split at
          non-letters and at camelCase humps, lower-cased)
``anc``   the same tokens of its LEXICAL_ANCESTORS nearest ancestors
``head``  its first HEAD_WORDS words (a widget's heading: "Ähnliche Nachrichten")
``bag``   all its words
``page``  all the page's words (the same for every subtree: what kind of page it is, a
          product's, a forum's, an article's, in its own words)

A token whose bucket the model does not know adds nothing and is not counted: tokens never seen
in training (a site's generated class names, a rare word) are harmless. The buckets are the
same on every machine and in every process (FNV-1a of the lower-cased UTF-8 bytes, not
Python's salted ``hash``).

This module computes the model-independent part, :class:`LexicalInputs` (which bucket each
token falls in, and which tokens each subtree holds); :meth:`Lexicon.pool` turns them into the
network's inputs with the model's learned vectors. Training learns those vectors with the rest
of the network (:mod:`training.train`); cleaning runs in numpy.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable, element_rows
from ..settings import LEXICAL_ANCESTORS
from .hashing import BUCKET_BITS, BUCKET_MASK, bucket
from .tokens import HEAD_WORDS, token_buckets

__all__ = ["BUCKET_BITS", "FIELDS", "LEXICAL_ANCESTORS", "HEAD_WORDS", "LEXICON_TENSORS",
           "LexicalInputs", "Lexicon", "bucket", "attribute_tokens", "lexical_inputs",
           "check_lexicon", "lexicon_tensors", "read_lexicon"]

#: The pooled fields, in the order of the network's inputs.
FIELDS = ("attr", "anc", "head", "bag", "page")

#: Attribute tokens: runs of letters and digits; camelCase humps split ("articleBody").
_ATTRIBUTE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
#: Attribute tokens shorter than this say nothing (``a``, ``x``); longer than the other bound
#: they are generated names or base64.
_MIN_TOKEN, _MAX_TOKEN = 2, 30


def attribute_tokens(value: str) -> list[str]:
    """The tokens of a class / id / role / aria-label value, lower case.

    >>> attribute_tokens("article-body related_stories carouselItem x")
    ['article', 'body', 'related', 'stories', 'carousel', 'item']
    """
    return [part.lower() for part in _ATTRIBUTE_PART.findall(value)
            if _MIN_TOKEN <= len(part) <= _MAX_TOKEN and not part.isdigit()]


#: Buckets by attribute value, filled as they are met (class names repeat within and across a
#: site's pages); emptied when it grows past its size.
_VALUE_BUCKETS: dict[str | None, tuple[int, ...]] = {}
_CACHE_SIZE = 200_000


def _value_buckets(value: str | None) -> tuple[int, ...]:
    found = _VALUE_BUCKETS.get(value)
    if found is None:
        if len(_VALUE_BUCKETS) > _CACHE_SIZE:
            _VALUE_BUCKETS.clear()
        found = _VALUE_BUCKETS[value] = value_buckets(value)
    return found


def value_buckets(value: str | None) -> tuple[int, ...]:
    """The buckets of an attribute value's tokens (:func:`attribute_tokens`): by the compiled
    kernel for an ASCII value (tests/test_lexical.py compares the two)."""
    if not value:
        return ()
    return _token_buckets(value)


def _token_buckets_pure(value: str) -> tuple[int, ...]:
    return tuple(map(bucket, attribute_tokens(value)))


def _token_buckets_compiled(value: str) -> tuple[int, ...]:
    found = BACKEND.kernel.attribute_buckets(value, BUCKET_BITS, _MIN_TOKEN, _MAX_TOKEN)
    # The kernel reads ASCII values only (None for the others).
    return _token_buckets_pure(value) if found is None else found


_token_buckets = BACKEND.dispatch(_token_buckets_pure, _token_buckets_compiled)


def _buckets_of_pure(values: list[str | None]) -> list[tuple[int, ...]]:
    return [_value_buckets(value) for value in values]


def _buckets_of_compiled(values: list[str | None]) -> list[tuple[int, ...]]:
    if len(_VALUE_BUCKETS) > _CACHE_SIZE:
        _VALUE_BUCKETS.clear()
    return BACKEND.kernel.attribute_buckets_of(values, _VALUE_BUCKETS, _token_buckets_pure,
                                               BUCKET_BITS, _MIN_TOKEN, _MAX_TOKEN)


#: The buckets of each of a page's distinct attribute values (the cache first).
_buckets_of = BACKEND.dispatch(_buckets_of_pure, _buckets_of_compiled)


def _attribute_buckets(table: ElementTable) -> tuple[np.ndarray, np.ndarray]:
    """The buckets of every element's attribute tokens, element after element (its class,
    id, role and aria-label in that order), and where each element's end: each distinct
    value of the page tokenised once."""
    if not len(table):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    values, positions = table.attribute_values()
    return _element_runs(_buckets_of(values), positions)


def _element_runs_pure(per_value: list[tuple[int, ...]], positions: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The items of each element's values (``positions``: attributes × elements, each a value's
    index into ``per_value``) element after element, its attributes in order, and where each
    element's run ends."""
    lengths = np.fromiter(map(len, per_value), dtype=np.int64, count=len(per_value))
    pool = np.fromiter(itertools.chain.from_iterable(per_value), dtype=np.int64,
                       count=int(lengths.sum()))
    value_start = np.cumsum(lengths) - lengths
    chosen = positions.T.reshape(-1)  # element after element, its attributes in order
    sizes = lengths[chosen]
    run_at = np.cumsum(sizes) - sizes
    flat = np.repeat(value_start[chosen] - run_at, sizes) + np.arange(int(sizes.sum()))
    per_element = sizes.reshape(positions.shape[1], positions.shape[0]).sum(axis=1)
    return pool[flat], np.cumsum(per_element)


def _element_runs_compiled(per_value: list[tuple[int, ...]], positions: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray]:
    # One C pass: the dozen numpy calls above cost 0.05 ms a dragnet page.
    return BACKEND.kernel.element_runs(per_value, np.ascontiguousarray(positions, np.int64))


_element_runs = BACKEND.dispatch(_element_runs_pure, _element_runs_compiled)


@dataclass
class LexicalInputs:
    """Which bucket each token of a page falls in, and which tokens each subtree holds."""

    text: np.ndarray  # int64 bucket of every word of the page, in document order
    text_start: np.ndarray  # int64 per element: its subtree's words are text[start:end]
    text_end: np.ndarray
    attr: np.ndarray  # int64 buckets of the elements' attribute tokens, element after element
    attr_start: np.ndarray  # int64 per element: its own attribute tokens are attr[start:end]
    attr_end: np.ndarray
    # int64 (elements, LEXICAL_ANCESTORS): the nearest ancestors, -1 past the body
    ancestors: np.ndarray

    def __len__(self) -> int:
        return len(self.text_start)


def ancestor_columns(parent: np.ndarray, depth: int = LEXICAL_ANCESTORS) -> np.ndarray:
    """Per element, its ``depth`` nearest ancestors (parent first), −1 beyond the root."""
    parent = np.asarray(parent, dtype=np.int64)
    out = np.full((len(parent), depth), -1, dtype=np.int64)
    current = parent
    for k in range(depth):
        out[:, k] = current
        current = np.where(current >= 0, parent[np.maximum(current, 0)], -1)
    return out


def lexical_inputs(table: ElementTable) -> LexicalInputs:
    """The page's :class:`LexicalInputs`: its words' buckets (the table's tokens, lower-cased:
    read off the token codes the vector groups read too) and its elements' attribute tokens'
    buckets."""
    offsets = np.zeros(len(table.piece_words) + 1, dtype=np.int64)
    np.cumsum(table.piece_words, out=offsets[1:])
    attr, attr_end = _attribute_buckets(table)
    return LexicalInputs(
        text=token_buckets(table),
        text_start=offsets[table.piece_start], text_end=offsets[table.piece_end],
        attr=attr, attr_start=np.concatenate([[0], attr_end[:-1]]).astype(np.int64),
        attr_end=attr_end,
        ancestors=ancestor_columns(table.parent))


@dataclass
class Lexicon:
    """The learned vectors of the buckets a model knows: one table for words (``head``,
    ``bag``), one for attribute tokens (``attr``, ``anc``). ``*_buckets`` are sorted."""

    text_buckets: np.ndarray  # int64 (K,), sorted, distinct
    text_vectors: np.ndarray  # float32 (K, dim)
    attr_buckets: np.ndarray
    attr_vectors: np.ndarray

    @property
    def dim(self) -> int:
        """The length of each bucket's vector."""
        return int(self.text_vectors.shape[1])

    @property
    def width(self) -> int:
        """The number of network inputs the pooled fields add."""
        return len(FIELDS) * self.dim

    def _float64(self) -> tuple[np.ndarray, np.ndarray]:
        """The two tables' vectors in float64 (as the pooling sums them), made once."""
        found = self.__dict__.get("_float64_tables")
        if found is None:
            found = self.__dict__["_float64_tables"] = (
                np.ascontiguousarray(self.text_vectors, dtype=np.float64),
                np.ascontiguousarray(self.attr_vectors, dtype=np.float64))
        return found

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Per bucket, its row in the word and in the attribute table (−1: unknown), made on
        first use: one gather per token (4 MB each; a binary search per token cost a tenth of
        a page's time)."""
        found = self.__dict__.get("_row_tables")
        if found is None:
            found = []
            for buckets in (self.text_buckets, self.attr_buckets):
                rows = np.full(1 << BUCKET_BITS, -1, dtype=np.int32)
                rows[buckets] = np.arange(len(buckets), dtype=np.int32)
                found.append(rows)
            found = self.__dict__["_row_tables"] = tuple(found)
        return found

    def pool(self, inputs: LexicalInputs, rows: np.ndarray | None = None) -> np.ndarray:
        """The pooled fields of every element (float32, elements × len(FIELDS)·dim), or of the
        elements ``rows`` only (distinct indices), each the same as the whole page's; by the
        compiled kernel when it is in use (the same operations: tests/test_lexical.py compares
        the two)."""
        return self.pooler(inputs)(rows)

    def pooler(self, inputs: LexicalInputs) -> Callable[[np.ndarray | None], np.ndarray]:
        """:meth:`pool` row by row: what every element's fields read (the words' running
        sums) found once, then each call pools the rows asked (None: all)."""
        width, n = len(FIELDS) * self.dim, len(inputs)
        fill = _pooler(self, inputs) if n else None

        def pooled(rows: np.ndarray | None = None) -> np.ndarray:
            rows = element_rows(rows, n)
            out = np.zeros((n if rows is None else len(rows), width), dtype=np.float32)
            if len(out):
                fill(out, rows)
            return out

        return pooled


def _pooler_compiled(lexicon: Lexicon, inputs: LexicalInputs) -> Callable:
    if lexicon.dim > 64:  # the kernel pools vectors of up to 64 numbers
        return _pooler_pure(lexicon, inputs)
    text_rows, attr_rows = lexicon._rows()
    text64, attr64 = lexicon._float64()
    sums = BACKEND.kernel.pool_sums(inputs, text_rows, text64, attr_rows, attr64)
    return lambda out, rows: BACKEND.kernel.pool_rows(out, inputs, sums, HEAD_WORDS, rows)


def _pooler_pure(lexicon: Lexicon, inputs: LexicalInputs) -> Callable:
    """The pooled fields of every element with numpy (the reference of the kernel's), then
    those of the rows asked."""
    every = np.zeros((len(inputs), len(FIELDS) * lexicon.dim), dtype=np.float32)
    _pool_pure(lexicon, inputs, *lexicon._rows(), every)

    def fill(out: np.ndarray, rows: np.ndarray | None) -> None:
        out[:] = every if rows is None else every[rows]

    return fill


_pooler = BACKEND.dispatch(_pooler_pure, _pooler_compiled)


def _pool_pure(lexicon: Lexicon, inputs: LexicalInputs, text_rows: np.ndarray,
               attr_rows: np.ndarray, out: np.ndarray) -> None:
    """Every element's pooled fields in numpy into ``out``: the reference of the kernel's."""
    n, dim = len(inputs), lexicon.dim
    text_sum, text_count = _prefix(text_rows, lexicon.text_vectors, inputs.text)
    head_end = np.minimum(inputs.text_start + HEAD_WORDS, inputs.text_end)
    out[:, 2 * dim:3 * dim] = _mean(text_sum, text_count, inputs.text_start, head_end)
    out[:, 3 * dim:4 * dim] = _mean(text_sum, text_count, inputs.text_start,
                                    inputs.text_end)
    out[:, 4 * dim:] = _mean(text_sum, text_count, inputs.text_start[:1],
                             inputs.text_end[:1])  # the body's words: the page's
    attr_sum, attr_count = _prefix(attr_rows, lexicon.attr_vectors, inputs.attr)
    own = attr_sum[inputs.attr_end] - attr_sum[inputs.attr_start]
    own_count = attr_count[inputs.attr_end] - attr_count[inputs.attr_start]
    out[:, :dim] = own / np.maximum(own_count, 1)[:, None]
    around = np.zeros((n, dim))
    around_count = np.zeros(n)
    for k in range(inputs.ancestors.shape[1]):
        ancestor = inputs.ancestors[:, k]
        has = ancestor >= 0
        around[has] += own[ancestor[has]]
        around_count[has] += own_count[ancestor[has]]
    out[:, dim:2 * dim] = around / np.maximum(around_count, 1)[:, None]


def _prefix(rows: np.ndarray, vectors: np.ndarray, tokens: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative sums (leading zero row) of the tokens' vectors and of the known tokens
    (``rows``: each bucket's row of ``vectors``, −1 for an unknown one)."""
    row = rows[tokens]
    known = row >= 0
    values = np.zeros((len(tokens) + 1, vectors.shape[1]))
    values[1:][known] = vectors[row[known]]
    np.cumsum(values, axis=0, out=values)
    count = np.zeros(len(tokens) + 1)
    np.cumsum(known, out=count[1:])
    return values, count


def _mean(total: np.ndarray, count: np.ndarray, start: np.ndarray, end: np.ndarray
          ) -> np.ndarray:
    """The mean vector of the known tokens in [start, end) of each element (0 if none)."""
    return (total[end] - total[start]) / np.maximum(count[end] - count[start], 1)[:, None]


#: The tensors of a model file that hold its lexicon.
LEXICON_TENSORS = ("lexicon.text.buckets", "lexicon.text.vectors", "lexicon.attr.buckets",
                   "lexicon.attr.vectors")
#: What the pooled fields mean: a model trained under other settings reads other inputs.
_SETTINGS = {"bucket_bits": BUCKET_BITS, "fields": list(FIELDS), "ancestors": LEXICAL_ANCESTORS,
             "head_words": HEAD_WORDS}


def check_lexicon(lexicon: Lexicon) -> None:
    """Raise ValueError unless the lexicon's tables are usable: sorted distinct buckets in
    range, one finite float32 vector of the same length per bucket."""
    dims = set()
    for name in ("text", "attr"):
        buckets = np.asarray(getattr(lexicon, f"{name}_buckets"))
        vectors = np.asarray(getattr(lexicon, f"{name}_vectors"))
        if buckets.ndim != 1 or not np.issubdtype(buckets.dtype, np.integer):
            raise ValueError(f"{name} buckets must be a 1-D integer array")
        if vectors.ndim != 2 or vectors.shape[0] != len(buckets):
            raise ValueError(f"{name} vectors must be a matrix of one row per bucket, not "
                             f"{vectors.shape} for {len(buckets)} buckets")
        if vectors.dtype != np.float32 or not np.all(np.isfinite(vectors)):
            raise ValueError(f"{name} vectors must be finite float32, not {vectors.dtype}")
        # Compared as they are (a difference of unsigned buckets would wrap around).
        if len(buckets) and (not np.all(buckets[1:] > buckets[:-1]) or buckets.min() < 0
                             or buckets.max() > BUCKET_MASK):
            raise ValueError(f"{name} buckets must be sorted, distinct and below "
                             f"2**{BUCKET_BITS}")
        dims.add(vectors.shape[1])
        setattr(lexicon, f"{name}_buckets", buckets.astype(np.int64))
    if len(dims) != 1 or 0 in dims:
        raise ValueError(f"both tables need vectors of one nonzero length, not {sorted(dims)}")


def lexicon_tensors(lexicon: Lexicon) -> dict:
    """The lexicon as a model file holds it: ``{"lexicon": settings, "tensors": {...}}``."""
    return {"lexicon": {**_SETTINGS, "dim": lexicon.dim}, "tensors": {
        "lexicon.text.buckets": lexicon.text_buckets.astype(np.int64),
        "lexicon.text.vectors": np.ascontiguousarray(lexicon.text_vectors, dtype=np.float32),
        "lexicon.attr.buckets": lexicon.attr_buckets.astype(np.int64),
        "lexicon.attr.vectors": np.ascontiguousarray(lexicon.attr_vectors, dtype=np.float32)}}


def read_lexicon(settings, tensors: dict[str, np.ndarray]) -> Lexicon | None:
    """The lexicon of a model file's metadata and tensors (None when it has none); ValueError
    when it was made under other settings or lacks a table."""
    if settings is None:
        return None
    if not isinstance(settings, dict):
        raise ValueError("the lexicon settings must be a JSON object")
    differ = {k: settings.get(k) for k, v in _SETTINGS.items() if settings.get(k) != v}
    if differ:
        raise ValueError(f"the lexicon was made with {differ}, this code reads {_SETTINGS}")
    missing = [key for key in LEXICON_TENSORS if key not in tensors]
    if missing:
        raise ValueError(f"the lexicon lacks tensor {missing[0]!r}")
    return Lexicon(*(tensors[key] for key in LEXICON_TENSORS))
