"""The model file: a safetensors file of the network's, the lexicon's, the kind model's and the
confidence model's arrays, with its settings in the header's metadata. Loading never unpickles:
every array is read by its declared dtype and shape and checked (layers that chain, finite
values, a bounded size, the feature schema it was trained on), and a file that fails says why
(:class:`~noisecbr.score.model.ModelError`).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..features import FEATURE_NAMES, VECTOR_SCHEMA
from ..features.lexical import (
    LEXICON_TENSORS,
    lexicon_tensors,
    read_lexicon,
)
from ..render.confidence import CONFIDENCE_EVIDENCE, ConfidenceModel
from ..result import LABELS, PAPER_LABELS
from .encoding import ENCODING_TENSORS, PiecewiseLinear
from .kind import EVIDENCE_NAMES, KINDS, KindModel
from .model import Model, ModelError, SchemaMismatchError, check_finite, check_layers

__all__ = ["MAX_MODEL_VALUES", "MODEL_FORMAT", "load_model", "save_model"]

#: The version of the model file's layout this code writes and reads. 1: the files written
#: before 2026-12-07 (no ``model_format`` key); 2: a first layer may read encoded columns
#: (:mod:`.encoding`). A file of a later format is refused: its network may read inputs this
#: code would not give it.
MODEL_FORMAT = 2

#: The header key under which a model file's settings are stored (JSON).
_METADATA_KEY = "noisecbr"


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
    if model.encoding is not None:
        tensors.update({f"{_ENCODING_PREFIX}{name}": array
                        for name, array in model.encoding.tensors().items()})
        kind["encoding"] = {"kind": "piecewise_linear", "pieces": model.encoding.width_out}
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
        "model_format": MODEL_FORMAT,
        "vector_schema": VECTOR_SCHEMA,
        "labels": list(model.labels),
        "feature_names": [FEATURE_NAMES[c] for c in model.columns],
        "hidden_activation": model.hidden_activation,
        "output_activation": model.output_activation,
        **{k: v for k, v in model.metadata.items()
           if k not in ("vector_schema", "labels", "feature_names", "lexicon", "kind_model",
                        "kind_inputs", "confidence_model", "encoding", "model_format")},
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
            encoding=_read_encoding(metadata.get("encoding"), tensors),
        )
    except ModelError as error:  # of its own kind: a schema mismatch stays one
        raise type(error)(f"{path}: {error}") from None
    except ValueError as error:
        raise ModelError(f"{path}: {error}") from None


#: The prefix of the input encoding's tensors in a model file.
_ENCODING_PREFIX = "encoding."


def _read_encoding(declared: Any, tensors: dict[str, np.ndarray]) -> PiecewiseLinear | None:
    """The input encoding a file's metadata declares (None for none), checked."""
    if declared is None:
        return None
    if not isinstance(declared, dict) or declared.get("kind") != "piecewise_linear":
        raise ModelError("its encoding must be {\"kind\": \"piecewise_linear\", ...}, not "
                         f"{declared!r}")
    try:
        parts = {name: tensors[f"{_ENCODING_PREFIX}{name}"] for name in ENCODING_TENSORS}
    except KeyError as missing:
        raise ModelError(f"its encoding lacks tensor {missing}") from None
    encoding = PiecewiseLinear(parts["piece_column"], parts["piece_lower"],
                               parts["piece_width"])
    if declared.get("pieces") != encoding.width_out:
        raise ModelError(f"its encoding declares {declared.get('pieces')!r} pieces and holds "
                         f"{encoding.width_out}")
    return encoding


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
    check_layers(weights, biases, np.arange(len(EVIDENCE_NAMES)), mean, scale)
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
        check_finite(f"confidence.{name}", values)
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
    # The file's layout, not the model's: not kept in the model's metadata (save_model writes
    # the format of the code that saves).
    form = metadata.pop("model_format", 1)
    if isinstance(form, bool) or not isinstance(form, int) or not 1 <= form <= MODEL_FORMAT:
        raise SchemaMismatchError(
            f"{path} is a model file of format {form!r}; this code reads formats 1 to "
            f"{MODEL_FORMAT}: read it with the noisecbr version that wrote it, or retrain it "
            "(noisecbr train)")
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
#: The tensors of integer indices (besides the lexicon's buckets).
_INDEX_KEYS = ("columns", f"{_ENCODING_PREFIX}piece_column")


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
                      if key.startswith((_KIND_PREFIX, _CONFIDENCE_PREFIX,
                                         _ENCODING_PREFIX)))]
    missing = [key for key in wanted if key not in keys]
    if missing:
        raise ModelError(f"{path} lacks tensor {missing[0]!r}")
    for key in wanted:
        dtype = handle.get_slice(key).get_dtype()
        expected = _INDEX_DTYPES if key in _INDEX_KEYS or key.endswith(".buckets") else (
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
