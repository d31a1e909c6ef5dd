"""The correction queue: the boxes of a decided page a reviewer should look at first.

A click on the review page labels one box, and the site memory (:mod:`noisecbr.site.memory`) then
decides every subtree of the site with that box's markup. The click worth making first is the
one expected to change the most text of the site, so each box ``i`` a click can change scores

    score(i) = Σ_L p_i(L) × change_i(L) × recurrence(i)        L ∈ {removal, data}

with ``removal`` = noise + comment (both take the words out of the main text).

**p_i(L) — uncertainty.** The network's probability that a person labels the box L. A label
the walk already follows flips nothing, so only the labels that disagree with the decision
count: a removed box weighs p(data), a box kept whole p(removal), a box the walk descended
into (mixture) both, each by the words it would flip. A mixture label counts for nothing: the
memory leaves mixture to the network, so such a click changes nothing. For a box alone with its
markup the score is ``uncertainty × words × recurrence``, where ``uncertainty`` (the entry's
field) is the expected share of its words one click flips. Two simpler measures fit worse:
``1 − |p(removal) − p(data)|`` is highest for a container the network is sure is mixture (both
near 0), and containers hold the most words, so they would fill the queue with clicks that
change nothing; a margin to the walk's thresholds says how near the
network is to deciding otherwise, not how likely a person is to disagree.

**change_i(L) — words.** The words the label flips on this page: the box's own (its kept words
for removal, its removed words for data), plus those of the page's other boxes with the same
markup, which the memory decides alike: each is put right with the network's probability
p_j(L) and put wrong otherwise, so it adds ``(2 p_j(L) − 1) × flip_j(L)``. One label cannot be
right for an untitled ``<table>`` that holds a menu and a twin that holds the article, and
the queue ranks such a box last. Counting only the box's own words ranked it first on a forbes
page of utomo-big9, and its click removed the article of the site's next page.

**recurrence(i)** — 1 + the number of the site's other known pages that hold the box's markup:
the pages one label reaches. Pages are counted, not elements: a list's hundred items on one
page are one box.

"Markup" is the :data:`RECURRENCE_STEPS`-step signature (:func:`noisecbr.site.memory.signatures`).
Only the boxes a click can change are listed: the decided subtrees and the mixture boxes above
them (the review page's boxes; inside a decided subtree a label changes nothing, the walk does
not go there), not the body (the memory never decides the whole page), not a box without
words, and not one the site's stored labels already decide. A box and the wrappers around it
that hold the same words are one entry: the best-scoring of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from noisecbr.prepare.subtrees import ElementTable
from noisecbr.result import COMMENT, DATA, LABELS, NOISE
from noisecbr.site.memory import SHORT_STEPS, signatures

__all__ = ["RECURRENCE_STEPS", "QueueEntry", "Recurrence", "rank_boxes", "settled_boxes"]

#: Steps of the markup signature that groups a page's boxes and counts the site's pages: the
#: short one, because a label learnt from one box is looked up by the full chain only where the
#: memory has seen that chain, and a memory of a few clicks has seen almost none: elsewhere the
#: short signature decides (:data:`noisecbr.site.memory.SHORT_STEPS`). Chosen on sets the bench
#: results do not report (multi-page sites of modernweb-dev, fundus, utomo-chaos2017 and
#: chinese-wce; F1 after 1 / 3 / 5 queued clicks): boxes grouped by the full chain instead,
#: modernweb-dev 0.6654 / 0.6574 / 0.6584 against 0.6670 / 0.6673 / 0.6673, utomo-chaos2017
#: 0.9649 / 0.9585 / 0.9584 against 0.9659 / 0.9595 / 0.9593; pages counted by the full chain,
#: no better on any of the four. The table: docs/experiments.md, "The correction queue".
RECURRENCE_STEPS: int | None = SHORT_STEPS


@dataclass(frozen=True)
class QueueEntry:
    """One box of the correction queue."""

    index: int  # the element's index in the page's table (document order)
    path: str
    decision: str  # what the walk decided: noise | data | mixture | comment
    probabilities: tuple[float, ...]  # the network's, in LABELS order
    words: int
    #: the expected share of its words one click flips (the module docstring's p × flip)
    uncertainty: float
    same_markup: int  # the page's other boxes with its markup, which the label decides too
    recurrence: int  # 1 + the site's other known pages that hold its markup
    score: float

    def to_dict(self) -> dict:
        """A JSON-ready dict of the entry."""
        return asdict(self)


class Recurrence:
    """How many known pages of a site hold each markup signature (one count per page).

    >>> from noisecbr.prepare.subtrees import build_table
    >>> from noisecbr.prepare.tidy import tidy
    >>> pages = [build_table(tidy(f"<nav><a>Home</a></nav><p>Story {k}</p>")) for k in range(3)]
    >>> site = Recurrence(pages[1:])          # the site's other pages
    >>> site.of(pages[0]).tolist()            # body, nav, a, p: each on both other pages
    [3, 3, 3, 3]
    """

    def __init__(self, tables: Iterable[ElementTable] = ()) -> None:
        self.counts: Counter[int] = Counter()
        self.pages = 0
        for table in tables:
            self.add(table)

    def add(self, table: ElementTable) -> None:
        """Count the markup of one more page of the site."""
        self.counts.update(set(signatures(table, RECURRENCE_STEPS)))
        self.pages += 1

    def without(self, table: ElementTable) -> Recurrence:
        """The counts without one of the counted pages (the page under review)."""
        out = Recurrence()
        out.counts = self.counts - Counter(set(signatures(table, RECURRENCE_STEPS)))
        out.pages = max(self.pages - 1, 0)
        return out

    def of(self, table: ElementTable) -> np.ndarray:
        """Per element of ``table``: 1 + the counted pages holding its markup."""
        counts = self.counts
        return np.fromiter((1 + counts.get(s, 0) for s in signatures(table, RECURRENCE_STEPS)),
                           dtype=np.int64, count=len(table))


def settled_boxes(size: int, recalled: np.ndarray | None = None,
                  stored: list | None = None) -> np.ndarray:
    """Per element of a page of ``size`` elements: do the site's stored labels already speak
    for its markup (the memory recalled a label, or stored cases carry its signature)? Such a
    box is not queued."""
    settled = np.zeros(size, dtype=bool)
    if recalled is not None:
        settled |= np.asarray(recalled) >= 0
    if stored is not None:
        settled |= np.fromiter((bool(cases) for cases in stored), dtype=bool, count=size)
    return settled


def _removed_words(table: ElementTable, decision: np.ndarray) -> np.ndarray:
    """Per element: the words of its subtree the decisions remove (noise or comment)."""
    removed = table.pieces_within(np.flatnonzero((decision == NOISE) | (decision == COMMENT)))
    return table.subtree(np.where(removed, table.piece_words, 0)).astype(np.float64)


def _label_flips(proba: np.ndarray, words: np.ndarray, removed: np.ndarray
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per label a click can give that changes the walk (removal, data): its probability per
    element and the words of each element it flips (the kept ones, the removed ones)."""
    removal = proba[:, NOISE] + (proba[:, COMMENT] if proba.shape[1] > COMMENT else 0.0)
    return [(removal, words - removed), (proba[:, DATA], removed)]


