"""How far to trust a page's result: its expected F1, from the page's own evidence.

A pipeline that cleans millions of pages wants to know which results to doubt: it can send those
to another extractor or a language model (``Cleaner(fallback=…)``), or leave them out. The
evidence is what the cleaner already knows when it is done (:func:`confidence_evidence`): how
sure the kind model is of the page's kind, how sure the walk was of its decisions (the
probabilities of the subtrees it decided, weighed by their words), how much of the page it
kept, whether the walk fell back, how big the page is. A small linear model over them, trained
in :mod:`training.conventions` on the pages of the recipe's folds (each cleaned by a model that
never saw its site) and calibrated to the mean F1 of the pages it scores alike (isotonic
regression), gives :attr:`noisecbr.result.CleanResult.confidence`: the word F1 a result such as
this one had on average. It reads the kind model's own probabilities, also where the caller gave
the page's kind: a kind given is not evidence of how well the page was cleaned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, MIXTURE, NOISE
from ..score.kind import KINDS

__all__ = ["CONFIDENCE_EVIDENCE", "ConfidenceModel", "confidence_evidence"]

#: The evidence's names, in the order of :func:`confidence_evidence`'s numbers.
CONFIDENCE_EVIDENCE: tuple[str, ...] = (
    *(f"kind:{kind}" for kind in KINDS), "kind:certainty", "kind:known",
    "walk:sure", "walk:unsure_share", "walk:data_share", "walk:mixture_share",
    "kept:share", "kept:log_words", "page:log_words", "walk:fell_back", "walk:comment_share",
    "walk:sure_kept", "walk:sure_removed", "kept:link_share", "kept:prose_share",
    "kept:log_pieces")
#: Text pieces of at least this many characters outside links are prose (as
#: :data:`noisecbr.settings.PROSE_PIECE_CHARS`).
_PROSE_CHARS = 120

#: A decided subtree is *unsure* when its label's probability is below this.
UNSURE = 0.7


def confidence_evidence(table: ElementTable, proba: np.ndarray, decision: np.ndarray,
                        kept: np.ndarray, kinds: np.ndarray | None, fell_back: bool
                        ) -> np.ndarray:
    """The evidence of a result's quality (float64, :data:`CONFIDENCE_EVIDENCE` in order):
    ``table`` the page's element table, ``proba`` and ``decision`` the walk's scores and
    decisions (−1 where undecided), ``kept`` per text piece whether the text keeps it,
    ``kinds`` the page's kind probabilities (None when unknown), ``fell_back`` whether the
    walk fell back."""
    words = table.subtree_words() if len(table) else np.zeros(0)
    total = float(words[0]) if len(words) else 0.0
    piece_words = np.asarray(table.piece_words, dtype=np.float64)
    kept = np.asarray(kept, dtype=bool)
    kept_words = float(piece_words[kept].sum())
    in_link = np.asarray(table.piece_in_link, dtype=bool)
    prose = (np.asarray(table.piece_chars) >= _PROSE_CHARS) & ~in_link
    decided = np.flatnonzero(decision >= 0)
    weight = words[decided].astype(np.float64)
    mass = max(float(weight.sum()), 1.0)
    label = decision[decided]
    chosen = proba[decided, label] if len(decided) else np.zeros(0)
    # A subtree removed as noise or comment was sure in their sum.
    removal = (label == NOISE) | (label == COMMENT)
    if len(decided):
        chosen = np.where(removal, proba[decided, NOISE] + proba[decided, COMMENT], chosen)
    known = kinds is not None
    kinds = np.zeros(len(KINDS)) if kinds is None else np.asarray(kinds, dtype=np.float64)
    kept_mass = max(float(weight[~removal].sum()), 1.0)
    removed_mass = max(float(weight[removal].sum()), 1.0)
    return np.array([
        *kinds, float(kinds.max()) if known else 0.0, float(known),
        float((chosen * weight).sum() / mass), float(weight[chosen < UNSURE].sum() / mass),
        float(weight[label == DATA].sum() / mass), float(weight[label == MIXTURE].sum() / mass),
        kept_words / total if total else 0.0, math.log1p(kept_words) / 10,
        math.log1p(total) / 10, float(fell_back),
        float(weight[label == COMMENT].sum() / mass),
        float((chosen * weight)[~removal].sum() / kept_mass),
        float((chosen * weight)[removal].sum() / removed_mass),
        float(piece_words[kept & in_link].sum() / kept_words) if kept_words else 0.0,
        float(piece_words[kept & prose].sum() / kept_words) if kept_words else 0.0,
        math.log1p(int(kept.sum())) / 8])


@dataclass
class ConfidenceModel:
    """A linear score of the evidence, mapped to an expected F1 by an increasing step function
    (isotonic regression's knots: the score at each step's start and the F1 from there)."""

    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    knots: np.ndarray
    values: np.ndarray

    def score(self, evidence: np.ndarray) -> np.ndarray:
        """The linear score of each row of evidence (a higher score, a better result)."""
        x = (np.atleast_2d(np.asarray(evidence, dtype=np.float64)) - self.mean) / self.scale
        return x @ self.weights + self.bias

    def predict(self, evidence: np.ndarray) -> np.ndarray | float:
        """The expected F1 of each row of evidence, in [0, 1] (a float for one 1-D row)."""
        score = self.score(evidence)
        # A score that is not a number (evidence no page gives) is the least trust, not the most
        # (searchsorted puts NaN after every knot).
        score = np.where(np.isfinite(score), score, -np.inf)
        step = np.searchsorted(self.knots, score, side="right") - 1
        out = np.clip(self.values[np.clip(step, 0, len(self.values) - 1)], 0.0, 1.0)
        return float(out[0]) if np.ndim(evidence) == 1 else out
