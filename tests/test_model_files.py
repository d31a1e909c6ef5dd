"""Malformed model files are a ModelError that says what is wrong, at load time, and the CLI
exits 4 (issue 17). Tensors the model does not use are never read."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors.numpy import save_file

from noisecbr.cleaner import default_model
from noisecbr.score import artifact
from noisecbr.score import model as model_module
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import ModelError
from noisecbr_apps.cli import main


def _parts() -> tuple[dict[str, np.ndarray], dict]:
    """The embedded model's tensors and metadata, as save_model writes them (its lexicon, kind
    model and confidence model included)."""
    import tempfile
    from pathlib import Path

    from safetensors import safe_open
    from safetensors.numpy import load_file

    with tempfile.TemporaryDirectory() as scratch:
        path = save_model(default_model(), Path(scratch) / "model.safetensors")
        with safe_open(str(path), framework="np") as handle:
            metadata = json.loads(handle.metadata()["noisecbr"])
        tensors = {key: value.copy() for key, value in load_file(str(path)).items()}
    return tensors, metadata


def _other_labels(labels) -> tuple[str, ...]:
    """Of the two class sets a model may have (3 or 4), the one that is not ``labels``."""
    return (model_module.PAPER_LABELS if tuple(labels) == model_module.LABELS
            else model_module.LABELS)


def write(tmp_path, tensors: dict, metadata: str | dict) -> str:
    path = tmp_path / "model.safetensors"
    text = metadata if isinstance(metadata, str) else json.dumps(metadata)
    save_file(tensors, str(path), metadata={"noisecbr": text})
    return str(path)


def _break(case: str) -> tuple[dict, str | dict]:
    tensors, metadata = _parts()
    w0 = tensors["layers.0.weight"]
    if case == "not-json":
        return tensors, "{not json"
    if case == "json-list":
        return tensors, json.dumps([1, 2, 3])
    if case == "1-d-weight":
        tensors["layers.1.weight"] = tensors["layers.1.weight"].ravel()
    elif case == "bias-length":
        tensors["layers.0.bias"] = tensors["layers.0.bias"][:-1].copy()
    elif case == "layer-shapes":
        width = tensors["layers.0.weight"].shape[0]
        tensors["layers.1.weight"] = np.zeros((8, width - 1), np.float32)
    elif case == "threshold-string":
        metadata["thresholds"] = {"noise": "0.5", "keep": 0.9, "leaf": 0.5}
    elif case == "threshold-out-of-range":
        metadata["thresholds"] = {"noise": 5}
    elif case == "nan-weight":
        w0[3, 4] = np.nan
    elif case == "inf-mean":
        tensors["norm.mean"][0] = np.inf
    elif case == "zero-scale":
        tensors["norm.scale"][7] = 0.0
    elif case == "negative-scale":
        tensors["norm.scale"][7] = -1.0
    elif case == "output-width":
        last = len([k for k in tensors if k.startswith("layers.") and k.endswith(".weight")]) - 1
        tensors[f"layers.{last}.weight"] = np.zeros((5, tensors[f"layers.{last}.weight"].shape[1]),
                                                     np.float32)
        tensors[f"layers.{last}.bias"] = np.zeros(5, np.float32)
    elif case == "missing-tensor":
        del tensors["norm.scale"]
    elif case == "layer-gap":
        tensors["layers.5.weight"] = tensors["layers.1.weight"]
        tensors["layers.5.bias"] = tensors["layers.1.bias"]
    elif case == "string-column-dtype":
        tensors["columns"] = tensors["columns"].astype(np.float32)
    elif case == "unknown-labels":
        metadata["labels"] = ["noise", "data", "other"]
    elif case == "labels-not-a-list":
        metadata["labels"] = "noise,data,mixture"
    elif case == "labels-and-width-disagree":  # the other class set than the output's
        metadata["labels"] = list(_other_labels(metadata["labels"]))
    elif case == "mode-threshold-string":
        metadata["modes"] = {"precision": {"noise": "0.35", "keep": 0.95, "leaf": 0.35}}
    elif case == "modes-not-an-object":
        metadata["modes"] = ["balanced"]
    elif case == "kind-inputs-number":
        metadata["kind_inputs"] = 7
    elif case == "kind-modes-partial":
        metadata["kind_modes"] = {"forum": "recall"}
    elif case == "kind-mode-unknown":
        metadata["kind_modes"] = {**metadata["kind_modes"], "forum": "fast"}
    elif case == "kind-title-string":
        metadata["kind_titles"] = {**metadata["kind_titles"], "forum": "false"}
    elif case == "kind-evidence-other":
        metadata["kind_model"] = {**metadata["kind_model"], "evidence": ["a", "b"]}
    elif case == "kind-tensor-missing":
        del tensors["kind.layers.1.bias"]
    elif case == "confidence-knots-fall":
        tensors["confidence.knots"] = tensors["confidence.knots"][::-1].copy()
    elif case == "lexicon-unsorted":
        tensors["lexicon.text.buckets"] = tensors["lexicon.text.buckets"][::-1].copy()
    elif case == "lexicon-settings":
        metadata["lexicon"] = {**metadata["lexicon"], "bucket_bits": 16}
    elif case == "lexicon-missing":
        del tensors["lexicon.attr.vectors"]
    elif case == "lexicon-nan":
        tensors["lexicon.text.vectors"][0, 0] = np.nan
    elif case == "lexicon-unsigned":  # a difference of uint64 buckets would wrap around
        tensors["lexicon.text.buckets"] = np.array(
            [9, 3, *range(20, 20 + len(tensors["lexicon.text.buckets"]) - 2)], dtype=np.uint64)
    elif case == "float16-weight":  # read as float32 it would clean differently
        tensors["layers.0.weight"] = w0.astype(np.float16)
    elif case == "int8-weight":
        tensors["layers.1.weight"] = np.clip(tensors["layers.1.weight"] * 100, -127, 127
                                             ).astype(np.int8)
    elif case == "deep-metadata":
        return tensors, "[" * 100_000 + "]" * 100_000
    elif case == "lexicon-width":
        tensors["lexicon.attr.vectors"] = tensors["lexicon.attr.vectors"][:, :3].copy()
    return tensors, metadata


CASES = {
    "not-json": "the noisecbr metadata is not JSON",
    "json-list": "must be a JSON object, not list",
    "1-d-weight": "layer 1: weight must be 2-D and bias 1-D",
    "bias-length": "layer 0: bias has {width_1} values for {width} units",
    "layer-shapes": "layer 1: weight (8, {width_1}) takes {width_1} inputs, but there are "
                    "{width} outputs of layer 0",
    "threshold-string": "threshold 'noise' must be a number in [0, 1], not '0.5'",
    "threshold-out-of-range": "threshold 'noise' must be a number in [0, 1], not 5",
    "nan-weight": "layer 0 weight holds NaN or infinite values",
    "inf-mean": "norm.mean holds NaN or infinite values",
    "zero-scale": "norm.scale must be positive",
    "negative-scale": "norm.scale must be positive",
    "output-width": "the output layer has 5 units; one per class ({labels}) is {n}",
    "missing-tensor": "lacks tensor 'norm.scale'",
    "layer-gap": "layers must be numbered 0, 1, 2…",
    "string-column-dtype": "tensor 'columns' is F32, expected I64 or I32",
    "float16-weight": "tensor 'layers.0.weight' is F16, expected F32 or F64 (a model stored at "
                      "lower precision would clean differently",
    "int8-weight": "tensor 'layers.1.weight' is I8, expected F32 or F64",
    "deep-metadata": "the noisecbr metadata is nested too deeply",
    "unknown-labels": "has label order ['noise', 'data', 'other'], expected",
    "labels-not-a-list": "has label order noise,data,mixture, expected",
    "labels-and-width-disagree": "the output layer has {n} units; one per class ({other}) is "
                                 "{other_n}",
    "mode-threshold-string": "mode 'precision': threshold 'noise' must be a number in [0, 1]",
    "modes-not-an-object": "modes must be a JSON object of threshold sets",
    "kind-inputs-number": "kind_inputs must be a list of kind names",
    "kind-modes-partial": "kind_modes must name every kind (article, documentation",
    "kind-mode-unknown": "kind_modes['forum'] must be one of balanced, precision, recall, not "
                         "'fast'",
    "kind-title-string": "kind_titles['forum'] must be true or false, not 'false'",
    "kind-evidence-other": "its kind model reads other page evidence than this code computes",
    "kind-tensor-missing": "its kind model lacks tensor 'kind.layers.1.bias'",
    "confidence-knots-fall": "the confidence model's knots must rise",
    "lexicon-unsorted": "lexicon: text buckets must be sorted, distinct",
    "lexicon-settings": "the lexicon was made with {{'bucket_bits': 16}}",
    "lexicon-missing": "the lexicon lacks tensor 'lexicon.attr.vectors'",
    "lexicon-nan": "lexicon: text vectors must be finite float32",
    "lexicon-width": "lexicon: both tables need vectors of one nonzero length",
    "lexicon-unsigned": "tensor 'lexicon.text.buckets' is U64, expected I64 or I32",
}


@pytest.mark.parametrize("case", CASES)
def test_malformed_model_files_are_model_errors(tmp_path, case):
    path = write(tmp_path, *_break(case))
    with pytest.raises(ModelError) as caught:
        load_model(path)
    message = str(caught.value)
    labels = default_model().labels  # the embedded model's: 3 or 4 classes
    other = _other_labels(labels)
    width = default_model().raw_weights()[0].shape[0]  # the first hidden layer's
    assert CASES[case].format(width=width, width_1=width - 1,
                              labels=", ".join(labels), n=len(labels), other=", ".join(other),
                              other_n=len(other)) in message
    assert "\n" not in message


def test_a_good_file_still_loads(tmp_path):
    loaded = load_model(write(tmp_path, *_parts()))
    assert len(loaded.columns) == len(default_model().columns)


@pytest.mark.parametrize("labels", [model_module.PAPER_LABELS, model_module.LABELS])
def test_three_and_four_class_models_load(tmp_path, labels):
    tensors, metadata = _parts()
    last = len([k for k in tensors if k.startswith("layers.") and k.endswith(".weight")]) - 1
    width = tensors[f"layers.{last}.weight"].shape[1]
    tensors[f"layers.{last}.weight"] = np.ones((len(labels), width), np.float32)
    tensors[f"layers.{last}.bias"] = np.zeros(len(labels), np.float32)
    metadata["labels"] = list(labels)
    loaded = load_model(write(tmp_path, tensors, metadata))
    assert loaded.labels == tuple(labels)


def test_the_header_is_checked_before_tensors_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(artifact, "MAX_MODEL_VALUES", 1_000)
    with pytest.raises(ModelError, match="over the limit of 1,000"):
        load_model(write(tmp_path, *_parts()))


def test_unused_tensors_are_not_read(tmp_path, monkeypatch):
    import safetensors

    tensors, metadata = _parts()
    tensors["optimizer.state"] = np.zeros((1000, 1000), np.float32)
    path = write(tmp_path, tensors, metadata)
    read: list[str] = []
    original = safetensors.safe_open

    class Spy:
        def __init__(self, *args, **kwargs):
            self._handle = original(*args, **kwargs)

        def __enter__(self):
            self._inner = self._handle.__enter__()
            return self

        def __exit__(self, *exc):
            return self._handle.__exit__(*exc)

        def get_tensor(self, key):
            read.append(key)
            return self._inner.get_tensor(key)

        def __getattr__(self, name):
            return getattr(self._inner, name)

    monkeypatch.setattr(safetensors, "safe_open", Spy)
    load_model(path)
    assert read and "optimizer.state" not in read


def test_cli_exits_4_with_one_line(tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(b"<p>hello</p>")
    path = write(tmp_path, *_break("zero-scale"))
    result = CliRunner().invoke(main, ["clean", str(page), "--model", path])
    assert result.exit_code == 4
    assert len(result.stderr.strip().splitlines()) == 1
    assert "norm.scale must be positive" in result.stderr


def test_save_model_round_trip_keeps_validating(tmp_path):
    model = default_model()
    path = save_model(model, tmp_path / "m.safetensors")
    assert load_model(path).thresholds == model.thresholds


@pytest.mark.parametrize("classes", [2, 3, 4, 7, 8, 17])
def test_the_softmax_gives_numpys_row_formula_bit_for_bit(classes):
    from noisecbr.score.model import _activate

    rng = np.random.default_rng(classes)
    x = (rng.normal(size=(500, classes)) * 20).astype(np.float32)
    x[0] = 80.0  # a row of ties, and large values that would overflow without the shift
    expected = np.exp(x - x.max(axis=1, keepdims=True))
    expected = expected / expected.sum(axis=1, keepdims=True)
    out = _activate(x.copy(), "softmax")
    assert out.dtype == np.float32 and np.array_equal(out, expected)
    assert np.allclose(out.sum(axis=1), 1.0) and np.allclose(out[0], 1.0 / classes)
