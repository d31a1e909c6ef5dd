"""The vectors by the compiled kernel: the integer aggregates as in the pure path, then every
float column in one C pass (``_kernel.page_quantities`` once a page, ``_kernel.fill_rows`` for
all its rows or the rows asked: the same float64 operations, numpy's log1p), instead of a few
hundred numpy calls on arrays of a few hundred values.

The kernel reads the feature table (:mod:`.schema`) as arrays, one entry per column
(:func:`kernel_schema`): its transform, the quantity it is made of (by the kernel's names for
them), scales and floors; and the parameters of the algorithms that make the quantities. No
column position or feature scale is written in the kernel itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable
from .keywords import inherited_masks, landmark_bits, own_masks
from .page import SENTENCE_WORDS, first_h1, repeats
from .quantities import (
    GRANDPARENT_DIVISOR,
    MAX_LENGTH_POINTS,
    MIN_PARAGRAPH_CHARS,
    PARAGRAPH_CHARS,
)
from .schema import AT, FEATURE_NAMES, FEATURES, RELATIVE
from .tags import LEAF_TYPES, TEXT_LEAF, tag_columns
from .tokens import DIGIT, HEAD_WORDS, STOP, TITLE, VOCABULARIES, VOCABULARY_SHIFT, token_codes

__all__ = ["compiled_rows", "kernel_schema", "page_inputs", "schema_arrays"]


def _code(names, name: str | None) -> int:
    """The kernel's number for a transform or relation of the table (−1: none)."""
    return -1 if name is None else int(names[name.upper()])


def _quantity(name: str | None) -> int:
    """The kernel's number for a quantity the table names (−1: none): the kernel's
    module-level constant of that name, upper-cased."""
    return -1 if name is None else int(getattr(BACKEND.kernel, name.upper()))


@functools.cache
def kernel_schema():
    """The feature table as the kernel's ``Schema`` (which refuses a table it cannot read)."""
    return BACKEND.kernel.Schema(*schema_arrays())


def schema_arrays() -> tuple[dict[str, np.ndarray], dict[str, int | float]]:
    """What the kernel's ``Schema`` is made of: per column, arrays of what the table says (for
    ``at`` and ``relative`` columns, ``of`` is the position of the column they read), and the
    algorithms' parameters."""
    position = {name: c for c, name in enumerate(FEATURE_NAMES)}
    codes = {
        "transform": [_code(BACKEND.kernel.Transform, f.transform) for f in FEATURES],
        "of": [position[f.of] if f.transform in (AT, RELATIVE) else _quantity(f.of)
               for f in FEATURES],
        "index": [f.index for f in FEATURES],
        "per": [_quantity(f.per) for f in FEATURES],
        "at": [_code(BACKEND.kernel.Relation, f.at) for f in FEATURES],
    }
    constants = {name: [getattr(f, name) for f in FEATURES]
                 for name in ("floor", "scale", "weight", "cap")}
    return (
        {**{name: np.array(values, dtype=np.int32) for name, values in codes.items()},
         **{name: np.array(values, dtype=np.float64) for name, values in constants.items()}},
        {"link_density": position["link_density"], "leaf_types": len(LEAF_TYPES),
         "title_bit": TITLE, "digit_bit": DIGIT, "stop_bit": STOP,
         "vocabulary_shift": VOCABULARY_SHIFT, "vocabularies": len(VOCABULARIES),
         "head_words": HEAD_WORDS, "sentence_words": SENTENCE_WORDS,
         "min_paragraph_chars": float(MIN_PARAGRAPH_CHARS), "paragraph_chars": PARAGRAPH_CHARS,
         "max_length_points": MAX_LENGTH_POINTS, "grandparent_divisor": GRANDPARENT_DIVISOR})


def compiled_rows(table: ElementTable) -> Callable[[np.ndarray | None], np.ndarray]:
    """:func:`~noisecbr.features.vectors.row_vectors` by the compiled kernel (a page of at
    least one element): the page's quantities computed once, then a function of int64 row
    indices (None: every row) that fills their vectors. benchmarks/identity.py and
    tests/test_kernel.py compare the two paths' vectors bit for bit."""
    schema = kernel_schema()
    page = BACKEND.kernel.page_quantities(schema, table, page_inputs(table))

    def fill(rows: np.ndarray | None = None) -> np.ndarray:
        out = np.empty((len(table) if rows is None else len(rows), len(FEATURES)),
                       dtype=np.float32)
        BACKEND.kernel.fill_rows(out, schema, page, rows)
        return out

    return fill


def page_inputs(table: ElementTable) -> dict[str, np.ndarray | int]:
    """The integer aggregates the kernel's quantities are made of, as the pure path counts
    them: leaf counts, tag groups, keyword masks, token codes, signature counts, sibling
    links, the first h1."""
    leaf_types, tag_groups, landmarks = tag_columns(table.tags)
    own = own_masks(table, landmark_bits(landmarks))
    signatures, signature_siblings, previous, following = repeats(table)
    return {
        "leaf_counts": BACKEND.kernel.leaf_counts(
            table.parent, table.n_children, np.ascontiguousarray(leaf_types, np.int64),
            table.piece_owner, len(LEAF_TYPES), TEXT_LEAF),
        "tag_group": np.ascontiguousarray(tag_groups, np.int64),
        "own_masks": own, "ancestor_masks": inherited_masks(table, own),
        "codes": np.ascontiguousarray(token_codes(table), np.int64),
        "signatures": signatures, "signature_siblings": signature_siblings,
        "previous": previous, "next": following, "first_h1": first_h1(table)}
