"""The subtree vectors of a page: :func:`vectorize`.

The pure Python path computes the raw quantities with numpy (:mod:`.quantities`, :mod:`.page`,
:mod:`.tokens`), then every column as its row of the table (:mod:`.schema`) says, in float64,
written into the float32 result. Where the compiled kernel is in use, :mod:`.compiled` does the
same in C; the pure path is its reference and fallback, and both give the same bits
(benchmarks/identity.py, tests/test_kernel.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable, element_rows
from .compiled import compiled_rows
from .page import page_quantities
from .quantities import candidate_quantities, element_quantities
from .schema import AT, BIT, CAPPED, FEATURES, LOG, ONE_HOT, RELATIVE, SHARE, Feature
from .tags import tag_columns
from .tokens import token_codes, vocabulary_quantities

__all__ = ["Columns", "page_columns", "row_vectors", "vectorize"]

_BY_NAME = {feature.name: feature for feature in FEATURES}


class Columns:
    """The float64 values of the table's columns on one page, each computed once, from the
    page's ``quantities`` and ``relations`` (per element, the element an ``at`` names: −1
    where there is none)."""

    def __init__(self, n: int, quantities: dict, relations: dict[str, np.ndarray]):
        self.n, self.quantities, self.relations = n, quantities, relations
        self.values: dict[str, np.ndarray] = {}

    def __call__(self, feature: Feature) -> np.ndarray:
        """The column ``feature`` of every element (float64)."""
        values = self.values.get(feature.name)
        if values is None:
            values = self.values[feature.name] = np.broadcast_to(
                self._compute(feature), (self.n,))
        return values

    def _compute(self, feature: Feature) -> np.ndarray:
        """The arithmetic of the table's module docstring, operation by operation."""
        if feature.transform in (AT, RELATIVE):
            source = self(_BY_NAME[feature.of])
            at = self.relations[feature.at]
            there = source[np.maximum(at, 0)]
            return np.where(at >= 0, there if feature.transform == AT else source - there, 0.0)
        x = self.quantities[feature.of]
        if np.ndim(x) == 2:  # a family
            x = x[:, feature.index]
        per = (None if feature.per is None
               else np.maximum(self.quantities[feature.per], feature.floor))
        if feature.transform == LOG:
            return np.log1p(x if per is None else x / per) / feature.scale
        if feature.transform == SHARE:
            return x / per
        if feature.transform == CAPPED:
            return np.minimum(x / per * feature.weight, feature.cap)
        if feature.transform == BIT:
            return (x > 0).astype(np.float64)
        if feature.transform == ONE_HOT:
            return (x == feature.index).astype(np.float64)
        return np.asarray(x, dtype=np.float64)  # VALUE


def page_columns(table: ElementTable) -> Columns:
    """The columns of a page (of at least one element) by the pure path: its quantities and
    relations, computed with numpy, behind a :class:`Columns`."""
    n = len(table)
    leaf_types, tag_groups, landmarks = tag_columns(table.tags)
    codes = token_codes(table)  # the page's tokens, coded once for the text and vocabulary groups
    quantities = element_quantities(table, codes, leaf_types, tag_groups, landmarks)
    page, relations = page_quantities(table, quantities["words"])
    quantities.update(page, **vocabulary_quantities(table, codes))
    relations.update(parent=table.parent, root=np.zeros(n, dtype=np.int64))
    columns = Columns(n, quantities, relations)
    # The candidate's score is damped by the text group's link density.
    quantities.update(candidate_quantities(table, quantities["chars"], quantities["own_chars"],
                                           columns(_BY_NAME["link_density"])))
    return columns


def vectorize(table: ElementTable, rows: np.ndarray | None = None) -> np.ndarray:
    """The full float32 vector of every subtree of the page (rows in document order), or of
    the subtrees ``rows`` only (distinct element indices), each the same as in the whole
    page's vectors."""
    return row_vectors(table)(rows)


def row_vectors(table: ElementTable) -> Callable[[np.ndarray | None], np.ndarray]:
    """The page's vectors row by row: what every row's columns read is computed once, then
    each call gives the vectors of the rows asked (distinct element indices; None: all), the
    same as in the whole page's vectors. The walk reads the scores of a tenth to a third of a
    page's subtrees (:func:`noisecbr.decide.walk.walk_lazily`)."""
    n = len(table)
    fill = _row_filler(table) if n else None

    def vectors(rows: np.ndarray | None = None) -> np.ndarray:
        rows = element_rows(rows, n)
        if fill is None or (rows is not None and len(rows) == 0):
            return np.zeros((0, len(FEATURES)), dtype=np.float32)
        return fill(rows)

    return vectors


def _vectors_pure(table: ElementTable) -> np.ndarray:
    """Every subtree's vector with numpy: the reference of the kernel's."""
    n = len(table)
    columns = page_columns(table)
    # Each column is computed in float64 and written straight into the float32 result (the
    # same rounding as one final astype).
    out = np.empty((n, len(FEATURES)), dtype=np.float32)
    for c, feature in enumerate(FEATURES):
        out[:, c] = columns(feature)
    return out


def _pure_rows(table: ElementTable) -> Callable[[np.ndarray | None], np.ndarray]:
    """:func:`row_vectors` by the pure path: the whole page's vectors, then the rows asked."""
    every = _vectors_pure(table)
    return lambda rows: every.copy() if rows is None else every[rows]


_row_filler = BACKEND.dispatch(_pure_rows, compiled_rows)
