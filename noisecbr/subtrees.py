"""Candidate subtrees of a tidied body and the per-element aggregate table.

Every element of the body is a candidate subtree. One iterative walk (lxml's ``iterwalk``, start
and end events) lists the elements in document order (pre-order) and the page's text *pieces*:
an element's ``.text`` is emitted at its start, a child's ``.tail`` after the child's end and is
owned by the parent. In this order the subtree of element ``i`` is the contiguous element range
``[i, end[i])`` and the contiguous piece range ``[piece_start[i], piece_end[i])``, so every
subtree aggregate is a difference of two cumulative sums: nothing walks a subtree twice.

The paper's *threshold level* (all subtrees at depth d below body) is :func:`at_level`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from lxml import etree

__all__ = ["WORD", "ElementTable", "build_table", "at_level", "subtree_sum"]

#: The tokeniser of the shingle metric and of every word count here.
WORD = re.compile(r"\w+")
#: Sentence punctuation: running text has it, menus and link lists rarely do.
_PUNCT = re.compile(r"[.!?,;:]")


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
    piece_tokens: list[list[str]]  # WORD tokens of each piece
    piece_owner: np.ndarray  # int32 element index owning the piece
    piece_words: np.ndarray  # int32
    piece_chars: np.ndarray  # int32, word characters
    piece_punct: np.ndarray  # int32
    piece_in_link: np.ndarray  # bool: inside an <a>

    def __len__(self) -> int:
        return len(self.elements)

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
        out = np.zeros(len(self.elements), dtype=np.float64)
        np.add.at(out, self.piece_owner, piece_values)
        return out


def subtree_sum(values: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Sums of ``values[start[i]:end[i]]`` for all i at once (values may be 2-D, rows summed)."""
    values = np.asarray(values)
    cumulative = np.zeros((len(values) + 1,) + values.shape[1:], dtype=np.float64)
    np.cumsum(values, axis=0, out=cumulative[1:])
    return cumulative[end] - cumulative[start]


def build_table(body: etree._Element) -> ElementTable:
    """Walk ``body`` once and fill the aggregate table."""
    elements: list[etree._Element] = []
    tags: list[str] = []
    parent: list[int] = []
    depth: list[int] = []
    piece_start: list[int] = []
    in_link: list[bool] = []
    end = []
    piece_end = []
    n_children = []
    piece_text: list[str] = []
    piece_owner: list[int] = []
    piece_link: list[bool] = []
    stack: list[int] = []

    for event, element in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            index = len(elements)
            owner = stack[-1] if stack else -1
            elements.append(element)
            tag = element.tag
            tag = tag.lower() if isinstance(tag, str) else "#other"
            tags.append(tag)
            parent.append(owner)
            depth.append(len(stack))
            link = tag == "a" or (owner >= 0 and in_link[owner])
            in_link.append(link)
            end.append(0)
            piece_end.append(0)
            n_children.append(0)
            if owner >= 0:
                n_children[owner] += 1
            piece_start.append(len(piece_text))
            stack.append(index)
            text = element.text
            if text and not text.isspace():
                piece_text.append(text)
                piece_owner.append(index)
                piece_link.append(link)
        else:
            index = stack.pop()
            end[index] = len(elements)
            piece_end[index] = len(piece_text)
            tail = element.tail
            if stack and tail and not tail.isspace():
                owner = stack[-1]
                piece_text.append(tail)
                piece_owner.append(owner)
                piece_link.append(in_link[owner])

    words = [WORD.findall(text) for text in piece_text]
    return ElementTable(
        elements=elements,
        tags=tags,
        parent=np.asarray(parent, dtype=np.int32),
        end=np.asarray(end, dtype=np.int32),
        depth=np.asarray(depth, dtype=np.int32),
        n_children=np.asarray(n_children, dtype=np.int32),
        piece_start=np.asarray(piece_start, dtype=np.int32),
        piece_end=np.asarray(piece_end, dtype=np.int32),
        piece_text=piece_text,
        piece_tokens=words,
        piece_owner=np.asarray(piece_owner, dtype=np.int32),
        piece_words=np.fromiter((len(w) for w in words), dtype=np.int32, count=len(words)),
        piece_chars=np.fromiter((sum(map(len, w)) for w in words), dtype=np.int32,
                                count=len(words)),
        piece_punct=np.fromiter((len(_PUNCT.findall(t)) for t in piece_text), dtype=np.int32,
                                count=len(piece_text)),
        piece_in_link=np.asarray(piece_link, dtype=bool),
    )


def at_level(table: ElementTable, level: int) -> np.ndarray:
    """Indices of the subtrees rooted exactly ``level`` below the body (the paper's threshold
    level: the subtrees it classifies)."""
    return np.flatnonzero(table.depth == level)
