"""The mining measures of the seed papers, on one method's documents.

* :func:`classify`: TF-IDF + a linear SVM trained on some sites, tested on the others
  (site-grouped folds, repeated with several fold assignments): accuracy and macro-F1 per fold.
* :func:`cluster_f`: k-means with k = number of classes, scored by the clustering F measure of
  Yi, Liu & Li (KDD 2003, after Larsen & Aone): for each class the F of its best-matching
  cluster, weighted by class size; one value per k-means seed.
* :func:`near_duplicate_share`: the share of same-site page pairs whose 4-word-shingle Jaccard
  similarity exceeds 0.5 (the near-duplicate test of Chakrabarti, Kumar & Punera, WWW 2007).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.feature_extraction import DictVectorizer
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GroupKFold
from sklearn.svm import LinearSVC

from noisecbr.seeds.style import words_of

__all__ = ["FOLDS", "NEAR_DUPLICATE", "REPEATS", "RUNS", "SHINGLE", "Classification",
           "bags", "classify", "cluster_f", "clustering_f_measure", "count_matrix",
           "near_duplicate_share", "shingle_set"]

#: Site-grouped folds per repetition (as noisecbr's own cross-validation).
FOLDS = 5
#: Repetitions of the fold assignment (each a different shuffle of the sites into folds).
REPEATS = 5
#: k-means runs (seeds); the issue asks for at least 100.
RUNS = 100
#: Words per shingle and the Jaccard similarity above which two pages are near-duplicates
#: (the issue's setting, the usual one of shingle-based near-duplicate detection).
SHINGLE = 4
NEAR_DUPLICATE = 0.5
#: Bootstrap rounds (over sites) for the near-duplicate share's interval.
BOOTSTRAP = 1000

Document = str | dict[str, float]


def bags(docs: Sequence[Document]) -> list[dict[str, float]]:
    """Term weights of each document: word counts of a text, a weighted bag as it is."""
    return [dict(Counter(words_of(d))) if isinstance(d, str) else dict(d) for d in docs]


def count_matrix(docs: Sequence[Document], min_df: int = 2) -> sparse.csr_matrix:
    """Documents × terms found in at least ``min_df`` documents (a word on one page can neither
    be learnt across sites nor pull two pages together)."""
    matrix = DictVectorizer().fit_transform(bags(docs)).tocsr()
    df = np.bincount(matrix.indices, minlength=matrix.shape[1])
    return matrix[:, np.flatnonzero(df >= min_df)]


@dataclass
class Classification:
    """Per-fold scores and out-of-fold predictions of every repetition."""

    accuracy: list[float] = field(default_factory=list)
    macro_f1: list[float] = field(default_factory=list)
    predictions: list[np.ndarray] = field(default_factory=list)  # one per repetition

    def pooled(self, labels: Sequence[str], mask: np.ndarray) -> tuple[list[float], list[float]]:
        """Accuracy and macro-F1 of each repetition's predictions on the pages in ``mask``."""
        truth = np.asarray(labels)[mask]
        acc = [accuracy_score(truth, p[mask]) for p in self.predictions]
        f1 = [f1_score(truth, p[mask], average="macro", zero_division=0)
              for p in self.predictions]
        return acc, f1


def classify(counts: sparse.csr_matrix, labels: Sequence[str], groups: Sequence[str],
             folds: int = FOLDS, repeats: int = REPEATS) -> Classification:
    """TF-IDF (fitted on the training fold) + a linear SVM, over site-grouped folds."""
    y = np.asarray(labels)
    result = Classification()
    for repeat in range(repeats):
        predicted = np.empty(len(y), dtype=y.dtype)
        splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=repeat)
        for train, test in splitter.split(counts, y, groups):
            tfidf = TfidfTransformer().fit(counts[train])
            model = LinearSVC(random_state=0).fit(tfidf.transform(counts[train]), y[train])
            predicted[test] = model.predict(tfidf.transform(counts[test]))
            result.accuracy.append(accuracy_score(y[test], predicted[test]))
            result.macro_f1.append(f1_score(y[test], predicted[test], average="macro",
                                            zero_division=0))
        result.predictions.append(predicted)
    return result


def clustering_f_measure(labels: Sequence[str], clusters: Sequence[int]) -> float:
    """Σ_i (n_i / n) · max_j F(i, j), F the harmonic mean of n_ij / n_j and n_ij / n_i."""
    labels, clusters = np.asarray(labels), np.asarray(clusters)
    total = 0.0
    for label in np.unique(labels):
        in_class = labels == label
        best = 0.0
        for cluster in np.unique(clusters[in_class]):
            in_cluster = clusters == cluster
            both = np.count_nonzero(in_class & in_cluster)
            precision, recall = both / in_cluster.sum(), both / in_class.sum()
            best = max(best, 2 * precision * recall / (precision + recall))
        total += in_class.sum() / len(labels) * best
    return total


def cluster_f(counts: sparse.csr_matrix, labels: Sequence[str], runs: int = RUNS) -> list[float]:
    """The clustering F of k-means (k = number of classes) on TF-IDF vectors, one per seed."""
    vectors = TfidfTransformer().fit_transform(counts)
    k = len(set(labels))
    return [clustering_f_measure(labels, KMeans(k, n_init=1, random_state=seed)
                                 .fit_predict(vectors)) for seed in range(runs)]


def shingle_set(text: str, n: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """The set of n-word windows of a text (a shorter, non-empty text is one shingle)."""
    words = words_of(text)
    if len(words) < n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def _jaccard(a: frozenset, b: frozenset) -> float:
    # Two empty outputs share nothing: a method that keeps nothing finds no duplicates.
    return len(a & b) / len(a | b) if a and b else 0.0


def near_duplicate_share(texts: Sequence[str], sites: Sequence[str], rounds: int = BOOTSTRAP,
                         seed: int = 0) -> tuple[float, float, int]:
    """Share of same-site pairs with shingle Jaccard > :data:`NEAR_DUPLICATE`, the half-width
    of its 95 % bootstrap interval over sites, and the number of pairs."""
    by_site: dict[str, list[int]] = defaultdict(list)
    for i, site in enumerate(sites):
        by_site[site].append(i)
    sets = [shingle_set(t) for t in texts]
    per_site = []  # (near-duplicate pairs, pairs) of each site with pairs
    for members in by_site.values():
        pairs = list(combinations(members, 2))
        if pairs:
            near = sum(_jaccard(sets[a], sets[b]) > NEAR_DUPLICATE for a, b in pairs)
            per_site.append((near, len(pairs)))
    if not per_site:
        return float("nan"), float("nan"), 0
    counts = np.array(per_site, dtype=float)
    share = counts[:, 0].sum() / counts[:, 1].sum()
    sample = np.random.default_rng(seed).integers(0, len(counts), (rounds, len(counts)))
    shares = counts[sample, 0].sum(axis=1) / counts[sample, 1].sum(axis=1)
    low, high = np.percentile(shares, [2.5, 97.5])
    return float(share), float((high - low) / 2), int(counts[:, 1].sum())
