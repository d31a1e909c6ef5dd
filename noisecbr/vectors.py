"""Subtree vectors: the paper's eq. 1 leaf-frequency shares plus the features that decide noise.

Eq. 1 (Htwe): for each leaf-node type n of a fixed vocabulary, x_n = S_n / T_n, the number of the
subtree's leaves of type n over the number of its leaves. A *leaf* is an element without element
children (typed by its tag, see :data:`LEAF_TYPES`) or a text piece of an element that also has
element children (type ``text``: running text mixed with markup).

The full vector appends feature groups, each scaled to about [0, 1]:

``text``       log text length and words, link density, punctuation and stop-word rates, how much
               of the subtree's text is its root's own, its share of the page's text
``structure``  depth, position in the page, children, size
``tag``        one-hot of the subtree root's tag group
``attributes`` noise/content keywords found in the root's class, id, role and aria-label
``context``    the same keywords on any ancestor, the ancestors' landmark tags, and the parent's
               text features
``candidate``  where the subtree lies relative to the page's *main candidate*: the element with
               the highest readability-style content score (paragraph-like text scores for its
               parent and half for its grandparent, damped by link density). Inside it, around
               it, or beside it, and how much of the subtree's text is the candidate's.
``page``       where the subtree's text lies in the page, how often its tag + class repeats,
               its neighbours (:mod:`noisecbr.pagefeatures`, schema 3)
``vocabulary`` Title Case, digits, and boilerplate words in its text and its heading
               (:mod:`noisecbr.pagefeatures`, schema 3)

All vectors of a page come from one :class:`~noisecbr.subtrees.ElementTable`: one walk, then
numpy. Changing anything here changes :data:`VECTOR_SCHEMA`, so models trained on other vectors
are refused instead of silently mis-read.
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

from .pagefeatures import (
    DIGIT,
    HEAD_WORDS,
    PAGE_FEATURES,
    SENTENCE_WORDS,
    STOP,
    TITLE,
    VOCABULARIES,
    VOCABULARY_FEATURES,
    VOCABULARY_SHIFT,
    _cumulative,
    page_features,
    repeats,
    token_codes,
    vocabulary_features,
)
from .subtrees import COMPILED, KEYWORD_ATTRIBUTES, ElementTable

__all__ = [
    "VECTOR_SCHEMA",
    "LEAF_TYPES",
    "TAG_GROUPS",
    "KEYWORDS",
    "FEATURE_GROUPS",
    "FEATURE_NAMES",
    "leaf_counts",
    "leaf_shares",
    "vectorize",
]

#: Bumped whenever a feature's definition, order or scaling changes.
VECTOR_SCHEMA = 3

#: Leaf-node types of eq. 1 (30). Tags not listed count as ``other``; ``text`` is running text
#: beside child elements. Grouped types: media = video/audio/svg/picture/canvas/source,
#: code = code/pre/kbd/samp, inline = em/strong/b/i/u/small/mark/sup/sub/abbr/cite/q.
LEAF_TYPES: tuple[str, ...] = (
    "a", "img", "input", "select", "option", "button", "textarea", "label", "li", "td", "th",
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "span", "div", "text", "br", "hr", "iframe",
    "media", "code", "inline", "time", "figcaption", "other",
)
_LEAF_ALIASES = {
    **{t: "media" for t in ("video", "audio", "svg", "picture", "canvas", "source")},
    **{t: "code" for t in ("code", "pre", "kbd", "samp")},
    **{t: "inline" for t in "em strong b i u small mark sup sub abbr cite q".split()},
}
_LEAF_INDEX = {name: i for i, name in enumerate(LEAF_TYPES)}
_TEXT_LEAF = _LEAF_INDEX["text"]
_OTHER_LEAF = _LEAF_INDEX["other"]

#: Tag groups of the subtree root (one-hot).
TAG_GROUPS: tuple[str, ...] = (
    "div", "section", "article", "main", "nav", "header", "footer", "aside", "list", "li", "p",
    "a", "span", "table", "tr", "cell", "form", "control", "heading", "img", "figure",
    "blockquote", "code", "dl", "inline", "other",
)
_TAG_ALIASES = {
    "ul": "list", "ol": "list", "menu": "list", "td": "cell", "th": "cell",
    "thead": "table", "tbody": "table", "tfoot": "table", "caption": "table",
    "input": "control", "button": "control", "select": "control", "textarea": "control",
    "label": "control", "option": "control", "fieldset": "form",
    **{f"h{k}": "heading" for k in range(1, 7)}, "hgroup": "heading",
    "picture": "img", "svg": "img", "video": "img", "iframe": "img", "figcaption": "figure",
    "pre": "code", "dt": "dl", "dd": "dl",
    **{t: "inline" for t in "em strong b i u small mark sup sub abbr cite q time".split()},
}
_TAG_INDEX = {name: i for i, name in enumerate(TAG_GROUPS)}

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
    return COMPILED.KeywordScanner([
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
    masks = (COMPILED.lookup(values, _MASK_CACHE, _UNKNOWN, True) if COMPILED is not None
             else np.fromiter(map(_MASK_CACHE.get, values, itertools.repeat(_UNKNOWN)),
                              dtype=np.uint64, count=len(values)))
    unknown = masks == _UNKNOWN
    if unknown.any():  # values not met before
        missing = [values[k] for k in np.flatnonzero(unknown).tolist()]
        new = list(dict.fromkeys(missing))
        _MASK_CACHE.update(zip(new, _new_masks(new)))
        masks[unknown] = np.fromiter(map(_MASK_CACHE.__getitem__, missing), dtype=np.uint64,
                                     count=len(missing))
    return masks


#: Landmark tags whose descendants are furniture (or content) whatever their own markup says.
_LANDMARKS = ("nav", "header", "footer", "aside", "form", "article", "main")

_TEXT_FEATURES = ("log_chars", "log_words", "link_density", "punct_rate", "stop_share",
                  "own_share", "page_share", "chars_per_element")
_STRUCTURE_FEATURES = ("depth", "log_depth", "position_start", "position_end", "log_children",
                       "log_size", "page_size_share")
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "leaf": tuple(f"leaf:{t}" for t in LEAF_TYPES),
    "text": _TEXT_FEATURES,
    "structure": _STRUCTURE_FEATURES,
    "tag": tuple(f"tag:{t}" for t in TAG_GROUPS),
    "attributes": tuple(f"kw:{k}" for k in KEYWORDS),
    "context": tuple(f"anc_kw:{k}" for k in KEYWORDS)
    + tuple(f"anc_tag:{t}" for t in _LANDMARKS)
    + tuple(f"parent:{f}" for f in _TEXT_FEATURES),
    "candidate": ("in_candidate", "contains_candidate", "candidate_text_share",
                  "content_score", "log_candidate_distance"),
    "page": PAGE_FEATURES,
    "vocabulary": VOCABULARY_FEATURES,
}
FEATURE_NAMES: tuple[str, ...] = tuple(n for group in FEATURE_GROUPS.values() for n in group)


def group_slices() -> dict[str, slice]:
    """Column range of each feature group in the full vector."""
    out, start = {}, 0
    for group, names in FEATURE_GROUPS.items():
        out[group] = slice(start, start + len(names))
        start += len(names)
    return out


def leaf_type(tag: str) -> int:
    """The leaf-type column of a leaf element's tag (eq. 1's leaf frequencies); unknown tags count
    as 'other'.
    """
    tag = _LEAF_ALIASES.get(tag, tag)
    return _LEAF_INDEX.get(tag, _OTHER_LEAF)


def _tag_group(tag: str) -> int:
    return _TAG_INDEX.get(_TAG_ALIASES.get(tag, tag), _TAG_INDEX["other"])


def _per_tag(function, tags: list[str], dtype=np.int64) -> np.ndarray:
    """``function`` of every tag, computed once per distinct tag (a page has a few dozen)."""
    known = {tag: function(tag) for tag in set(tags)}
    return np.fromiter(map(known.__getitem__, tags), dtype=dtype, count=len(tags))


#: Per tag, its leaf type, tag group and landmark packed into one int (:func:`_tag_code`), filled
#: as tags are met: one C-level lookup of a page's tags, where finding each page's distinct tags
#: took a set, a dict and three maps. Emptied past _TAG_CACHE_SIZE (custom element names).
_TAG_CODES: dict[str, int] = {}
_TAG_CACHE_SIZE = 4096
_LEAF_BITS, _GROUP_BITS = 5, 5  # 30 leaf types and 26 groups


def _tag_code(tag: str) -> int:
    """A tag's leaf type, tag group and landmark (its index in _LANDMARKS + 1, 0 for none)."""
    landmark = _LANDMARKS.index(tag) + 1 if tag in _LANDMARKS else 0
    return leaf_type(tag) | _tag_group(tag) << _LEAF_BITS | landmark << (_LEAF_BITS + _GROUP_BITS)


