"""The walk: class scores of every subtree → noise / data / mixture / comment decisions.

Top-down over the tidied body, in document order:

1. a subtree whose removal score (noise + comment) reaches ``noise`` is removed whole:
   **comment** when its comment score is the larger part (a reader-comment thread, kept apart in
   ``CleanResult.comments``), else **noise**;
2. else one whose data score reaches ``keep`` is **data**: kept whole, not descended;
3. else it is **mixture**: its own text is kept and each child is decided in turn;
4. an element without element children is removed when its removal score reaches ``leaf``,
   kept otherwise.

Keeping every subtree the network calls *data* whole lets the noise nested inside it through,
so the walk keeps a subtree whole only on a confident data score and otherwise descends. The
thresholds are a frozen :class:`Thresholds`, in three modes, ``"balanced" | "precision" |
"recall"``, stored with the model and chosen on site-grouped validation folds
(:mod:`training.modes`); ``favor="auto"`` (the default) walks each page in the mode of its
convention (:mod:`noisecbr.decide.convention`).

Where a site's labelled pages recall a label for a subtree (:mod:`noisecbr.site.memory`), that label
decides; a subtree whose text recurs on the site's other pages (:mod:`noisecbr.site.evidence`) is
removed, and none that holds one is kept whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, LABELS, MIXTURE, NOISE
from ..score.model import Model
from ..settings import DEFAULT_MODES, WALK_LOOKAHEAD

__all__ = ["AUTO", "FAVOR", "MODES", "Thresholds", "walk", "walk_lazily"]

#: The walk's modes: which way to lean where the scores are unsure.
MODES = tuple(DEFAULT_MODES)
#: Each page in the mode of its convention (:func:`noisecbr.decide.convention.page_mode`).
AUTO = "auto"
#: What a cleaner may favor: each page's convention, or one mode for every page.
FAVOR = (AUTO, *MODES)


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """The walk's three thresholds (see the module docstring), and the name of the mode they
    are the set of (None for a set made by hand)."""

    noise: float
    keep: float
    leaf: float
    mode: str | None = None

    @classmethod
    def of(cls, model: Model, favor: str = "balanced", **given: float | None) -> Thresholds:
        """The thresholds of ``favor`` stored with ``model`` (``metadata["modes"]``), else the
        model's single set (``metadata["thresholds"]``, balanced only), else the defaults of
        :data:`noisecbr.settings.DEFAULT_MODES`; each of ``given`` (``noise=``, ``keep=``,
        ``leaf=``) that is not None in their place."""
        if favor not in DEFAULT_MODES:
            raise ValueError(f"a threshold set is one of {', '.join(MODES)}, got {favor!r}")
        modes = model.metadata.get("modes") or {}
        stored = modes.get(favor) or (model.thresholds if favor == "balanced" else {})
        chosen = {**DEFAULT_MODES[favor], **stored}
        chosen.update({name: value for name, value in given.items() if value is not None})
        return cls(noise=chosen["noise"], keep=chosen["keep"], leaf=chosen["leaf"], mode=favor)


def walk(table: ElementTable, proba: np.ndarray, thresholds: Thresholds, *,
         forced: Collection[int] = (), recalled: np.ndarray | None = None, start: int = 0,
         templates: np.ndarray | None = None) -> np.ndarray:
    """The top-down walk over the subtree of element ``start`` (the whole page by default)
    with the scores ``proba``: per element, −1 undecided (inside a decided subtree) or a LABELS
    index.

    ``forced``: subtrees removed as noise whatever their scores (another method's evidence).
    ``recalled`` (from :meth:`noisecbr.site.memory.SiteMemory.lookup`: −1, NOISE, DATA or COMMENT
    per element) overrides the network where a site's stored cases agree. ``templates`` (per
    element, whether it is the site's template) removes those subtrees, and keeps none that
    holds one whole, where the site memory did not decide."""
    noisy, keep, comment = _tests(table, proba, thresholds, recalled, templates)
    noisy, keep, comment = noisy.tolist(), keep.tolist(), comment.tolist()
    leaf = (table.n_children == 0).tolist()
    end = table.end.tolist()
    n = len(table)
    decision = [-1] * n
    i, stop = start, end[start] if n else 0
    while i < stop:
        decision[i] = label = decided((noisy[i] or i in forced) and i > start,
                                      comment[i] and i not in forced, keep[i] or leaf[i])
        i = i + 1 if label == MIXTURE else end[i]
    return np.fromiter(decision, dtype=np.int8, count=n)


def decided(removed: bool, comment: bool, kept: bool) -> int:
    """The walk's rule for an element it reaches (every element above it a mixture): removed
    (a comment when its comment score beats its noise score, else noise), else kept whole
    (``kept``: the keep test passed, or a leaf), else a mixture whose children are walked. The
    one rule of :func:`walk` and :func:`walk_lazily`."""
    if removed:
        return COMMENT if comment else NOISE
    return DATA if kept else MIXTURE


def walk_lazily(table: ElementTable, score_rows: Callable[[np.ndarray], np.ndarray],
                thresholds: Thresholds, *, lookahead: int = WALK_LOOKAHEAD
                ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`walk` over the whole page, scoring only the subtrees it reaches: the decisions
    and the scores (rows it never reached: 0). ``score_rows`` gives the class scores (LABELS
    order) of the elements of an int64 array.

    The walk decides an element from its own scores once every element above it is a
    mixture, so it goes level by level: each round scores the elements it has reached and,
    ``lookahead`` − 1 levels below them, the elements it may reach next (one round per level
    would pay the network's per-call cost ten times a page), then decides what those scores
    decide. The decisions are :func:`walk`'s with the same scores."""
    if lookahead < 1:
        raise ValueError(f"the walk scores at least one level a round, not {lookahead}")
    n = len(table)
    proba = np.zeros((n, len(LABELS)), dtype=np.float32)
    decision = [-1] * n
    if n == 0:
        return np.zeros(0, dtype=np.int8), proba
    end = table.end.tolist()
    leaf = table.n_children == 0
    tested: dict[int, tuple[bool, bool, bool]] = {}
    frontier = [0]
    while frontier:
        rows = _within_reach(table, frontier, lookahead)
        scores = score_rows(rows)
        proba[rows] = scores
        noisy, keep, comment = _row_tests(leaf[rows], scores, thresholds)
        tested.update(zip(rows.tolist(), zip(noisy.tolist(), keep.tolist(), comment.tolist())))
        reached, frontier = frontier, []
        while reached:
            i = reached.pop()
            if i not in tested:
                frontier.append(i)
                continue
            noisy_i, keep_i, comment_i = tested[i]
            decision[i] = decided(noisy_i and i > 0, comment_i, keep_i or leaf[i])
            if decision[i] == MIXTURE:
                child = i + 1
                while child < end[i]:
                    reached.append(child)
                    child = end[child]
    return np.fromiter(decision, dtype=np.int8, count=n), proba


def _within_reach_pure(table: ElementTable, frontier: list[int], lookahead: int) -> np.ndarray:
    """The elements of the subtrees of ``frontier`` (disjoint, none scored yet) down to
    ``lookahead`` − 1 levels below their roots, ascending."""
    roots = np.asarray(frontier, dtype=np.int64)
    ends = table.end[roots]
    # Each subtree's span marked by +1 at its root and −1 at its end, and the depth it is
    # scored to spread over it the same way (disjoint spans: the roots are distinct, and so
    # are the ends).
    inside = np.zeros(len(table) + 1, dtype=np.int64)
    inside[roots] += 1
    inside[ends] -= 1
    limit = np.zeros(len(table) + 1, dtype=np.int64)
    limit[roots] += table.depth[roots] + lookahead
    limit[ends] -= table.depth[roots] + lookahead
    reach = (np.cumsum(inside[:-1]) > 0) & (table.depth < np.cumsum(limit[:-1]))
    return np.flatnonzero(reach)


def _within_reach_compiled(table: ElementTable, frontier: list[int], lookahead: int
                           ) -> np.ndarray:
    # A walk over the reached elements only: the numpy marks above cost 15 µs a round.
    return BACKEND.kernel.rows_within(np.asarray(table.end, dtype=np.int32),
                                      np.asarray(table.depth, dtype=np.int32),
                                      sorted(frontier), lookahead)


_within_reach = BACKEND.dispatch(_within_reach_pure, _within_reach_compiled)


def _row_tests(leaf: np.ndarray, proba: np.ndarray, thresholds: Thresholds
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The network's three tests on the rows of ``proba`` (``leaf``: whether each row's
    element has no element children): removed, kept whole, a comment if removed."""
    removal = proba[:, NOISE] + proba[:, COMMENT]
    noisy = np.where(leaf, _reaches(removal, thresholds.leaf),
                     _reaches(removal, thresholds.noise))
    keep = _reaches(proba[:, DATA], thresholds.keep)
    comment = proba[:, COMMENT] > proba[:, NOISE]
    return noisy, keep, comment


def _tests(table: ElementTable, proba: np.ndarray, thresholds: Thresholds,
           recalled: np.ndarray | None, templates: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk's three tests on every element at once (then the walk reads plain Python
    lists: indexing numpy arrays element by element costs more than the walk itself): whether
    it is removed, kept whole, and a comment if removed."""
    noisy, keep, comment = _row_tests(table.n_children == 0, proba, thresholds)
    if recalled is not None:
        hit = recalled >= 0
        noisy = np.where(hit, (recalled == NOISE) | (recalled == COMMENT), noisy)
        keep = np.where(hit, recalled == DATA, keep)
        comment = np.where(hit, recalled == COMMENT, comment)
    if templates is not None:
        noisy, keep, comment = _with_templates(table, templates, recalled, noisy, keep,
                                               comment)
    return noisy, keep, comment


def _with_templates(table: ElementTable, templates: np.ndarray, recalled: np.ndarray | None,
                    noisy: np.ndarray, keep: np.ndarray, comment: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk's tests with the site's template subtrees: noise, never comments; and a
    subtree that holds one is descended into, not kept whole (the template inside would go
    through). The site memory's recalls stand."""
    free = np.ones(len(table), dtype=bool) if recalled is None else recalled < 0
    marked = templates & free
    # Subtree i holds a template below it when the count of templates in (i, end[i]) is > 0.
    counted = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(marked, out=counted[1:])
    holds = (counted[table.end] - counted[1:]) > 0
    return noisy | marked, keep & ~(holds & free), comment & ~marked


def _reaches(scores: np.ndarray, threshold: float) -> np.ndarray:
    """``scores[i] >= threshold`` for every i, decided as the comparison of the numpy scalar
    ``scores[i]`` with ``threshold`` decides it: in the type numpy promotes the two to (float32
    for float32 scores and a Python float under NumPy 2's rules, float64 under NumPy 1's), so
    a score within rounding of a threshold goes the same way as in a scalar comparison."""
    common = (scores.dtype.type(0) + threshold).dtype
    return scores.astype(common, copy=False) >= np.asarray(threshold, dtype=common)
