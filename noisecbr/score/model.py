"""The network and its numpy forward pass (:class:`Model`); its file is :mod:`.artifact`.

A model is the layers' weights and biases, the feature normalisation, the lexicon, the kind and
confidence models it carries and its metadata (vector schema, label order, feature columns,
activations, preset, run id, the walk thresholds chosen with it). Inference is a plain numpy
MLP: for one page's batch of ~1 000 subtrees it is faster than torch's dispatch overhead and
keeps torch out of the cleaning hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ModelError, SchemaMismatchError
from ..features import FEATURE_NAMES, VECTOR_SCHEMA
from ..features.lexical import (
    LexicalInputs,
    Lexicon,
    check_lexicon,
)
from ..render.confidence import ConfidenceModel
from ..result import LABELS, PAPER_LABELS
from .encoding import PiecewiseLinear
from .kind import KINDS, KindModel

__all__ = ["ModelError", "SchemaMismatchError", "Model", "check_finite", "check_layers"]

_ACTIVATIONS = ("sigmoid", "relu", "tanh", "softmax", "identity")


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


def check_layers(weights: list[np.ndarray], biases: list[np.ndarray], columns: np.ndarray,
                  mean: np.ndarray, scale: np.ndarray, extra_inputs: int = 0,
                  encoded: int | None = None) -> None:
    """Raise :class:`ModelError` unless the arrays make one MLP: 2-D weights whose shapes
    chain from the input columns (``encoded`` inputs instead where the columns are encoded:
    :mod:`.encoding`; and ``extra_inputs``: the lexical fields) to the output layer, a bias per
    layer of its width, a mean and a positive scale per column, and finite numbers
    throughout."""
    if len(weights) != len(biases) or not weights:
        raise ModelError("a model needs as many bias vectors as weight matrices (≥ 1)")
    columns, mean, scale = np.asarray(columns), np.asarray(mean), np.asarray(scale)
    if columns.ndim != 1 or not np.issubdtype(columns.dtype, np.integer):
        raise ModelError(f"columns must be a 1-D array of integers, not {columns.dtype} "
                         f"of shape {columns.shape}")
    width = (len(columns) if encoded is None else encoded) + extra_inputs
    for k, (weight, bias) in enumerate(zip(weights, biases)):
        weight, bias = np.asarray(weight), np.asarray(bias)
        if weight.ndim != 2 or bias.ndim != 1:
            raise ModelError(f"layer {k}: weight must be 2-D and bias 1-D, not shapes "
                             f"{weight.shape} and {bias.shape}")
        if weight.shape[1] != width:
            what = ("input columns, lexical inputs and kinds" if k == 0 and extra_inputs else
                    "input columns" if k == 0 else f"outputs of layer {k - 1}")
            if k == 0 and encoded is not None:
                what = f"encoded {what}"
            raise ModelError(f"layer {k}: weight {weight.shape} takes {weight.shape[1]} inputs, "
                             f"but there are {width} {what}")
        if len(bias) != weight.shape[0]:
            raise ModelError(f"layer {k}: bias has {len(bias)} values for {weight.shape[0]} "
                             "units")
        check_finite(f"layer {k} weight", weight)
        check_finite(f"layer {k} bias", bias)
        width = weight.shape[0]
    for name, values in (("norm.mean", mean), ("norm.scale", scale)):
        if values.shape != (len(columns),):
            raise ModelError(f"{name} has shape {values.shape}, expected ({len(columns)},)")
        check_finite(name, values)
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


def check_finite(name: str, values: np.ndarray) -> None:
    """Raise :class:`ModelError` unless ``values`` (called ``name``) are finite real numbers."""
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
    #: The piecewise-linear encoding of the input columns (:mod:`.encoding`) the first layer
    #: reads in place of the standardised columns; None: standardised (``mean``, ``scale``).
    #: An encoded model reads its columns as they are: its mean is 0 and its scale 1.
    encoding: PiecewiseLinear | None = None

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
        check_layers(self.weights, self.biases, self.columns, self.mean, self.scale,
                      lexical_width + len(self.kind_inputs),
                      None if self.encoding is None else self.encoding.width_out)
        if self.encoding is not None:
            if self.encoding.reads() > len(self.columns):
                raise ModelError(f"the encoding reads input column {self.encoding.reads() - 1}"
                                 f" of {len(self.columns)}")
            if np.any(np.asarray(self.mean) != 0) or np.any(np.asarray(self.scale) != 1):
                raise ModelError("an encoded model reads its columns as they are: its "
                                 "norm.mean must be 0 and its norm.scale 1")
        #: How many of the first layer's inputs come from the columns (encoded or not).
        self.dense_width = (len(self.columns) if self.encoding is None
                            else self.encoding.width_out)
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
        self._first = self._folded_first_layer() if self.encoding is None else None

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
        if self.encoding is not None:
            x = self.encoding(x)
            weight, bias = self.weights[0][:self.dense_width], self.biases[0]
        elif self._first is not None:
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
            lexical_end = self.dense_width + self.lexicon.width
            x += self.pooled(lexical, len(x)) @ self.weights[0][self.dense_width:lexical_end]
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
            if self.encoding is not None:
                return self.encoding(self._inputs(vectors))
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

