"""Rebuild the embedded default model (``noisecbr/data/default.safetensors``) from the dev data.

    python -m training.build_default ../shared/data

Mix (:mod:`training.recipe`): all six development sets with ground truth — modernweb-dev
(modern pages of every kind), dragnet (news and blog posts), and the four article-body sets
(fundus, utomo-chaos2017, utomo-big9, chinese-wce), whose pages weigh three times the others'.
Chosen on the embedded recipe's site-grouped folds over all six sets at once
(``experiments/recipe_cv.py``, 2026-11-25, shingle F1 on each set's unseen sites):

    trained on (schema 3 vectors)             modernweb-dev  dragnet  fundus  chaos2017  big9
    modernweb-dev + dragnet (until today)     0.795          0.901    0.878   0.899      0.960
    all six, every page alike                 0.795          0.901    0.899   0.930      0.970
    all six, article-body pages ×3            0.793          0.901    0.915   0.938      0.973
    the same with the lexical fields          0.790          0.923    0.938   0.955      0.974
    … and the page field                      0.797          0.923    0.935   0.951      0.975
    schema 4 (today's recipe)                 0.798          0.920    0.939   0.950      0.978

The ground truths disagree (a news article's hand-corrected text with its headline, the text a
reader came for on every kind of page, the article body alone): weighing the article-body sets
more makes the model keep the article body on news, and the page field (the page's own words)
lets it keep what a reader came for on forums, docs and listings.

CleanEval's dev set and Readability's test pages are left out of training: both are public
extraction benchmarks that noisecbr is compared on, and their notions of main content (all
running text; Readability.js's output) differ from the product's. Cases come straight from the
labelled pages through the same pipeline the case base stores (tidy → subtrees → vectors →
labels); the epoch is chosen on 15 % of the sites held out for validation. Same data + same
seed → the same model on the same machine. Other processors round differently in torch's CPU
kernels: the weights differ slightly, the F1 does not (see the README).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from noisecbr.cleaner import DEFAULT_MODEL
from noisecbr.score.artifact import save_model

from .conventions import fit_confidence
from .crossval import with_kinds
from .kinds import fit_kinds
from .presets import Preset, get_preset
from .recipe import (
    KIND_MODES,
    KIND_TITLES,
    MODES,
    MODES_CHOSEN_BY,
    PRESET,
    RELABELLED_SETS,
    TRAINING_SETS,
    recipe_pages,
    weighted,
)
from .sources import from_labelled
from .splits import split_by_site
from .train import fit

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "noisecbr" / "data" / DEFAULT_MODEL


def build(data_dir: Path, out: Path = DEFAULT_OUT, seed: int = 0, progress: bool = True,
          sets: tuple[str, ...] = TRAINING_SETS, preset: str | Preset = PRESET,
          conventions: Path | None = None) -> Path:
    """Train the embedded default model on the dev sets ``sets`` under ``data_dir`` and write it to
    ``out``; ``preset``: the training preset (the recipe's ``default``, or a variant of it);
    ``conventions``: the folder of the recipe's fold models where ``python -m
    training.conventions --write`` chose each kind's conventions and kept the confidence
    model's examples (without it: the recipe's conventions and no confidence model).
    """
    start = time.perf_counter()
    pages = list(recipe_pages(data_dir, sets))
    dataset = weighted(from_labelled(pages, total=len(pages), progress=progress,
                                     source="pages:" + ",".join(sets),
                                     relabelled=RELABELLED_SETS))
    # The page kinds the network reads are out-of-fold guesses, as on a page it will clean;
    # the model carries the kind model of every page.
    dataset, kinds = with_kinds(dataset, pages, preset, seed=seed)
    kind_model = fit_kinds(kinds, seed) if kinds is not None else None
    chosen = {"kind_modes": KIND_MODES, "kind_titles": KIND_TITLES}
    confidence = None
    if conventions is not None:
        chosen = json.loads((conventions / "conventions.json").read_text(encoding="utf-8"))
        with np.load(conventions / "confidence.npz") as examples:
            confidence = fit_confidence(examples["evidence"], examples["f1"])
    train_part, val_part = split_by_site(dataset.sites, (0.85, 0.15), seed)
    lexical = get_preset(preset).lexical_dim > 0
    result = fit(dataset.subset(train_part), dataset.subset(val_part), preset, seed=seed,
                 progress=progress, kind_model=kind_model, metadata={
                     "trained_on": list(sets), "seed": seed,
                     "run_id": f"embedded-default{'' if lexical else '-without-lexical'}"
                               f"-seed{seed}",
                     # The recipe's walk thresholds travel with the model it makes.
                     "modes": MODES, "thresholds": MODES["balanced"],
                     "modes_chosen_by": MODES_CHOSEN_BY, **chosen})
    if confidence is not None:
        result.model.confidence_model = confidence
    path = save_model(result.model, out)
    print(f"{len(dataset):,} cases from {', '.join(sets)}; best epoch {result.best_epoch}; "
          f"{time.perf_counter() - start:.0f} s → {path}")
    return path


def main(argv: list[str] | None = None) -> None:
    """Command line of :func:`build`."""
    parser = argparse.ArgumentParser(prog="python -m training.build_default",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="the folder holding the dev sets")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"the model file to write (default: the embedded {DEFAULT_MODEL})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="+", default=list(TRAINING_SETS))
    # Measured on dragnet (docs/experiments.md, 2026-11-26, fifth session): 5.0× trafilatura's
    # pages per core without the lexical fields against 4.4× with them, F1 0.904 against 0.925.
    parser.add_argument("--without-lexical", action="store_true",
                        help="the recipe without its lexical fields: some 7 %% more pages a "
                             "second, some 0.02 less F1 on news (needs --out: the embedded "
                             "model stays the recipe's)")
    parser.add_argument("--conventions", type=Path, default=None,
                        help="the recipe's fold models, after python -m training.conventions "
                        "--write: each kind's conventions and the confidence model's examples")
    args = parser.parse_args(argv)
    if args.without_lexical and args.out is None:
        parser.error("--without-lexical needs --out: it does not replace the embedded model")
    preset = PRESET.replace(lexical_dim=0) if args.without_lexical else PRESET
    build(args.data_dir, args.out or DEFAULT_OUT, args.seed, sets=tuple(args.sets),
          preset=preset, conventions=args.conventions)


if __name__ == "__main__":
    main()