def _tag_columns(tags: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element: its leaf type, its tag group and its landmark bit (0 if none)."""
    if len(_TAG_CODES) > _TAG_CACHE_SIZE:
        _TAG_CODES.clear()
    codes = (COMPILED.lookup(tags, _TAG_CODES, -1, False) if COMPILED is not None
             else np.fromiter(map(_TAG_CODES.get, tags, itertools.repeat(-1)), dtype=np.int64,
                              count=len(tags)))
    for k in np.flatnonzero(codes < 0).tolist():  # tags not met before
        code = _TAG_CODES.get(tags[k])
        if code is None:
            code = _TAG_CODES[tags[k]] = _tag_code(tags[k])
        codes[k] = code
    return (codes & (1 << _LEAF_BITS) - 1, codes >> _LEAF_BITS & (1 << _GROUP_BITS) - 1,
            _LANDMARK_BITS[codes >> (_LEAF_BITS + _GROUP_BITS)])


def leaf_counts(table: ElementTable, leaf_types: np.ndarray | None = None) -> np.ndarray:
    """S_n for every subtree: an (elements × leaf types) count matrix (float64).
    ``leaf_types``: every element's :func:`leaf_type`, if already known."""
    n = len(table)
    if leaf_types is None:
        leaf_types = _per_tag(leaf_type, table.tags)
    if COMPILED is not None:
        return COMPILED.leaf_counts(table.parent, table.n_children,
                                    np.ascontiguousarray(leaf_types, np.int64),
                                    table.piece_owner, len(LEAF_TYPES),
                                    _TEXT_LEAF).astype(np.float64)
    # Counted in int32 (whole numbers, so the same sums as in float64, in half the memory),
    # handed back as float64.
    own = np.zeros((n, len(LEAF_TYPES)), dtype=np.int32)
    childless = np.flatnonzero(table.n_children == 0)
    types = leaf_types[childless]
    own[childless, types] = 1
    # Text pieces owned by elements that have element children are ``text`` leaves (bincount
    # counts in C what np.add.at adds one by one).
    owners = table.piece_owner
    mixed = owners[table.n_children[owners] > 0] if len(owners) else owners
    own[:, _TEXT_LEAF] += np.bincount(mixed, minlength=n).astype(np.int32)
    cumulative = _cumulative(own, np.int32)
    # Subtree i is [i, end[i]): its counts are cumulative[end[i]] - cumulative[i].
    return (cumulative[table.end] - cumulative[:n]).astype(np.float64)


def leaf_shares(counts: np.ndarray) -> np.ndarray:
    """Eq. 1: x_n = S_n / T_n (rows sum to 1; a subtree always has at least one leaf)."""
    totals = counts.sum(axis=1, keepdims=True)
    return counts / np.maximum(totals, 1.0)


#: Bits above the keywords' in the masks whose ancestors are OR-ed: the landmark tags.
_LANDMARK_BIT = {tag: 1 << (len(KEYWORDS) + j) for j, tag in enumerate(_LANDMARKS)}
_N_MASK_BITS = len(KEYWORDS) + len(_LANDMARKS)
#: The landmark bit of each landmark number of a tag code (0: none).
_LANDMARK_BITS = np.array([0] + [_LANDMARK_BIT[tag] for tag in _LANDMARKS], dtype=np.uint64)


def _own_masks(table: ElementTable, landmarks: np.ndarray | None = None) -> np.ndarray:
    """Per element, the keywords of its class / id / role / aria-label (the table's
    ``keyword_values``) and its landmark tag (``landmarks``: the bits, if known), as the bits
    of one uint64: cached mask lookups."""
    n = len(table.elements)
    if landmarks is None:
        landmarks = _per_tag(lambda tag: _LANDMARK_BIT.get(tag, 0), table.tags, np.uint64)
    if COMPILED is not None:
        # Cache lookups, the new values' keywords and the ORs in one C loop (its keyword scan
        # gives _new_masks's bits: tests/test_kernel.py compares the two).
        _trim_mask_cache()
        return COMPILED.own_masks(table.keyword_values, _MASK_CACHE, _scanner(),
                                  np.ascontiguousarray(landmarks, np.uint64))
    # The four attributes' values one after the other, looked up in one pass, then OR-ed per
    # element.
    values = list(itertools.chain.from_iterable(table.keyword_values))
    own = np.bitwise_or.reduce(
        _keyword_mask_array(values).reshape(len(KEYWORD_ATTRIBUTES), n), axis=0)
    own |= landmarks
    return own


def _inherited_masks(table: ElementTable, own: np.ndarray) -> np.ndarray | list[int]:
    """For each element, the OR of ``own`` over its strict ancestors. Parents come before their
    children in the table (document order), so one forward pass over ints suffices."""
    if COMPILED is not None:
        return COMPILED.inherited(table.parent, own)
    own = own.tolist()
    parent = table.parent.tolist()
    inherited = [0] * len(own)
    for i in range(1, len(own)):
        p = parent[i]
        inherited[i] = inherited[p] | own[p]
    return inherited


def _bits(masks: np.ndarray | list[int], count: int) -> np.ndarray:
    """The low ``count`` bits of each mask as 0/1 columns (uint8)."""
    if isinstance(masks, list):
        masks = np.fromiter(masks, dtype=np.uint64, count=len(masks))
    as_bytes = masks.astype("<u8", copy=False).view(np.uint8).reshape(len(masks), 8)
    return np.unpackbits(as_bytes, axis=1, count=count, bitorder="little")


def _text_features(table: ElementTable, chars: np.ndarray, size: np.ndarray,
                   own_chars: np.ndarray, codes: np.ndarray) -> np.ndarray:
    n = len(table)
    # Stop words (token.lower() in pagefeatures.STOP_WORDS): the STOP bit of the page's token
    # codes, summed per piece as differences of a cumulative count.
    stop_count = _cumulative((codes & STOP) > 0)
    # The pieces' tokens lie one after the other: piece k's are [offset[k], offset[k + 1]).
    token_offset = _cumulative(table.piece_words, np.int64)
    piece_stop = np.diff(stop_count[token_offset])
    words = table.subtree(table.piece_words)
    link_chars = table.subtree(table.piece_chars * table.piece_in_link)
    punct = table.subtree(table.piece_punct)
    stops = table.subtree(piece_stop)
    safe_chars = np.maximum(chars, 1.0)
    safe_words = np.maximum(words, 1.0)
    page_chars = max(chars[0], 1.0) if n else 1.0
    return np.column_stack([
        np.log1p(chars) / 12.0,
        np.log1p(words) / 10.0,
        link_chars / safe_chars,
        np.minimum(punct / safe_words, 1.0),
        stops / safe_words,
        own_chars / safe_chars,
        chars / page_chars,
        np.log1p(chars / size) / 8.0,
    ])


#: Readability's paragraph score: a text of at least 25 characters scores 1, plus one per comma,
#: plus one per 100 characters up to 3 (Arc90 readability, kept as published).
_MIN_PARAGRAPH_CHARS = 25


def _candidate_features(table: ElementTable, chars: np.ndarray, link_density: np.ndarray,
                        own_chars: np.ndarray) -> np.ndarray:
    n = len(table)
    index = np.arange(n)
    commas = np.bincount(table.piece_owner, minlength=n,
                         weights=table.piece_commas.astype(np.float64)
                         ).astype(np.float64, copy=False)  # int64 when there are no pieces
    paragraph = np.where(own_chars >= _MIN_PARAGRAPH_CHARS,
                         1.0 + commas + np.minimum(own_chars / 100.0, 3.0), 0.0)
    parent = table.parent
    has_parent = parent >= 0
    grand = np.where(has_parent, parent[np.maximum(parent, 0)], -1)
    has_grand = grand >= 0
    # Each element's score adds its children's paragraph scores, then half its grandchildren's,
    # in document order: one bincount over both lists adds in exactly that order (as the
    # np.add.at calls it replaces did), so the float sums are the same to the last bit.
    score = np.bincount(
        np.concatenate([parent[has_parent], grand[has_grand]]),
        weights=np.concatenate([paragraph[has_parent], paragraph[has_grand] / 2.0]),
        minlength=n,
    ).astype(np.float64, copy=False)
    score *= 1.0 - link_density
    top = int(np.argmax(score)) if n else 0
    inside = (index >= top) & (index < table.end[top])
    contains = (index <= top) & (table.end > top)
    share = np.where(inside, 1.0, np.where(contains, chars[top] / np.maximum(chars, 1.0), 0.0))
    distance = np.abs(table.depth - table.depth[top]).astype(np.float64)
    return np.column_stack([
        inside, contains, share, score / max(score[top], 1e-9), np.log1p(distance) / 4.0,
    ])


_SLICES = group_slices()
_N_TEXT = len(_TEXT_FEATURES)


def vectorize(table: ElementTable) -> np.ndarray:
    """The full float32 vector of every subtree of the page (rows in document order)."""
    n = len(table)
    if n == 0:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    if COMPILED is not None:
        return _vectorize_compiled(table)
    # Each feature group is computed in float64 as before and written straight into its columns
    # of the float32 result (the same rounding as one final astype, without the float64 copy of
    # the whole matrix).
    out = np.empty((n, len(FEATURE_NAMES)), dtype=np.float32)
    index = np.arange(n)
    size = (table.end - index).astype(np.float64)
    depth = table.depth.astype(np.float64)
    leaf_types, tag_groups, landmarks = _tag_columns(table.tags)
    out[:, _SLICES["leaf"]] = leaf_shares(leaf_counts(table, leaf_types))
    # Subtree characters and sizes serve the text and the candidate features alike.
    chars = table.subtree(table.piece_chars)
    own_chars = table.own(table.piece_chars)
    codes = token_codes(table)  # the page's tokens, coded once for the text and vocabulary groups
    text = _text_features(table, chars, size, own_chars, codes)
    out[:, _SLICES["text"]] = text
    structure = out[:, _SLICES["structure"]]
    structure[:, 0] = depth / max(depth.max(), 1.0)
    structure[:, 1] = np.log1p(depth) / 5.0
    structure[:, 2] = index / n
    structure[:, 3] = table.end / n
    structure[:, 4] = np.log1p(table.n_children) / 6.0
    structure[:, 5] = np.log1p(size) / 9.0
    structure[:, 6] = size / n
    tag = out[:, _SLICES["tag"]]
    tag[:] = 0.0
    tag[index, tag_groups] = 1.0
    # The class attribute serves the keywords and the page group's repeated signatures.
    classes = table.keyword_values[0]
    own = _own_masks(table, landmarks)
    out[:, _SLICES["attributes"]] = _bits(own, len(KEYWORDS))
    context = out[:, _SLICES["context"]]
    context[:, :_N_MASK_BITS] = _bits(_inherited_masks(table, own), _N_MASK_BITS)
    context[:, _N_MASK_BITS:] = text[np.maximum(table.parent, 0)]
    context[table.parent < 0, _N_MASK_BITS:] = 0.0
    out[:, _SLICES["candidate"]] = _candidate_features(table, chars, text[:, 2], own_chars)
    out[:, _SLICES["page"]] = page_features(table, table.subtree(table.piece_words), text[:, 2],
                                             classes)
    out[:, _SLICES["vocabulary"]] = vocabulary_features(table, codes)
    return out


#: Where each group's columns start, for the compiled kernel.
_OFFSETS = {group: columns.start for group, columns in _SLICES.items()}


def _vectorize_compiled(table: ElementTable) -> np.ndarray:
    """:func:`vectorize` by the compiled kernel: the integer aggregates as in the pure path,
    then every float column in one C pass (the same float64 operations, numpy's log1p),
    instead of some 200 numpy calls on arrays of a few hundred values. benchmarks/identity.py
    and tests/test_kernel.py compare the two paths' vectors bit for bit."""
    out = np.empty((len(table), len(FEATURE_NAMES)), dtype=np.float32)
    leaf_types, tag_groups, landmarks = _tag_columns(table.tags)
    leaf = COMPILED.leaf_counts(table.parent, table.n_children,
                                np.ascontiguousarray(leaf_types, np.int64), table.piece_owner,
                                len(LEAF_TYPES), _TEXT_LEAF)
    codes = np.ascontiguousarray(token_codes(table), np.int64)
    own = _own_masks(table, landmarks)
    signature_count, sibling_count, previous, following = repeats(table)
    first_h1 = table.tags.index("h1") if "h1" in table.tags else -1
    COMPILED.vector_floats(
        out, _OFFSETS, np.log1p, table, leaf, np.ascontiguousarray(tag_groups, np.int64), own,
        COMPILED.inherited(table.parent, own), len(KEYWORDS), _N_MASK_BITS, codes, STOP,
        signature_count, sibling_count, previous, following, first_h1, TITLE, DIGIT,
        VOCABULARY_SHIFT, len(VOCABULARIES), HEAD_WORDS, SENTENCE_WORDS,
        float(_MIN_PARAGRAPH_CHARS))
    return out
