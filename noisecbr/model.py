"""The model artifact and its numpy forward pass.

An artifact is one safetensors file: the layers' weights and biases, the feature normalisation,
and a JSON metadata header (vector schema, label order, feature columns, activations, preset, run
id, and the cleaner's walk thresholds chosen with the model). Loading reads tensors with
safetensors' numpy backend: nothing is unpickled and torch is not imported. Inference is a plain
numpy MLP: for one page's batch of ~1 000 subtrees it is faster than torch's dispatch overhead
and keeps torch out of the cleaning hot path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .result import LABELS, PAPER_LABELS
from .vectors import FEATURE_NAMES, VECTOR_SCHEMA

__all__ = ["ModelError", "SchemaMismatchError", "Model", "load_model", "save_model"]

_METADATA_KEY = "noisecbr"
_ACTIVATIONS = ("sigmoid", "relu", "tanh", "softmax", "identity")


class ModelError(ValueError):
    """The file is not a usable noisecbr model."""


class SchemaMismatchError(ModelError):
    """The model was trained on vectors of another schema version than this code computes."""


#: Largest |mean / scale| of an input column for which the normalisation is folded into the first
#: layer (float32 keeps ~7 digits; at 1 000 the cancelled part costs at most 3 of them). The
#: embedded model's largest is 8.5.
_MAX_FOLD_RATIO = 1_000.0


def _activate(x: np.ndarray, name: str) -> np.ndarray:
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(-np.clip(x, -60.0, 60.0)))
    if name == "relu":
        return np.maximum(x, 0.0, out=x)  # x is always a fresh layer output
    if name == "tanh":
        return np.tanh(x)
    if name == "softmax":
        shifted = x - x.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=1, keepdims=True)
    return x


@dataclass
class Model:
    """An MLP over selected columns of the subtree vectors.

    ``weights[k]`` has shape (out, in) as in torch's ``nn.Linear``; ``columns`` index the full
    vector of :func:`noisecbr.vectors.vectorize`; ``mean``/``scale`` normalise those columns.
    """

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    hidden_activation: str = "relu"
    output_activation: str = "softmax"
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (self.hidden_activation, self.output_activation):
            if name not in _ACTIVATIONS:
                raise ModelError(f"unknown activation {name!r}")
        if len(self.weights) != len(self.biases) or not self.weights:
            raise ModelError("a model needs as many bias vectors as weight matrices (≥ 1)")
        if self.weights[0].shape[1] != len(self.columns):
            raise ModelError("first layer width does not match the number of input columns")
        # The classes the outputs stand for: the metadata's, else the first LABELS by width.
        self.labels = tuple(self.metadata.get("labels") or LABELS[:self.weights[-1].shape[0]])
        if self.labels not in (PAPER_LABELS, LABELS):
            raise ModelError(f"a model's classes are {PAPER_LABELS} or {LABELS}, "
                             f"not {list(self.labels)}")
        if self.weights[-1].shape[0] != len(self.labels):
            raise ModelError(f"the output layer must have {len(self.labels)} units, one per "
                             f"class {self.labels}")
        # float32 throughout: halves memory traffic, and the scores do not need more.
        self.weights = [np.ascontiguousarray(w.T, dtype=np.float32) for w in self.weights]
        self.biases = [np.asarray(b, dtype=np.float32) for b in self.biases]
        self.columns = np.asarray(self.columns, dtype=np.int64)
        if len(self.columns) and (self.columns.min() < 0
                                  or self.columns.max() >= len(FEATURE_NAMES)
                                  or len(np.unique(self.columns)) < len(self.columns)):
            raise ModelError(f"input columns must be distinct indices into the "
                             f"{len(FEATURE_NAMES)} features of vector schema {VECTOR_SCHEMA}")
        self.mean = np.asarray(self.mean, dtype=np.float32)
        self.scale = np.asarray(self.scale, dtype=np.float32)
        self._all_columns = np.array_equal(self.columns, np.arange(len(FEATURE_NAMES)))
        self._first = self._folded_first_layer()

    def _folded_first_layer(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The normalisation folded into the first layer: ((x − m) / s) W + b = x (W / s) +
        (b − (m / s) W), computed in float64. It spares two passes over the page's whole
        vector matrix (2-3 % of a page's time). Not folded where a column's mean is far from
        its scale's size: x W / s and the bias would then cancel, and float32 would lose
        digits the unfolded form keeps."""
        scale = self.scale.astype(np.float64)
        if not np.all(scale > 0) or np.abs(self.mean / scale).max(initial=0.0) > _MAX_FOLD_RATIO:
            return None
        weight = self.weights[0].astype(np.float64)
        folded = weight / scale[:, None]
        bias = self.biases[0].astype(np.float64) - (self.mean.astype(np.float64) / scale) @ weight
        return folded.astype(np.float32), bias.astype(np.float32)

    @property
    def n_inputs(self) -> int:
        return len(self.columns)

    @property
    def thresholds(self) -> dict[str, float]:
        """Walk thresholds stored with the model (see :mod:`noisecbr.cleaner`)."""
        return dict(self.metadata.get("thresholds", {}))

    def _inputs(self, vectors: np.ndarray) -> np.ndarray:
        """The model's input columns of the vectors, as float32."""
        x = np.asarray(vectors, dtype=np.float32)
        return x if self._all_columns else x[:, self.columns]

    def _first_layer(self, vectors: np.ndarray) -> np.ndarray:
        """The first layer's output before its activation (a fresh array)."""
        x = self._inputs(vectors)
        if self._first is not None:
            weight, bias = self._first
        else:
            # In place after the first subtraction (which copies: the caller's vectors stay as
            # they are).
            x = x - self.mean
            x /= self.scale
            weight, bias = self.weights[0], self.biases[0]
        x = x @ weight
        x += bias
        return x

    def predict_proba(self, vectors: np.ndarray) -> np.ndarray:
        """Class scores (rows: subtrees; columns: ``self.labels``, the first 3 or all 4 of
        LABELS), normalised to sum to 1."""
        x = self._first_layer(vectors)
        last = len(self.weights) - 1
        for k in range(last + 1):
            if k:
                x = x @ self.weights[k]
                x += self.biases[k]
            x = _activate(x, self.output_activation if k == last else self.hidden_activation)
        if self.output_activation != "softmax":
            # The paper's sigmoid outputs are independent: normalise them to comparable scores.
            x = np.maximum(x, 1e-9)
            x = x / x.sum(axis=1, keepdims=True)
        return x

    def hidden(self, vectors: np.ndarray) -> np.ndarray:
        """The first hidden layer's activations: how the network sees each subtree before it
        decides (rows: subtrees). :mod:`casebase.retrieve` finds similar stored cases there. A
        model without a hidden layer returns its normalised inputs."""
        if len(self.weights) == 1:
            return (self._inputs(vectors) - self.mean) / self.scale
        return _activate(self._first_layer(vectors), self.hidden_activation)

    def predict(self, vectors: np.ndarray) -> np.ndarray:
        """Label index per subtree (LABELS order)."""
        return self.predict_proba(vectors).argmax(axis=1)

    def raw_weights(self) -> list[np.ndarray]:
        """Weights in (out, in) layout, as saved."""
        return [w.T for w in self.weights]


