"""The embedded default's recipe: the development sets it learns from and how much each weighs.

The sets' ground truths follow two conventions (../shared/data/README.md): modernweb-dev keeps
what a reader came for on pages of every kind, dragnet a news article's hand-corrected text
(headline and dateline included); fundus, utomo-chaos2017, utomo-big9 and chinese-wce the
article body alone, as the public article-extraction benchmarks do. One model learns them all:
every page weighs the same within a set (the preset's page weights), and a page of an
article-body set weighs :data:`ARTICLE_BODY_WEIGHT` times one of the others, so that on news
articles the model leans to the article-body convention while modernweb-dev's listings,
forums and products keep theirs (the page field of :mod:`noisecbr.features.lexical` tells the
kinds of page apart).

Chosen on the embedded recipe's site-grouped folds over all six sets at once
(``experiments/recipe_cv.py``; docs/experiments.md, 2026-11-25): weight 1 → 3 raised fundus's
F1 by 0.017, utomo-chaos2017's by 0.009 and utomo-big9's by 0.003, and moved modernweb-dev's and
dragnet's by less than their noise (−0.002, 0.000).

dragnet's truths keep an article's headline, byline, dateline, captions and credits, which the
article-body sets never keep: its pages are labelled to the article-body convention
(:data:`RELABELLED_SETS`, :func:`casebase.labelling.article_furniture`: the boxes the page's own
markup names as furniture are never content), so that a caption or a "related" box is noise
in every set the model learns from. modernweb-dev keeps its own truth: on its listings,
products and forums such boxes may be what a reader came for.

CleanEval's dev set and Readability's test pages are never trained on: they are public
extraction benchmarks noisecbr is compared on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from noisecbr.eval.datasets import LabelledPage, read_dataset

from .datasets import Dataset
from .presets import Preset, get_preset

__all__ = ["TRAINING_SETS", "ARTICLE_BODY_SETS", "ARTICLE_BODY_WEIGHT", "RELABELLED_SETS",
           "SUPERSEDED_BY", "PRESET", "MODES", "KIND_MODES", "KIND_TITLES", "MODES_CHOSEN_BY",
           "recipe_pages", "superseded_ids", "set_weights", "weighted"]

TRAINING_SETS = ("wcxb-dev", "modernweb-dev", "dragnet", "fundus", "utomo-chaos2017",
                 "utomo-big9", "chinese-wce")
#: Sets whose pages another set holds with a newer truth: ``{set: (newer set, the newer
#: truth's field naming the page's id in set)}``. wcxb-dev re-reviewed 737 of modernweb-dev's
#: 790 truths (about a fifth differ substantially: wcxb-dev/README.md); where both sets are
#: read, those pages are learnt and scored once, with wcxb-dev's truth.
SUPERSEDED_BY = {"modernweb-dev": ("wcxb-dev", "modernweb_id")}
#: The sets whose truth is the article body alone.
ARTICLE_BODY_SETS = ("fundus", "utomo-chaos2017", "utomo-big9", "chinese-wce")
ARTICLE_BODY_WEIGHT = 3.0
#: The sets whose inclusive truths are labelled to the article-body convention. On the
#: recipe's site-grouped folds, two runs of other folds and seeds (fundus +0.006 / +0.003,
#: utomo-chaos2017 +0.001 / +0.004, utomo-big9 +0.001 / +0.003, dragnet −0.001 / +0.003,
#: modernweb-dev −0.002 / +0.000; docs/experiments.md, 2026-11-26).
RELABELLED_SETS = ("dragnet",)
#: The walk's threshold sets the embedded default carries (``favor=``), chosen on the recipe's
#: site-grouped folds: the mean F-beta over the six training sets of nine threshold sets
#: (docs/experiments.md, 2026-11-25: "The walk's thresholds"; ``python -m training.modes``
#: sweeps a full grid, 2.5 hours for the six sets).
MODES = {"balanced": {"noise": 0.3, "keep": 0.7, "leaf": 0.5},
         "precision": {"noise": 0.2, "keep": 0.7, "leaf": 0.3},
         "recall": {"noise": 0.5, "keep": 0.7, "leaf": 0.5}}
#: The embedded model's training preset: the ``default`` network reading its page's kind
#: (:mod:`noisecbr.score.kind`; the kinds it learns from are out-of-fold guesses of the kind model).
PRESET: Preset = get_preset("default", kind_inputs=True)
#: The walk's mode of each kind of page (``favor="auto"`` with a model that knows the page's
#: kind: the mode of its most probable kind) and whether its text starts with its headline,
#: chosen on the recipe's folds by ``python -m training.conventions`` (2026-11-27: the best
#: set-weighted mean word F1 of the three modes and the two headline choices, each kind
#: apart; docs/experiments.md). ``build_default --conventions DIR`` reads the folds' choice.
KIND_MODES: dict[str, str] = {
    "article": "balanced", "documentation": "recall", "service": "recall",
    "forum": "precision", "product": "precision", "collection": "recall", "listing": "recall"}
KIND_TITLES: dict[str, bool] = {
    "article": False, "documentation": False, "service": False, "forum": False,
    "product": True, "collection": False, "listing": False}
MODES_CHOSEN_BY = ("mean F-beta over the six training sets on the recipe's 5 site-grouped "
                   "folds (experiments/recipe_cv.py --reuse --modes), 2026-11-25")


def superseded_ids(data_dir: str | Path, name: str, sets: Sequence[str]) -> set[str]:
    """The ids of set ``name``'s pages that a newer set among ``sets`` holds with a newer truth
    (:data:`SUPERSEDED_BY`; none when that set is not read or not there)."""
    newer, field = SUPERSEDED_BY.get(name, (None, None))
    path = Path(data_dir) / str(newer) / "ground-truth.json"
    if newer not in sets or not path.is_file():
        return set()
    truth = json.loads(path.read_text(encoding="utf-8"))
    return {str(record[field]) for record in truth.values() if record.get(field)}


def recipe_pages(data_dir: str | Path, sets: Sequence[str] = TRAINING_SETS
                 ) -> Iterator[LabelledPage]:
    """The pages of ``sets`` under ``data_dir`` as the recipe learns them: each page once,
    with its newest truth (:func:`superseded_ids`), set by set in the order given."""
    for name in sets:
        older = superseded_ids(data_dir, name, sets)
        for page in read_dataset(Path(data_dir) / name):
            if page.id not in older:
                yield page


def set_weights(pages: np.ndarray) -> np.ndarray:
    """A weight factor per case from its page key (``set/id``: the set's name first)."""
    sets = np.array([key.split("/", 1)[0] for key in np.asarray(pages).astype(str)])
    return np.where(np.isin(sets, ARTICLE_BODY_SETS), ARTICLE_BODY_WEIGHT, 1.0)


def weighted(dataset: Dataset) -> Dataset:
    """``dataset`` with the recipe's set weights (times any weights it already has)."""
    out = dataset.subset(np.arange(len(dataset)))
    factors = set_weights(dataset.pages)
    out.weights = factors if dataset.weights is None else dataset.weights * factors
    return out
