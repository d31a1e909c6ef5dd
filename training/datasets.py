"""Training data: case arrays, site-grouped splits, and how cases are sampled and weighted.

A :class:`Dataset` is the case base as arrays: ``X`` (float32, cases × 221 full vectors
(schema 4) of :func:`noisecbr.features.vectorize`), ``y`` (int64 label index in
:data:`noisecbr.result.LABELS` order: 0 noise, 1 data, 2 mixture), and per case its ``sites``
and ``pages`` (strings). It comes from the case base (:func:`training.stored.from_casebase`,
its vectors and token ranges in memory or spooled to disk, :mod:`training.spool`) or, for
quick experiments, straight from labelled pages (:func:`from_pages`:
:func:`casebase.pages.page_cases` → vectorize, the same cases the case base stores).

Splits are grouped by **site** (the host of the page's url): all of a site's cases are in train,
or all in validation, or all in test, so "unseen" means an unseen site, never an unseen page of a
known template. :func:`known_holdout` carves the *known-data* evaluation set out of the training
sites: whole pages (never single cases) of training sites that keep at least one other page in
training, so the model knows the site but not the page, as in the paper's known vs unseen table.

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

*Walk frontier*: a case whose every strict ancestor is mixture (``Dataset.frontier``, 9.3 % of
the cases) is one the cleaner's top-down walk actually decides (it stops at noise and data and
descends into mixture); reports give rates on all cases (the paper's table) and on these.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import LABELS, MIXTURE
from noisecbr.score.kind import KINDS

from .lexicon import LexicalCases, cases_of_page
from .spool import gather, release, row_chunks, take

if TYPE_CHECKING:
    from noisecbr.eval.datasets import LabelledPage

T = TypeVar("T")

__all__ = [
    "Dataset",
    "from_labelled",
    "from_pages",
    "map_pages",
    "map_pages_with",
    "page_arrays",
    "PageArrays",
    "split_by_site",
    "site_folds",
    "known_holdout",
    "Splits",
    "make_splits",
    "case_weights",
    "wordless_mask",
    "synthetic",
    "frontier_of",
    "among",
]

_LOG_WORDS = FEATURE_NAMES.index("log_words")


def _strings(values) -> np.ndarray:
    """Per-case names (sites, page keys) as an array of str: an object array of str is kept as
    it is (its cases share their site's or page's one string, 8 bytes a case, where numpy's
    fixed-width strings take 4 bytes a character of the longest name a case); anything
    else becomes a numpy str array."""
    values = np.asarray(values)
    return values if values.dtype == object else values.astype(str, copy=False)


def among(values: np.ndarray, chosen: Iterable) -> np.ndarray:
    """Whether each of ``values`` (per-case names: sites, page keys) is one of ``chosen``, by a
    set lookup: ``np.isin`` compares an object array (:func:`_strings`) with each chosen name
    in turn, millions of cases times thousands of names."""
    wanted = set(np.asarray(list(chosen)).tolist())
    return np.fromiter((value in wanted for value in np.asarray(values).tolist()), dtype=bool,
                       count=len(values))


@dataclass
class Dataset:
    """Cases as arrays (one row per case)."""

    X: np.ndarray  # float32 (n, len(FEATURE_NAMES))
    y: np.ndarray  # int64 (n,), LABELS order
    sites: np.ndarray  # str (n,)
    pages: np.ndarray  # str (n,)
    case_ids: np.ndarray | None = None  # int64 (n,) when read from the case base
    #: bool (n,): the case is on the top-down walk's frontier — every strict ancestor is
    #: mixture (under the true labels), so the cleaner's walk decides it; None when unknown.
    frontier: np.ndarray | None = None
    #: int64 (n,): how many identical cases each row stands for (``casebase dedupe``); None = 1
    counts: np.ndarray | None = None
    #: float64 (n,): a factor on each case's loss weight, e.g. the weight of the set its page
    #: comes from (:func:`training.build_default.build`); None = 1
    weights: np.ndarray | None = None
    #: the cases' lexical fields (:class:`training.lexicon.LexicalCases`), None when unknown
    lexical: LexicalCases | None = None
    #: float32 (n, len(KINDS)): the kind probabilities of each case's page
    #: (:data:`noisecbr.score.kind.KINDS`), the same for every case of a page; None when unknown
    kinds: np.ndarray | None = None
    schema: int = VECTOR_SCHEMA
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=np.float32)
        self.y = np.asarray(self.y, dtype=np.int64)
        self.sites, self.pages = _strings(self.sites), _strings(self.pages)
        n = len(self.y)
        if self.X.ndim != 2 or self.X.shape[0] != n or len(self.sites) != n or len(self.pages) != n:
            raise ValueError("X, y, sites and pages must have one row per case")
        if self.X.shape[1] != len(FEATURE_NAMES):
            raise ValueError(f"X has {self.X.shape[1]} columns, the vector schema has "
                             f"{len(FEATURE_NAMES)}")
        if n and (self.y.min() < 0 or self.y.max() >= len(LABELS)):
            raise ValueError("labels must be indices into LABELS")
        if self.case_ids is not None:
            self.case_ids = np.asarray(self.case_ids, dtype=np.int64)
        if self.frontier is not None:
            self.frontier = np.asarray(self.frontier, dtype=bool)
            if len(self.frontier) != n:
                raise ValueError("frontier must have one entry per case")
        if self.counts is not None:
            self.counts = np.asarray(self.counts, dtype=np.int64)
            if len(self.counts) != n:
                raise ValueError("counts must have one entry per case")
        if self.weights is not None:
            self.weights = np.asarray(self.weights, dtype=np.float64)
            if len(self.weights) != n or not np.all(np.isfinite(self.weights)) \
                    or np.any(self.weights < 0):
                raise ValueError("weights must be one finite factor ≥ 0 per case")
        if self.lexical is not None and len(self.lexical) != n:
            raise ValueError("lexical must hold one case per case")
        if self.kinds is not None:
            self.kinds = np.ascontiguousarray(self.kinds, dtype=np.float32)
            if self.kinds.shape != (n, len(KINDS)):
                raise ValueError(f"kinds must hold {len(KINDS)} probabilities per case")

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, index: np.ndarray) -> Dataset:
        """The cases at ``index``, every per-case array alike (spooled vectors to a new
        spooled file, :func:`training.spool.take`)."""
        index = np.asarray(index)
        return Dataset(
            X=take(self.X, index), y=self.y[index], sites=self.sites[index],
            pages=self.pages[index],
            case_ids=None if self.case_ids is None else self.case_ids[index],
            frontier=None if self.frontier is None else self.frontier[index],
            counts=None if self.counts is None else self.counts[index],
            weights=None if self.weights is None else self.weights[index],
            lexical=None if self.lexical is None else self.lexical.subset(index),
            kinds=None if self.kinds is None else self.kinds[index],
            schema=self.schema, meta=dict(self.meta),
        )

    def with_kinds(self, kinds_of_page: dict[str, np.ndarray]) -> Dataset:
        """The same cases with their pages' kind probabilities (``kinds_of_page``: a
        probability per kind of :data:`noisecbr.score.kind.KINDS` by page key); KeyError for a page
        without them. Its other arrays are this dataset's own, shared, not copied (a case
        base's vectors may be gigabytes)."""
        pages, inverse = np.unique(self.pages, return_inverse=True)
        table = np.array([kinds_of_page[page] for page in pages], dtype=np.float32).reshape(
            len(pages), len(KINDS))
        return dataclasses.replace(self, kinds=table[inverse.ravel()], meta=dict(self.meta))

    def with_classes(self, classes: int) -> Dataset:
        """The same cases for a model of the first ``classes`` of LABELS: a case of a later
        class (a reader comment, for the paper's three classes) counts as noise. Its other
        arrays are this dataset's own, shared, not copied."""
        if classes >= len(LABELS) or not len(self) or self.y.max() < classes:
            return self
        return dataclasses.replace(self, y=np.where(self.y < classes, self.y,
                                                     LABELS.index("noise")),
                                   meta=dict(self.meta))

    def label_counts(self) -> dict[str, int]:
        """Cases per label name."""
        counts = np.bincount(self.y, minlength=len(LABELS))
        return {label: int(c) for label, c in zip(LABELS, counts)}

    def fingerprint(self) -> str:
        """sha256 over the case set: (case id or page, label, vector bytes) in sorted case order.

        Sorting by case id (or by page, stable) makes the hash independent of read order; the
        vector bytes make it change when the cases are re-vectorised.
        """
        h = hashlib.sha256()
        h.update(f"schema={self.schema};n={len(self)}".encode())
        if self.case_ids is not None:
            order = np.argsort(self.case_ids, kind="stable")
            h.update(self.case_ids[order].tobytes())
        else:
            order = np.argsort(self.pages, kind="stable")
            h.update("\n".join(self.pages[order]).encode())
        h.update(self.y[order].astype(np.int8).tobytes())
        step = 65536
        for start in range(0, len(order), step):
            h.update(gather(self.X, order[start:start + step]).tobytes())
        return h.hexdigest()

    def snapshot(self) -> dict:
        """What a run records about its data."""
        return {"cases": len(self), "per_label": self.label_counts(),
                "sites": int(len(np.unique(self.sites))), "pages": int(len(np.unique(self.pages))),
                "sha256": self.fingerprint(), "schema": self.schema,
                "source": self.meta.get("source", "")}

    # -- cache ----------------------------------------------------------------------------------
    def save_npz(self, path: str | Path) -> Path:
        """Write the dataset (with its vector schema) to a .npz file; returns its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = {} if self.case_ids is None else {"case_ids": self.case_ids}
        if self.frontier is not None:
            extra["frontier"] = self.frontier
        if self.weights is not None:
            extra["weights"] = self.weights
        if self.counts is not None:
            extra["counts"] = self.counts
        if self.lexical is not None:
            extra.update(self.lexical.arrays())
        if self.kinds is not None:
            extra["kinds"] = self.kinds
        np.savez(path, X=self.X, y=self.y, sites=self.sites.astype(str),
                 pages=self.pages.astype(str),
                 schema=np.array(self.schema), source=np.array(self.meta.get("source", "")),
                 **extra)
        return path

    @classmethod
    def load_npz(cls, path: str | Path) -> Dataset:
        """A dataset :meth:`save_npz` wrote; ValueError for vectors of another schema."""
        with np.load(path, allow_pickle=False) as data:
            schema = int(data["schema"])
            if schema != VECTOR_SCHEMA:
                raise ValueError(f"{path} holds vectors of schema {schema}, this code computes "
                                 f"{VECTOR_SCHEMA}: rebuild it")
            return cls(X=data["X"], y=data["y"], sites=data["sites"], pages=data["pages"],
                       case_ids=data["case_ids"] if "case_ids" in data else None,
                       frontier=data["frontier"] if "frontier" in data else None,
                       weights=data["weights"] if "weights" in data else None,
                       counts=data["counts"] if "counts" in data else None,
                       lexical=LexicalCases.from_arrays(data),
                       kinds=data["kinds"] if "kinds" in data else None,
                       schema=schema, meta={"source": str(data["source"])})

    @classmethod
    def concat(cls, parts: Sequence[Dataset]) -> Dataset:
        """The cases of ``parts`` one after another (an empty dataset for none)."""
        if not parts:
            return cls(np.zeros((0, len(FEATURE_NAMES)), np.float32), np.zeros(0, np.int64),
                       np.zeros(0, str), np.zeros(0, str))
        ids = frontier = weights = None
        if all(p.case_ids is not None for p in parts):
            ids = np.concatenate([p.case_ids for p in parts])
        if all(p.frontier is not None for p in parts):
            frontier = np.concatenate([p.frontier for p in parts])
        if any(p.weights is not None for p in parts):
            weights = np.concatenate([np.ones(len(p)) if p.weights is None else p.weights
                                      for p in parts])
        lexical = kinds = None
        if all(p.lexical is not None for p in parts):
            lexical = LexicalCases.concat([p.lexical for p in parts])
        if all(p.kinds is not None for p in parts):
            kinds = np.concatenate([p.kinds for p in parts])
        return cls(X=np.concatenate([p.X for p in parts]), y=np.concatenate([p.y for p in parts]),
                   sites=np.concatenate([p.sites for p in parts]),
                   pages=np.concatenate([p.pages for p in parts]), case_ids=ids,
                   frontier=frontier, weights=weights, lexical=lexical, kinds=kinds,
                   meta=dict(parts[0].meta))


# -- sources ------------------------------------------------------------------------------------
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


# -- splits -------------------------------------------------------------------------------------
def _shuffled_groups(keys: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique keys in a seeded random order, each case's group index, and group sizes."""
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    order = np.random.default_rng(seed).permutation(len(unique))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return unique[order], rank[inverse], counts[order]


