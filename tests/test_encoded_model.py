"""The encoded-input scorer: piecewise-linear encodings of the columns (noisecbr.score.encoding),
the ``encoded`` preset, its numpy forward pass against torch's and its model file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES, needs_torch

from noisecbr.cleaner import Cleaner
from noisecbr.errors import ModelError, SchemaMismatchError
from noisecbr.features.vectors import row_vectors
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.encoding import PiecewiseLinear, fit_piecewise


def test_piecewise_encoding_passes_bits_drops_constants_and_clips():
    rng = np.random.default_rng(0)
    x = np.column_stack([rng.integers(0, 2, 1000), np.full(1000, 3.0),
                         rng.exponential(1.0, 1000)]).astype(np.float32)
    encoding = fit_piecewise(x, bins=4)
    assert (encoding.column == 0).sum() == 1  # a bit: one piece
    assert (encoding.column == 1).sum() == 0  # a constant: none
    assert (encoding.column == 2).sum() == 4
    out = encoding(x)
    assert out.shape == (1000, 5) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 0], x[:, 0])
    assert out.min() >= 0 and out.max() <= 1
    # A continuous column's pieces fill in order: a piece is full before the next one starts.
    pieces = out[:, 1:]
    assert np.all(np.diff((pieces > 0).astype(int), axis=1) <= 0)
    assert np.all((pieces[:, 1:] == 0) | (pieces[:, :-1] == 1))
    # Beyond the training extremes the encoding saturates instead of extrapolating.
    far = encoding(np.array([[5.0, 3.0, -1.0], [-5.0, 3.0, 1e6]], np.float32))
    np.testing.assert_array_equal(far[:, 1:], [[0, 0, 0, 0], [1, 1, 1, 1]])


def test_an_encoding_with_bad_pieces_is_refused():
    with pytest.raises(ModelError, match="positive widths"):
        PiecewiseLinear(np.array([0]), np.array([0.0]), np.array([0.0]))
    with pytest.raises(ModelError, match="finite"):
        PiecewiseLinear(np.array([0]), np.array([np.nan]), np.array([1.0]))
    with pytest.raises(ModelError, match="integers"):
        PiecewiseLinear(np.array([0.5]), np.array([0.0]), np.array([1.0]))


@pytest.fixture(scope="module")
def data():
    from training.sources import synthetic
    from training.splits import split_by_site

    d = synthetic()
    train, val, test = split_by_site(d.sites, (0.6, 0.2, 0.2), seed=1)
    return d.subset(train), d.subset(val), d.subset(test)


def _fitted(data, **changes):
    from training.presets import get_preset
    from training.train import fit

    train, val, _ = data
    preset = get_preset("encoded").replace(**{"epochs": 2, "epoch_cases": 2000,
                                              "batch_size": 64, "threads": 1, **changes})
    return fit(train, val, preset, seed=0, progress=False)


@needs_torch
def test_encoded_preset_learns_and_its_numpy_forward_equals_torch(data):
    from training.network import torch_forward
    from training.report import batched_proba, evaluate

    result = _fitted(data, epochs=20, lr=1e-2, dropout=0.0)
    model, test = result.model, data[2]
    assert model.encoding is not None and model.metadata["preset"] == "encoded"
    assert model.weights[0].shape[0] == model.encoding.width_out + model.lexicon.width
    assert evaluate(model, test)["accuracy"] >= 0.95
    x = model.encoding(test.X[:, model.columns])
    expected = torch_forward(result.network, x, result.preset, test.lexical)
    np.testing.assert_allclose(batched_proba(model, test.X, lexical=test.lexical), expected,
                               atol=1e-5)


@needs_torch
def test_encoded_forward_on_fixture_pages_equals_torch_with_its_own_encoding(data):
    """The cleaner's numpy forward pass on real pages' subtrees against the torch network fed
    by an encoding written in torch (not the numpy one under test)."""
    import torch

    result = _fitted(data, lexical_dim=0)
    model, net = result.model, result.network
    enc = model.encoding
    column, lower, width = (torch.from_numpy(a) for a in (enc.column, enc.lower, enc.width))
    cleaner = Cleaner(model)
    for path in sorted((FIXTURES / "kinds").glob("*.html")):
        page = cleaner.prepare(path.read_bytes())
        vectors = row_vectors(page.table)(None)
        x = torch.from_numpy(np.asarray(vectors, np.float32)[:, model.columns])
        encoded = torch.clamp((x[:, column] - lower) / width, 0, 1)
        with torch.no_grad():
            expected = torch.softmax(net.eval()(encoded), 1).numpy()
        np.testing.assert_allclose(model.predict_proba(vectors), expected, atol=1e-5,
                                   err_msg=path.name)
        assert cleaner.clean(path.read_bytes()).text  # the walk runs on an encoded model


@needs_torch
def test_encoded_model_file_round_trip_and_other_formats_refused(data, tmp_path, monkeypatch):
    from training.report import batched_proba

    model, test = _fitted(data).model, data[2]
    path = save_model(model, tmp_path / "encoded.safetensors")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.encoding.lower, model.encoding.lower)
    np.testing.assert_array_equal(batched_proba(loaded, test.X, lexical=test.lexical),
                                  batched_proba(model, test.X, lexical=test.lexical))
    assert Cleaner(str(path)).model.encoding is not None

    import noisecbr.score.artifact as artifact

    monkeypatch.setattr(artifact, "MODEL_FORMAT", artifact.MODEL_FORMAT + 1)
    save_model(model, tmp_path / "newer.safetensors")
    monkeypatch.undo()
    with pytest.raises(SchemaMismatchError, match="format 3"):
        load_model(tmp_path / "newer.safetensors")

    # An encoding whose declared pieces disagree with its tensors is refused.
    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(str(path), framework="np") as handle:
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}
        header = json.loads(handle.metadata()["noisecbr"])
    header["encoding"]["pieces"] += 1
    save_file(tensors, str(tmp_path / "wrong.safetensors"),
              metadata={"noisecbr": json.dumps(header)})
    with pytest.raises(ModelError, match="pieces"):
        load_model(tmp_path / "wrong.safetensors")
    # ...and so is one whose tensors are missing.
    del tensors["encoding.piece_width"]
    save_file(tensors, str(tmp_path / "missing.safetensors"),
              metadata={"noisecbr": json.dumps(header)})
    with pytest.raises(ModelError, match="piece_width"):
        load_model(tmp_path / "missing.safetensors")


@needs_torch
def test_train_preset_encoded_writes_a_model_the_cleaner_reads(tmp_path):
    """What ``noisecbr train --preset encoded`` runs (training.cli.train_run): a recorded run
    whose model file a Cleaner opens by its path and cleans with."""
    from click.testing import CliRunner

    from casebase.store import CaseBase
    from training.cli import train, train_run
    from training.sources import synthetic

    assert "encoded" in CliRunner().invoke(train, ["--help"]).output
    cb = CaseBase.open(f"sqlite:///{tmp_path / 'cb.sqlite'}")
    run = train_run(cb, "encoded", seed=0, out=tmp_path / "run", epochs=2, quiet=True,
                    dataset=synthetic(n_sites=24, per_site=40),
                    overrides={"epoch_cases": 2000, "batch_size": 64, "threads": 1})
    cb.close()
    assert run["status"] == "finished" and run["preset"] == "encoded"
    cleaner = Cleaner(run["artifact_path"])
    assert cleaner.model.encoding is not None
    page = (FIXTURES / "kinds" / "article.html").read_bytes()
    result = cleaner.clean(page)
    assert result.text and result.html
