"""The pure path's raw quantities of the groups that describe the subtree itself: ``leaf``,
``text``, ``structure``, ``tag``, ``attributes``, ``context`` and ``candidate`` (the table in
:mod:`noisecbr.features.schema` names them; the compiled kernel computes the same ones).

The ``candidate`` group places the subtree relative to the page's *main candidate*: the element
with the highest readability-style content score (paragraph-like text scores for its parent and
half for its grandparent, damped by link density). Inside it, around it, or beside it, and how
much of the subtree's text is the candidate's.
"""

from __future__ import annotations

import numpy as np

from ..prepare.subtrees import ElementTable, cumulative
from ..settings import GRANDPARENT_DIVISOR, MAX_LENGTH_POINTS, MIN_PARAGRAPH_CHARS, PARAGRAPH_CHARS
from .keywords import MASK_BITS, bits, inherited_masks, landmark_bits, own_masks
from .tags import leaf_counts
from .tokens import STOP

__all__ = ["MIN_PARAGRAPH_CHARS", "PARAGRAPH_CHARS", "MAX_LENGTH_POINTS", "GRANDPARENT_DIVISOR",
           "element_quantities", "candidate_quantities"]


def element_quantities(table: ElementTable, codes: np.ndarray, leaf_types: np.ndarray,
                       tag_groups: np.ndarray, landmarks: np.ndarray) -> dict[str, object]:
    """The quantities of the leaf, text, structure, tag, attributes and context groups: per
    element float64 arrays, page-wide numbers, and the families (one column per index):
    ``leaf_counts`` and the keyword and landmark bits of ``own_masks`` and
    ``ancestor_masks``. ``codes``: the page's token codes; ``leaf_types``, ``tag_groups``,
    ``landmarks``: every element's, from :func:`~noisecbr.features.tags.tag_columns`."""
    n = len(table)
    index = np.arange(n)
    counts = leaf_counts(table, leaf_types)
    # Stop words (of the page's language, features.language): the STOP bit of the token codes,
    # summed per piece as differences of a cumulative count.
    stop_count = cumulative((codes & STOP) > 0)
    # The pieces' tokens lie one after the other: piece k's are [offset[k], offset[k + 1]).
    token_offset = cumulative(table.piece_words, np.int64)
    chars = table.subtree(table.piece_chars)
    depth = table.depth.astype(np.float64)
    own = own_masks(table, landmark_bits(landmarks))
    return {
        "leaf_counts": counts, "leaves": counts.sum(axis=1),
        "chars": chars, "words": table.subtree(table.piece_words),
        "link_chars": table.subtree(table.piece_chars * table.piece_in_link),
        "punct": table.subtree(table.piece_punct),
        "stop_words": table.subtree(np.diff(stop_count[token_offset])),
        "own_chars": table.own(table.piece_chars), "page_chars": chars[0],
        "size": (table.end - index).astype(np.float64), "depth": depth,
        "max_depth": depth.max(), "index": index, "end": table.end, "elements": n,
        "children": table.n_children, "tag_group": tag_groups,
        "own_masks": bits(own, MASK_BITS),
        "ancestor_masks": bits(inherited_masks(table, own), MASK_BITS),
    }


def candidate_quantities(table: ElementTable, chars: np.ndarray, own_chars: np.ndarray,
                         link_density: np.ndarray) -> dict[str, object]:
    """The ``candidate`` group's quantities: whether each element lies inside the main
    candidate or contains it, the candidate's share of its text, its content score, the
    candidate's, and its distance in depth. ``chars``, ``own_chars``: the subtree's and its
    own pieces' characters; ``link_density``: the ``text`` group's column."""
    n = len(table)
    index = np.arange(n)
    commas = np.bincount(table.piece_owner, minlength=n,
                         weights=table.piece_commas.astype(np.float64)
                         ).astype(np.float64, copy=False)  # int64 when there are no pieces
    paragraph = np.where(own_chars >= MIN_PARAGRAPH_CHARS,
                         1.0 + commas + np.minimum(own_chars / PARAGRAPH_CHARS,
                                                   MAX_LENGTH_POINTS), 0.0)
    parent = table.parent
    has_parent = parent >= 0
    grand = np.where(has_parent, parent[np.maximum(parent, 0)], -1)
    has_grand = grand >= 0
    # Each element's score adds its children's paragraph scores, then its grandchildren's
    # divided, in document order: one bincount over both lists adds in exactly that order (as
    # the np.add.at calls it replaces did), so the float sums are the same to the last bit.
    score = np.bincount(
        np.concatenate([parent[has_parent], grand[has_grand]]),
        weights=np.concatenate([paragraph[has_parent],
                                paragraph[has_grand] / GRANDPARENT_DIVISOR]),
        minlength=n,
    ).astype(np.float64, copy=False)
    score *= 1.0 - link_density
    top = int(np.argmax(score))
    inside = (index >= top) & (index < table.end[top])
    contains = (index <= top) & (table.end > top)
    return {
        "inside_candidate": inside, "contains_candidate": contains,
        "candidate_text_share": np.where(inside, 1.0, np.where(
            contains, chars[top] / np.maximum(chars, 1.0), 0.0)),
        "content_score": score, "top_score": score[top],
        "candidate_distance": np.abs(table.depth - table.depth[top]).astype(np.float64),
    }
