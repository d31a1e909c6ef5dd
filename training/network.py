"""The torch network a preset describes, its forward pass, and its export to a numpy Model.

:func:`build_network` makes the MLP (:class:`training.feed.LexicalNetwork` wraps it when the
preset reads lexical fields); :func:`export_model` turns a trained one into
:class:`noisecbr.score.model.Model`, whose numpy forward pass is what the cleaner runs;
:func:`torch_forward` gives the network's own outputs, to check the two agree.
"""

from __future__ import annotations

import numpy as np

from noisecbr.features import VECTOR_SCHEMA, group_slices
from noisecbr.result import LABELS
from noisecbr.score.encoding import PiecewiseLinear
from noisecbr.score.kind import KINDS, KindModel
from noisecbr.score.model import Model

from .feed import Feed, is_lexical
from .lexicon import Bags
from .presets import Preset

__all__ = ["feature_columns", "build_network", "export_model", "torch_forward", "logits_of",
           "EVAL_ROWS"]


#: Validation rows per forward pass when scoring the whole validation set: bounds the memory
#: of the activations (rows × widest layer × 4 bytes, 64 MiB for a 256-wide layer) while each
#: pass stays large enough for torch's matrix products to run at full speed.
EVAL_ROWS = 65_536


def feature_columns(groups) -> np.ndarray:
    """Indices into the full vector of the given feature groups (in vector order)."""
    slices = group_slices()
    chosen = [g for g in slices if g in set(groups)]
    return np.concatenate([np.arange(slices[g].start, slices[g].stop) for g in chosen])


def build_network(preset: Preset, n_inputs: int):
    """The preset's torch network: hidden layers with activation and dropout, one output per class.
    """
    import torch.nn as nn

    act = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}[preset.hidden_activation]
    layers: list = []
    width = n_inputs
    for h in preset.hidden:
        layers += [nn.Linear(width, h), act()]
        if preset.dropout > 0:
            layers.append(nn.Dropout(preset.dropout))
        width = h
    layers.append(nn.Linear(width, preset.classes))
    return nn.Sequential(*layers)


def export_model(net, columns: np.ndarray, mean: np.ndarray, scale: np.ndarray,
                 preset: Preset, metadata: dict | None = None,
                 kind_model: KindModel | None = None,
                 encoding: PiecewiseLinear | None = None) -> Model:
    """The numpy :class:`~noisecbr.score.model.Model` of a trained network, with its normalisation,
    its lexicon (a network with lexical fields), its kind model and metadata. The network reads
    the page's kind probabilities after the columns (``preset.kind_inputs``); the model's first
    layer reads them last, after the lexical fields.
    """
    import torch.nn as nn

    lexicon = None
    if is_lexical(net):
        lexicon = net.lexicon()
        net = net.mlp
    linears = [m for m in net if isinstance(m, nn.Linear)]
    weights = [m.weight.detach().cpu().numpy().astype(np.float32).copy() for m in linears]
    if preset.kind_inputs:
        first = weights[0]
        width = len(columns) if encoding is None else encoding.width_out
        weights[0] = np.ascontiguousarray(np.concatenate(
            [first[:, :width], first[:, width + len(KINDS):], first[:, width:width + len(KINDS)]],
            axis=1))
    return Model(
        weights=weights,
        biases=[m.bias.detach().cpu().numpy().astype(np.float32).copy() for m in linears],
        columns=np.asarray(columns, dtype=np.int64),
        mean=np.asarray(mean, dtype=np.float32),
        scale=np.asarray(scale, dtype=np.float32),
        hidden_activation=preset.hidden_activation,
        output_activation=preset.output_activation,
        metadata={
            "preset": preset.name,
            "hyperparameters": preset.hyperparameters(),
            "normalization": ("x' = (x[columns] - norm.mean) / norm.scale (tensors)"
                              if encoding is None else "x' = encoding(x[columns]) (tensors)"),
            "vector_schema": VECTOR_SCHEMA,
            "labels": list(LABELS[:preset.classes]),
            **(metadata or {}),
        },
        lexicon=lexicon,
        kind_inputs=KINDS if preset.kind_inputs else (),
        kind_model=kind_model,
        encoding=encoding,
    )


def torch_forward(net, X: np.ndarray, preset: Preset, lexical=None) -> np.ndarray:
    """The network's output activations for already selected and normalised inputs (and, for
    a network with lexical fields, the cases' :class:`~training.lexicon.LexicalCases`)."""
    import torch

    net.eval()
    with torch.no_grad():
        if is_lexical(net):
            setup = net.setup
            feed = Feed(X, Bags(lexical, setup.text_buckets, setup.attr_buckets))
            out = feed(net, np.arange(len(X)))
        else:
            out = net(torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)))
        out = torch.softmax(out, 1) if preset.output_activation == "softmax" else torch.sigmoid(out)
    return out.numpy()


def logits_of(net, feed: Feed):
    """``net``'s logits for every row ``feed`` holds, :data:`EVAL_ROWS` rows at a time."""
    import torch

    with torch.no_grad():
        return torch.cat([feed(net, np.arange(i, min(i + EVAL_ROWS, len(feed))))
                          for i in range(0, len(feed), EVAL_ROWS)])
