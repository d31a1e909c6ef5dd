"""What a subtree's tags say: eq. 1's leaf types, the root's tag group, the landmark tags.

Eq. 1 (Htwe): for each leaf-node type n of a fixed vocabulary, x_n = S_n / T_n, the number of the
subtree's leaves of type n over the number of its leaves. A *leaf* is an element without element
children (typed by its tag, see :data:`LEAF_TYPES`) or a text piece of an element that also has
element children (type ``text``: running text mixed with markup).
"""

from __future__ import annotations

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable, cumulative, looked_up

__all__ = ["LEAF_TYPES", "TAG_GROUPS", "LANDMARKS", "TEXT_LEAF", "leaf_type",
           "tag_columns", "per_tag", "leaf_counts", "leaf_shares"]

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
TEXT_LEAF = _LEAF_INDEX["text"]
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

#: Landmark tags whose descendants are furniture (or content) whatever their own markup says.
LANDMARKS = ("nav", "header", "footer", "aside", "form", "article", "main")


def leaf_type(tag: str) -> int:
    """The leaf-type column of a leaf element's tag (eq. 1's leaf frequencies); unknown tags count
    as 'other'.
    """
    tag = _LEAF_ALIASES.get(tag, tag)
    return _LEAF_INDEX.get(tag, _OTHER_LEAF)


def _tag_group(tag: str) -> int:
    return _TAG_INDEX.get(_TAG_ALIASES.get(tag, tag), _TAG_INDEX["other"])


def per_tag(function, tags: list[str], dtype=np.int64) -> np.ndarray:
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
    """A tag's leaf type, tag group and landmark (its index in LANDMARKS + 1, 0 for none)."""
    landmark = LANDMARKS.index(tag) + 1 if tag in LANDMARKS else 0
    return leaf_type(tag) | _tag_group(tag) << _LEAF_BITS | landmark << (_LEAF_BITS + _GROUP_BITS)


def tag_columns(tags: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element: its leaf type, its tag group and its landmark (its index in
    :data:`LANDMARKS` + 1, 0 if none)."""
    if len(_TAG_CODES) > _TAG_CACHE_SIZE:
        _TAG_CODES.clear()
    codes = looked_up(tags, _TAG_CODES, -1)
    for k in np.flatnonzero(codes < 0).tolist():  # tags not met before
        code = _TAG_CODES.get(tags[k])
        if code is None:
            code = _TAG_CODES[tags[k]] = _tag_code(tags[k])
        codes[k] = code
    return (codes & (1 << _LEAF_BITS) - 1, codes >> _LEAF_BITS & (1 << _GROUP_BITS) - 1,
            codes >> (_LEAF_BITS + _GROUP_BITS))


def leaf_counts(table: ElementTable, leaf_types: np.ndarray | None = None) -> np.ndarray:
    """S_n for every subtree: an (elements × leaf types) count matrix (float64).
    ``leaf_types``: every element's :func:`leaf_type`, if already known."""
    if leaf_types is None:
        leaf_types = per_tag(leaf_type, table.tags)
    return _leaf_counts(table, leaf_types)


def _leaf_counts_compiled(table: ElementTable, leaf_types: np.ndarray) -> np.ndarray:
    return BACKEND.kernel.leaf_counts(table.parent, table.n_children,
                                      np.ascontiguousarray(leaf_types, np.int64),
                                      table.piece_owner, len(LEAF_TYPES),
                                      TEXT_LEAF).astype(np.float64)


def _leaf_counts_pure(table: ElementTable, leaf_types: np.ndarray) -> np.ndarray:
    """:func:`leaf_counts` in numpy, the reference of the kernel's."""
    n = len(table)
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
    own[:, TEXT_LEAF] += np.bincount(mixed, minlength=n).astype(np.int32)
    summed = cumulative(own, np.int32)
    # Subtree i is [i, end[i]): its counts are summed[end[i]] - summed[i].
    return (summed[table.end] - summed[:n]).astype(np.float64)


_leaf_counts = BACKEND.dispatch(_leaf_counts_pure, _leaf_counts_compiled)


def leaf_shares(counts: np.ndarray) -> np.ndarray:
    """Eq. 1: x_n = S_n / T_n (rows sum to 1; a subtree always has at least one leaf)."""
    totals = counts.sum(axis=1, keepdims=True)
    return counts / np.maximum(totals, 1.0)
