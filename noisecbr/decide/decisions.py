"""A page's decisions from its scores: the walk, the site's memory and evidence, the fallback
and the rules after the walk (:func:`decide`); the cleaner's fused path, scoring only what
the walk reaches (:func:`score_and_decide`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

import numpy as np

from ..prepare.page import Page
from ..prepare.subtrees import ElementTable
from ..result import DATA, LABELS, NOISE
from ..score.model import Model
from ..score.rows import RowScores, blas_controller, score
from ..settings import MAX_HEADLINE_WORDS, active
from ..site.evidence import SiteEvidence
from ..site.memory import SiteMemory
from .datelines import datelines
from .fallback import fall_back, fallback_subtree, kept_words
from .orphans import orphaned_headings
from .walk import Thresholds, walk, walk_lazily
from .widgets import carve, furniture_widgets

#: Extra evidence from outside the network (e.g. a site style tree's noisy nodes): given a page's
#: table, the indices of the subtrees it marks as noise.
NoiseEvidence = Callable[[ElementTable], "set[int] | np.ndarray"]


@dataclasses.dataclass(frozen=True, eq=False)
class Decisions(Sequence):
    """What was decided for a page: per element (document order) its class probabilities and
    decision (−1 inside a decided subtree, else a LABELS index; the scores of the subtrees a
    lazy walk never reached are 0: :func:`score_and_decide`); whether the walk fell back;
    with a site memory, what it recalled (−1 or a label per element) and the ids of the stored
    cases behind each recall; with site evidence, which subtrees recur on the site's other
    pages; the mode of the thresholds the walk used (``precision``, ``balanced``, ``recall``,
    None for a set made by hand).

    As a sequence, the decided subtrees in document order, each ``(element index, label
    name)``: ``len(decisions)`` is the number of ``result.decisions`` (which adds each one's
    path, probabilities and sources)."""

    proba: np.ndarray
    decision: np.ndarray
    fell_back: bool = False
    recalled: np.ndarray | None = None
    stored: list | None = None
    templates: np.ndarray | None = None
    mode: str | None = None
    #: the page's kind probabilities (:data:`noisecbr.score.kind.KINDS` order), None when unknown
    kinds: np.ndarray | None = None

    @functools.cached_property
    def _decided(self) -> list[int]:
        return np.flatnonzero(self.decision >= 0).tolist()

    def __len__(self) -> int:
        return len(self._decided)

    def __getitem__(self, k: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        i = self._decided[k]
        return i, LABELS[self.decision[i]]


def decide(page: Page, proba: np.ndarray, thresholds: Thresholds, *,
           memory: SiteMemory | None = None, site: SiteEvidence | None = None,
           extra_noise: NoiseEvidence | None = None,
           kinds: np.ndarray | None = None) -> Decisions:
    """The page's decisions from its scores: the walk (with the labelled pages of its site,
    ``memory``, and what recurs on its other pages, ``site``), then the fallback when the walk
    kept almost nothing, else the rules after the walk. Deciding the same scores again under
    other thresholds costs no network pass. ``kinds``: the page's kind probabilities, which
    the decisions report."""
    table = page.table
    forced = set() if extra_noise is None else {int(i) for i in extra_noise(table)}
    recalled, stored = (memory.lookup(table) if memory is not None and len(memory)
                        else (None, None))
    templates = None
    if site is not None and len(site):
        # What recurs on the site's other pages, unless the network is confident it is
        # data (TEMPLATE_MAX_DATA): the decisions then say which subtrees the site decided.
        templates = site.templates(table) & (proba[:, DATA] < active().template_max_data)
    decision = walk(table, proba, thresholds, forced=forced, recalled=recalled,
                    templates=templates)
    root = _fallback_root(page, proba, decision)
    if root is not None:
        walked = walk(table, proba, thresholds, forced=forced, recalled=recalled, start=root,
                      templates=templates)
        decision = fall_back(table, walked, root, without=page.headline)
        _without_widgets(table, decision, recalled)
    else:
        _after_walk(table, decision, recalled)
    return Decisions(proba, decision, root is not None, recalled, stored, templates,
                     thresholds.mode, kinds)


def _after_walk(table: ElementTable, decision: np.ndarray,
                recalled: np.ndarray | None) -> None:
    """The rules after a walk that kept enough, on ``decision`` in place: a furniture heading
    goes with the box the walk removed, a dateline is metadata, and page furniture's widgets
    go whatever the walk's mode (last: the subtrees a widget is carved out of are not read
    again by the rules before); but not where the site's stored cases decided
    (``recalled``)."""
    decision[orphaned_headings(table, decision, recalled)] = NOISE
    decision[datelines(table, decision, recalled)] = NOISE
    _without_widgets(table, decision, recalled)


def _without_widgets(table: ElementTable, decision: np.ndarray,
                     recalled: np.ndarray | None) -> None:
    """Remove page furniture's widgets from ``decision``, in place: a feedback box, an edit
    link, a last-updated line, previous / next links (:mod:`noisecbr.decide.widgets`). Before
    the kind's mode was chosen per page the balanced walk removed most of them, and the
    recall mode of documentation brought them back (issue 54): they are furniture on every
    kind, so a rule removes them after any walk, the fallback's too."""
    carve(table, decision, furniture_widgets(table, decision, recalled))


def score_and_decide(page: Page, model: Model, thresholds: Thresholds, *,
                     scores: RowScores | None = None) -> Decisions:
    """``decide(page, score(page, model), thresholds)`` (no memory, site, other evidence or
    smoothing), scoring only the subtrees the walk reaches
    (:func:`noisecbr.decide.walk.walk_lazily`: a tenth to a third of a page's): the cleaner's path.
    Where the walk keeps too little and the fallback weighs every subtree, the whole page is scored
    and decided. The result's scores of the subtrees the walk never reached are 0. A score is the
    whole page's up to the last bits of the matrix product (BLAS blocks the rows of a product by
    their number), so a score within rounding of a threshold may go the other way than in
    :func:`decide`. ``scores``: the page's :class:`RowScores` when the caller made them
    (benchmarks/stages.py times that apart)."""
    kinds = page.kinds(model)
    if not len(page.table):
        return decide(page, score(page, model), thresholds, kinds=kinds)
    scores = scores if scores is not None else RowScores(page, model)
    # One BLAS thread: see score.
    with blas_controller().limit(limits=1, user_api="blas"):
        decision, proba = walk_lazily(page.table, scores, thresholds)
        if _kept_too_little(page, decision):
            return decide(page, scores(None), thresholds, kinds=kinds)
    _after_walk(page.table, decision, None)
    return Decisions(proba, decision, False, mode=thresholds.mode, kinds=kinds)


def _fallback_root(page: Page, proba: np.ndarray, decision: np.ndarray) -> int | None:
    """The subtree the fallback keeps when the walk kept almost nothing of a page that has
    text, else None."""
    if not _kept_too_little(page, decision):
        return None
    return fallback_subtree(page.table, proba, page.headline)


def _kept_too_little(page: Page, decision: np.ndarray) -> bool:
    """Whether the walk's ``decision`` kept too few words of the page's text (the fallback's
    cue)."""
    min_words = active().fallback_min_words
    if kept_words(page.table, decision) >= min_words + 2 * MAX_HEADLINE_WORDS:
        return False
    # A result this small may be little more than the headline, which the text leaves out
    # (it is the result's title; up to 40 distinct words, so twice that many tokens is
    # ample): count only the words the text will show.
    return kept_words(page.table, decision, page.headline) < min_words
