"""What a subtree's attributes say: the noise and content keywords of its root's class, id, role
and aria-label (the ``attributes`` group), and those of its ancestors together with their
landmark tags (the ``context`` group), as the bits of one uint64 per element.
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import KEYWORD_ATTRIBUTES, ElementTable, looked_up
from .tags import LANDMARKS, per_tag

__all__ = ["KEYWORDS", "MASK_BITS", "landmark_bits", "own_masks", "inherited_masks", "bits"]

#: Keywords looked for in class / id / role / aria-label (lower-cased, as substrings of tokens):
#: the vocabulary front-end developers use for page furniture, and for content.
KEYWORDS: tuple[str, ...] = (
    "nav", "menu", "header", "footer", "sidebar", "aside", "breadcrumb", "cookie", "consent",
    "banner", "share", "social", "related", "recommend", "comment", "advert", "sponsor", "promo",
    "newsletter", "subscribe", "modal", "widget", "tag", "author", "date", "pagination", "search",
    "login", "copyright", "skip", "toolbar", "ad",
    "article", "content", "main", "post", "entry", "body", "text", "story", "caption", "title",
)
#: ``ad`` only as a whole token (``ad``, ``ads``: ``ad-slot``), never inside ``header``/``load``.
_WHOLE_TOKEN_KEYWORDS = {"ad": ("ad", "ads")}

#: Bits above the keywords' in the masks whose ancestors are OR-ed: the landmark tags.
_LANDMARK_BIT = {tag: 1 << (len(KEYWORDS) + j) for j, tag in enumerate(LANDMARKS)}
#: The bits of a mask: the keywords', then the landmarks'.
MASK_BITS = len(KEYWORDS) + len(LANDMARKS)
#: The landmark bit of each landmark number of :func:`~noisecbr.features.tags.tag_columns`
#: (0: none).
_LANDMARK_BITS = np.array([0] + [_LANDMARK_BIT[tag] for tag in LANDMARKS], dtype=np.uint64)


#: Keyword masks by attribute value, filled as values are met: class strings repeat across a
#: page's elements and a site's pages. A plain dict, looked up with map(dict.get) (an
#: lru_cache would build a key tuple for every absent attribute, None); emptied when it grows
#: past _MASK_CACHE_SIZE.
_MASK_CACHE: dict[str | None, int] = {}
_MASK_CACHE_SIZE = 65536

#: One pattern per keyword, for the values not in the cache. A keyword is letters only, so it
#: lies inside one ``[a-z]+`` token wherever it occurs in the lower-cased value: searching the
#: value is the token rule. Whole-token keywords need letter boundaries.
_KEYWORD_PATTERNS = tuple(
    re.compile("(?<![a-z])(?:" + "|".join(map(re.escape, _WHOLE_TOKEN_KEYWORDS[k])) + ")(?![a-z])"
               if k in _WHOLE_TOKEN_KEYWORDS else re.escape(k))
    for k in KEYWORDS)
#: Joins the new values of a page into one string; not a letter, so no keyword spans two.
_SEPARATOR = "\x00"


def _new_masks(values: list[str]) -> list[int]:
    """The keyword masks of values not met before, all at once: each keyword is searched
    for in C over the values joined (a page brings a few hundred new class and id values,
    e.g. generated ``css-1x2y3z`` names; one at a time they cost a tokenisation each)."""
    # Each value lower-cased before joining: lower-casing can lengthen a str ("İ" → "i̇"), and
    # the positions below must be those of the lower-cased values.
    lowered = [value.lower() for value in values]
    joined = _SEPARATOR.join(lowered)
    lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)) + 1
    starts = np.cumsum(lengths) - lengths
    masks = np.zeros(len(values), dtype=np.uint64)
    for bit, pattern in enumerate(_KEYWORD_PATTERNS):
        found = [match.start() for match in pattern.finditer(joined)]
        if found:
            masks[np.searchsorted(starts, found, side="right") - 1] |= np.uint64(1 << bit)
    return masks.tolist()


def _trim_mask_cache() -> None:
    """Empty the mask cache when it has grown past its size (it is filled again as values are
    met); it always knows the absent and the empty value."""
    if len(_MASK_CACHE) > _MASK_CACHE_SIZE:
        _MASK_CACHE.clear()
    if not _MASK_CACHE:
        _MASK_CACHE.update({None: 0, "": 0})


@functools.cache
def _scanner():
    """The compiled kernel's keyword scanner: every keyword's forms with its bit."""
    return BACKEND.kernel.KeywordScanner([
        (form, 1 << bit, keyword in _WHOLE_TOKEN_KEYWORDS)
        for bit, keyword in enumerate(KEYWORDS)
        for form in _WHOLE_TOKEN_KEYWORDS.get(keyword, (keyword,))])


#: Stands for "not in the cache" in a mask array: above every keyword and landmark bit.
_UNKNOWN = 1 << 63


def _keyword_mask_array(values: list[str | None]) -> np.ndarray:
    """The keywords found in each attribute value (None when absent), as the bits of a uint64
    (bit i: ``KEYWORDS[i]`` is a substring of one of the value's lower-cased ``[a-z]+`` tokens;
    a whole-token keyword must be the whole token). One C-level pass of cache lookups straight
    into numpy, and a second only for the values not met before."""
    _trim_mask_cache()
    masks = looked_up(values, _MASK_CACHE, _UNKNOWN, True)
    unknown = masks == _UNKNOWN
    if unknown.any():  # values not met before
        missing = [values[k] for k in np.flatnonzero(unknown).tolist()]
        new = list(dict.fromkeys(missing))
        _MASK_CACHE.update(zip(new, _new_masks(new)))
        masks[unknown] = np.fromiter(map(_MASK_CACHE.__getitem__, missing), dtype=np.uint64,
                                     count=len(missing))
    return masks


def landmark_bits(landmarks: np.ndarray) -> np.ndarray:
    """The mask bits (uint64) of landmark numbers (:func:`~noisecbr.features.tags.tag_columns`)."""
    return _LANDMARK_BITS[landmarks]


def own_masks(table: ElementTable, landmarks: np.ndarray | None = None) -> np.ndarray:
    """Per element, the keywords of its class / id / role / aria-label (the table's
    ``keyword_values``) and its landmark tag (``landmarks``: the bits, if known), as the bits
    of one uint64: cached mask lookups."""
    if landmarks is None:
        landmarks = per_tag(lambda tag: _LANDMARK_BIT.get(tag, 0), table.tags, np.uint64)
    return _own_masks(table, landmarks)


def _own_masks_pure(table: ElementTable, landmarks: np.ndarray) -> np.ndarray:
    # The four attributes' values one after the other, looked up in one pass, then OR-ed per
    # element.
    values = list(itertools.chain.from_iterable(table.keyword_values))
    own = np.bitwise_or.reduce(
        _keyword_mask_array(values).reshape(len(KEYWORD_ATTRIBUTES), len(table.elements)),
        axis=0)
    own |= landmarks
    return own


def _own_masks_compiled(table: ElementTable, landmarks: np.ndarray) -> np.ndarray:
    # Each of the page's distinct values looked up once (the table numbers them for the
    # lexical fields too), the new values' keywords and the ORs in one C loop (its keyword
    # scan gives _new_masks's bits: tests/test_kernel.py compares the two).
    _trim_mask_cache()
    values, positions = table.attribute_values()
    return BACKEND.kernel.value_masks(values, np.ascontiguousarray(positions, np.int64),
                                      _MASK_CACHE, _scanner(),
                                      np.ascontiguousarray(landmarks, np.uint64))


_own_masks = BACKEND.dispatch(_own_masks_pure, _own_masks_compiled)


def inherited_masks(table: ElementTable, own: np.ndarray) -> np.ndarray:
    """For each element, the OR of ``own`` over its strict ancestors. Parents come before their
    children in the table (document order), so one forward pass over ints suffices."""
    return _inherited(table, own)


def _inherited_pure(table: ElementTable, own: np.ndarray) -> np.ndarray:
    own = own.tolist()
    parent = table.parent.tolist()
    inherited = [0] * len(own)
    for i in range(1, len(own)):
        p = parent[i]
        inherited[i] = inherited[p] | own[p]
    return np.fromiter(inherited, dtype=np.uint64, count=len(inherited))


def _inherited_compiled(table: ElementTable, own: np.ndarray) -> np.ndarray:
    return BACKEND.kernel.inherited(table.parent, own)


_inherited = BACKEND.dispatch(_inherited_pure, _inherited_compiled)


def bits(masks: np.ndarray | list[int], count: int) -> np.ndarray:
    """The low ``count`` bits of each mask as 0/1 columns (uint8)."""
    if isinstance(masks, list):
        masks = np.fromiter(masks, dtype=np.uint64, count=len(masks))
    as_bytes = masks.astype("<u8", copy=False).view(np.uint8).reshape(len(masks), 8)
    return np.unpackbits(as_bytes, axis=1, count=count, bitorder="little")
