"""Back-propagation training of the subtree classifier (torch, CPU) and its export to a Model.

:func:`fit` trains the MLP a :class:`~training.presets.Preset` describes on a training Dataset,
measures the validation error after every epoch and keeps the weights of the best epoch (early
stopping). The torch network is exported into :class:`noisecbr.score.model.Model` (weights in
torch's (out, in) layout, the feature columns and the normalisation), whose numpy forward pass is
what the cleaner runs.

Determinism: same data + same preset + same seed → bit-identical weights and metrics. The network
is initialised after ``torch.manual_seed(seed)``, epochs are drawn with a numpy
``Generator(seed)``, ``torch.use_deterministic_algorithms(True)`` is on and the thread count is
fixed (``preset.threads``) for the duration of the fit; the previous global settings are
restored afterwards.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from noisecbr.result import LABELS
from noisecbr.score.encoding import EDGE_SAMPLE, PiecewiseLinear, fit_piecewise
from noisecbr.score.kind import KINDS, KindModel
from noisecbr.score.model import Model

from .calibration import calibrate
from .datasets import Dataset
from .feed import Feed, LexicalNetwork, is_lexical, lexical_feeds
from .network import build_network, export_model, feature_columns, logits_of
from .presets import Preset, get_preset
from .spool import gather, release, row_chunks
from .weights import case_weights

__all__ = ["TrainResult", "fit"]


@dataclass
class TrainResult:
    """A fitted model and how its training went."""

    model: Model
    history: list[tuple[float, float]]  # per epoch: (train_error, val_error), the preset's loss
    best_epoch: int  # 1-based epoch whose weights the model holds
    duration: float  # seconds
    preset: Preset | None = None
    seed: int = 0
    details: list[dict] = field(default_factory=list)  # per epoch: losses, val MSE, val rates, lr
    #: the trained torch module (the model's weights in torch form), for checks such as
    #: "the numpy forward pass equals the torch one"
    network: Any = None


class _Settings:
    """Set torch's global determinism and thread count for a fit; restore them afterwards."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def __enter__(self):
        import torch

        self.old = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
        torch.set_num_threads(self.threads)
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc) -> None:
        import torch

        torch.set_num_threads(self.old[0])
        torch.use_deterministic_algorithms(self.old[1])


