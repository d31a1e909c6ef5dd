"""Each kind of page's conventions, chosen on the recipe's folds: the walk's mode, whether the
text starts with the headline, and how far to trust a result (the confidence model).

    python -m training.conventions ../shared/data --folds runs/recipe-folds --write

Every page of the training sets is cleaned by the fold model that never saw its site
(``python -m training.crossval``), once per walk mode, with and without its headline. For each
kind (the kind model's most probable one, as the cleaner will know it), the mode and the
headline choice of the best mean word F1 are chosen, each development set weighing the same
(the article kind spans six of them; wcxb-dev's 621 articles would otherwise decide for the
article-body sets). The chosen results give the confidence model its examples: each page's
evidence (:func:`noisecbr.render.confidence.confidence_evidence`) and its word F1. Each fold model
gets the conventions and a confidence model fitted on the other folds' pages (so the bench's
``--fold-models`` figures stay on unseen sites); ``confidence.npz`` keeps the examples for the
embedded model (``python -m training.build_default --conventions DIR``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noisecbr.decide.fallback import kept_pieces
from noisecbr.decide.walk import MODES, Thresholds
from noisecbr.eval.datasets import LabelledPage, split_truth
from noisecbr.eval.metric import word_f1
from noisecbr.pipeline import decide, prepare, render, score
from noisecbr.prepare.tidy import InputError
from noisecbr.render.confidence import CONFIDENCE_EVIDENCE, ConfidenceModel, confidence_evidence
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.kind import KINDS
from noisecbr.score.model import Model

from .recipe import TRAINING_SETS, recipe_pages
from .sources import map_pages_with

__all__ = ["Outcomes", "outcomes", "choose", "fit_confidence", "spearman", "main"]

#: The headline choices, in the order of :class:`Outcomes`' last axis.
TITLES = (False, True)
#: The ridge penalty of the confidence model's linear score (its inputs are standardised).
RIDGE = 1.0


@dataclass
class Outcomes:
    """Every page's word F1 under each mode and headline choice, its kind probabilities, set and
    fold, and its confidence evidence under each mode and headline choice."""

    keys: np.ndarray  # str (pages,)
    sets: np.ndarray  # str (pages,)
    folds: np.ndarray  # int (pages,)
    kinds: np.ndarray  # float (pages, kinds)
    f1: np.ndarray  # float (pages, modes, titles)
    evidence: np.ndarray  # float (pages, modes, titles, evidence)
    #: what they are the outcomes of (:func:`signature`): the sets, the folds and their models
    signature: str = ""

    def save(self, path: Path) -> None:
        """Write the outcomes to a ``.npz`` file."""
        np.savez(path, **{name: getattr(self, name) for name in self.__dataclass_fields__})

    @classmethod
    def load(cls, path: Path) -> Outcomes:
        """The outcomes :meth:`save` wrote."""
        with np.load(path) as data:
            found = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        found["signature"] = str(found.get("signature", ""))
        return cls(**found)


def signature(folder: Path, sets: Sequence[str]) -> str:
    """What outcomes depend on: the sets, the folds' pages and each fold model's networks
    (not the conventions and confidence model ``--write`` adds to them)."""
    import hashlib

    digest = hashlib.sha256("\n".join(sets).encode())
    digest.update((folder / "folds.json").read_bytes())
    for path in sorted(folder.glob("fold*.safetensors")):
        model = load_model(path)
        for array in [*model.weights, *model.biases, *(model.kind_model.weights
                                                        if model.kind_model else [])]:
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


def _page_outcomes(page: LabelledPage, model: Model) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray] | None:
    """One page under every mode and headline choice: its kinds, word F1s and evidence (None
    for a page that is not HTML)."""
    try:
        prepared = prepare(page.html, url=page.url or None)
    except InputError:
        return None
    kinds = prepared.kinds(model)
    proba = score(prepared, model)
    truth = split_truth(page.truth)[0]
    f1 = np.zeros((len(MODES), len(TITLES)))
    evidence = np.zeros((len(MODES), len(TITLES), len(CONFIDENCE_EVIDENCE)))
    for m, mode in enumerate(MODES):
        decided = decide(prepared, proba, Thresholds.of(model, mode), kinds=kinds)
        kept = kept_pieces(prepared.table, decided.decision, prepared.headline)
        for t, title in enumerate(TITLES):
            f1[m, t] = word_f1(render(prepared, decided, title=title).text, truth)
            evidence[m, t] = confidence_evidence(prepared.table, decided.proba,
                                                 decided.decision, kept, kinds,
                                                 decided.fell_back)
    return (np.zeros(len(KINDS)) if kinds is None else kinds), f1, evidence


_FOLD_MODELS: dict[int, Model] = {}
_FOLD_OF: dict[str, int] = {}


def _outcomes_of(page: LabelledPage):
    return _page_outcomes(page, _FOLD_MODELS[_FOLD_OF[f"{page.dataset}/{page.id}"]])


def outcomes(pages: Sequence[LabelledPage], folder: Path, processes: int = 2) -> Outcomes:
    """:class:`Outcomes` of ``pages``, each cleaned by its fold's model in ``folder``."""
    fold_of = json.loads((folder / "folds.json").read_text(encoding="utf-8"))
    # The worker processes are forked: they find the models here.
    _FOLD_MODELS.clear()
    _FOLD_MODELS.update({fold: load_model(folder / f"fold{fold}.safetensors")
                         for fold in sorted(set(fold_of.values()))})
    _FOLD_OF.clear()
    _FOLD_OF.update(fold_of)
    found = map_pages_with(_outcomes_of, pages, processes)
    kept = [k for k, item in enumerate(found) if item is not None]
    return Outcomes(
        keys=np.array([f"{pages[k].dataset}/{pages[k].id}" for k in kept]),
        sets=np.array([pages[k].dataset for k in kept]),
        folds=np.array([fold_of[f"{pages[k].dataset}/{pages[k].id}"] for k in kept]),
        kinds=np.array([found[k][0] for k in kept]).reshape(len(kept), len(KINDS)),
        f1=np.array([found[k][1] for k in kept]).reshape(len(kept), len(MODES), len(TITLES)),
        evidence=np.array([found[k][2] for k in kept]).reshape(
            len(kept), len(MODES), len(TITLES), len(CONFIDENCE_EVIDENCE)))


