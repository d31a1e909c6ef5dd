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
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..features import FEATURE_NAMES, VECTOR_SCHEMA
from ..features.lexical import (
    LEXICON_TENSORS,
    LexicalInputs,
    Lexicon,
    check_lexicon,
    lexicon_tensors,
    read_lexicon,
)
from ..render.confidence import CONFIDENCE_EVIDENCE, ConfidenceModel
from ..result import LABELS, PAPER_LABELS
from .kind import EVIDENCE_NAMES, KINDS, KindModel

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
        return _softmax(x)
    return x


#: Row lengths below which numpy's row sum adds left to right (from 8 on it keeps 8 partial
#: sums), so that adding the columns one after the other gives its very floats.
_SEQUENTIAL_ROW_SUM = 8


#: Rows below which numpy's reductions along each row cost less than the column-by-column
#: steps of :func:`_softmax` (their fewer calls outweigh the slower loop: 18 rows 4.5 against
#: 5.9 µs, 60 rows 6.4 against 6.1; the lazy walk's rounds score a few dozen rows). The
#: floats are the same: a row of fewer than _SEQUENTIAL_ROW_SUM terms adds left to right.
_FEW_ROWS = 40


def _softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise softmax. For the output layer's 3 or 4 classes its max and sum are taken column
    by column: numpy's reductions along so short a row cost four times as much (800 rows: 44 µs
    against 12), and add in the same order. Wider rows (a hidden softmax layer) and a few rows
    take numpy's."""
    if x.shape[1] >= _SEQUENTIAL_ROW_SUM or len(x) < _FEW_ROWS:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e
    top = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        np.maximum(top, x[:, j], out=top)
    e = np.exp(x - top[:, None])
    total = e[:, 0].copy()
    for j in range(1, x.shape[1]):
        total += e[:, j]
    e /= total[:, None]
    return e


def _check_layers(weights: list[np.ndarray], biases: list[np.ndarray], columns: np.ndarray,
                  mean: np.ndarray, scale: np.ndarray, extra_inputs: int = 0) -> None:
    """Raise :class:`ModelError` unless the arrays make one MLP: 2-D weights whose shapes
    chain from the input columns (and ``extra_inputs``: the lexical fields) to the output
    layer, a bias per layer of its width, a mean and a positive scale per column, and finite
    numbers throughout."""
    if len(weights) != len(biases) or not weights:
        raise ModelError("a model needs as many bias vectors as weight matrices (≥ 1)")
    columns, mean, scale = np.asarray(columns), np.asarray(mean), np.asarray(scale)
    if columns.ndim != 1 or not np.issubdtype(columns.dtype, np.integer):
        raise ModelError(f"columns must be a 1-D array of integers, not {columns.dtype} "
                         f"of shape {columns.shape}")
    width = len(columns) + extra_inputs
    for k, (weight, bias) in enumerate(zip(weights, biases)):
        weight, bias = np.asarray(weight), np.asarray(bias)
        if weight.ndim != 2 or bias.ndim != 1:
            raise ModelError(f"layer {k}: weight must be 2-D and bias 1-D, not shapes "
                             f"{weight.shape} and {bias.shape}")
        if weight.shape[1] != width:
            what = ("input columns, lexical inputs and kinds" if k == 0 and extra_inputs else
                    "input columns" if k == 0 else f"outputs of layer {k - 1}")
            raise ModelError(f"layer {k}: weight {weight.shape} takes {weight.shape[1]} inputs, "
                             f"but there are {width} {what}")
        if len(bias) != weight.shape[0]:
            raise ModelError(f"layer {k}: bias has {len(bias)} values for {weight.shape[0]} "
                             "units")
        _check_finite(f"layer {k} weight", weight)
        _check_finite(f"layer {k} bias", bias)
        width = weight.shape[0]
    for name, values in (("norm.mean", mean), ("norm.scale", scale)):
        if values.shape != (len(columns),):
            raise ModelError(f"{name} has shape {values.shape}, expected ({len(columns)},)")
        _check_finite(name, values)
    if len(scale) and not np.all(scale > 0):
        raise ModelError("norm.scale must be positive (a zero or negative scale divides by "
                         "zero or flips a feature)")