def _epoch_indices(rng: np.random.Generator, y: np.ndarray, preset: Preset) -> np.ndarray:
    n = len(y)
    if preset.epoch_cases is None:
        return rng.permutation(n)
    size = int(preset.epoch_cases)
    if preset.sampling == "balanced":
        parts = []
        k = int(y.max()) + 1 if len(y) else 1
        per_class = [size // k + (1 if c < size % k else 0) for c in range(k)]
        for c, k in enumerate(per_class):
            members = np.flatnonzero(y == c)
            if len(members) == 0:
                continue
            parts.append(rng.choice(members, size=k, replace=len(members) < k))
        return rng.permutation(np.concatenate(parts))
    return rng.choice(n, size=min(size, n), replace=False)


def _val_weights(dataset: Dataset, preset: Preset) -> np.ndarray:
    # The validation error weighs cases as training does; a class-balanced epoch sample is
    # matched by class-balanced validation weights.
    class_power = 1.0 if preset.sampling == "balanced" else preset.class_power
    return case_weights(dataset, class_power, preset.page_power, preset.wordless_weight,
                        preset.frontier_weight)


@dataclass
class _Inputs:
    """The network's inputs: the selected feature columns, normalised as the exported model
    will normalise them (a :class:`~training.feed.Feed` applies it to a batch's rows)."""

    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    encoding: PiecewiseLinear | None = None

    @property
    def width(self) -> int:
        """The network's inputs from the columns (their encoded pieces, when encoded)."""
        return len(self.columns) if self.encoding is None else self.encoding.width_out


def _moments(X: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (float64 sums, as numpy's ``mean``/``std`` with
    ``dtype=float64``) of X's ``columns``, read :data:`~training.spool.CHUNK_ROWS` rows at a
    time, so that spooled vectors stay out of memory."""
    total = np.zeros(len(columns))
    for part in row_chunks(len(X)):
        total += X[part][:, columns].sum(axis=0, dtype=np.float64)
        release(X)
    mean = total / len(X)
    squares = np.zeros(len(columns))
    for part in row_chunks(len(X)):
        deviation = X[part][:, columns] - mean
        squares += (deviation * deviation).sum(axis=0)
        release(X)
    return mean, np.sqrt(squares / len(X))


def _encoding(X: np.ndarray, columns: np.ndarray, bins: int, seed: int) -> PiecewiseLinear:
    """The piecewise-linear encoding of X's ``columns`` in ``bins`` quantile bins: the edges
    read from a sample of the rows, the extremes from all of them a chunk at a time (X may be
    spooled)."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(X), min(len(X), EDGE_SAMPLE), replace=False))
    sample = gather(X, rows)[:, columns]
    low, high = sample.min(axis=0), sample.max(axis=0)
    for part in row_chunks(len(X)):
        chunk = X[part][:, columns]
        low, high = np.minimum(low, chunk.min(axis=0)), np.maximum(high, chunk.max(axis=0))
        release(X)
    return fit_piecewise(sample, bins, seed, low=low, high=high)


def _normalise(preset: Preset, dataset_train: Dataset, dataset_val: Dataset,
               seed: int = 0) -> _Inputs:
    """Select the preset's feature groups and standardise them on the training set's mean and
    standard deviation (a constant column keeps scale 1), encode them in quantile bins of the
    training set (``preset.encoding_bins``), or leave them as they are."""
    if preset.kind_inputs and (dataset_train.kinds is None or dataset_val.kinds is None):
        raise ValueError(f"preset {preset.name!r} reads the page's kind, but the cases "
                         "carry no kind probabilities (Dataset.with_kinds)")
    columns = feature_columns(preset.groups)
    # An encoded network reads its columns as they are (the bins' edges are the training
    # cases' quantiles, which standardising would not move).
    mean = np.zeros(len(columns), np.float32)
    scale = np.ones(len(columns), np.float32)
    encoding = None
    if preset.encoding_bins:
        encoding = _encoding(dataset_train.X, columns, preset.encoding_bins, seed)
    elif preset.normalize:
        mean, std = (m.astype(np.float32) for m in _moments(dataset_train.X, columns))
        scale = np.where(std > 1e-6, std, 1.0).astype(np.float32)
    return _Inputs(columns, mean, scale, encoding)


def _train_weights(dataset: Dataset, preset: Preset) -> np.ndarray:
    """Per-case loss weights of the training set; a class-balanced epoch sample already
    balances the classes, so it gets no class weight."""
    class_power = 0.0 if preset.sampling == "balanced" else preset.class_power
    return case_weights(dataset, class_power, preset.page_power, preset.wordless_weight,
                        preset.frontier_weight)


def _optimiser(net, preset: Preset, y_train: np.ndarray):
    """The preset's optimiser over ``net`` and its learning-rate schedule (None: constant)."""
    import torch

    groups = [{"params": list(net.parameters()), "lr": preset.lr}]
    if is_lexical(net):
        groups = [{"params": list(net.mlp.parameters()), "lr": preset.lr},
                  {"params": list(net.embeddings()), "lr": preset.lr * preset.lexical_lr}]
    if preset.optimizer == "sgd":
        opt = torch.optim.SGD(groups, lr=preset.lr, momentum=preset.momentum,
                              weight_decay=preset.weight_decay)
    else:
        opt = torch.optim.AdamW(groups, lr=preset.lr, weight_decay=preset.weight_decay)
    scheduler = None
    if preset.schedule == "onecycle":
        n_epoch = len(_epoch_indices(np.random.default_rng(0), y_train, preset))
        steps = math.ceil(n_epoch / preset.batch_size)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=[group["lr"] for group in groups], total_steps=steps * preset.epochs,
            pct_start=0.25)
    return opt, scheduler


class _Loss:
    """The preset's per-case loss on logits: cross-entropy, or the squared error of the sigmoid
    outputs against (smoothed) one-hot targets."""

    def __init__(self, preset: Preset) -> None:
        import torch

        self.preset = preset
        self.eye = torch.eye(preset.classes)

    def __call__(self, logits, target):
        import torch
        import torch.nn.functional as F

        smoothing = self.preset.label_smoothing
        if self.preset.loss == "cross_entropy":
            return F.cross_entropy(logits, target, reduction="none", label_smoothing=smoothing)
        t = self.eye[target]
        if smoothing:
            t = t * (1 - smoothing) + smoothing / self.preset.classes
        return ((torch.sigmoid(logits) - t) ** 2).mean(dim=1)


def _evaluate(net, loss: _Loss, X: Feed, y, w) -> tuple[float, float, list[float]]:
    """Weighted loss, MSE of the output activations and per-class correct rates on (X, y, w)."""
    import torch

    preset = loss.preset
    net.eval()
    logits = logits_of(net, X)
    with torch.no_grad():
        value = float((loss(logits, y) * w).sum() / w.sum())
        out = (torch.softmax(logits, 1) if preset.output_activation == "softmax"
               else torch.sigmoid(logits))
        mse = float(((out - loss.eye[y]) ** 2).mean())
        pred = logits.argmax(1)
    rates = [float((pred[y == c] == c).float().mean()) if bool((y == c).any())
             else float("nan") for c in range(preset.classes)]
    return value, mse, rates


def _run_epoch(net, loss: _Loss, opt, scheduler, order, X: Feed, y, w) -> float:
    """One pass over the cases ``order`` in mini-batches; returns the weighted training loss."""
    batch_size = loss.preset.batch_size
    net.train()
    total, weight_sum = 0.0, 0.0
    for b in range(0, len(order), batch_size):
        idx = order[b:b + batch_size]
        yb, wb = y[idx], w[idx]
        per_case = loss(X(net, idx.numpy()), yb) * wb
        value = per_case.sum() / len(idx)
        opt.zero_grad(set_to_none=True)
        value.backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()
        total += float(per_case.detach().sum())
        weight_sum += float(wb.sum())
    return total / max(weight_sum, 1e-12)


@dataclass
class _Loop:
    """What the training loop produced: per-epoch errors and details, the best epoch."""

    history: list[tuple[float, float]] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)
    best_error: float = math.inf
    best_epoch: int = 0
    best_state: dict | None = None


