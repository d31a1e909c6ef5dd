"""Datasets straight from labelled pages, and a synthetic one for tests and demos.

:func:`from_pages` reads labelled page directories (:mod:`noisecbr.eval.datasets`), prepares
and labels each page as an import stores it (:func:`casebase.pages.page_cases` → vectorize: the
same cases the case base stores), on forked worker processes, in page order;
:func:`synthetic` makes a small separable case set.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np

from noisecbr.features import FEATURE_NAMES
from noisecbr.result import LABELS, MIXTURE

from .datasets import Dataset
from .lexicon import LexicalCases, cases_of_page

if TYPE_CHECKING:
    from noisecbr.eval.datasets import LabelledPage

T = TypeVar("T")

__all__ = ["from_labelled", "from_pages", "map_pages", "map_pages_with", "page_arrays",
           "PageArrays", "frontier_of", "synthetic"]


def frontier_of(parent: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Walk-frontier flags of one page's elements (document order, parent before child)."""
    reached = np.ones(len(parent), dtype=bool)
    for i in range(1, len(parent)):
        p = parent[i]
        reached[i] = p < 0 or (reached[p] and labels[p] == MIXTURE)
    return reached



def page_arrays(page: LabelledPage, article_body: bool = False) -> PageArrays | None:
    """The cases of one labelled page as arrays, prepared and labelled as an import stores them
    (:func:`casebase.pages.page_cases`: the stored HTML re-parsed, labels from the ground
    truth), except that ``article_body`` relabels them to the article-body convention (the
    embedded recipe's choice; an import keeps the truth as given); None when the page is not
    HTML."""
    from casebase.pages import page_cases
    from noisecbr.features import vectorize
    from noisecbr.features.lexical import lexical_inputs
    from noisecbr.prepare.tidy import InputError

    try:
        cases = page_cases(page.html, truth=page.truth, article_body=article_body)
    except InputError:
        return None
    table = cases.page.table
    labels = cases.labels.astype(np.int64)
    return PageArrays(vectorize(table), labels, page.site, f"{page.dataset}/{page.id}",
                      frontier_of(table.parent, labels), cases_of_page(lexical_inputs(table)))


class PageArrays(NamedTuple):
    """One page's cases: vectors, label indices, site, page key and walk-frontier flags."""

    X: np.ndarray
    y: np.ndarray
    site: str
    page: str
    frontier: np.ndarray
    lexical: LexicalCases


def _iter_pages(dirs: Iterable[str | Path], limit: int | None) -> Iterator[LabelledPage]:
    from noisecbr.eval.datasets import read_dataset

    for directory in dirs:
        for k, page in enumerate(read_dataset(directory)):
            if limit is not None and k >= limit:
                break
            yield page


