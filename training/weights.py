"""How the cases of a :class:`~training.datasets.Dataset` are weighted in the loss.

Class balance and sampling (see :mod:`training.presets` for the values each preset uses): the
modernweb-dev case base holds 951 569 cases, 68.1 % noise, 29.2 % data and 2.8 % mixture; 29 %
of the cases are wordless subtrees (icons, spacers, empty wrappers: labelled by rule, data inside
data and noise elsewhere); pages hold 2 to 13 800 subtrees (median ~800), so a few huge pages
would dominate a plain case sample. :func:`case_weights` turns a preset's choices into one
weight per case: a page weight (``cases_in_page ** -page_power``: 1 = every page weighs the
same), a factor for wordless cases, optionally one for walk-frontier cases, and then a class
weight computed on the weighted class masses (``class_power`` 1 = the three classes weigh the
same). The weights multiply the per-case loss; the ``paper`` preset instead draws a
class-balanced random sample of cases each epoch (plain SGD on a 68/29/3 mix hardly ever
outputs mixture).
"""

from __future__ import annotations

import numpy as np

from noisecbr.features import FEATURE_NAMES
from noisecbr.result import LABELS

from .datasets import Dataset
from .spool import release, row_chunks

__all__ = ["case_weights", "wordless_mask"]

_LOG_WORDS = FEATURE_NAMES.index("log_words")


def wordless_mask(X: np.ndarray) -> np.ndarray:
    """Cases whose subtree has no words (``log_words`` feature is 0), read a chunk of rows at
    a time (spooled vectors stay out of memory)."""
    X = np.asarray(X)
    out = np.empty(len(X), dtype=bool)
    for part in row_chunks(len(X)):
        out[part] = X[part, _LOG_WORDS] <= 0.0
        release(X)
    return out


def case_weights(dataset: Dataset, class_power: float = 0.0, page_power: float = 0.0,
                 wordless: float = 1.0, frontier: float = 1.0) -> np.ndarray:
    """One loss weight per case, normalised to mean 1.

    A deduplicated case (``counts``) weighs as many cases as it stands for, times its
    ``weights`` factor when the dataset has one;
    ``page_power``: page weight = cases_in_page ** -page_power (1: every page weighs the same);
    ``wordless``: factor for cases without words;
    ``frontier``: factor for cases on the walk frontier (when the dataset knows them);
    ``class_power``: then class weight = (total / (3 · class mass)) ** class_power, class masses
    taken after the two weights above (0: none, 1: the three classes weigh the same).
    """
    n = len(dataset)
    w = np.ones(n, dtype=np.float64)
    if n == 0:
        return w.astype(np.float32)
    if dataset.counts is not None:  # a deduplicated case stands for ``count`` cases
        w *= np.maximum(dataset.counts, 1)
    if dataset.weights is not None:  # e.g. the weight of the case's set
        w *= dataset.weights
    if page_power:
        _, inverse, counts = np.unique(dataset.pages, return_inverse=True, return_counts=True)
        w *= counts[inverse].astype(np.float64) ** -page_power
    if wordless != 1.0:
        w[wordless_mask(dataset.X)] *= wordless
    if frontier != 1.0 and dataset.frontier is not None:
        w[dataset.frontier] *= frontier
    if class_power:
        # Class masses after the page and wordless weights, so "balanced" means balanced.
        mass = np.bincount(dataset.y, weights=w, minlength=len(LABELS))
        cw = (w.sum() / (len(LABELS) * np.maximum(mass, 1e-12))) ** class_power
        w *= cw[dataset.y]
    return (w / w.mean()).astype(np.float32)

