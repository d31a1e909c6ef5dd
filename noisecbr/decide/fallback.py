"""Never an empty result for a page that has content.

When the walk removes a page's main container (the network scored it noise), the result is
(almost) empty although the page has text. Then the cleaner falls back to the subtree with the
most *data mass* among those with at least :data:`FALLBACK_MIN_WORDS` words: each text piece
weighs its words times how much more its element is data than not (``2·p_data − 1``), and the
subtree whose pieces weigh most (a contiguous range of pieces,
so one difference of cumulative sums per subtree) is where the reader's text is. The walk is
run again inside it, with its root kept; everything outside it is removed. If that walk too
keeps almost nothing, the subtree is kept whole. A page whose text really is tiny (under
:data:`FALLBACK_PAGE_WORDS` words) stays as the walk left it.

The words counted are those the text will show: the headline (``without``) goes to the
result's title, so a walk that kept only the headline kept nothing of the text.
"""

from __future__ import annotations

import numpy as np

from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, MIXTURE, NOISE
from ..settings import FALLBACK_MIN_WORDS, FALLBACK_PAGE_WORDS, active

__all__ = ["FALLBACK_MIN_WORDS", "FALLBACK_PAGE_WORDS", "kept_pieces", "kept_words",
           "fallback_subtree", "fall_back"]


def _removed_pieces(table: ElementTable, decision: np.ndarray) -> np.ndarray:
    """Per text piece: is it inside a subtree the decisions remove (noise or comment)?"""
    return table.pieces_within(np.flatnonzero((decision == NOISE) | (decision == COMMENT)))


def kept_pieces(table: ElementTable, decision: np.ndarray,
                without: int | None = None) -> np.ndarray:
    """Per text piece: do the decisions keep it (outside the subtree of element ``without``,
    the headline)?"""
    kept = ~_removed_pieces(table, decision)
    if without is not None:
        kept[table.piece_start[without]:table.piece_end[without]] = False
    return kept


def kept_words(table: ElementTable, decision: np.ndarray, without: int | None = None) -> int:
    """Words of the page that the decisions keep, those in the subtree of element ``without``
    (the headline) left out."""
    if not len(table):
        return 0
    return int(table.piece_words[kept_pieces(table, decision, without)].sum())


def fallback_subtree(table: ElementTable, proba: np.ndarray,
                     without: int | None = None) -> int | None:
    """The element whose subtree holds the most data mass, the words in the subtree of
    element ``without`` (the headline) left out; None when the page has fewer than
    :data:`FALLBACK_PAGE_WORDS` such words."""
    words = table.piece_words.astype(np.float64)
    if without is not None:
        words[table.piece_start[without]:table.piece_end[without]] = 0.0
    rules = active()
    if words.sum() < rules.fallback_page_words:
        return None
    data = proba[table.piece_owner, DATA].astype(np.float64)
    # Only subtrees with words enough to be a result: the mass of a lone heading can beat a
    # long list whose words lean noise, and keeping it would be as near-empty as the walk.
    big = table.subtree(words) >= rules.fallback_min_words
    mass = np.where(big, table.subtree(words * (2.0 * data - 1.0)), -np.inf)
    if mass.max() <= 0.0:  # no such subtree leans data: the most data-weighted words instead
        mass = np.where(big, table.subtree(words * data), -np.inf)
    return int(np.argmax(mass))


def fall_back(table: ElementTable, decision: np.ndarray, root: int,
              min_words: int | None = None, without: int | None = None) -> np.ndarray:
    """Decisions that keep only the subtree of ``root``: ``decision`` (a walk started at
    ``root``) inside it — or ``root`` kept whole if that walk keeps fewer than ``min_words``
    words outside the subtree of ``without`` (the headline) — its ancestors mixture, and every
    other subtree beside the path removed."""
    out = decision.copy()
    end = table.end
    parent = table.parent
    ancestors = []
    a = int(parent[root])
    while a >= 0:
        ancestors.append(a)
        a = int(parent[a])
    index = np.arange(len(table))
    inside = (index >= root) & (index < end[root])
    out[~inside] = -1
    on_path = np.zeros(len(table), dtype=bool)
    on_path[ancestors] = True
    on_path[root] = True
    beside = (~on_path) & np.isin(parent, ancestors)
    out[beside] = NOISE
    out[ancestors] = MIXTURE
    if kept_words(table, out, without) < (active().fallback_min_words if min_words is None
                                          else min_words):
        out[inside] = -1
        out[root] = DATA
    return out