def _train_loop(net, loss: _Loss, opt, scheduler, rng: np.random.Generator, train, val,
                progress: bool) -> _Loop:
    """Train for the preset's epochs (or until ``patience`` epochs bring no better validation
    error), keeping the weights of the best epoch. ``train`` and ``val`` are (X, y, w) tensors;
    ``y`` of ``train`` also as numpy for drawing the epochs' cases."""
    import torch
    from tqdm import tqdm

    preset = loss.preset
    (Xtr, ytr, wtr, ytr_np), (Xva, yva, wva) = train, val
    loop = _Loop()
    bar = tqdm(range(preset.epochs), desc=f"train {preset.name}", unit="epoch",
               disable=not progress or not sys.stderr.isatty(), file=sys.stderr, leave=False)
    for epoch in bar:
        started = time.perf_counter()
        order = torch.from_numpy(_epoch_indices(rng, ytr_np, preset))
        train_error = _run_epoch(net, loss, opt, scheduler, order, Xtr, ytr, wtr)
        val_loss, val_mse, rates = _evaluate(net, loss, Xva, yva, wva)
        balanced_error = 1.0 - float(np.nanmean(rates))
        val_error = val_loss if preset.select_by == "loss" else balanced_error
        loop.history.append((train_error, val_error))
        loop.details.append({"epoch": epoch + 1, "train_loss": train_error, "val_loss": val_loss,
                             "val_mse": val_mse, "val_balanced_error": balanced_error,
                             **{f"val_rate_{label}": r for label, r in zip(LABELS, rates)},
                             "lr": float(opt.param_groups[0]["lr"]),
                             "seconds": time.perf_counter() - started})
        if val_error < loop.best_error:
            loop.best_error, loop.best_epoch = val_error, epoch + 1
            loop.best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        bar.set_postfix(train=f"{train_error:.4f}", val=f"{val_error:.4f}", best=loop.best_epoch)
        if preset.patience is not None and epoch + 1 - loop.best_epoch >= preset.patience:
            break
    bar.close()
    return loop


def fit(
    dataset_train: Dataset,
    dataset_val: Dataset,
    preset: str | Preset = "default",
    seed: int = 0,
    progress: bool = True,
    *,
    epochs: int | None = None,
    metadata: dict | None = None,
    kind_model: KindModel | None = None,
) -> TrainResult:
    """Train ``preset`` on ``dataset_train``, pick the epoch on ``dataset_val``.

    ``epochs`` overrides the preset's epoch count; ``kind_model``: the model of the page's
    kind that the exported model carries (needed when the preset reads the kind). Returns the
    exported model of the best epoch. The steps: normalisation, weighting, network and optimiser,
    the epoch loop with early stopping, calibration of the output offsets, export.
    """
    import torch

    preset = get_preset(preset, epochs=epochs)
    dataset_train = dataset_train.with_classes(preset.classes)
    dataset_val = dataset_val.with_classes(preset.classes)
    if len(dataset_train) == 0 or len(dataset_val) == 0:
        raise ValueError("fit needs non-empty training and validation sets")
    start = time.perf_counter()
    inputs = _normalise(preset, dataset_train, dataset_val, seed)
    ytr, yva = dataset_train.y, dataset_val.y
    wtr, wva = _train_weights(dataset_train, preset), _val_weights(dataset_val, preset)
    with _Settings(preset.threads):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        Xtr, Xva_t, lexical = lexical_feeds(preset, inputs, dataset_train, dataset_val)
        net = build_network(preset, inputs.width + (lexical.width if lexical else 0)
                            + (len(KINDS) if preset.kind_inputs else 0))
        if lexical is not None:
            net = LexicalNetwork(net, lexical)
        opt, scheduler = _optimiser(net, preset, ytr)
        train = (Xtr, torch.from_numpy(ytr), torch.from_numpy(wtr), ytr)
        val = (Xva_t, torch.from_numpy(yva), torch.from_numpy(wva))
        loop = _train_loop(net, _Loss(preset), opt, scheduler, rng, train, val, progress)
        if loop.best_state is not None:
            net.load_state_dict(loop.best_state)
        net.eval()
        offsets = calibrate(net, Xva_t, yva, preset)
        duration = time.perf_counter() - start
        model = export_model(net, inputs.columns, inputs.mean, inputs.scale, preset, {
            "seed": seed, "best_epoch": loop.best_epoch, "epochs_run": len(loop.history),
            **({"class_offsets": offsets.tolist()} if offsets is not None else {}),
            **(metadata or {}),
        }, kind_model=kind_model, encoding=inputs.encoding)
    return TrainResult(model=model, history=loop.history, best_epoch=loop.best_epoch,
                       duration=duration, preset=preset, seed=seed, details=loop.details,
                       network=net)