def _output_labels(declared: Any, width: int) -> tuple[str, ...]:
    """The classes a network of ``width`` outputs stands for: the metadata's ``labels``, else
    the first ``width`` of LABELS. The paper's three (:data:`PAPER_LABELS`) or all four; one
    output unit per class."""
    labels = tuple(declared) if isinstance(declared, (list, tuple)) else LABELS[:width]
    if declared is not None and not isinstance(declared, (list, tuple)):
        raise ModelError(f"labels must be a list of class names, not {declared!r}")
    if labels not in (PAPER_LABELS, LABELS):
        raise ModelError(f"a model's classes are {list(PAPER_LABELS)} or {list(LABELS)}, "
                         f"not {list(labels)}")
    if width != len(labels):
        raise ModelError(f"the output layer has {width} units; one per class "
                         f"({', '.join(labels)}) is {len(labels)}")
    return labels


def _check_finite(name: str, values: np.ndarray) -> None:
    if not np.issubdtype(values.dtype, np.number) or np.issubdtype(values.dtype,
                                                                   np.complexfloating):
        raise ModelError(f"{name} must hold real numbers, not {values.dtype}")
    if not np.all(np.isfinite(values)):
        raise ModelError(f"{name} holds NaN or infinite values")


@dataclass
class Model:
    """An MLP over selected columns of the subtree vectors, and optionally the pooled lexical
    fields of :mod:`noisecbr.features.lexical`.

    ``weights[k]`` has shape (out, in) as in torch's ``nn.Linear``; ``columns`` index the full
    vector of :func:`noisecbr.features.vectorize`; ``mean``/``scale`` normalise those columns.
    With a ``lexicon``, the first layer's inputs are the normalised columns followed by the
    lexicon's pooled fields (:meth:`noisecbr.features.lexical.Lexicon.pool`).
    """

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    hidden_activation: str = "relu"
    output_activation: str = "softmax"
    metadata: dict[str, Any] = field(default_factory=dict)
    lexicon: Lexicon | None = None
    #: The page kinds (:data:`noisecbr.score.kind.KINDS`) whose probabilities the first layer reads
    #: after the columns and the lexical fields: the same for every subtree of a page, they
    #: shift the first layer's bias by the page's kind.
    kind_inputs: tuple[str, ...] = ()
    #: The model of the page's kind (:class:`noisecbr.score.kind.KindModel`), when the file has one.
    kind_model: KindModel | None = None
    #: The model of a result's expected F1 (:class:`noisecbr.render.confidence.ConfidenceModel`),
    #: when the file has one.
    confidence_model: ConfidenceModel | None = None

    def __post_init__(self) -> None:
        for name in (self.hidden_activation, self.output_activation):
            if name not in _ACTIVATIONS:
                raise ModelError(f"unknown activation {name!r}")
        if self.lexicon is not None:
            try:
                check_lexicon(self.lexicon)
            except ValueError as error:
                raise ModelError(f"lexicon: {error}") from None
        lexical_width = self.lexicon.width if self.lexicon is not None else 0
        self.kind_inputs = tuple(self.kind_inputs)
        if self.kind_inputs and self.kind_inputs != KINDS:
            raise ModelError(f"kind inputs must be the kinds {list(KINDS)} in order, not "
                             f"{list(self.kind_inputs)}")
        if self.kind_inputs and self.kind_model is None:
            raise ModelError("a model that reads the page's kind needs a kind model")
        _check_layers(self.weights, self.biases, self.columns, self.mean, self.scale,
                      lexical_width + len(self.kind_inputs))
        self.labels = _output_labels(self.metadata.get("labels"), np.shape(self.weights[-1])[0])
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
        weight = self.weights[0][:len(scale)].astype(np.float64)
        folded = weight / scale[:, None]
        bias = self.biases[0].astype(np.float64) - (self.mean.astype(np.float64) / scale) @ weight
        return folded.astype(np.float32), bias.astype(np.float32)

    @property
    def thresholds(self) -> dict[str, float]:
        """Walk thresholds stored with the model (see :mod:`noisecbr.cleaner`)."""
        return dict(self.metadata.get("thresholds", {}))

    def _inputs(self, vectors: np.ndarray) -> np.ndarray:
        """The model's input columns of the vectors, as float32."""
        x = np.asarray(vectors, dtype=np.float32)
        return x if self._all_columns else x[:, self.columns]

    def _first_layer(self, vectors: np.ndarray,
                     lexical: LexicalInputs | np.ndarray | None = None,
                     kinds: np.ndarray | None = None) -> np.ndarray:
        """The first layer's output before its activation (a fresh array)."""
        x = self._inputs(vectors)
        if self._first is not None:
            weight, bias = self._first
        else:
            # In place after the first subtraction (which copies: the caller's vectors stay as
            # they are).
            x = x - self.mean
            x /= self.scale
            weight, bias = self.weights[0][:len(self.columns)], self.biases[0]
        x = x @ weight
        x += bias
        if self.lexicon is not None:
            lexical_end = len(self.columns) + self.lexicon.width
            x += self.pooled(lexical, len(x)) @ self.weights[0][len(self.columns):lexical_end]
        if self.kind_inputs:
            x += self.kind_bias(kinds)
        return x

    def kind_bias(self, kinds: np.ndarray | None) -> np.ndarray:
        """What the page's kind probabilities (``kinds``, :data:`noisecbr.score.kind.KINDS` order)
        add to every subtree's first layer: one row, the same for the whole page (or, for a
        2-D ``kinds`` of one row per subtree, a row each: cases of many pages)."""
        if kinds is None:
            raise ValueError("this model reads the page's kind: pass its kind probabilities")
        kinds = np.asarray(kinds, dtype=np.float32)
        if kinds.shape[-1:] != (len(self.kind_inputs),) or kinds.ndim > 2:
            raise ValueError(f"kind probabilities of shape {kinds.shape}, expected "
                             f"({len(self.kind_inputs)},) or (rows, {len(self.kind_inputs)})")
        return kinds @ self.weights[0][-len(self.kind_inputs):]

    def pooled(self, lexical: LexicalInputs | np.ndarray | None, rows: int) -> np.ndarray:
        """The lexical inputs of ``rows`` subtrees: pooled by the model's lexicon from the
        page's :class:`~noisecbr.features.lexical.LexicalInputs`, or already pooled (an array)."""
        if lexical is None:
            raise ValueError("this model reads lexical fields: pass the page's LexicalInputs "
                             "(noisecbr.features.lexical.lexical_inputs)")
        pooled = self.lexicon.pool(lexical) if isinstance(lexical, LexicalInputs) else lexical
        if pooled.shape != (rows, self.lexicon.width):
            raise ValueError(f"lexical inputs of shape {pooled.shape}, expected "
                             f"({rows}, {self.lexicon.width})")
        return np.asarray(pooled, dtype=np.float32)

    def predict_proba(self, vectors: np.ndarray,
                      lexical: LexicalInputs | np.ndarray | None = None,
                      kinds: np.ndarray | None = None) -> np.ndarray:
        """Class scores (rows: subtrees; columns: ``self.labels``, the first 3 or all 4 of
        LABELS), normalised to sum to 1. ``lexical``: the page's lexical inputs, needed when
        the model has a lexicon (ignored otherwise); ``kinds``: the page's kind probabilities,
        needed when the model reads them (:attr:`kind_inputs`)."""
        x = self._first_layer(vectors, lexical, kinds)
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

    def hidden(self, vectors: np.ndarray,
               lexical: LexicalInputs | np.ndarray | None = None,
               kinds: np.ndarray | None = None) -> np.ndarray:
        """The first hidden layer's activations: how the network sees each subtree before it
        decides (rows: subtrees). :mod:`casebase.retrieve` finds similar stored cases there. A
        model without a hidden layer returns its normalised inputs. Without ``lexical``, a
        model's lexical fields count as absent (zero): stored cases keep their vectors, not
        their words, so retrieval compares stored cases and a page's subtrees alike in what
        the network makes of their vectors."""
        if len(self.weights) == 1:
            return (self._inputs(vectors) - self.mean) / self.scale
        if self.lexicon is not None and lexical is None:
            lexical = np.zeros((len(vectors), self.lexicon.width), dtype=np.float32)
        if self.kind_inputs and kinds is None:
            kinds = np.zeros(len(self.kind_inputs), dtype=np.float32)
        return _activate(self._first_layer(vectors, lexical, kinds), self.hidden_activation)

    def predict(self, vectors: np.ndarray,
                lexical: LexicalInputs | np.ndarray | None = None,
                kinds: np.ndarray | None = None) -> np.ndarray:
        """Label index per subtree (LABELS order)."""
        return self.predict_proba(vectors, lexical, kinds).argmax(axis=1)

    def raw_weights(self) -> list[np.ndarray]:
        """Weights in (out, in) layout, as saved."""
        return [w.T for w in self.weights]


