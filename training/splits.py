"""Site-grouped splits of a :class:`~training.datasets.Dataset`.

Splits are grouped by **site** (the host of the page's url): all of a site's cases are in train,
or all in validation, or all in test, so "unseen" means an unseen site, never an unseen page of a
known template. :func:`known_holdout` carves the *known-data* evaluation set out of the training
sites: whole pages (never single cases) of training sites that keep at least one other page in
training, so the model knows the site but not the page, as in the paper's known vs unseen table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from noisecbr.result import LABELS

from .datasets import Dataset, among, name_array

__all__ = ["split_by_site", "site_folds", "known_holdout", "Splits", "make_splits"]


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
    sites = name_array(sites)
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

