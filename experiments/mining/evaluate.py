"""One set's mining results: every method's documents through every measure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from noisecbr.seeds.style import words_of

from .corpus import Corpus
from .measures import (
    FOLDS,
    REPEATS,
    RUNS,
    classify,
    cluster_f,
    clustering_f_measure,
    count_matrix,
    near_duplicate_share,
)
from .methods import MIN_SITE_PAGES, SITE_LEVEL

__all__ = ["MethodResult", "SetResult", "evaluate"]


@dataclass
class MethodResult:
    """Scores of one method on one set (lists: one value per fold, repetition or run)."""

    method: str
    accuracy: list[float]
    macro_f1: list[float]
    delta_accuracy: list[float]  # per fold, against the first method (no cleaning)
    multi_accuracy: list[float]  # per repetition, pages of multi-page sites only
    multi_f1: list[float]
    cluster_f: list[float]
    near_duplicates: float | None  # None: the method gives weights, not text
    near_duplicates_ci: float | None
    empty: int  # pages the method left without a word
    median_words: float = 0.0  # words (CST: weighted terms) per page, median
    names_class: int = 0  # pages whose document contains the word of their own class name


@dataclass
class SetResult:
    """Every method's results on one set, with how the set was built."""

    name: str
    pages: int
    classes: dict[str, int]
    groups: int
    multi_page: int
    pairs: int
    notes: list[str]
    group_f: float = 0.0  # clustering F of the partition "one cluster per fold group"
    methods: list[MethodResult] = field(default_factory=list)
    settings: dict = field(default_factory=dict)


def _empty(doc) -> bool:
    return not (doc.strip() if isinstance(doc, str) else any(v > 0 for v in doc.values()))


def _words(doc) -> list[str]:
    return words_of(doc) if isinstance(doc, str) else [w for w, v in doc.items() if v > 0]


def _names_class(docs: Sequence, labels: Sequence[str]) -> int:
    """Pages whose document holds their class name as a word: a clue that the method kept
    text which *states* the class (a section menu, a "Sports" breadcrumb) rather than text
    about it."""
    return sum(label.lower() in set(_words(doc)) for doc, label in zip(docs, labels, strict=True))


def _group_f(corpus: Corpus) -> float:
    """How well the sites alone cluster the classes: the F of one cluster per fold group. High
    when most sites hold one class, so that clustering by template text is clustering by class."""
    index = {group: i for i, group in enumerate(sorted(set(corpus.groups)))}
    return clustering_f_measure(corpus.labels, [index[g] for g in corpus.groups])


def evaluate(corpus: Corpus, docs: Mapping[str, Sequence], folds: int = FOLDS,
             repeats: int = REPEATS, runs: int = RUNS) -> SetResult:
    """Classification, clustering and near-duplicates of each method's documents of
    ``corpus``; ``docs`` maps method → documents in page order, baseline first."""
    mask = np.asarray(corpus.multi_page(MIN_SITE_PAGES))
    sites = [p.site for p in corpus.pages]
    result = SetResult(
        name=corpus.name, pages=len(corpus.pages),
        classes={c: corpus.labels.count(c) for c in corpus.classes},
        groups=len(set(corpus.groups)), multi_page=int(mask.sum()), pairs=0,
        notes=list(corpus.notes), group_f=_group_f(corpus),
        settings={"folds": folds, "repeats": repeats, "runs": runs,
                  "min_site_pages": MIN_SITE_PAGES, "site_level": list(SITE_LEVEL)})
    baseline: list[float] | None = None
    for method, method_docs in docs.items():
        counts = count_matrix(method_docs)
        scores = classify(counts, corpus.labels, corpus.groups, folds, repeats)
        baseline = scores.accuracy if baseline is None else baseline
        multi_acc, multi_f1 = scores.pooled(corpus.labels, mask)
        texts = all(isinstance(d, str) for d in method_docs)
        share, ci, pairs = (near_duplicate_share(method_docs, sites) if texts
                            else (None, None, 0))
        result.pairs = max(result.pairs, pairs)
        result.methods.append(MethodResult(
            method=method, accuracy=scores.accuracy, macro_f1=scores.macro_f1,
            delta_accuracy=list(np.subtract(scores.accuracy, baseline)),
            multi_accuracy=multi_acc, multi_f1=multi_f1,
            cluster_f=cluster_f(counts, corpus.labels, runs),
            near_duplicates=share, near_duplicates_ci=ci,
            empty=sum(_empty(d) for d in method_docs),
            median_words=float(np.median([len(_words(d)) for d in method_docs])),
            names_class=_names_class(method_docs, corpus.labels)))
    return result