def split_by_site(sites: np.ndarray, fractions: Sequence[float] = (0.7, 0.15, 0.15),
                  seed: int = 0) -> tuple[np.ndarray, ...]:
    """Case indices of each part, grouped by site.

    Sites are shuffled (seeded) and cut where the cumulative share of *cases* crosses each
    fraction, so parts hold about ``fractions`` of the cases and no site spans two parts.
    """
    fractions = np.asarray(fractions, dtype=np.float64)
    if np.any(fractions < 0) or fractions.sum() <= 0:
        raise ValueError("fractions must be non-negative and not all zero")
    sites = _strings(sites)
    _, group, sizes = _shuffled_groups(sites, seed)
    # Place each site by the midpoint of its case range: a big site cannot drag a boundary far.
    cumulative = np.cumsum(sizes) - sizes / 2.0
    bounds = np.cumsum(fractions / fractions.sum()) * len(sites)
    part_of_group = np.searchsorted(bounds, cumulative, side="right")
    part_of_group = np.minimum(part_of_group, len(fractions) - 1)
    part = part_of_group[group]
    return tuple(np.flatnonzero(part == k) for k in range(len(fractions)))


def site_folds(sites: np.ndarray, k: int = 5, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """k site-grouped folds: ``[(train_index, test_index), ...]``, every site tested once."""
    if k < 2:
        raise ValueError("need k ≥ 2 folds")
    parts = split_by_site(sites, [1.0] * k, seed)
    everything = np.arange(len(sites))
    return [(np.setdiff1d(everything, test, assume_unique=True), test) for test in parts]


def known_holdout(sites: np.ndarray, pages: np.ndarray, index: np.ndarray,
                  fraction: float = 0.15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Split training cases ``index`` into (train, known): whole held-out pages of known sites.

    Pages are drawn at random among the pages of sites with ≥ 2 pages in ``index``, never a
    site's last page, until ``fraction`` of the pages is held out or no candidate is left (with
    mostly one-page sites, fewer: the caller reports how many).
    """
    index = np.asarray(index)
    page_of = np.asarray(pages)[index]
    site_of = np.asarray(sites)[index]
    unique_pages, first = np.unique(page_of, return_index=True)
    page_site = site_of[first]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(unique_pages))
    remaining: dict[str, int] = {}
    for s in page_site:
        remaining[s] = remaining.get(s, 0) + 1
    target = int(round(fraction * len(unique_pages)))
    held: list[str] = []
    for k in order:
        if len(held) >= target:
            break
        s = page_site[k]
        if remaining[s] >= 2:
            remaining[s] -= 1
            held.append(unique_pages[k])
    known = among(page_of, held)
    return index[~known], index[known]


@dataclass
class Splits:
    """Case indices: train (fit), val (model selection, unseen sites), test (unseen sites,
    reported), known (held-out pages of training sites, reported)."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    known: np.ndarray
    seed: int

    def describe(self, dataset: Dataset) -> dict:
        """Cases, sites and pages of each part, for run records."""
        out = {}
        for name in ("train", "val", "test", "known"):
            idx = getattr(self, name)
            out[name] = {"cases": int(len(idx)),
                         "sites": int(len(np.unique(dataset.sites[idx]))),
                         "pages": int(len(np.unique(dataset.pages[idx]))),
                         "per_label": {label: int(c) for label, c in zip(
                             LABELS, np.bincount(dataset.y[idx], minlength=len(LABELS)))}}
        return out


def make_splits(dataset: Dataset, seed: int = 0, fractions=(0.7, 0.15, 0.15),
                known_fraction: float = 0.15) -> Splits:
    """Site-grouped train / validation / test parts, and known pages held out of the training sites.
    """
    train, val, test = split_by_site(dataset.sites, fractions, seed)
    train, known = known_holdout(dataset.sites, dataset.pages, train, known_fraction, seed)
    return Splits(train=train, val=val, test=test, known=known, seed=seed)


# -- weights ------------------------------------------------------------------------------------
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