def save_model(model: Model, path: str | Path) -> Path:
    """Write ``model`` as a safetensors artifact (tensors + JSON metadata) at ``path``; returns
    the path. :func:`load_model` reads it back."""
    from safetensors.numpy import save_file

    tensors: dict[str, np.ndarray] = {
        "columns": model.columns.astype(np.int64),
        "norm.mean": model.mean,
        "norm.scale": model.scale,
    }
    for k, (w, b) in enumerate(zip(model.raw_weights(), model.biases)):
        tensors[f"layers.{k}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
        tensors[f"layers.{k}.bias"] = b
    lexical = lexicon_tensors(model.lexicon) if model.lexicon is not None else {}
    tensors.update(lexical.pop("tensors", {}))
    kind = {}
    if model.confidence_model is not None:
        tensors.update(_confidence_tensors(model.confidence_model))
        kind["confidence_model"] = {"evidence": list(CONFIDENCE_EVIDENCE),
                                    "bias": float(model.confidence_model.bias)}
    if model.kind_model is not None:
        tensors.update(_kind_tensors(model.kind_model))
        kind.update(kind_model={"kinds": list(KINDS), "evidence": list(EVIDENCE_NAMES),
                                "layers": len(model.kind_model.weights)},
                    kind_inputs=list(model.kind_inputs))
    metadata = {
        **lexical,
        **kind,
        "vector_schema": VECTOR_SCHEMA,
        "labels": list(model.labels),
        "feature_names": [FEATURE_NAMES[c] for c in model.columns],
        "hidden_activation": model.hidden_activation,
        "output_activation": model.output_activation,
        **{k: v for k, v in model.metadata.items()
           if k not in ("vector_schema", "labels", "feature_names", "lexicon", "kind_model",
                        "kind_inputs", "confidence_model")},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={_METADATA_KEY: json.dumps(metadata)})
    return path


#: Largest number of values a model file's tensors may hold together: the embedded model has
#: about 16 000, the training presets well under a million; 50 million (200 MB of float32) leaves
#: room for far larger networks and refuses a header that would make the loader allocate
#: gigabytes.
MAX_MODEL_VALUES = 50_000_000
_LAYER_KEY = re.compile(r"layers\.(\d+)\.weight$")


def load_model(path: str | Path) -> Model:
    """Load an artifact written by :func:`save_model`; never unpickles.

    Every malformed file is a :class:`ModelError` that says what is wrong: the metadata is
    parsed and checked, tensor shapes are checked from the header before any data is read,
    and tensors the model does not use are never read."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"no model file at {path}")
    try:
        with safe_open(str(path), framework="np") as handle:
            metadata = _metadata(path, handle.metadata() or {})
            tensors = _read_tensors(path, handle)
    except ModelError:
        raise
    except (SafetensorError, OSError, ValueError, TypeError) as error:
        raise ModelError(f"{path} is not a safetensors model: {error}") from error
    n_layers = sum(1 for key in tensors if _LAYER_KEY.match(key))
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
            lexicon=read_lexicon(metadata.get("lexicon"), tensors),
            kind_inputs=tuple(metadata.get("kind_inputs") or ()),
            kind_model=_read_kind_model(metadata.get("kind_model"), tensors),
            confidence_model=_read_confidence_model(metadata.get("confidence_model"), tensors),
        )
    except ModelError as error:  # of its own kind: a schema mismatch stays one
        raise type(error)(f"{path}: {error}") from None
    except ValueError as error:
        raise ModelError(f"{path}: {error}") from None


#: The prefix of the kind model's tensors in a model file.
_KIND_PREFIX = "kind."


def _kind_tensors(kind_model: KindModel) -> dict[str, np.ndarray]:
    """The tensors of a kind model, as a model file stores them."""
    tensors = {f"{_KIND_PREFIX}norm.mean": np.asarray(kind_model.mean, dtype=np.float64),
               f"{_KIND_PREFIX}norm.scale": np.asarray(kind_model.scale, dtype=np.float64)}
    for k, (weight, bias) in enumerate(zip(kind_model.weights, kind_model.biases)):
        tensors[f"{_KIND_PREFIX}layers.{k}.weight"] = np.asarray(weight, dtype=np.float32)
        tensors[f"{_KIND_PREFIX}layers.{k}.bias"] = np.asarray(bias, dtype=np.float32)
    return tensors


def _read_kind_model(declared: Any, tensors: dict[str, np.ndarray]) -> KindModel | None:
    """The kind model a file's metadata declares (None for none), checked against the evidence
    and the kinds this code computes."""
    if declared is None:
        return None
    if not isinstance(declared, dict):
        raise ModelError("kind_model must be a JSON object")
    if declared.get("kinds") != list(KINDS):
        raise ModelError(f"its kind model tells {declared.get('kinds')}, this code knows "
                         f"{list(KINDS)}: retrain it")
    if declared.get("evidence") != list(EVIDENCE_NAMES):
        raise SchemaMismatchError("its kind model reads other page evidence than this code "
                                  "computes: retrain it or use a matching noisecbr version")
    layers = declared.get("layers")
    if not isinstance(layers, int) or layers < 1:
        raise ModelError("kind_model.layers must be a positive number")
    try:
        weights = [tensors[f"{_KIND_PREFIX}layers.{k}.weight"] for k in range(layers)]
        biases = [tensors[f"{_KIND_PREFIX}layers.{k}.bias"] for k in range(layers)]
        mean, scale = tensors[f"{_KIND_PREFIX}norm.mean"], tensors[f"{_KIND_PREFIX}norm.scale"]
    except KeyError as missing:
        raise ModelError(f"its kind model lacks tensor {missing}") from None
    _check_layers(weights, biases, np.arange(len(EVIDENCE_NAMES)), mean, scale)
    if np.shape(weights[-1])[0] != len(KINDS):
        raise ModelError(f"its kind model has {np.shape(weights[-1])[0]} outputs for "
                         f"{len(KINDS)} kinds")
    return KindModel(weights=[np.asarray(w, dtype=np.float64) for w in weights],
                     biases=[np.asarray(b, dtype=np.float64) for b in biases],
                     mean=np.asarray(mean, dtype=np.float64),
                     scale=np.asarray(scale, dtype=np.float64))


#: The prefix of the confidence model's tensors in a model file.
_CONFIDENCE_PREFIX = "confidence."
_CONFIDENCE_TENSORS = ("weights", "mean", "scale", "knots", "values")


def _confidence_tensors(model: ConfidenceModel) -> dict[str, np.ndarray]:
    """The tensors of a confidence model, as a model file stores them."""
    return {f"{_CONFIDENCE_PREFIX}{name}": np.asarray(getattr(model, name), dtype=np.float64)
            for name in _CONFIDENCE_TENSORS}


def _read_confidence_model(declared: Any, tensors: dict[str, np.ndarray]
                           ) -> ConfidenceModel | None:
    """The confidence model a file's metadata declares (None for none), checked."""
    if declared is None:
        return None
    if not isinstance(declared, dict) or declared.get("evidence") != list(CONFIDENCE_EVIDENCE):
        raise SchemaMismatchError("its confidence model reads other evidence than this code "
                                  "computes: retrain it or use a matching noisecbr version")
    bias = declared.get("bias")
    if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not math.isfinite(bias):
        raise ModelError("confidence_model.bias must be a finite number")
    try:
        parts = {name: np.asarray(tensors[f"{_CONFIDENCE_PREFIX}{name}"], dtype=np.float64)
                 for name in _CONFIDENCE_TENSORS}
    except KeyError as missing:
        raise ModelError(f"its confidence model lacks tensor {missing}") from None
    width = len(CONFIDENCE_EVIDENCE)
    if any(parts[name].shape != (width,) for name in ("weights", "mean", "scale")):
        raise ModelError(f"the confidence model's weights, mean and scale need {width} values")
    if (parts["knots"].ndim != 1 or parts["knots"].shape != parts["values"].shape
            or not len(parts["knots"]) or np.any(np.diff(parts["knots"]) < 0)):
        raise ModelError("the confidence model's knots must rise, one value each")
    for name, values in parts.items():
        _check_finite(f"confidence.{name}", values)
    if not np.all(parts["scale"] > 0):
        raise ModelError("the confidence model's scale must be positive")
    return ConfidenceModel(bias=float(bias), **parts)


def _metadata(path: Path, header: dict[str, str]) -> dict[str, Any]:
    """The noisecbr metadata of a file's header, parsed and checked."""
    if _METADATA_KEY not in header:
        raise ModelError(f"{path} has no noisecbr metadata")
    try:
        metadata = json.loads(header[_METADATA_KEY])
    except json.JSONDecodeError as error:
        raise ModelError(f"{path}: the noisecbr metadata is not JSON ({error})") from None
    except RecursionError:
        raise ModelError(f"{path}: the noisecbr metadata is nested too deeply to be a "
                         "model's") from None
    if not isinstance(metadata, dict):
        raise ModelError(f"{path}: the noisecbr metadata must be a JSON object, not "
                         f"{type(metadata).__name__}")
    schema = metadata.get("vector_schema")
    if schema != VECTOR_SCHEMA:
        raise SchemaMismatchError(
            f"{path} was trained on vector schema {schema}, this code computes schema "
            f"{VECTOR_SCHEMA}: retrain it (noisecbr train) or use a matching noisecbr version"
        )
    labels = metadata.get("labels", ())
    if not isinstance(labels, list) or tuple(labels) not in (PAPER_LABELS, LABELS):
        raise ModelError(f"{path} has label order {labels}, expected {list(PAPER_LABELS)} or "
                         f"{list(LABELS)}")
    for key in ("hidden_activation", "output_activation"):
        if not isinstance(metadata.get(key, ""), str):
            raise ModelError(f"{path}: {key} must be a string")
    _check_thresholds(path, "", metadata.get("thresholds", {}))
    modes = metadata.get("modes", {})
    if not isinstance(modes, dict):
        raise ModelError(f"{path}: modes must be a JSON object of threshold sets")
    for mode, thresholds in modes.items():
        _check_thresholds(path, f"mode {mode!r}: ", thresholds)
    _check_kind_conventions(path, metadata)
    return metadata


#: The walk modes a model's ``kind_modes`` may name (the modes' own names).
_MODE_NAMES = ("balanced", "precision", "recall")


def _check_kind_conventions(path: Path, metadata: dict[str, Any]) -> None:
    """The page-kind entries of a model's metadata must be what the cleaner reads: the kinds
    its network reads (a list of names), a walk mode and a headline choice (true or false) for
    every kind, or none."""
    kind_inputs = metadata.get("kind_inputs", [])
    if not isinstance(kind_inputs, list) or not all(isinstance(k, str) for k in kind_inputs):
        raise ModelError(f"{path}: kind_inputs must be a list of kind names")
    for key, valid, what in (("kind_modes", lambda v: v in _MODE_NAMES,
                              f"one of {', '.join(_MODE_NAMES)}"),
                             ("kind_titles", lambda v: isinstance(v, bool), "true or false")):
        declared = metadata.get(key) or {}
        if not isinstance(declared, dict):
            raise ModelError(f"{path}: {key} must be a JSON object of the kinds")
        if declared and set(declared) != set(KINDS):
            raise ModelError(f"{path}: {key} must name every kind ({', '.join(KINDS)}), not "
                             f"{', '.join(map(str, declared))}")
        wrong = [kind for kind, value in declared.items() if not valid(value)]
        if wrong:
            raise ModelError(f"{path}: {key}[{wrong[0]!r}] must be {what}, not "
                             f"{declared[wrong[0]]!r}")


def _check_thresholds(path: Path, where: str, thresholds: Any) -> None:
    """A set of walk thresholds (``where``: which, for the message) must be a mapping of
    names to numbers in [0, 1]."""
    if not isinstance(thresholds, dict):
        raise ModelError(f"{path}: {where}thresholds must be a JSON object of numbers")
    for name, value in thresholds.items():
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not 0.0 <= value <= 1.0):
            raise ModelError(f"{path}: {where}threshold {name!r} must be a number in [0, 1], not "
                             f"{value!r}")


