"""Site-grouped cross-validation: models for ``noisecbr bench --cv``, scores for ``train --cv``.

The pages are split into K folds by site. For each fold a ``default`` model is trained on the
other folds' pages (its epoch chosen on a site-grouped validation part of them) and used for the
fold's pages only, so no page is scored by a model that saw its site.

``extra`` pages (``bench --with DIR``: another development set) join every fold's training,
except those of the fold's held-out sites (a site can be in both sets): this measures a model
trained on a mix of sets, such as the embedded default, on the unseen sites of one of them.

:func:`out_of_fold_scores` does the same over a case base's cases: every case is scored by the
model of the fold that held its site out, so the per-class rates computed from those scores are
rates on unseen sites pooled over all sites, not over the few test sites of one split.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from noisecbr.layout import LabelledPage
from noisecbr.model import Model

from .datasets import Dataset, from_labelled, site_folds, split_by_site
from .report import batched_proba
from .presets import get_preset
from .train import fit

__all__ = ["dataset_of", "fold_models", "fold_model", "out_of_fold_scores"]


def dataset_of(pages: Sequence[LabelledPage], processes: int | None = None) -> Dataset:
    """Cases of labelled pages (:func:`training.datasets.from_labelled`), in page order; a
    handful of pages is not worth starting worker processes for."""
    return from_labelled(pages, processes if len(pages) > 8 else 1)


def fold_model(dataset: Dataset, held_out_sites: Collection[str], fold: int, folds: int,
               preset="default", seed: int = 0, progress: bool = False) -> Model:
    """The ``preset`` model of one fold: trained on the cases of every site but
    ``held_out_sites``, its epoch chosen on a site-grouped 15 % of them."""
    in_train = ~np.isin(dataset.sites, np.asarray(sorted(held_out_sites), dtype=str))
    train = dataset.subset(np.flatnonzero(in_train))
    fit_part, val_part = split_by_site(train.sites, (0.85, 0.15), seed + fold)
    return fit(train.subset(fit_part), train.subset(val_part), preset, seed=seed,
               progress=progress, metadata={"cv_fold": fold, "cv_folds": folds}).model


def out_of_fold_scores(dataset: Dataset, folds: int = 5, preset="default", seed: int = 0,
                       progress: bool = False, batch: int = 262144,
                       split_seed: int | None = None) -> np.ndarray:
    """Class scores of every case by the model of the site-grouped fold that held its site out
    (``folds`` models trained with ``seed``; the folds are :func:`site_folds` of the cases'
    sites drawn with ``split_seed``, by default ``seed``)."""
    proba = np.zeros((len(dataset), get_preset(preset).classes), dtype=np.float32)
    fold_seed = seed if split_seed is None else split_seed
    for fold, (_, test) in enumerate(site_folds(dataset.sites, folds, fold_seed)):
        model = fold_model(dataset, set(dataset.sites[test]), fold, folds, preset, seed, progress)
        proba[test] = batched_proba(model, dataset.X, test, batch, dataset.lexical)
    return proba


def fold_models(
    pages: Sequence[LabelledPage],
    folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    preset: str = "default",
    extra: Sequence[LabelledPage] = (),
) -> list[tuple[list[str], Model]]:
    """Train one model per site-grouped fold of ``pages`` (``extra`` pages join every fold's
    training but never its held-out sites); returns ``[(held-out page ids, model), …]``."""
    pages = list(pages)
    site_of_page = np.array([page.site for page in pages], dtype=object)
    dataset = dataset_of(pages + list(extra))
    key_of = {f"{page.dataset}/{page.id}": page.id for page in pages}
    out = []
    for fold, (_, test_pages) in enumerate(site_folds(site_of_page, folds, seed)):
        model = fold_model(dataset, set(site_of_page[test_pages]), fold, folds, preset, seed,
                           progress)
        held_out = [key_of.get(f"{pages[i].dataset}/{pages[i].id}", pages[i].id)
                    for i in test_pages]
        out.append((held_out, model))
    return out
