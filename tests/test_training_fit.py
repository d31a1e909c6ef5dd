"""Training: separable data is learnt exactly and reproducibly; export matches torch; presets."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_torch

from noisecbr.features import FEATURE_GROUPS
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import SchemaMismatchError
from training.network import build_network, feature_columns, torch_forward
from training.presets import PAPER, get_preset
from training.report import batched_proba, evaluate
from training.sources import synthetic
from training.splits import split_by_site
from training.train import fit


@pytest.fixture(scope="module")
def data():
    d = synthetic()
    train, val, test = split_by_site(d.sites, (0.6, 0.2, 0.2), seed=1)
    return d.subset(train), d.subset(val), d.subset(test)


FAST = get_preset("default").replace(hidden=(32, 16), epochs=30, batch_size=64, lr=1e-2,
                                    dropout=0.0, weight_decay=1e-4, calibrate=None,
                                    threads=1)


@needs_torch
def test_default_learns_separable_classes_exactly_and_reproducibly(data):
    train, val, test = data
    first = fit(train, val, FAST, seed=3, progress=False)
    second = fit(train, val, FAST, seed=3, progress=False)
    m = evaluate(first.model, test)
    assert m["accuracy"] == 1.0, m
    assert all(r == 1.0 for r in m["rates"].values())
    assert first.history == second.history
    assert first.best_epoch == second.best_epoch
    for w1, w2 in zip(first.model.weights, second.model.weights):
        np.testing.assert_array_equal(w1, w2)
    assert evaluate(second.model, test) == m
    other = fit(train, val, FAST, seed=4, progress=False)
    assert other.history != first.history


@needs_torch
def test_paper_preset_learns_separable_classes(data):
    train, val, test = data
    preset = PAPER.replace(epochs=30, epoch_cases=2000, patience=None, threads=1)
    result = fit(train, val, preset, seed=0, progress=False)
    assert evaluate(result.model, test)["accuracy"] == 1.0
    assert len(result.history) == 30
    assert result.best_epoch == 1 + int(np.argmin([h[1] for h in result.history]))


@needs_torch
def test_paper_preset_has_the_published_shape():
    assert PAPER.groups == ("leaf",)
    assert len(feature_columns(PAPER.groups)) == 30 == len(FEATURE_GROUPS["leaf"])
    assert PAPER.hidden == (14,)
    assert (PAPER.hidden_activation, PAPER.output_activation) == ("sigmoid", "sigmoid")
    assert (PAPER.loss, PAPER.optimizer, PAPER.momentum) == ("mse", "sgd", 0.0)
    assert PAPER.epochs == 500 and not PAPER.normalize
    net = build_network(PAPER, 30)
    import torch.nn as nn

    linears = [m for m in net if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(30, 14), (14, 3)]
    assert [type(m) for m in net] == [nn.Linear, nn.Sigmoid, nn.Linear]


@needs_torch
@pytest.mark.parametrize("name", ["paper", "default"])
def test_numpy_forward_equals_torch_forward(data, name):
    train, val, test = data
    preset = get_preset(name).replace(epochs=2, epoch_cases=500, batch_size=64,
                                      hidden=(14,) if name == "paper" else (32, 16), threads=1)
    result = fit(train, val, preset, seed=0, progress=False)
    model = result.model
    x = (test.X[:, model.columns] - model.mean) / model.scale
    expected = torch_forward(result.network, x, preset, test.lexical)
    if model.output_activation == "sigmoid":
        expected = expected / expected.sum(1, keepdims=True)
    np.testing.assert_allclose(batched_proba(model, test.X, lexical=test.lexical), expected,
                               atol=1e-5)
    assert model.metadata["preset"] == name
    assert (model.lexicon is not None) == (name == "default")


@needs_torch
def test_artifact_round_trip_and_wrong_schema_refused(data, tmp_path, monkeypatch):
    train, val, test = data
    result = fit(train, val, FAST.replace(epochs=1), seed=0, progress=False,
                 metadata={"run_id": 7})
    path = save_model(result.model, tmp_path / "model.safetensors")
    loaded = load_model(path)
    np.testing.assert_array_equal(batched_proba(loaded, test.X, lexical=test.lexical),
                                  batched_proba(result.model, test.X, lexical=test.lexical))
    assert loaded.metadata["run_id"] == 7 and loaded.metadata["labels"] == ["noise", "data",
                                                                           "mixture", "comment"]
    np.testing.assert_array_equal(loaded.mean, result.model.mean)
    import noisecbr.score.artifact as model_module

    monkeypatch.setattr(model_module, "VECTOR_SCHEMA", model_module.VECTOR_SCHEMA + 1)
    save_model(result.model, tmp_path / "other.safetensors")
    monkeypatch.undo()
    with pytest.raises(SchemaMismatchError):
        load_model(tmp_path / "other.safetensors")


def test_calibration_offsets_raise_the_weakest_class():
    from training.calibration import _rates_for_offsets, calibrate_offsets

    rng = np.random.default_rng(0)
    y = rng.choice(3, 3000, p=[0.7, 0.25, 0.05])
    logits = np.eye(3)[y] * 1.0 + rng.normal(0, 0.6, (3000, 3))
    logits[:, 0] += 0.8  # a model biased towards noise
    before = _rates_for_offsets(logits, y, np.zeros((1, 3)))[0]
    offsets = calibrate_offsets(logits, y, "maxmin")
    after = _rates_for_offsets(logits, y, offsets[None])[0]
    assert offsets[0] == 0.0 and after.min() > before.min() + 0.1


@needs_torch
def test_ablation_shows_the_group_that_matters(data):
    from training.report import ablation, format_ablation

    train, val, _ = data
    groups = FAST.groups
    results = ablation(train, val, FAST.replace(epochs=6), seed=0, variants={
        "full": {}, "-leaf": {"groups": tuple(g for g in groups if g != "leaf")}})
    assert results["full"]["balanced_accuracy"] == 1.0
    assert results["-leaf"]["balanced_accuracy"] < 0.7  # only the leaf shares tell the classes
    assert "-leaf" in format_ablation(results)


@needs_torch
def test_the_lexical_fields_learn_words_that_tell_the_classes():
    # Vectors that say nothing, words that say everything: only the bucket vectors, learnt
    # with the network, can tell the classes apart.
    d = synthetic(telling_words=True)
    d.X[:] = 0.0
    train, val, test = (d.subset(part) for part in split_by_site(d.sites, (0.6, 0.2, 0.2), 1))
    result = fit(train, val, FAST.replace(epochs=20, lexical_min_sites=2), seed=0,
                 progress=False)
    assert evaluate(result.model, test)["balanced_accuracy"] > 0.95
    without = fit(train, val, FAST.replace(epochs=20, lexical_dim=0), seed=0, progress=False)
    assert evaluate(without.model, test)["balanced_accuracy"] < 0.5
