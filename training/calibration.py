"""Output offsets that trade the classes' correct rates, chosen on the validation set.

A preset with ``calibrate`` adds to the network's output biases the logit offsets (noise fixed
at 0) that maximise its objective on the validation cases: ``balanced`` (the mean of the
classes' correct rates) or ``maxmin`` (the lowest of them, ties broken by the mean).
"""

from __future__ import annotations

import numpy as np

from .feed import Feed, is_lexical
from .network import logits_of
from .presets import Preset

__all__ = ["calibrate", "calibrate_offsets", "CALIBRATION_GRIDS", "CALIBRATION_SAMPLE"]


def _rates_for_offsets(logits: np.ndarray, y: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per-class correct rates for each row of ``offsets`` (rows × classes) added to the
    logits."""
    k = logits.shape[1]
    counts = np.maximum(np.bincount(y, minlength=k), 1)
    out = np.empty((len(offsets), k))
    for i, off in enumerate(offsets):
        pred = (logits + off).argmax(1)
        out[i] = np.bincount(y[pred == y], minlength=k) / counts
    return out


#: The offset grids of :func:`calibrate_offsets` by the number of classes searched (noise is
#: fixed): (half-width, step) of a coarse grid, then of a fine one around its best point. Two
#: free classes search the plane finely; three would make that grid 33³ points, so theirs is
#: coarser, and the coarse pass scores a sample of CALIBRATION_SAMPLE cases.
CALIBRATION_GRIDS = {1: ((4.0, 0.25), (0.3, 0.05)), 2: ((4.0, 0.25), (0.3, 0.05)),
                     3: ((4.0, 0.5), (0.5, 0.1))}
CALIBRATION_SAMPLE = 50_000


def calibrate_offsets(logits: np.ndarray, y: np.ndarray, objective: str) -> np.ndarray:
    """Logit offsets (noise fixed at 0) maximising ``objective`` on (logits, y): a joint grid
    over the other classes' offsets, then a finer one around the best point
    (:data:`CALIBRATION_GRIDS`). Classes absent from ``y`` are left at 0."""
    import itertools

    k = logits.shape[1]
    present = np.bincount(y, minlength=k)[:k] > 0
    free = [c for c in range(1, k) if present[c]]

    def score(rates):
        r = rates[:, present]
        return r.mean(1) if objective == "balanced" else r.min(1) + 1e-3 * r.mean(1)

    best = np.zeros(k)
    if not free:
        return best.astype(np.float32)
    sample = np.arange(len(y))
    if len(free) > 2 and len(y) > CALIBRATION_SAMPLE:
        sample = np.random.default_rng(0).choice(len(y), CALIBRATION_SAMPLE, replace=False)
    for stage, (span, step) in enumerate(CALIBRATION_GRIDS[len(free)]):
        rows = sample if stage == 0 else np.arange(len(y))
        grid = np.arange(-span, span + step / 2, step)
        points = np.array(list(itertools.product(grid, repeat=len(free))))
        offsets = np.repeat(best[None, :], len(points), axis=0)
        offsets[:, free] += points
        rates = _rates_for_offsets(logits[rows], y[rows], offsets)
        best = offsets[int(np.argmax(score(rates)))]
    return best.astype(np.float32)


def calibrate(net, X_val: Feed, y_val: np.ndarray, preset: Preset) -> np.ndarray | None:
    """Add to the output biases the logit offsets that maximise the preset's ``calibrate``
    objective on the validation set; returns them (None when the preset does not calibrate)."""
    import torch

    if not preset.calibrate:
        return None
    offsets = calibrate_offsets(logits_of(net, X_val).numpy(), y_val, preset.calibrate)
    mlp = net.mlp if is_lexical(net) else net
    with torch.no_grad():
        mlp[-1].bias += torch.from_numpy(offsets)
    return offsets
