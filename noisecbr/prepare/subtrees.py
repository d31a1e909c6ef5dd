"""Candidate subtrees of a tidied body and the per-element aggregate table.

Every element of the body is a candidate subtree. One iterative walk (in the order of lxml's
``iterwalk`` start and end events; done by lxml's ``iter`` in C) lists the elements in document
order (pre-order) and the page's text *pieces*: an element's ``.text`` is emitted at its start, a
child's ``.tail`` after the child's end and is owned by the parent. In this order the subtree
of element ``i`` is the contiguous element range
``[i, end[i])`` and the contiguous piece range ``[piece_start[i], piece_end[i])``, so every
subtree aggregate is a difference of two cumulative sums: nothing walks a subtree twice.

The paper's *threshold level* (all subtrees at depth d below body) is :func:`at_level`.

Two implementations fill the table: a compiled kernel (:mod:`noisecbr.native._kernel`, Cython over
lxml's C API, one C pass over libxml2's nodes) and the pure Python code of
:mod:`noisecbr.prepare.fields`, which is the reference and the fallback
(:data:`noisecbr.native.backend.BACKEND` says which is in use). Both give the same table, field by
field.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from lxml import etree

from ..native.backend import BACKEND
from .fields import ASCII_WORD, KEYWORD_ATTRIBUTES, WORD, python_fields

__all__ = [
    "ELEMENT_PATH",
    "KEYWORD_ATTRIBUTES",
    "WORD",
    "ElementTable",
    "at_level",
    "build_table",
    "cumulative",
    "is_element_path",
    "looked_up",
    "numbered",
    "subtree_sum",
]


#: An element path as :meth:`ElementTable.paths` and lxml's ``getpath`` write it: absolute
#: steps of a tag name (``*`` for a namespaced tag without prefix) and, where a parent has several
#: children of the tag, their position from 1 (``/html/body/div[2]/p``). Nothing else: no
#: ``//``, predicate, axis or function, so a path names one element and never computes.
ELEMENT_PATH = re.compile(r"(?:/(?:\*|[^\W\d][\w.:-]*)(?:\[[1-9][0-9]*\])?)+")


def is_element_path(path: object) -> bool:
    """Whether ``path`` is an element path (:data:`ELEMENT_PATH`), not an XPath expression."""
    return isinstance(path, str) and ELEMENT_PATH.fullmatch(path) is not None


#: What later stages derive from a table once and keep with it (:meth:`ElementTable.memo`): the
#: tokens' codes and the page's language (features/tokens.py), the pieces' hashes
#: (site/evidence.py).
MEMOS = ("word_codes", "language", "piece_hashes")

T = TypeVar("T")


@dataclass
class ElementTable:
    """Per-element arrays of one page, in document order (index 0 is the body)."""

    elements: list[etree._Element]
    tags: list[str]
    parent: np.ndarray  # int32, -1 for the body
    end: np.ndarray  # int32, subtree of i = elements[i:end[i]]
    depth: np.ndarray  # int32, body = 0
    n_children: np.ndarray  # int32
    piece_start: np.ndarray  # int32, subtree's text pieces = pieces[piece_start:piece_end]
    piece_end: np.ndarray
    # text pieces in document order
    piece_text: list[str]
    piece_owner: np.ndarray  # int32 element index owning the piece
    piece_words: np.ndarray  # int32
    piece_chars: np.ndarray  # int32, word characters
    piece_punct: np.ndarray  # int32
    piece_in_link: np.ndarray  # bool: inside an <a>
    piece_commas: np.ndarray  # int32: commas (readability's paragraph score)
    # per KEYWORD_ATTRIBUTES, every element's value of that attribute (None where absent)
    keyword_values: list[list[str | None]]

    def __len__(self) -> int:
        return len(self.elements)

    def memo(self, name: str, compute: Callable[[ElementTable], T]) -> T:
        """``compute(self)``, computed once per table and kept under ``name``: the one place a
        later stage keeps what it derives from a page's table (:data:`MEMOS` names them)."""
        if name not in MEMOS:
            raise KeyError(f"{name!r} is not a declared memo of a table ({', '.join(MEMOS)})")
        memos = self.__dict__.setdefault("_memos", {})
        if name not in memos:
            memos[name] = compute(self)
        return memos[name]

    @property
    def piece_tokens(self) -> list[list[str]]:
        """The WORD tokens of each piece, found on first access: the cleaning path reads only
        their codes (:func:`noisecbr.features.tokens.token_codes`, which the compiled kernel takes
        from the texts without making a str per word)."""
        tokens = self.__dict__.get("_tokens")
        if tokens is None:
            tokens = self.__dict__["_tokens"] = [
                (ASCII_WORD if text.isascii() else WORD).findall(text)
                for text in self.piece_text]
        return tokens

    def attribute_values(self) -> tuple[list[str | None], np.ndarray]:
        """The distinct values of the keyword attributes on the page (the first, None: absent)
        and, per attribute of KEYWORD_ATTRIBUTES, each element's value as an index into them
        (a read-only int64 array, attributes × elements); found on first access. What is read
        off an attribute value (its keywords, lexical tokens, discussion markup) is then read
        once per value, not once per element."""
        found = self.__dict__.get("_attribute_values")
        if found is None and not len(self):
            found = ([None], np.zeros((len(self.keyword_values), 0), dtype=np.int64))
        if found is None:
            if any(len(values) != len(self) for values in self.keyword_values):
                raise ValueError("every keyword attribute needs a value (or None) per element")
            # One list, numbered in one pass: a value's number is where it is first met, so
            # the four attributes' lists numbered apart would give two values one number.
            index: dict[str | None, int] = {None: 0}
            every = list(itertools.chain.from_iterable(self.keyword_values))
            numbers = numbered(every, index).reshape(len(self.keyword_values), -1)
            # The numbers made dense by a lookup table (no sort): None stays 0.
            values = list(index)
            dense = np.zeros(max(index.values()) + 1, dtype=np.int64)
            dense[np.fromiter(index.values(), dtype=np.int64, count=len(index))] = np.arange(
                len(index))
            positions = dense[numbers]
            positions.setflags(write=False)  # shared by every reader of the page's values
            found = self.__dict__["_attribute_values"] = (values, positions)
        return found

    def path(self, index: int) -> str:
        """Stable path of element ``index`` (an XPath with positions)."""
        element = self.elements[index]
        return element.getroottree().getpath(element)

    def paths(self) -> list[str]:
        """The paths of all elements, as lxml's ``getpath`` writes them (a position only where
        a parent has several children of the tag), derived from the table in one pass and so
        still right after the cleaner has detached some subtrees."""
        n = len(self.elements)
        if n == 0:
            return []
        raw = [element.tag for element in self.elements]
        if any(not isinstance(tag, str) or tag.startswith("{") for tag in raw):
            tree = self.elements[0].getroottree()  # namespaced markup: let lxml spell it
            return [tree.getpath(element) for element in self.elements]
        parent = self.parent.tolist()
        totals: dict[tuple[int, str], int] = {}
        for i in range(1, n):
            key = (parent[i], raw[i])
            totals[key] = totals.get(key, 0) + 1
        seen: dict[tuple[int, str], int] = {}
        paths = [self.path(0)]
        for i in range(1, n):
            key = (parent[i], raw[i])
            position = seen[key] = seen.get(key, 0) + 1
            step = f"{raw[i]}[{position}]" if totals[key] > 1 else raw[i]
            paths.append(f"{paths[parent[i]]}/{step}")
        return paths

    def pieces_within(self, roots: np.ndarray) -> np.ndarray:
        """Per text piece: does it lie in the subtree of one of the elements ``roots`` (their
        indices)?"""
        pieces = len(self.piece_words)
        # +1 where a root's pieces start, −1 where they end: counted by bincount in C
        # (np.add.at costs more than the rest of the function).
        marks = (np.bincount(self.piece_start[roots], minlength=pieces + 1)
                 - np.bincount(self.piece_end[roots], minlength=pieces + 1))
        return np.cumsum(marks[:-1]) > 0

    def subtree(self, piece_values: np.ndarray) -> np.ndarray:
        """Per-element subtree sums of a per-piece quantity."""
        return subtree_sum(piece_values, self.piece_start, self.piece_end)

    def subtree_words(self) -> np.ndarray:
        """``subtree(piece_words)``: each subtree's words (float64), found on first access and
        read-only (the rules after the walk, the byline and the comment evidence each read it)."""
        words = self.__dict__.get("_subtree_words")
        if words is None:
            words = self.__dict__["_subtree_words"] = self.subtree(self.piece_words)
            words.setflags(write=False)
        return words

    def own(self, piece_values: np.ndarray) -> np.ndarray:
        """Per-element sums of a per-piece quantity over the element's own pieces."""
        values = np.asarray(piece_values)
        if values.ndim == 1 and len(values) == len(self.piece_owner):
            # bincount adds in C in the same order as np.add.at, from the same zeros.
            # (An empty bincount comes back as int64, hence the astype.)
            return np.bincount(self.piece_owner, weights=values,
                               minlength=len(self.elements)).astype(np.float64, copy=False)
        out = np.zeros(len(self.elements), dtype=np.float64)
        np.add.at(out, self.piece_owner, piece_values)
        return out


