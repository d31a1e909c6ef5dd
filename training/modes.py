"""The walk's threshold sets — ``favor="balanced" | "precision" | "recall"`` — chosen on
site-grouped folds.

Every page of the development sets is scored once by the model of the site-grouped fold that
held its site out (so no page is scored by a model that saw its site). The walk is then re-run
on those scores with every threshold set of :data:`GRID`, and each set gets, on each
development set, the macro shingle precision and recall of its pages against their main content
(dragnet's reader comments, after its ``COMMENTS`` marker, are not main content). The modes are
the sets of best F-score, averaged over the development sets so that each kind of page weighs
the same (pooled over pages, dragnet's 1 381 news pages would outweigh modernweb-dev's 790 pages
of every kind 1.75 to 1):

- **balanced**: best F1;
- **precision**: best F0.5 (precision weighs twice recall);
- **recall**: best F2.

They are stored in the model's metadata (``modes``), where :class:`noisecbr.Cleaner` reads them.

    python -m training.modes ../shared/data --model noisecbr/data/default.safetensors

trains the fold models (or reads them from ``--cache``), sweeps, prints the table of every set
and writes the chosen modes into the model file.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from noisecbr.decide.walk import Thresholds
from noisecbr.eval.datasets import LabelledPage, read_dataset, split_truth
from noisecbr.eval.metric import score_page
from noisecbr.pipeline import decide, prepare, render, score
from noisecbr.prepare.tidy import InputError
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import Model

from .recipe import TRAINING_SETS

__all__ = ["GRID", "BETAS", "Sweep", "sweep", "choose_modes", "main"]

#: Threshold values tried for each walk threshold (every combination: 6 × 5 × 4 = 120 sets).
#: The ranges bracket the hand-set defaults (0.5 / 0.9 / 0.5) and the values earlier sweeps on
#: single thresholds found best on either side (0.3–0.7 noise, 0.8–0.98 keep).
GRID = {
    "noise": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
    "keep": (0.7, 0.8, 0.9, 0.95, 0.98),
    "leaf": (0.3, 0.4, 0.5, 0.7),
}
#: The F-score each mode maximises: β < 1 weighs precision more, β > 1 recall.
BETAS = {"balanced": 1.0, "precision": 0.5, "recall": 2.0}
#: Training sets whose pages choose the modes (those the embedded default learns from).
MODE_SETS = TRAINING_SETS


@dataclass(frozen=True)
class Sweep:
    """Macro precision and recall of every threshold set (rows of ``sets``) over ``pages``."""

    sets: list[dict[str, float]]
    precision: np.ndarray
    recall: np.ndarray
    pages: int
    #: Per development set: the macro precision and recall of each threshold set over its pages.
    by_dataset: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def f(self, beta: float) -> np.ndarray:
        """F-beta of each set over all pages (from the macro P and R, as the bench's F1 is)."""
        return _f_beta(self.precision, self.recall, beta)

    def f_by_dataset(self, beta: float) -> np.ndarray:
        """F-beta of each set, the mean over the development sets of each set's F-beta (the
        pooled :meth:`f` when the pages' sets are not recorded)."""
        if not self.by_dataset:
            return self.f(beta)
        return np.mean([_f_beta(p, r, beta) for p, r in self.by_dataset.values()], axis=0)


def _f_beta(precision: np.ndarray, recall: np.ndarray, beta: float) -> np.ndarray:
    b2 = beta * beta
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (1 + b2) * precision * recall / (b2 * precision + recall)
    return np.nan_to_num(out)


def _grid() -> list[dict[str, float]]:
    names = list(GRID)
    return [dict(zip(names, values)) for values in itertools.product(*GRID.values())]


def sweep(pages: Sequence[LabelledPage], model_of: dict[tuple[str, str], Model],
          sets: list[dict[str, float]] | None = None, progress: bool = False) -> Sweep:
    """Each page scored by ``model_of[(dataset, id)]``, walked with every threshold set."""
    sets = sets or _grid()
    thresholds = [Thresholds(noise=t["noise"], keep=t["keep"], leaf=t["leaf"]) for t in sets]
    per_dataset: dict[str, list] = {}  # dataset → [summed (P, R) per set, pages]
    for n, page in enumerate(pages):
        try:
            prepared = prepare(page.html)
        except InputError:
            continue  # the bench counts such pages as failures for every set alike
        # One network pass a page; every threshold set walks the same scores.
        proba = score(prepared, model_of[(page.dataset, page.id)])
        article = split_truth(page.truth)[0]
        # Most threshold sets decide a page alike: each distinct outcome is rendered once.
        rates: dict[bytes, tuple[float, float]] = {}
        page_rates = np.zeros((len(sets), 2))
        for row, walk in enumerate(thresholds):
            decided = decide(prepared, proba, walk)
            key = decided.decision.tobytes() + bytes([decided.fell_back])
            if key not in rates:
                result = score_page(render(prepared, decided).text, article)
                rates[key] = (result.precision, result.recall)
            page_rates[row] = rates[key]
        own = per_dataset.setdefault(page.dataset, [np.zeros((len(sets), 2)), 0])
        own[0] += page_rates
        own[1] += 1
        if progress and n % 100 == 0:
            print(f"  {n}/{len(pages)} pages", file=sys.stderr, flush=True)
    # Over all pages: the sets' sums pooled.
    counted = sum(pages for _, pages in per_dataset.values())
    mean = sum((summed for summed, _ in per_dataset.values()),
               np.zeros((len(sets), 2))) / max(counted, 1)
    by_dataset = {name: (summed[:, 0] / pages, summed[:, 1] / pages)
                  for name, (summed, pages) in per_dataset.items()}
    return Sweep(sets, mean[:, 0], mean[:, 1], counted, by_dataset)


def choose_modes(result: Sweep) -> dict[str, dict[str, float]]:
    """The threshold set of best F-beta for each mode (:data:`BETAS`), averaged over the
    development sets."""
    return {mode: result.sets[int(np.argmax(result.f_by_dataset(beta)))]
            for mode, beta in BETAS.items()}


def _fold_models(data_dir: Path, sets: Sequence[str], pages: list[LabelledPage], folds: int,
                 seed: int, cache: Path | None) -> dict[tuple[str, str], Model]:
    """The model of each page's held-out fold: read from ``cache`` (a folder of fold models,
    :func:`training.crossval.recipe_folds`) if it holds them, else trained (and written there
    when given)."""
    from .crossval import FOLDS_INDEX, recipe_folds

    if cache is None or not (cache / FOLDS_INDEX).is_file():
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            folder = cache or Path(scratch)
            recipe_folds(data_dir, folder, folds, seed, sets)
            return _read_folds(folder, pages)
    return _read_folds(cache, pages)


def _read_folds(folder: Path, pages: list[LabelledPage]) -> dict[tuple[str, str], Model]:
    from .crossval import FOLDS_INDEX

    fold_of = json.loads((folder / FOLDS_INDEX).read_text())
    models = {k: load_model(folder / f"fold{k}.safetensors") for k in set(fold_of.values())}
    return {(page.dataset, page.id): models[fold_of[f"{page.dataset}/{page.id}"]]
            for page in pages}


def _table(result: Sweep, modes: dict[str, dict[str, float]]) -> str:
    chosen: dict[str, str] = {}  # a set chosen by several modes is marked with each
    for mode, t in modes.items():
        key = json.dumps(t, sort_keys=True)
        chosen[key] = f"{chosen[key]}, {mode}" if key in chosen else mode
    f1, f05, f2 = (result.f_by_dataset(beta) for beta in (1.0, 0.5, 2.0))
    names = sorted(result.by_dataset)
    own_f1 = {name: _f_beta(*result.by_dataset[name], 1.0) for name in names}
    lines = ["P and R over all pages; F1, F0.5 and F2 the mean of the sets' own",
             "noise  keep  leaf      P      R     F1   F0.5     F2"
             + "".join(f"  F1 {name}" for name in names)]
    for i in np.argsort(-f1):
        t = result.sets[i]
        mark = chosen.get(json.dumps(t, sort_keys=True), "")
        per_set = "".join(f"  {own_f1[name][i]:{len(name) + 3}.3f}" for name in names)
        lines.append(f"{t['noise']:5.2f} {t['keep']:5.2f} {t['leaf']:5.2f} "
                     f"{result.precision[i]:6.3f} {result.recall[i]:6.3f} "
                     f"{f1[i]:6.3f} {f05[i]:6.3f} {f2[i]:6.3f}{per_set}  {mark}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m training.modes DATA_DIR --model FILE``: choose and store the modes."""
    parser = argparse.ArgumentParser(prog="python -m training.modes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path, help="the folder holding the dev sets")
    parser.add_argument("--model", type=Path, help="write the chosen modes into this model")
    parser.add_argument("--sets", nargs="+", default=list(MODE_SETS))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="fold models: read from / written to here")
    args = parser.parse_args(argv)
    pages = [page for name in args.sets for page in read_dataset(args.data_dir / name)]
    result = sweep(pages, _fold_models(args.data_dir, args.sets, pages, args.folds, args.seed,
                                       args.cache), progress=True)
    modes = choose_modes(result)
    print(f"{result.pages} pages of {', '.join(args.sets)}, site-grouped {args.folds} folds")
    print(_table(result, modes))
    if args.model:
        model = load_model(args.model)
        model.metadata["modes"] = modes
        model.metadata["thresholds"] = modes["balanced"]
        save_model(model, args.model)
        print(f"modes written to {args.model}: {json.dumps(modes)}")


if __name__ == "__main__":
    main()