#: The tensor types a model file may store (safetensors' names): save_model writes float32
#: values and int64 indices; float64 values and int32 indices are read exactly as well.
_VALUE_DTYPES = ("F32", "F64")
_INDEX_DTYPES = ("I64", "I32")


def _read_tensors(path: Path, handle) -> dict[str, np.ndarray]:
    """The tensors the model uses, checked for presence and size from the header before any
    is read (safe_open reads a tensor only when asked for it)."""
    keys = set(handle.keys())
    layers = sorted(int(m.group(1)) for m in map(_LAYER_KEY.match, keys) if m)
    if layers != list(range(len(layers))):
        raise ModelError(f"{path}: layers must be numbered 0, 1, 2…, found {layers}")
    wanted = ["columns", "norm.mean", "norm.scale",
              *(f"layers.{k}.{part}" for k in layers for part in ("weight", "bias")),
              *(key for key in LEXICON_TENSORS if key in keys),
              *sorted(key for key in keys
                      if key.startswith((_KIND_PREFIX, _CONFIDENCE_PREFIX)))]
    missing = [key for key in wanted if key not in keys]
    if missing:
        raise ModelError(f"{path} lacks tensor {missing[0]!r}")
    for key in wanted:
        dtype = handle.get_slice(key).get_dtype()
        expected = _INDEX_DTYPES if key == "columns" or key.endswith(".buckets") else (
            _VALUE_DTYPES)
        if dtype not in expected:
            raise ModelError(f"{path}: tensor {key!r} is {dtype}, expected "
                             f"{' or '.join(expected)} (a model stored at lower precision "
                             "would clean differently from the one trained)")
    total = sum(int(np.prod(handle.get_slice(key).get_shape(), dtype=np.int64))
                for key in wanted)
    if total > MAX_MODEL_VALUES:
        raise ModelError(f"{path}: its tensors hold {total:,} values, over the limit of "
                         f"{MAX_MODEL_VALUES:,}")
    return {key: handle.get_tensor(key) for key in wanted}