def _set_weights(sets: np.ndarray) -> np.ndarray:
    """A weight per page so that every set weighs the same."""
    _, inverse, counts = np.unique(sets, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse.ravel()]


def choose(found: Outcomes, pages: np.ndarray | None = None
           ) -> tuple[dict[str, str], dict[str, bool]]:
    """The mode and the headline choice of each kind (the pages' most probable kind) of best
    set-weighted mean word F1 over ``pages`` (indices; all by default); a kind no page has
    keeps the balanced mode and no headline."""
    index = np.arange(len(found.keys)) if pages is None else np.asarray(pages)
    weight = _set_weights(found.sets[index])
    kind = found.kinds[index].argmax(axis=1)
    modes, titles = {}, {}
    for k, name in enumerate(KINDS):
        mine = kind == k
        if not mine.any():
            modes[name], titles[name] = "balanced", False
            continue
        total = np.tensordot(weight[mine], found.f1[index[mine]], axes=1)  # (modes, titles)
        m, t = np.unravel_index(int(np.argmax(total)), total.shape)
        modes[name], titles[name] = MODES[m], TITLES[t]
    return modes, titles


def chosen(found: Outcomes, modes: dict[str, str], titles: dict[str, bool]
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each page's word F1 and confidence evidence under its kind's chosen conventions."""
    kind = found.kinds.argmax(axis=1)
    m = np.array([MODES.index(modes[KINDS[k]]) for k in kind])
    t = np.array([TITLES.index(titles[KINDS[k]]) for k in kind])
    rows = np.arange(len(kind))
    return found.f1[rows, m, t], found.evidence[rows, m, t]


def fit_confidence(evidence: np.ndarray, f1: np.ndarray) -> ConfidenceModel:
    """A confidence model of the pages' ``evidence`` and word ``f1``: a ridge regression's
    score (standardised inputs), calibrated to the mean F1 of the pages it scores alike by
    isotonic regression."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import Ridge

    mean = evidence.mean(axis=0)
    std = evidence.std(axis=0)
    scale = np.where(std > 1e-9, std, 1.0)
    ridge = Ridge(alpha=RIDGE).fit((evidence - mean) / scale, f1)
    scores = ridge.predict((evidence - mean) / scale)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(scores, f1)
    # The fitted step function: each step starts at its threshold.
    knots = np.asarray(iso.X_thresholds_, dtype=np.float64)
    values = np.asarray(iso.y_thresholds_, dtype=np.float64)
    return ConfidenceModel(weights=np.asarray(ridge.coef_, dtype=np.float64),
                           bias=float(ridge.intercept_), mean=mean, scale=scale,
                           knots=knots, values=values)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two samples."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def report(found: Outcomes, modes: dict[str, str], titles: dict[str, bool],
           expected: np.ndarray) -> str:
    """The conventions chosen, each set's word F1 under them, and how the out-of-fold
    confidence ranks the pages."""
    f1, _ = chosen(found, modes, titles)
    lines = [f"{name:<14} mode {modes[name]:<9} headline {'yes' if titles[name] else 'no'}"
             for name in KINDS]
    for name in dict.fromkeys(found.sets.tolist()):
        mine = found.sets == name
        lines.append(f"{name:<16} word F1 {f1[mine].mean():.3f} ({int(mine.sum())} pages)")
    for name in ["all", *dict.fromkeys(found.sets.tolist())]:
        mine = np.ones(len(f1), dtype=bool) if name == "all" else found.sets == name
        low = mine & (expected <= np.quantile(expected[mine], 0.1))
        lines.append(f"confidence on {name}: Spearman {spearman(expected[mine], f1[mine]):.3f} "
                     f"with the page's word F1; its lowest tenth ({int(low.sum())} pages) "
                     f"mean F1 {f1[low].mean():.3f}, the rest {f1[mine & ~low].mean():.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m training.conventions DATA --folds DIR [--write]``."""
    parser = argparse.ArgumentParser(prog="python -m training.conventions",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--folds", type=Path, required=True,
                        help="the fold models (python -m training.crossval --out DIR)")
    parser.add_argument("--sets", nargs="+", default=list(TRAINING_SETS))
    parser.add_argument("--write", action="store_true",
                        help="write the conventions and each fold's confidence model into the "
                        "fold models, and confidence.npz and conventions.json beside them")
    args = parser.parse_args(argv)
    cache = args.folds / "outcomes.npz"
    found = Outcomes.load(cache) if cache.is_file() else None
    made_of = signature(args.folds, sorted(args.sets))
    if found is None or found.signature != made_of:
        found = outcomes(list(recipe_pages(args.data_dir, args.sets)), args.folds)
        found.signature = made_of
        found.save(cache)
    modes, titles = choose(found)
    f1, evidence = chosen(found, modes, titles)
    expected = np.zeros(len(f1))
    per_fold = {}
    for fold in sorted(set(found.folds.tolist())):
        others = found.folds != fold
        per_fold[fold] = fit_confidence(evidence[others], f1[others])
        expected[~others] = per_fold[fold].predict(evidence[~others])
    print(report(found, modes, titles, expected))
    if args.write:
        for fold, confidence in per_fold.items():
            path = args.folds / f"fold{fold}.safetensors"
            model = load_model(path)
            model.metadata.update(kind_modes=modes, kind_titles=titles)
            model.confidence_model = confidence
            save_model(model, path)
        np.savez(args.folds / "confidence.npz", evidence=evidence, f1=f1)
        (args.folds / "conventions.json").write_text(json.dumps(
            {"kind_modes": modes, "kind_titles": titles}, indent=1), encoding="utf-8")
        print(f"conventions and confidence models written to {args.folds}", file=sys.stderr)


if __name__ == "__main__":
    main()
