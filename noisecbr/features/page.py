"""The ``page`` group: features of a subtree relative to its page.

The ``page`` and ``vocabulary`` groups (:mod:`noisecbr.features.tokens`) were added at schema 3
because the network confused long article blocks with long furniture blocks (related stories,
comments, product grids): both have many words, few links and ordinary tags. What tells them
apart is mostly *where* and *how often*: where the subtree's text lies in the page's text (share
before and after it, and relative to the first ``<h1>``), how often its tag + class signature
repeats on the page and among its siblings (templated teasers, menu items, comments), its share
of the page's sentence-like text pieces and of its links, its link density against the page's,
how much of its text its biggest child holds, and the size and link density of its previous and
next siblings (jusText's lesson: a block is judged by its neighbours).

On 5 site-grouped folds of modernweb-dev (unseen sites), adding both groups raised the walk's
F1 from 0.801 to 0.808 and the per-class correct rate of data from 66 to 72 %. Everything is
one pass over the table's arrays, a few C-level maps over tokens and attributes, and numpy.
"""

from __future__ import annotations

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable, cumulative, numbered
from ..settings import SENTENCE_WORDS

__all__ = ["SENTENCE_WORDS", "repeats", "first_h1", "page_quantities"]


def _ids(values: list, known: dict | None = None) -> np.ndarray:
    """A number per value, the same for equal values (and for the ``known`` keys' values)."""
    return numbered(values, dict(known or {}))


def _siblings(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Previous and next element sibling of every element (−1 where there is none)."""
    n = len(parent)
    order = np.lexsort((np.arange(n), parent))  # siblings together, in document order
    same = parent[order[1:]] == parent[order[:-1]]
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    nxt[order[:-1][same]] = order[1:][same]
    return prev, nxt


def _signature_counts_pure(signature: np.ndarray, parent: np.ndarray, prev: np.ndarray,
                           nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per element, how many elements of the page share its signature and how many of its
    parent's children do (float64; the body is alone among the elements without a parent).
    ``prev`` and ``nxt``: the sibling links (:func:`_siblings`), which the compiled kernel
    follows."""
    _, kind, per_kind = np.unique(signature, return_inverse=True, return_counts=True)
    pairs = (parent.astype(np.int64) + 1) * len(per_kind) + kind.ravel()
    _, pair, per_pair = np.unique(pairs, return_inverse=True, return_counts=True)
    return per_kind[kind.ravel()].astype(np.int64), per_pair[pair.ravel()].astype(np.int64)


def _signature_counts_compiled(signature: np.ndarray, parent: np.ndarray, prev: np.ndarray,
                               nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return BACKEND.kernel.signature_counts(np.ascontiguousarray(signature, np.int64), prev, nxt)


_signature_counts = BACKEND.dispatch(_signature_counts_pure, _signature_counts_compiled)


def _siblings_compiled(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return BACKEND.kernel.siblings(parent)


_sibling_links = BACKEND.dispatch(_siblings, _siblings_compiled)


def repeats(table: ElementTable, classes: list[str | None] | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Repeated structure: per element, how many elements of the page share its tag and class
    and how many of its siblings do (int64), and its previous and next element sibling (−1
    where there is none). ``classes``: the elements' class attributes, if already read."""
    # Tags and classes become ints (an absent class the same as an empty one), then the
    # signatures and the (parent, signature) pairs are counted: no tuple per element.
    if classes is None:
        classes = table.keyword_values[0]
    class_id = _ids(classes, {None: 0, "": 0})
    signature = _ids(table.tags) * (int(class_id.max(initial=0)) + 1) + class_id
    prev, nxt = _sibling_links(table.parent)
    signature_count, sibling_count = _signature_counts(signature, table.parent, prev, nxt)
    return signature_count, sibling_count, prev, nxt


def first_h1(table: ElementTable) -> int:
    """The index of the page's first ``<h1>`` element, −1 if it has none."""
    return table.tags.index("h1") if "h1" in table.tags else -1


def page_quantities(table: ElementTable, words: np.ndarray,
                    classes: list[str | None] | None = None
                    ) -> tuple[dict[str, np.ndarray | float], dict[str, np.ndarray]]:
    """The ``page`` group's quantities, and the elements its columns read other columns at
    (``previous``, ``next``, ``first_h1``: −1 where there is none); ``words`` are the subtree
    word counts, ``classes`` the elements' class attributes if already read (None where
    absent). The pure path's reference: the compiled kernel computes the same quantities."""
    n = len(table)
    index = np.arange(n)
    parent = table.parent.astype(np.int64)
    word_before = cumulative(table.piece_words)
    total = max(word_before[-1], 1.0)

    # Repeated structure: the same tag and class on the page, and among the siblings.
    signature_count, sibling_count, prev, nxt = repeats(table, classes)
    sentence = ((table.piece_words >= SENTENCE_WORDS) & (table.piece_punct > 0)
                & ~table.piece_in_link)
    sentences = table.subtree(sentence)
    link_pieces = table.subtree(table.piece_in_link)

    first = first_h1(table)
    after_h1 = index >= first if first >= 0 else np.zeros(n, dtype=bool)
    contains_h1 = ((index <= first) & (table.end > first) if first >= 0
                   else np.zeros(n, dtype=bool))
    biggest_child = np.zeros(n)
    children = index[1:]
    np.maximum.at(biggest_child, parent[children], words[children])
    quantities = {
        "words_before": word_before[table.piece_start], "page_words": total,
        "words_after": total - word_before[table.piece_end],
        "signatures": signature_count.astype(np.float64),
        "signature_siblings": sibling_count.astype(np.float64),
        "siblings": np.where(parent >= 0, table.n_children[np.maximum(parent, 0)], 1),
        "sentences": sentences, "page_sentences": sentences[0],
        "link_pieces": link_pieces, "page_link_pieces": link_pieces[0],
        "after_h1": after_h1, "contains_h1": contains_h1,
        "biggest_child_words": biggest_child, "has_previous": prev >= 0, "has_next": nxt >= 0,
    }
    return quantities, {"previous": prev, "next": nxt, "first_h1": np.full(n, first)}
