"""The shingle metric of the article-extraction layout (modernweb-dev/README.md).

Tokens are ``\\w+`` matches (Unicode, case kept), shingles are 4-token windows counted as a
multiset. Per page TP = Σ min(true, pred), FP = Σ max(0, pred − true), FN = Σ max(0, true − pred),
divided by their sum so that every page weighs the same. Precision is the mean over pages with
TP + FP > 0, recall the mean over pages with TP + FN > 0 (a page with FP = FN = 0 scores 1 on both,
TP = FP = 0 gives precision 0, TP = FN = 0 recall 0), and F1 = 2PR / (P + R) of the two means.

The *word* metric is WCXB's (wcxb-dev/README.md): the bag of a page's lower-cased ``\\w+``
words against the truth's, the page's own F1 of the two bags (:func:`word_f1`), and the mean of
the pages' F1 (:func:`mean_word_f1`): a page's F1, not the F1 of mean P and mean R.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..prepare.subtrees import WORD

__all__ = ["SHINGLE", "tokens", "shingles", "PageScore", "score_page", "Scores", "aggregate",
           "bootstrap_f1", "word_f1", "mean_word_f1"]

SHINGLE = 4


def tokens(text: str) -> list[str]:
    """The word tokens of ``text``, as every figure of the bench counts them.

    >>> tokens("Tide pools, at low tide.")
    ['Tide', 'pools', 'at', 'low', 'tide']
    """
    return WORD.findall(text)


def shingles(words: Sequence[str], n: int = SHINGLE) -> Counter:
    """Multiset of n-token windows; a text shorter than n is one shingle of all its tokens."""
    if len(words) < n:
        return Counter([tuple(words)]) if words else Counter()
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


@dataclass(frozen=True)
class PageScore:
    """Shares of one page's shingles: true positive, false positive, false negative."""

    tp: float
    fp: float
    fn: float

    @property
    def precision(self) -> float:
        """Shingles kept that are in the truth / shingles kept (1 when both are empty)."""
        if self.tp + self.fp > 0:
            return self.tp / (self.tp + self.fp)
        return 1.0 if self.fn == 0 else 0.0  # both empty: right; nothing returned: wrong

    @property
    def recall(self) -> float:
        """Shingles of the truth that were kept / shingles of the truth (1 when both are empty)."""
        if self.tp + self.fn > 0:
            return self.tp / (self.tp + self.fn)
        return 1.0 if self.fp == 0 else 0.0

    @property
    def f1(self) -> float:
        """The page's own F1: how the bench's oracle ranks extractors on one page."""
        return _f1(self.precision, self.recall)


def score_page(predicted: str, truth: str) -> PageScore:
    """The shingle counts of an extracted text against the ground truth.

    >>> score = score_page("a b c d e", "a b c d")
    >>> score.recall, round(score.precision, 2)
    (1.0, 0.5)
    """
    pred, true = shingles(tokens(predicted)), shingles(tokens(truth))
    tp = sum(min(count, true[s]) for s, count in pred.items() if s in true)
    fp = sum(pred.values()) - tp
    fn = sum(true.values()) - tp
    total = tp + fp + fn
    if total == 0:
        return PageScore(0.0, 0.0, 0.0)
    return PageScore(tp / total, fp / total, fn / total)


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 over a set of pages (of the mean P and mean R), and how many pages.
    """

    precision: float
    recall: float
    f1: float
    pages: int

    def __str__(self) -> str:
        return (f"P {self.precision:.3f}  R {self.recall:.3f}  F1 {self.f1:.3f}  "
                f"({self.pages} pages)")


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def aggregate(pages: Sequence[PageScore]) -> Scores:
    """Macro precision, recall and F1 over pages, as the layout's README defines them."""
    precision = float(np.mean([p.precision for p in pages])) if pages else 0.0
    recall = float(np.mean([p.recall for p in pages])) if pages else 0.0
    return Scores(precision, recall, _f1(precision, recall), len(pages))


def bootstrap_f1(pages: Sequence[PageScore], rounds: int = 1000, seed: int = 0) -> float:
    """Half-width of the 95 % bootstrap interval of F1 over pages."""
    if len(pages) < 2:
        return 0.0
    precision = np.array([p.precision for p in pages])
    recall = np.array([p.recall for p in pages])
    rng = np.random.default_rng(seed)
    samples = rng.integers(0, len(pages), size=(rounds, len(pages)))
    ps, rs = precision[samples].mean(axis=1), recall[samples].mean(axis=1)
    f1 = np.where(ps + rs > 0, 2 * ps * rs / np.maximum(ps + rs, 1e-12), 0.0)
    low, high = np.percentile(f1, [2.5, 97.5])
    return float((high - low) / 2)


def word_f1(predicted: str, truth: str) -> float:
    """WCXB's page score: the F1 of the bags (multisets) of lower-cased word tokens of the
    extracted text and of the truth; 1 when both are empty, 0 when one is.

    >>> word_f1("The cat sat.", "the cat sat on the mat")
    0.6666666666666666
    >>> word_f1("", ""), word_f1("words", "")
    (1.0, 0.0)
    """
    pred = Counter(word.lower() for word in tokens(predicted))
    true = Counter(word.lower() for word in tokens(truth))
    if not pred or not true:
        return float(not pred and not true)
    common = sum((pred & true).values())
    if not common:
        return 0.0
    precision, recall = common / sum(pred.values()), common / sum(true.values())
    return 2 * precision * recall / (precision + recall)


def mean_word_f1(scores: Sequence[float]) -> float:
    """The mean of the pages' word F1 (0 for no pages)."""
    return float(np.mean(scores)) if len(scores) else 0.0
