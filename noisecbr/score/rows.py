"""A page's class scores: every subtree's (:func:`score`), or the rows a lazy walk asks for
(:class:`RowScores`), one BLAS thread.
"""

from __future__ import annotations

import functools

import numpy as np

from ..features.lexical import lexical_inputs
from ..features.vectors import row_vectors
from ..prepare.page import Page
from ..prepare.subtrees import ElementTable
from ..result import LABELS, NOISE
from .discussion import comment_evidence, without_unfounded_comments
from .model import Model


@functools.lru_cache(maxsize=1)
def blas_controller():
    """threadpoolctl's controller of numpy's BLAS threads (one per process)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def score(page: Page, model: Model, *, smooth: float | None = None) -> np.ndarray:
    """Class probabilities of every subtree of the page (rows in document order; columns in
    LABELS order, all four: a model of the paper's three classes scores comment 0; so does a
    subtree without a thread's markup, see :mod:`noisecbr.score.discussion`). ``smooth``: the
    isotonic smoothing's penalty (:func:`noisecbr.seeds.smoothing.isotonic_smooth`), none by
    default."""
    if len(page.table) == 0:
        return np.zeros((0, len(LABELS)), dtype=np.float32)
    # One BLAS thread: a page's matrices are small, and OpenBLAS's thread hand-offs cost
    # more than they save (measured 16 → 2.4 ms per page on the 2-core machine under load).
    with blas_controller().limit(limits=1, user_api="blas"):
        return RowScores(page, model, smooth=smooth)(None)


class RowScores:
    """The class scores of a page's elements, all or a few at a time, as :func:`score` gives
    them (the lazy walk asks for the elements it reaches): what every row's scores read (the
    page's quantities, its lexical inputs and their running sums, its comment evidence) is
    found once. ``smooth``: as in :func:`score`, for the whole page's scores only (smoothing
    reads every subtree's). The caller limits BLAS's threads."""

    def __init__(self, page: Page, model: Model, *, smooth: float | None = None) -> None:
        self.table, self.model, self.smooth = page.table, model, smooth
        self.kinds = page.kinds(model) if model.kind_inputs else None
        self.vectors = row_vectors(page.table)
        self.pooled = (None if model.lexicon is None
                       else model.lexicon.pooler(lexical_inputs(page.table)))
        self._evidence: np.ndarray | None = None

    def __call__(self, rows: np.ndarray | None) -> np.ndarray:
        """The scores of the elements ``rows`` (distinct indices; None: every element)."""
        if self.smooth and rows is not None:
            raise ValueError("smoothed scores are the whole page's (rows=None)")
        pooled = None if self.pooled is None else self.pooled(rows)
        out = self.model.predict_proba(self.vectors(rows), pooled, self.kinds)
        if self.smooth:
            out = _smoothed(self.table, out, self.smooth)
        if out.shape[1] == len(LABELS) and out.dtype == np.float32:
            proba = out  # every label already, as the model returned it
        else:
            proba = np.zeros((len(out), len(LABELS)), dtype=np.float32)
            proba[:, :out.shape[1]] = out
        # A comment needs a thread's markup (documentation sections, bios and teasers were
        # filed as comments): elsewhere its score is set aside.
        return without_unfounded_comments(self.table, proba, rows, evidence=self.evidence)

    def evidence(self) -> np.ndarray:
        """The page's :func:`~noisecbr.score.discussion.comment_evidence`, found when first
        asked."""
        if self._evidence is None:
            self._evidence = comment_evidence(self.table)
        return self._evidence


def _smoothed(table: ElementTable, proba: np.ndarray, c: float) -> np.ndarray:
    from ..seeds.smoothing import isotonic_smooth, subtree_penalties

    parents = table.parent.tolist()
    noise = isotonic_smooth(parents, proba[:, NOISE].tolist(), subtree_penalties(parents, c))
    out = proba.copy()
    out[:, NOISE] = noise
    # Keep the row a distribution: the other classes share what noise gave up or took.
    rest = np.maximum(1.0 - out[:, NOISE], 0.0)
    others = proba[:, 1:].sum(axis=1)
    ratio = np.divide(rest, others, out=np.zeros_like(rest), where=others > 0)
    out[:, 1:] = proba[:, 1:] * ratio[:, None]
    return out
