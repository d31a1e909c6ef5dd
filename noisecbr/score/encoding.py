"""Piecewise-linear encodings of a model's input columns (numpy; fitted in :mod:`training`).

An MLP on standardised columns reads a column through one weight per unit: a count of links
and a share of words are each one slope, and a network of the default's size cannot bend them
into the thresholds a tree finds (out of site on two site-grouped folds of wcxb-dev, trees on
the same columns kept listings' items at 0.62 word F1 where the MLP kept 0.54). Given each
column as a piecewise-linear encoding of its quantile bins (Gorishniy et al., "On Embeddings
for Numerical Features in Tabular Deep Learning", 2022), the same MLP reads 0.63: each bin is
an input of its own, 0 below the bin, 1 above it, linear inside it.

An encoding is three flat arrays over its *pieces* (a column of b bins gives b pieces): the
column each piece reads, its bin's lower edge and its bin's width. Encoding a page's subtrees is
then one gather, one subtraction, one multiplication and one clip, vectorised over the page. A
column with two distinct values (a bit, one position of a one-hot) has one bin from its
smallest to its largest value: it passes through, rescaled to [0, 1]; a column the training
cases never vary has no piece.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError

__all__ = ["PiecewiseLinear", "fit_piecewise", "ENCODING_TENSORS"]

#: The tensors an encoding is stored as in a model file (under the ``encoding.`` prefix).
ENCODING_TENSORS = ("piece_column", "piece_lower", "piece_width")

#: Rows of the training cases the bin edges are read from: the quantiles of 200 000 rows of a
#: million differ from the whole's by less than a tenth of a bin.
EDGE_SAMPLE = 200_000


@dataclass
class PiecewiseLinear:
    """The pieces of an encoding: ``column[i]`` (a position among the model's input columns),
    ``lower[i]`` and ``width[i]`` (> 0) of piece i's bin. A column's pieces are consecutive and
    in rising order of their bins."""

    column: np.ndarray
    lower: np.ndarray
    width: np.ndarray

    def __post_init__(self) -> None:
        self.column = np.asarray(self.column)
        if self.column.ndim != 1 or not np.issubdtype(self.column.dtype, np.integer):
            raise ModelError("an encoding's piece columns must be a 1-D array of integers")
        self.column = self.column.astype(np.int64)
        for name in ("lower", "width"):
            values = np.asarray(getattr(self, name))
            if values.shape != self.column.shape:
                raise ModelError(f"an encoding's piece_{name} has shape {values.shape}, "
                                 f"expected {self.column.shape}")
            if not np.issubdtype(values.dtype, np.number) or not np.all(np.isfinite(values)):
                raise ModelError(f"an encoding's piece_{name} must hold finite numbers")
            setattr(self, name, values.astype(np.float32))
        if len(self.width) and not np.all(self.width > 0):
            raise ModelError("an encoding's bins must have positive widths")
        if len(self.column) and self.column.min() < 0:
            raise ModelError("an encoding's piece columns must be non-negative")
        # Multiplying by the inverse width is a third cheaper than dividing, page after page.
        self._inverse = (1.0 / self.width).astype(np.float32)

    @property
    def width_out(self) -> int:
        """The number of encoded inputs (pieces) the network's first layer reads."""
        return len(self.column)

    def reads(self) -> int:
        """How many input columns the encoding needs (the largest column it reads, plus one)."""
        return int(self.column.max()) + 1 if len(self.column) else 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The encoding of ``x`` (rows: subtrees; columns: the model's input columns) as a
        fresh float32 array of one column per piece."""
        out = np.asarray(x, dtype=np.float32)[:, self.column]
        out -= self.lower
        out *= self._inverse
        return np.clip(out, 0.0, 1.0, out=out)

    def tensors(self) -> dict[str, np.ndarray]:
        """The arrays a model file stores (:data:`ENCODING_TENSORS`)."""
        return {"piece_column": self.column, "piece_lower": self.lower,
                "piece_width": self.width}


def fit_piecewise(x: np.ndarray, bins: int, seed: int = 0, sample: int = EDGE_SAMPLE, *,
                  low: np.ndarray | None = None,
                  high: np.ndarray | None = None) -> PiecewiseLinear:
    """An encoding of ``bins`` quantile bins a column of ``x`` (rows: training cases), the
    edges read from at most ``sample`` rows drawn with ``seed``; the smallest and largest
    values of all rows (or ``low`` and ``high``, when ``x`` is a sample of more cases) close
    the first and last bins, so a rare value outside the sample still counts. Ties merge bins:
    a column of few values gets as many pieces as it has steps."""
    if bins < 1:
        raise ValueError(f"an encoding needs one bin or more, not {bins}")
    x = np.asarray(x)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError("fit_piecewise needs a non-empty 2-D array of training cases")
    rows = x
    if len(x) > sample:
        rows = x[np.sort(np.random.default_rng(seed).choice(len(x), sample, replace=False))]
    quantiles = np.quantile(rows.astype(np.float64), np.linspace(0.0, 1.0, bins + 1), axis=0)
    low = np.asarray(x.min(axis=0) if low is None else low, dtype=np.float64)
    high = np.asarray(x.max(axis=0) if high is None else high, dtype=np.float64)
    column, lower, width = [], [], []
    for j in range(x.shape[1]):
        edges = np.unique(np.concatenate([[low[j]], quantiles[1:-1, j], [high[j]]]))
        edges = edges[(edges >= low[j]) & (edges <= high[j])]
        for a, b in zip(edges[:-1], edges[1:]):
            if b - a > 1e-6 * max(1.0, abs(a)):  # bins float32 can tell apart
                column.append(j)
                lower.append(a)
                width.append(b - a)
    return PiecewiseLinear(np.asarray(column, np.int64), np.asarray(lower, np.float64),
                           np.asarray(width, np.float64))