def save_model(model: Model, path: str | Path) -> Path:
    from safetensors.numpy import save_file

    tensors: dict[str, np.ndarray] = {
        "columns": model.columns.astype(np.int64),
        "norm.mean": model.mean,
        "norm.scale": model.scale,
    }
    for k, (w, b) in enumerate(zip(model.raw_weights(), model.biases)):
        tensors[f"layers.{k}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
        tensors[f"layers.{k}.bias"] = b
    metadata = {
        "vector_schema": VECTOR_SCHEMA,
        "labels": list(model.labels),
        "feature_names": [FEATURE_NAMES[c] for c in model.columns],
        "hidden_activation": model.hidden_activation,
        "output_activation": model.output_activation,
        **{k: v for k, v in model.metadata.items()
           if k not in ("vector_schema", "labels", "feature_names")},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={_METADATA_KEY: json.dumps(metadata)})
    return path


def load_model(path: str | Path) -> Model:
    """Load an artifact written by :func:`save_model`; never unpickles."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"no model file at {path}")
    try:
        with safe_open(str(path), framework="np") as handle:
            header = handle.metadata() or {}
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    except (SafetensorError, OSError, ValueError) as error:
        raise ModelError(f"{path} is not a safetensors model: {error}") from error
    if _METADATA_KEY not in header:
        raise ModelError(f"{path} has no noisecbr metadata")
    metadata = json.loads(header[_METADATA_KEY])
    schema = metadata.get("vector_schema")
    if schema != VECTOR_SCHEMA:
        raise SchemaMismatchError(
            f"{path} was trained on vector schema {schema}, this code computes schema "
            f"{VECTOR_SCHEMA}: retrain it (noisecbr train) or use a matching noisecbr version"
        )
    if tuple(metadata.get("labels", ())) not in (PAPER_LABELS, LABELS):
        raise ModelError(f"{path} has label order {metadata.get('labels')}, expected "
                         f"{list(PAPER_LABELS)} or {list(LABELS)}")
    n_layers = sum(1 for key in tensors if key.endswith(".weight"))
    try:
        return Model(
            weights=[tensors[f"layers.{k}.weight"] for k in range(n_layers)],
            biases=[tensors[f"layers.{k}.bias"] for k in range(n_layers)],
            columns=tensors["columns"],
            mean=tensors["norm.mean"],
            scale=tensors["norm.scale"],
            hidden_activation=metadata.get("hidden_activation", "relu"),
            output_activation=metadata.get("output_activation", "softmax"),
            metadata=metadata,
        )
    except KeyError as error:
        raise ModelError(f"{path} lacks tensor {error}") from error