def _expected_change(flips: list[tuple[np.ndarray, np.ndarray]], markup: np.ndarray,
                     on_walk: np.ndarray) -> np.ndarray:
    """Per element: Σ_L p(L) × change(L), the words a click on it is expected to put right on
    the page, its boxes of the same ``markup`` (group numbers) counted (module docstring)."""
    expected = np.zeros(len(markup))
    for p, flip in flips:
        # Each box of the walk with the markup: right with p_j(L), wrong otherwise.
        others = np.where(on_walk, (2.0 * p - 1.0) * flip, 0.0)
        group = np.bincount(markup, weights=others, minlength=int(markup.max()) + 1)[markup]
        expected += p * (group - others + flip)  # the click's own box is labelled right
    return expected


def _markup_groups(table: ElementTable) -> np.ndarray:
    """Per element: a number shared by the elements of the same markup signature."""
    numbers: dict[int, int] = {}
    return np.fromiter((numbers.setdefault(s, len(numbers))
                        for s in signatures(table, RECURRENCE_STEPS)),
                       dtype=np.int64, count=len(table))


def _same_text_groups(table: ElementTable, words: np.ndarray) -> np.ndarray:
    """Per element: the outermost of the wrappers around it that hold the same words (itself
    when its parent holds more): a box and its wrappers share one group."""
    parent = table.parent.tolist()
    count = words.tolist()
    group = list(range(len(count)))
    for i in range(1, len(count)):  # parents come before their children
        if parent[i] >= 0 and count[parent[i]] == count[i]:
            group[i] = group[parent[i]]
    return np.asarray(group, dtype=np.int64)


def _best_of_groups(candidates: np.ndarray, groups: np.ndarray, score: np.ndarray) -> list[int]:
    """The best-scoring candidate of each group (ties: the first), best first (ties: the one
    that comes first in the page)."""
    best: dict[int, int] = {}
    for i in candidates.tolist():
        kept = best.get(groups[i])
        if kept is None or score[i] > score[kept]:
            best[groups[i]] = i
    return sorted(best.values(), key=lambda i: (-score[i], i))


def rank_boxes(table: ElementTable, proba: np.ndarray, decision: np.ndarray,
               recurrence: Recurrence | None = None, *, settled: np.ndarray | None = None,
               limit: int | None = None) -> list[QueueEntry]:
    """The boxes of a decided page (its table, the network's class probabilities per element
    and the walk's decisions, −1 inside a decided subtree), best first: see the module
    docstring. ``recurrence`` counts the site's *other* pages (None: only this page is
    known); ``settled`` marks boxes the site's labels already decide (:func:`settled_boxes`);
    ``limit`` keeps the first so many."""
    decision = np.asarray(decision)
    if not len(table):
        return []
    proba = np.asarray(proba, dtype=np.float64)
    words = table.subtree(table.piece_words).astype(np.float64)
    flips = _label_flips(proba, words, _removed_words(table, decision))
    on_walk = decision >= 0
    on_walk[0] = False  # the memory never decides the body
    wanted = on_walk & (words > 0)
    if settled is not None:
        wanted &= ~np.asarray(settled, dtype=bool)
    candidates = np.flatnonzero(wanted)
    markup = _markup_groups(table)
    reach = recurrence.of(table) if recurrence is not None else np.ones(len(table), np.int64)
    score = _expected_change(flips, markup, on_walk) * reach
    order = _best_of_groups(candidates, _same_text_groups(table, words), score)[:limit]
    own = sum(p * flip for p, flip in flips) / np.maximum(words, 1.0)
    alike = np.bincount(markup, weights=on_walk, minlength=int(markup.max()) + 1)[markup]
    paths = table.paths() if order else []
    return [QueueEntry(index=i, path=paths[i], decision=LABELS[decision[i]],
                       probabilities=tuple(round(float(p), 4) for p in proba[i]),
                       words=int(words[i]), uncertainty=round(float(own[i]), 4),
                       same_markup=int(alike[i]) - 1, recurrence=int(reach[i]),
                       score=float(score[i]))
            for i in order]