def map_pages(pages: Iterable[LabelledPage], processes: int = 1, total: int | None = None,
              progress: bool = False, relabelled: Collection[str] = ()
              ) -> list[PageArrays | None]:
    """:func:`page_arrays` of every page, in page order, on ``processes`` forked worker
    processes (1: in this process); ``progress`` shows a bar of ``total`` pages on stderr;
    the pages of the sets ``relabelled`` are labelled to the article-body convention."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc="pages", unit="page", leave=False,
               disable=not progress or not sys.stderr.isatty())
    results = []
    with contextlib.ExitStack() as stack:
        arrays = functools.partial(_page_arrays_of, relabelled=frozenset(relabelled))
        mapped: Iterable = map(arrays, pages)
        if processes > 1:
            import multiprocessing as mp

            pool = stack.enter_context(mp.get_context("fork").Pool(processes))
            mapped = pool.imap(arrays, pages, chunksize=4)
        for item in mapped:
            results.append(item)
            bar.update()
    bar.close()
    return results


def map_pages_with(function: Callable[[LabelledPage], T], pages: Sequence[LabelledPage],
                   processes: int = 1) -> list[T]:
    """``function`` of every page, in page order, on ``processes`` forked worker processes (1:
    in this process; a handful of pages is not worth starting them for)."""
    if processes <= 1 or len(pages) <= 8:
        return [function(page) for page in pages]
    import multiprocessing as mp

    with mp.get_context("fork").Pool(processes) as pool:
        return pool.map(function, pages, chunksize=4)


def _page_arrays_of(page: LabelledPage, relabelled: frozenset[str]) -> PageArrays | None:
    return page_arrays(page, article_body=page.dataset in relabelled)


def from_labelled(pages: Iterable[LabelledPage], processes: int | None = None, *,
                  total: int | None = None, progress: bool = False,
                  source: str = "pages", relabelled: Collection[str] = ()) -> Dataset:
    """The cases of labelled pages (:func:`page_arrays`), in page order whatever the number of
    worker ``processes`` (default: all cores, at most 2 here); pages that are not HTML give no
    cases. The pages of the sets ``relabelled`` (:data:`training.recipe.RELABELLED_SETS`) are
    labelled to the article-body convention."""
    processes = processes or min(os.cpu_count() or 1, 2)
    parts = [p for p in map_pages(pages, processes, total, progress, relabelled)
             if p is not None]
    if not parts:
        return Dataset.concat([])
    return Dataset(
        X=np.concatenate([p.X for p in parts]),
        y=np.concatenate([p.y for p in parts]),
        sites=np.concatenate([np.full(len(p.y), p.site, dtype=object) for p in parts]),
        pages=np.concatenate([np.full(len(p.y), p.page, dtype=object) for p in parts]),
        frontier=np.concatenate([p.frontier for p in parts]),
        lexical=LexicalCases.concat([p.lexical for p in parts]),
        meta={"source": source},
    )


def from_pages(dirs: str | Path | Iterable[str | Path], limit: int | None = None,
               processes: int | None = None, progress: bool = False,
               relabelled: Collection[str] = ()) -> Dataset:
    """Build cases straight from labelled page directories (``limit`` pages per directory),
    as :func:`from_labelled` does."""
    if isinstance(dirs, (str, os.PathLike)):
        dirs = [dirs]
    dirs = [Path(d) for d in dirs]
    total = None
    if progress:
        from noisecbr.eval.datasets import dataset_size

        total = sum(min(dataset_size(d), limit or 10**9) for d in dirs)
    return from_labelled(_iter_pages(dirs, limit), processes, total=total, progress=progress,
                         source="pages:" + ",".join(d.name for d in dirs),
                         relabelled=relabelled)



def synthetic(n_sites: int = 30, per_site: int = 60, seed: int = 0,
              telling_words: bool = False) -> Dataset:
    """A small separable case set for tests and demos: the classes differ in their eq. 1 leaf
    shares (noise: link leaves, data: paragraph leaves, mixture: half and half, comment: list
    item leaves), 10 % mixture and 5 % comment. Each case has a word and an attribute token
    (:func:`_synthetic_lexical`): with ``telling_words`` they tell the classes too."""
    from noisecbr.features import LEAF_TYPES, group_slices

    leaf = group_slices()["leaf"]
    rng = np.random.default_rng(seed)
    n = n_sites * per_site
    y = rng.choice(len(LABELS), size=n, p=[0.55, 0.3, 0.1, 0.05])
    X = np.zeros((n, len(FEATURE_NAMES)), dtype=np.float32)
    X[:, leaf] = rng.uniform(0, 0.01, size=(n, leaf.stop - leaf.start))
    a, p, li = (leaf.start + LEAF_TYPES.index(t) for t in ("a", "p", "li"))
    X[y == 0, a] = rng.uniform(0.8, 1.0, (y == 0).sum())
    X[y == 1, p] = rng.uniform(0.8, 1.0, (y == 1).sum())
    X[y == 2, a] = rng.uniform(0.4, 0.5, (y == 2).sum())
    X[y == 2, p] = rng.uniform(0.4, 0.5, (y == 2).sum())
    X[y == 3, li] = rng.uniform(0.8, 1.0, (y == 3).sum())
    shares = X[:, leaf]
    X[:, leaf] = shares / shares.sum(1, keepdims=True)
    sites = np.repeat([f"site{i}.example" for i in range(n_sites)], per_site)
    pages = np.array([f"{s}/{k % 3}" for k, s in enumerate(sites)])
    return Dataset(X=X, y=y, sites=sites, pages=pages, meta={"source": "synthetic"},
                   lexical=_synthetic_lexical(y, rng, telling_words))


def _synthetic_lexical(y: np.ndarray, rng: np.random.Generator,
                       telling: bool = False) -> LexicalCases:
    """Lexical fields of synthetic cases: a word and an attribute token each, drawn from a
    dozen every site shares; with ``telling``, each class has its own three (as "related" or
    "share" mark furniture), otherwise they say nothing of the class."""
    from noisecbr.features.lexical import bucket
    from noisecbr.settings import LEXICAL_ANCESTORS as ANCESTORS

    n = len(y)
    words = np.array([bucket(f"word{c}-{k}") for c in range(len(LABELS)) for k in range(3)])
    kind = y if telling else rng.integers(0, len(LABELS), n)
    text = words[kind * 3 + rng.integers(0, 3, n)]
    attr = words[((kind + 1) % len(LABELS)) * 3 + rng.integers(0, 3, n)]
    own = np.stack([np.arange(n), np.arange(n) + 1], axis=1)
    attr_range = np.zeros((n, 1 + ANCESTORS, 2), dtype=np.int64)
    attr_range[:, 0] = own
    return LexicalCases(text.astype(np.int64), attr.astype(np.int64), own, attr_range, own)