def _numbered_pure(values: list, index: dict) -> np.ndarray:
    """Each value's number in ``index``, the values not in it numbered as they are met (from
    ``len(index) + 1``), as int64."""
    return np.fromiter(map(index.setdefault, values, itertools.count(len(index) + 1)),
                       dtype=np.int64, count=len(values))


def _numbered_compiled(values: list, index: dict) -> np.ndarray:
    return BACKEND.kernel.ids(values, index)


numbered = BACKEND.dispatch(_numbered_pure, _numbered_compiled)


def _looked_up_pure(values: list, table: dict, missing: int, unsigned: bool = False
                    ) -> np.ndarray:
    """Each value's number in ``table`` (``missing`` where it has none), as int64 (uint64 when
    ``unsigned``): one C-level map of dict lookups."""
    return np.fromiter(map(table.get, values, itertools.repeat(missing)),
                       dtype=np.uint64 if unsigned else np.int64, count=len(values))


def _looked_up_compiled(values: list, table: dict, missing: int, unsigned: bool = False
                        ) -> np.ndarray:
    return BACKEND.kernel.lookup(values, table, missing, unsigned)


looked_up = BACKEND.dispatch(_looked_up_pure, _looked_up_compiled)


def cumulative(values: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Cumulative sums with a leading zero (rows summed for 2-D input). Counts may be summed in
    int32: whole numbers, so the same sums as in float64, in half the memory."""
    values = np.asarray(values, dtype=dtype)
    out = np.zeros((len(values) + 1,) + values.shape[1:], dtype=dtype)
    np.cumsum(values, axis=0, out=out[1:])
    return out


def subtree_sum(values: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Sums of ``values[start[i]:end[i]]`` for all i at once (values may be 2-D, rows summed)."""
    values = np.asarray(values)
    cumulative = np.zeros((len(values) + 1,) + values.shape[1:], dtype=np.float64)
    np.cumsum(values, axis=0, out=cumulative[1:])
    return cumulative[end] - cumulative[start]


def element_rows(rows, n: int) -> np.ndarray | None:
    """``rows`` as the int64 indices of elements of a page of ``n`` elements (None stays None);
    a ValueError for what is not: booleans, fractions, indices outside the page."""
    if rows is None:
        return None
    array = np.asarray(rows)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or array.dtype.kind not in "iu":  # integers (not booleans)
        raise ValueError(f"rows are a 1-D array of element indices, not {array.dtype} of shape "
                         f"{array.shape}")
    array = np.ascontiguousarray(array, dtype=np.int64) if array.dtype.kind == "i" else array
    if not _inside(array, n):
        raise ValueError(f"a row outside the page's {n} elements")
    return np.ascontiguousarray(array, dtype=np.int64)


def _inside_pure(rows: np.ndarray, n: int) -> bool:
    """Whether every one of the integer ``rows`` lies in [0, n)."""
    return bool(rows.min() >= 0 and rows.max() < n)


def _inside_compiled(rows: np.ndarray, n: int) -> bool:
    if rows.dtype != np.int64:  # unsigned: numpy's comparisons, which cannot wrap
        return _inside_pure(rows, n)
    return BACKEND.kernel.rows_inside(rows, n)


_inside = BACKEND.dispatch(_inside_pure, _inside_compiled)


def build_table(body: etree._Element) -> ElementTable:
    """Walk ``body`` once and fill the aggregate table (by the compiled kernel when it is in
    use, else by :func:`python_fields`)."""
    # iterwalk visits elements and entity references, not comments or processing instructions
    # (nor their tails): iter() is told the same. The walk and the renderer need the proxies.
    elements: list[etree._Element] = list(body.iter(etree.Element, etree.Entity))
    return ElementTable(elements=elements, **_fill_table(elements))


def _compiled_fields(elements: list[etree._Element]) -> dict[str, Any]:
    return BACKEND.kernel.fill_table(elements)


#: The table's fields of a body's elements, by the backend in use.
_fill_table = BACKEND.dispatch(python_fields, _compiled_fields)


def at_level(table: ElementTable, level: int) -> np.ndarray:
    """Indices of the subtrees rooted exactly ``level`` below the body (the paper's threshold
    level: the subtrees it classifies)."""
    return np.flatnonzero(table.depth == level)

