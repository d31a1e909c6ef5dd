"""Candidate subtrees of a tidied body and the per-element aggregate table.

Every element of the body is a candidate subtree. One iterative walk (in the order of lxml's
``iterwalk`` start and end events; done by lxml's ``iter`` in C) lists the elements in document
order (pre-order) and the page's text *pieces*: an element's ``.text`` is emitted at its start, a
child's ``.tail`` after the child's end and is owned by the parent. In this order the subtree
of element ``i`` is the contiguous element range
``[i, end[i])`` and the contiguous piece range ``[piece_start[i], piece_end[i])``, so every
subtree aggregate is a difference of two cumulative sums: nothing walks a subtree twice.

The paper's *threshold level* (all subtrees at depth d below body) is :func:`at_level`.

Two implementations fill the table: a compiled kernel (:mod:`noisecbr._kernel`, Cython over
lxml's C API, one C pass over libxml2's nodes) and the pure Python code below, which is the
reference and the fallback (:mod:`noisecbr.kernel` chooses; :data:`KERNEL` says which is in
use). Both give the same table, field by field.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from operator import attrgetter
from types import ModuleType
from typing import Any

import numpy as np
from lxml import etree

from . import kernel

__all__ = ["WORD", "KEYWORD_ATTRIBUTES", "KERNEL", "COMPILED", "ElementTable", "build_table",
           "at_level", "cumulative", "subtree_sum"]

#: The tokeniser of the shingle metric and of every word count here.
WORD = re.compile(r"\w+")
#: The same tokeniser for pure-ASCII text, where Unicode ``\w`` is exactly ``[a-zA-Z0-9_]``: the
#: ASCII pattern finds the same tokens about a third faster.
_ASCII_WORD = re.compile(r"\w+", re.ASCII)
#: Sentence punctuation: running text has it, menus and link lists rarely do.
_PUNCT = re.compile(r"[.!?,;:]")
#: Readers of a node's fields, for C-level maps over a page's elements.
_TAG, _TEXT, _TAIL = attrgetter("tag"), attrgetter("text"), attrgetter("tail")
_PARENT = etree._Element.getparent
_GET = etree._Element.get
#: The attributes whose values the keyword features read (:mod:`noisecbr.features.keywords`),
#: in this order; bytes, as lxml reads an attribute named by bytes a little faster (no str
#: encoding).
KEYWORD_ATTRIBUTES = (b"class", b"id", b"role", b"aria-label")


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

    @property
    def piece_tokens(self) -> list[list[str]]:
        """The WORD tokens of each piece, found on first access: the cleaning path reads only
        their codes (:func:`noisecbr.features.tokens.token_codes`, which the compiled kernel takes
        from the texts without making a str per word)."""
        tokens = self.__dict__.get("_tokens")
        if tokens is None:
            tokens = self.__dict__["_tokens"] = [
                (_ASCII_WORD if text.isascii() else WORD).findall(text)
                for text in self.piece_text]
        return tokens

    def attribute_values(self) -> tuple[list[str | None], np.ndarray]:
        """The distinct values of the keyword attributes on the page (the first, None: absent)
        and, per attribute of KEYWORD_ATTRIBUTES, each element's value as an index into them
        (an int64 array, attributes × elements); found on first access. What is read off an
        attribute value (its lexical tokens, discussion markup) is then read once per value,
        not once per element."""
        found = self.__dict__.get("_attribute_values")
        if found is None and not len(self):
            found = ([None], np.zeros((len(self.keyword_values), 0), dtype=np.int64))
        if found is None:
            # One list, numbered in one pass: a value's number is where it is first met, so
            # the four attributes' lists numbered apart would give two values one number.
            index: dict[str | None, int] = {None: 0}
            every = list(itertools.chain.from_iterable(self.keyword_values))
            numbers = (COMPILED.ids(every, index) if COMPILED is not None else np.fromiter(
                map(index.setdefault, every, itertools.count(len(index) + 1)),
                dtype=np.int64, count=len(every))).reshape(len(self.keyword_values), -1)
            # The numbers made dense by a lookup table (no sort): None stays 0.
            values = list(index)
            dense = np.zeros(max(index.values()) + 1, dtype=np.int64)
            dense[np.fromiter(index.values(), dtype=np.int64, count=len(index))] = np.arange(
                len(index))
            found = self.__dict__["_attribute_values"] = (values, dense[numbers])
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

    def subtree(self, piece_values: np.ndarray) -> np.ndarray:
        """Per-element subtree sums of a per-piece quantity."""
        return subtree_sum(piece_values, self.piece_start, self.piece_end)

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


def build_table(body: etree._Element) -> ElementTable:
    """Walk ``body`` once and fill the aggregate table (by the compiled kernel when it is in
    use, else by :func:`python_fields`)."""
    # iterwalk visits elements and entity references, not comments or processing instructions
    # (nor their tails): iter() is told the same. The walk and the renderer need the proxies.
    elements: list[etree._Element] = list(body.iter(etree.Element, etree.Entity))
    fields = COMPILED.fill_table(elements) if COMPILED is not None else python_fields(elements)
    return ElementTable(elements=elements, **fields)


def python_fields(elements: list[etree._Element]) -> dict[str, Any]:
    """The table's fields (all but ``elements``) of a body's elements in document order: the
    pure Python reference of the compiled kernel's ``fill_table``.

    lxml walks in C (``iter`` lists the nodes ``iterwalk`` would visit, in the same
    pre-order); Python then makes a few flat passes over lists and numpy does the rest, instead
    of a Python step for every start and end event (about three times faster on large pages).
    """
    n = len(elements)
    # Per-element reads are C-level maps (no Python step per element), and each of the few
    # dozen distinct tags is lower-cased once.
    raw_tags = list(map(_TAG, elements))
    lowered = {tag: tag.lower() if isinstance(tag, str) else "#other" for tag in set(raw_tags)}
    tags = list(map(lowered.__getitem__, raw_tags))
    # lxml hands back the same proxy object for a node while one is alive (the list keeps them
    # alive), so identity-hashed lookups find each element's parent index.
    position = dict(zip(elements, range(n)))
    parent = list(map(position.get, map(_PARENT, elements), itertools.repeat(-1)))
    if n:
        parent[0] = -1
    # Pre-order: a parent comes before its children, so one forward pass gives depth and
    # link context, one backward pass the subtree sizes.
    depth = [0] * n
    in_link = [tag == "a" for tag in tags]
    for i in range(1, n):
        p = parent[i]
        depth[i] = depth[p] + 1
        if in_link[p]:
            in_link[i] = True
    size = [1] * n
    for i in range(n - 1, 0, -1):
        size[parent[i]] += size[i]
    # Lists of ints become arrays by fromiter: no per-item type discovery as in asarray.
    parent_array = np.fromiter(parent, dtype=np.int32, count=n)
    depth_array = np.fromiter(depth, dtype=np.int32, count=n)
    end = np.arange(n, dtype=np.int32) + np.fromiter(size, dtype=np.int32, count=n)

    piece_text, piece_owner, piece_start, piece_end = _text_pieces(
        elements, parent_array, depth_array, end)
    return {
        "tags": tags, "parent": parent_array, "end": end, "depth": depth_array,
        "n_children": np.bincount(parent_array[1:], minlength=n).astype(np.int32),
        "piece_start": piece_start, "piece_end": piece_end,
        **_piece_counts(piece_text),
        "piece_owner": piece_owner.astype(np.int32),
        "piece_in_link": np.fromiter(in_link, dtype=bool, count=n)[piece_owner],
        "keyword_values": [list(map(_GET, elements, itertools.repeat(name)))
                           for name in KEYWORD_ATTRIBUTES],
    }


def _piece_counts(piece_text: list[str]) -> dict[str, Any]:
    """The pieces' texts, tokens, and counts of words, word characters, punctuation and
    commas."""
    words = [(_ASCII_WORD if text.isascii() else WORD).findall(text) for text in piece_text]
    count = len(piece_text)
    return {
        "piece_text": piece_text,
        "piece_words": np.fromiter(map(len, words), dtype=np.int32, count=count),
        # word characters: the tokens joined (C calls only, no Python loop per piece)
        "piece_chars": np.fromiter(map(len, map("".join, words)), dtype=np.int32, count=count),
        "piece_punct": np.fromiter(map(len, map(_PUNCT.findall, piece_text)), dtype=np.int32,
                                   count=count),
        "piece_commas": np.fromiter(map(str.count, piece_text, itertools.repeat(",")),
                                    dtype=np.int32, count=count),
    }


def _text_pieces(elements: list[etree._Element], parent_array: np.ndarray,
                 depth_array: np.ndarray, end: np.ndarray
                 ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The page's text pieces in document order: their texts, owners, and each element's range
    of pieces (``piece_start``, ``piece_end``)."""
    n = len(elements)
    # Text pieces: an element's .text (owned by the element) and a child's .tail (owned by its
    # parent; the body's own tail is outside the page). Their order is the order of iterwalk's
    # events: an element's start event is number 2i − depth[i] of the walk, its end event
    # number 2·end[i] − depth[i] − 1 (before either, i − depth[i] resp. end[i] − depth[i]
    # elements have ended), so sorting the pieces by event number gives document order.
    texts = list(map(_TEXT, elements))
    tails = list(map(_TAIL, elements))
    if n:
        tails[0] = None
    text_at = [i for i, text in enumerate(texts) if text and not text.isspace()]
    tail_at = [i for i, tail in enumerate(tails) if tail and not tail.isspace()]
    text_index = np.fromiter(text_at, dtype=np.int64, count=len(text_at))
    tail_index = np.fromiter(tail_at, dtype=np.int64, count=len(tail_at))
    start_event = 2 * np.arange(n, dtype=np.int64) - depth_array
    end_event = 2 * end.astype(np.int64) - depth_array - 1
    events = np.concatenate([start_event[text_index], end_event[tail_index]])
    order = np.argsort(events, kind="stable")
    events = events[order]
    candidates = [texts[i] for i in text_at] + [tails[i] for i in tail_at]
    piece_text = [candidates[k] for k in order.tolist()]
    piece_owner = np.concatenate([text_index, parent_array[tail_index]])[order]
    # A piece's range starts at the element's start event (its own text comes after) and ends
    # at its end event (its tail comes after, owned by the parent).
    piece_start = np.searchsorted(events, start_event, side="left").astype(np.int32)
    piece_end = np.searchsorted(events, end_event, side="left").astype(np.int32)

    return piece_text, piece_owner, piece_start, piece_end


def at_level(table: ElementTable, level: int) -> np.ndarray:
    """Indices of the subtrees rooted exactly ``level`` below the body (the paper's threshold
    level: the subtrees it classifies)."""
    return np.flatnonzero(table.depth == level)


#: The compiled kernel's module when it is in use, None on the pure Python path.
COMPILED: ModuleType | None = kernel.load(python_fields)
#: Which implementation fills the tables: "compiled" or "python".
KERNEL = "python" if COMPILED is None else "compiled"
