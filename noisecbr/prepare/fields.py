"""The element table's fields in pure Python: the reference of the compiled kernel's
``fill_table`` and the fallback where the kernel is not in use (:mod:`noisecbr.native.backend`
checks the kernel against it, :mod:`noisecbr.prepare.subtrees` builds the table with the one in
use).

One pass of lxml's ``iter`` lists the elements in document order; a few flat passes over lists
and numpy do the rest.
"""

from __future__ import annotations

import itertools
import re
from operator import attrgetter
from typing import Any

import numpy as np
from lxml import etree

__all__ = ["WORD", "KEYWORD_ATTRIBUTES", "python_fields"]

#: The tokeniser of the shingle metric and of every word count here.
WORD = re.compile(r"\w+")
#: The same tokeniser for pure-ASCII text, where Unicode ``\w`` is exactly ``[a-zA-Z0-9_]``: the
#: ASCII pattern finds the same tokens about a third faster.
ASCII_WORD = re.compile(r"\w+", re.ASCII)
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
    words = [(ASCII_WORD if text.isascii() else WORD).findall(text) for text in piece_text]
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
