"""Training data as arrays: the :class:`Dataset` every training step reads.

A :class:`Dataset` is the case base as arrays: ``X`` (float32, cases × 221 full vectors
(schema 4) of :func:`noisecbr.features.vectorize`), ``y`` (int64 label index in
:data:`noisecbr.result.LABELS` order: 0 noise, 1 data, 2 mixture), and per case its ``sites``
and ``pages`` (strings). It comes from the case base (:func:`training.stored.from_casebase`,
its vectors and token ranges in memory or spooled to disk, :mod:`training.spool`) or, for
quick experiments, straight from labelled pages (:mod:`training.sources`). How it is split by
site is :mod:`training.splits`; how its cases are weighted, :mod:`training.weights`.

*Walk frontier*: a case whose every strict ancestor is mixture (``Dataset.frontier``, 9.3 % of
the cases) is one the cleaner's top-down walk actually decides (it stops at noise and data and
descends into mixture); reports give rates on all cases (the paper's table) and on these.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import LABELS
from noisecbr.score.kind import KINDS

from .lexicon import LexicalCases
from .spool import gather, take

__all__ = ["Dataset", "among", "name_array"]


def name_array(values) -> np.ndarray:
    """Per-case names (sites, page keys) as an array of str: an object array of str is kept as
    it is (its cases share their site's or page's one string, 8 bytes a case, where numpy's
    fixed-width strings take 4 bytes a character of the longest name a case); anything
    else becomes a numpy str array."""
    values = np.asarray(values)
    return values if values.dtype == object else values.astype(str, copy=False)


def among(values: np.ndarray, chosen: Iterable) -> np.ndarray:
    """Whether each of ``values`` (per-case names: sites, page keys) is one of ``chosen``, by a
    set lookup: ``np.isin`` compares an object array (:func:`name_array`) with each chosen name
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
        self.sites, self.pages = name_array(self.sites), name_array(self.pages)
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
