"""Training the page's kind: the kind model, the network that reads it, the recipe's pages and
the conventions and confidence chosen on the folds."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from conftest import needs_torch

from noisecbr.decide.walk import MODES
from noisecbr.eval.datasets import LabelledPage
from noisecbr.render.confidence import CONFIDENCE_EVIDENCE
from noisecbr.score.kind import EVIDENCE_NAMES, KINDS
from training.conventions import TITLES, Outcomes, choose, chosen, fit_confidence, spearman
from training.kinds import KindData, accuracy, confusion, fit_kinds, kind_of, out_of_fold_kinds
from training.network import torch_forward
from training.presets import get_preset
from training.recipe import recipe_pages, superseded_ids
from training.report import batched_proba
from training.sources import synthetic
from training.splits import split_by_site
from training.train import fit


def separable_kinds(per_kind: int = 30, seed: int = 0) -> KindData:
    """Pages whose kind one evidence column tells (a few others noise, the rest constant), on
    sites of 3 pages each."""
    rng = np.random.default_rng(seed)
    n = per_kind * len(KINDS)
    y = np.repeat(np.arange(len(KINDS)), per_kind)
    X = np.zeros((n, len(EVIDENCE_NAMES)))
    X[:, -5:] = rng.normal(0, 1.0, (n, 5))
    X[np.arange(n), y] += 3.0 + rng.normal(0, 0.3, n)
    order = rng.permutation(n)
    return KindData(X=X[order], y=y[order], sites=np.array([f"s{k // 3}" for k in range(n)]),
                    keys=np.array([f"set/{k}" for k in range(n)]), weights=np.ones(n))


def test_a_page_is_of_the_kind_its_truth_names():
    page = LabelledPage("1", "", "s", b"", "", "modernweb-dev", page_type="blog")
    assert kind_of(page) == "article"
    assert kind_of(LabelledPage("2", "", "s", b"", "", "fundus")) == "article"
    with pytest.raises(ValueError, match="not a kind"):
        kind_of(LabelledPage("3", "", "s", b"", "", "x", page_type="recipe"))


@needs_torch
def test_the_kind_model_learns_separable_kinds_on_unseen_sites():
    data = separable_kinds()
    proba = out_of_fold_kinds(data, folds=3, ensemble=2)
    assert proba.shape == (len(data.y), len(KINDS))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert accuracy(proba, data.y) > 0.95
    assert confusion(proba, data.y).sum() == len(data.y)
    model = fit_kinds(data, ensemble=2)
    assert model.weights[0].shape[0] == 2 * 64  # two networks side by side


def test_a_dataset_carries_its_pages_kinds():
    d = synthetic(n_sites=4, per_site=5)
    pages = np.unique(d.pages)
    kinds = {page: np.eye(len(KINDS))[k % len(KINDS)] for k, page in enumerate(pages)}
    out = d.with_kinds(kinds)
    for row in range(0, len(d), 7):
        np.testing.assert_array_equal(out.kinds[row], kinds[d.pages[row]])
    assert out.subset(np.arange(3)).kinds.shape == (3, len(KINDS))
    with pytest.raises(KeyError):
        d.with_kinds({})


@needs_torch
def test_the_network_reads_the_kind_as_torch_does():
    d = synthetic(n_sites=20, per_site=40)
    rng = np.random.default_rng(0)
    d = d.with_kinds({page: rng.dirichlet(np.ones(len(KINDS))) for page in np.unique(d.pages)})
    train, val, test = (d.subset(i) for i in split_by_site(d.sites, (0.6, 0.2, 0.2), 1))
    preset = get_preset("default").replace(epochs=2, epoch_cases=500, batch_size=64,
                                           threads=1, kind_inputs=True)
    from test_page_kinds import kind_model

    result = fit(train, val, preset, seed=0, progress=False, kind_model=kind_model())
    model = result.model
    assert model.kind_inputs == KINDS
    x = np.hstack([(test.X[:, model.columns] - model.mean) / model.scale, test.kinds])
    expected = torch_forward(result.network, x, preset, test.lexical)
    got = batched_proba(model, test.X, lexical=test.lexical, kinds=test.kinds)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    without = train.subset(np.arange(len(train)))
    without.kinds = None
    with pytest.raises(ValueError, match="kind"):
        fit(without, val, preset, seed=0, progress=False)


def _dataset(root, name, records):
    (root / name / "html").mkdir(parents=True)
    (root / name / "ground-truth.json").write_text(json.dumps(records))
    for page_id in records:
        (root / name / "html" / f"{page_id}.html.gz").write_bytes(
            gzip.compress(b"<html><body><p>x</p></body></html>"))


def test_the_recipe_reads_a_page_once_with_its_newest_truth(tmp_path):
    _dataset(tmp_path, "modernweb-dev", {"0001": {"url": "https://a.test/1", "articleBody": "old"},
                                         "0002": {"url": "https://b.test/2", "articleBody": "b"}})
    _dataset(tmp_path, "wcxb-dev", {"7": {"url": "https://a.test/1", "site": "A.test",
                                          "articleBody": "new", "page_type": "forum",
                                          "modernweb_id": "0001"}})
    both = ("wcxb-dev", "modernweb-dev")
    assert superseded_ids(tmp_path, "modernweb-dev", both) == {"0001"}
    pages = list(recipe_pages(tmp_path, both))
    assert [(p.dataset, p.id, p.truth) for p in pages] == [("wcxb-dev", "7", "new"),
                                                          ("modernweb-dev", "0002", "b")]
    assert pages[0].site == "a.test"  # a host whatever its case
    assert len(list(recipe_pages(tmp_path, ("modernweb-dev",)))) == 2


def synthetic_outcomes(n: int = 400, seed: int = 0) -> Outcomes:
    """Pages of two sets where listings do best in the recall mode with their headline and
    articles in the precision mode without it; the evidence's first column tracks the F1."""
    rng = np.random.default_rng(seed)
    kinds = np.zeros((n, len(KINDS)))
    listing = rng.random(n) < 0.5
    kinds[np.arange(n), np.where(listing, KINDS.index("listing"), 0)] = 1.0
    f1 = rng.uniform(0.3, 0.6, (n, len(MODES), len(TITLES)))
    best = np.where(listing, MODES.index("recall"), MODES.index("precision"))
    f1[np.arange(n), best, listing.astype(int)] += 0.3
    evidence = rng.normal(0, 1, (n, len(MODES), len(TITLES), len(CONFIDENCE_EVIDENCE)))
    evidence[..., 0] = f1 * 5 + rng.normal(0, 0.1, f1.shape)
    return Outcomes(keys=np.array([f"s/{k}" for k in range(n)]),
                    sets=np.where(np.arange(n) % 2, "a", "b"), folds=np.arange(n) % 5,
                    kinds=kinds, f1=f1, evidence=evidence)


def test_each_kind_gets_the_mode_and_headline_it_does_best_with():
    found = synthetic_outcomes()
    modes, titles = choose(found)
    assert modes["listing"] == "recall" and titles["listing"] is True
    assert modes["article"] == "precision" and titles["article"] is False
    assert modes["forum"] == "balanced"  # no page of that kind
    f1, evidence = chosen(found, modes, titles)
    assert f1.shape == (400,) and evidence.shape == (400, len(CONFIDENCE_EVIDENCE))


def test_the_confidence_ranks_results_by_their_f1():
    pytest.importorskip("sklearn", reason="the confidence model is fitted with scikit-learn "
                        "(the train extra)")
    found = synthetic_outcomes()
    f1, evidence = chosen(found, *choose(found))
    train = found.folds != 0
    model = fit_confidence(evidence[train], f1[train])
    expected = model.predict(evidence[~train])
    assert np.all((expected >= 0) & (expected <= 1))
    assert spearman(expected, f1[~train]) > 0.8
    order = np.argsort(model.score(evidence[~train]))
    assert np.all(np.diff(expected[order]) >= 0)  # calibrated: rises with the linear score
