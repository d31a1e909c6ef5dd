"""A furniture heading goes with its box.

Templates put a box's heading just before it, as a sibling of its own: ``<h3>Related
stories</h3><ul>…</ul>``, "Noticias relacionadas", "Das könnte Sie auch interessieren". When
the walk removes the box but keeps the short heading, the heading is left alone in the text. A
kept element of at most :data:`ORPHAN_WORDS` words whose first words hold a furniture word
(:data:`HEADING_VOCABULARIES`: related, share, comments, subscribe, read more, ads,
navigation, legal) and whose next element sibling the walk removed is removed with it.
"""

from __future__ import annotations

import numpy as np

from ..features.tokens import HEAD_WORDS, VOCABULARIES, element_word_codes, vocabularies_of
from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, NOISE
from ..settings import ORPHAN_WORDS, active

__all__ = ["ORPHAN_WORDS", "HEADING_VOCABULARIES", "orphaned_headings"]

#: The vocabularies that name a box (a dateline, a credit or a price heads no box).
HEADING_VOCABULARIES = ("related", "social", "comment", "subscribe", "readmore", "ad", "nav",
                        "legal")
_HEADING = np.array([name in HEADING_VOCABULARIES for name in VOCABULARIES], dtype=bool)


def orphaned_headings(table: ElementTable, decision: np.ndarray,
                      recalled: np.ndarray | None = None) -> np.ndarray:
    """The elements the walk kept that head a box it removed (see the module docstring);
    never one a site memory decided (``recalled`` ≥ 0: what the user's corrections say
    stands)."""
    n = len(table)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    index = np.arange(n)
    following = np.where(table.end < n, table.end, 0)
    next_decision = decision[following]
    # Two comparisons, not np.isin (which sorts: 12 µs against 1.4 on a page's 800 elements).
    removed_next = ((table.end < n) & (table.parent[following] == table.parent)
                    & ((next_decision == NOISE) | (next_decision == COMMENT)))
    words = table.subtree_words()
    free = recalled < 0 if recalled is not None else True
    candidates = index[(decision == DATA) & removed_next & (words > 0)
                       & (words <= active().orphan_words) & free]
    if not len(candidates):
        return candidates
    # The first words of the few candidates only (a page has some 3 000 tokens); every
    # candidate has words, so each range holds one at least.
    codes, first, _ = element_word_codes(table, candidates, HEAD_WORDS)
    vocabulary = vocabularies_of(codes)
    heading = np.zeros(len(codes), dtype=np.int64)
    known = vocabulary >= 0
    heading[known] = _HEADING[vocabulary[known]]
    return candidates[np.add.reduceat(heading, first) > 0]
