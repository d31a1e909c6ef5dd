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

import argparse
import json
import time
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from noisecbr.eval.datasets import LabelledPage, read_dataset
from noisecbr.score.artifact import save_model
from noisecbr.score.model import Model

from .datasets import Dataset, among
from .kinds import KindData, fit_kinds, kind_data, kinds_by_page
from .presets import get_preset
from .recipe import (
    KIND_MODES,
    KIND_TITLES,
    MODES,
    PRESET,
    RELABELLED_SETS,
    TRAINING_SETS,
    recipe_pages,
    superseded_ids,
    weighted,
)
from .report import batched_proba
from .sources import from_labelled
from .splits import site_folds, split_by_site
from .train import fit

__all__ = ["dataset_of", "fold_models", "fold_model", "out_of_fold_scores", "recipe_folds",
           "FOLDS_INDEX"]

#: The file of a folder of fold models that says each page's fold ({"set/id": fold}); the
#: models are ``fold0.safetensors``, ``fold1.safetensors``…
FOLDS_INDEX = "folds.json"


def dataset_of(pages: Sequence[LabelledPage], processes: int | None = None) -> Dataset:
    """Cases of labelled pages (:func:`training.sources.from_labelled`), in page order,
    labelled as the embedded recipe labels them (:data:`training.recipe.RELABELLED_SETS`); a
    handful of pages is not worth starting worker processes for."""
    return from_labelled(pages, processes if len(pages) > 8 else 1, relabelled=RELABELLED_SETS)


def fold_model(dataset: Dataset, held_out_sites: Collection[str], fold: int, folds: int,
               preset="default", seed: int = 0, progress: bool = False,
               kinds: KindData | None = None) -> Model:
    """The ``preset`` model of one fold: trained on the cases of every site but
    ``held_out_sites``, its epoch chosen on a site-grouped 15 % of them; with ``kinds`` (the
    pages' kind evidence, for a preset that reads the page's kind), the network learns the
    kinds its training pages get from kind models of the training pages alone (out of fold
    among them: the held-out sites' labels reach no input), and the model carries the kind
    model of all its training pages."""
    held_out = np.asarray(sorted(held_out_sites), dtype=str)
    train = dataset.subset(np.flatnonzero(~among(dataset.sites, held_out)))
    kind_model = None
    if kinds is not None:
        seen = kinds.subset(np.flatnonzero(~among(kinds.sites, held_out)))
        train = train.with_kinds(kinds_by_page(seen, folds, seed))
        kind_model = fit_kinds(seen, seed)
    fit_part, val_part = split_by_site(train.sites, (0.85, 0.15), seed + fold)
    return fit(train.subset(fit_part), train.subset(val_part), preset, seed=seed,
               progress=progress, kind_model=kind_model,
               metadata={"cv_fold": fold, "cv_folds": folds, "modes": MODES,
                         "kind_modes": KIND_MODES, "kind_titles": KIND_TITLES}).model


def with_kinds(dataset: Dataset, pages: Sequence[LabelledPage], preset, folds: int = 5,
               seed: int = 0) -> tuple[Dataset, KindData | None]:
    """For a preset that reads the page's kind: the cases with their pages' out-of-fold kind
    probabilities (:func:`training.kinds.kinds_by_page`) and the pages' kind evidence;
    otherwise the cases as they are and None."""
    if not get_preset(preset).kind_inputs:
        return dataset, None
    kinds = kind_data(pages)
    return dataset.with_kinds(kinds_by_page(kinds, folds, seed)), kinds


def out_of_fold_scores(dataset: Dataset, folds: int = 5, preset="default", seed: int = 0,
                       progress: bool = False, batch: int = 262144,
                       split_seed: int | None = None) -> np.ndarray:
    """Class scores of every case by the model of the site-grouped fold that held its site out
    (``folds`` models trained with ``seed``; the folds are :func:`site_folds` of the cases'
    sites drawn with ``split_seed``, by default ``seed``)."""
    if get_preset(preset).kind_inputs:
        raise ValueError("out-of-fold scores of cases read from a case base know no page kinds: "
                         "use a preset without kind inputs")
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
    training but never its held-out sites); returns ``[(held-out pages, model), …]``, the
    pages named ``set/id``."""
    pages = list(pages)
    site_of_page = np.array([page.site for page in pages], dtype=object)
    dataset = weighted(dataset_of(pages + list(extra)))
    kinds = kind_data(pages + list(extra)) if get_preset(preset).kind_inputs else None
    out = []
    for fold, (_, test_pages) in enumerate(site_folds(site_of_page, folds, seed)):
        model = fold_model(dataset, set(site_of_page[test_pages]), fold, folds, preset, seed,
                           progress, kinds)
        out.append(([f"{pages[i].dataset}/{pages[i].id}" for i in test_pages], model))
    return out


def recipe_folds(data_dir: Path, out: Path, folds: int = 5, seed: int = 0,
                 sets: Sequence[str] = TRAINING_SETS, preset=PRESET,
                 progress: bool = False) -> dict[str, int]:
    """The embedded recipe's fold models: the sites of all ``sets`` split into ``folds``
    folds together, a model per fold trained as the embedded default is (every set, its
    weights, the ``preset``) on the other folds' pages, written to ``out`` with
    :data:`FOLDS_INDEX`; returns each page's fold by ``set/id``. ``noisecbr bench
    --fold-models OUT`` then scores any of the sets with them: each page by a model that
    never saw its site, as the product meets a new site."""
    pages = list(recipe_pages(data_dir, sets))
    trained = fold_models(pages, folds=folds, seed=seed, progress=progress, preset=preset)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fold_of = {}
    for k, (held_out, model) in enumerate(trained):
        save_model(model, out / f"fold{k}.safetensors")
        fold_of.update(dict.fromkeys(held_out, k))
    # The pages a newer set superseded are scored by their site's fold too (against their
    # older truth: `noisecbr bench modernweb-dev --fold-models OUT`).
    fold_of_site = {page.site: fold_of[f"{page.dataset}/{page.id}"] for page in pages}
    for name in sets:
        older = superseded_ids(data_dir, name, sets)
        for page in read_dataset(Path(data_dir) / name, older) if older else ():
            if page.site in fold_of_site:
                fold_of[f"{name}/{page.id}"] = fold_of_site[page.site]
    (out / FOLDS_INDEX).write_text(json.dumps(fold_of, indent=0, sort_keys=True))
    return fold_of


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m training.crossval DATA_DIR --out DIR``: write the recipe's fold models."""
    parser = argparse.ArgumentParser(prog="python -m training.crossval",
                                     description=recipe_folds.__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="the folder holding the dev sets")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="+", default=list(TRAINING_SETS))
    parser.add_argument("--without-lexical", action="store_true",
                        help="the recipe without its lexical fields (what they add, measured)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    preset = PRESET.replace(lexical_dim=0) if args.without_lexical else PRESET
    fold_of = recipe_folds(args.data_dir, args.out, args.folds, args.seed, args.sets,
                           preset=preset, progress=True)
    print(f"{args.folds} fold models of {len(fold_of)} pages of {', '.join(args.sets)} → "
          f"{args.out} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
