"""Comments only where people discuss: the evidence a reader-comment thread leaves in markup.

The network scores a subtree *comment* from what it looks like, and a run of short dated
paragraphs looks like a thread: documentation sections (19 sections of the PostgreSQL
``SELECT`` page), author bios, "related" teasers and a lone "Comments are closed." were filed
as comments. A thread is marked up as one, in every template and language: ``comments``,
``commentlist``, ``comment-body``, ``disqus_thread``, ``replies``, ``kommentare``,
``comentarios``, ``reacties``… on the thread's box, a box just around it or the comments
inside it. A subtree keeps its comment score only with such markup on itself, one of its
THREAD_MARKUP_ANCESTORS nearest ancestors or a descendant, and with THREAD_MIN_WORDS words at
least (:mod:`noisecbr.settings`); elsewhere the score is set aside (the other classes' scores
renormalised), as if the network had not seen a comment there.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable
from ..result import COMMENT, NOISE
from ..settings import MIN_COMMENT_SCORE, THREAD_MARKUP_ANCESTORS, THREAD_MIN_WORDS, active

__all__ = ["DISCUSSION_MARKUP", "THREAD_MIN_WORDS", "THREAD_MARKUP_ANCESTORS", "MIN_COMMENT_SCORE",
           "comment_evidence", "without_unfounded_comments"]

#: Class / id / role fragments of discussion markup (matched in the lower-cased value):
#: comment, reply, response, discussion, and their spellings in the web's main languages.
#: "response", not "respons": a layout's "responsive" (img-responsive, table-responsive) is
#: no discussion (nor "respond": a correspondent's byline is none either).
DISCUSSION_MARKUP = re.compile(
    r"comment|coment|komment|reply|replies|response|discus|disqus|reactie|reaction|antwort"
    r"|yorum|коммент|评论|評論|コメント|댓글")

#: Whether an attribute value is discussion markup, by value (class names repeat across a
#: site's pages); emptied past its size.
_MARKED: dict[str, bool] = {}
_CACHE_SIZE = 65536


def _marked_pure(values: list[str | None]) -> np.ndarray:
    """Whether each attribute value is discussion markup: cached values looked up, the new
    ones searched all at once (joined by a character no fragment holds: one regular-expression
    pass over a page's new class names instead of one per name)."""
    if len(_MARKED) > _CACHE_SIZE:
        _MARKED.clear()
    new = [value for value in values if value and value not in _MARKED]
    if new:
        lowered = [value.lower() for value in new]
        lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)) + 1
        starts = np.cumsum(lengths) - lengths
        hits = np.zeros(len(new), dtype=bool)
        found = [match.start() for match in DISCUSSION_MARKUP.finditer("\x00".join(lowered))]
        hits[np.searchsorted(starts, found, side="right") - 1] = True
        _MARKED.update(zip(new, hits.tolist()))
    return np.fromiter(map(_MARKED.get, values, itertools.repeat(False)), dtype=bool,
                       count=len(values))


def _marked_by_search(value: str) -> bool:
    return DISCUSSION_MARKUP.search(value.lower()) is not None


#: The pattern's ASCII words: the kernel searches an ASCII value for them itself (plain
#: lower-case words only: the kernel knows no other pattern).
_ASCII_WORDS = tuple(word.encode() for word in DISCUSSION_MARKUP.pattern.split("|")
                     if word.isascii())
if not all(re.fullmatch(rb"[a-z]+", word) for word in _ASCII_WORDS):
    raise ValueError("DISCUSSION_MARKUP's ASCII alternatives must be plain lower-case words")


def _marked_compiled(values: list[str | None]) -> np.ndarray:
    if len(_MARKED) > _CACHE_SIZE:
        _MARKED.clear()
    return BACKEND.kernel.discussion_marks(values, _MARKED, _marked_by_search, _ASCII_WORDS)


_marked = BACKEND.dispatch(_marked_pure, _marked_compiled)


def comment_evidence(table: ElementTable) -> np.ndarray:
    """Per element: may it be a comment thread (discussion markup on it, on one of its
    THREAD_MARKUP_ANCESTORS nearest ancestors or inside it, and THREAD_MIN_WORDS words)?"""
    values, positions = table.attribute_values()
    return _evidence(table, _marked(values), positions, table.subtree_words())


def _evidence_pure(table: ElementTable, marked: np.ndarray, positions: np.ndarray,
                   words: np.ndarray) -> np.ndarray:
    """:func:`comment_evidence` from the marked values (one flag per value), the elements'
    values (``positions``, attributes × elements) and their subtrees' words."""
    n = len(table)
    own = marked[positions].any(axis=0) if n else np.zeros(0, dtype=bool)
    inside = np.concatenate([[0], np.cumsum(own)])
    evidence = inside[table.end] - inside[np.arange(n)] > 0
    parent = table.parent.astype(np.int64)
    above = parent
    rules = active()
    for _ in range(rules.thread_markup_ancestors):
        has = above >= 0
        evidence[has] |= own[above[has]]
        above = np.where(has, parent[np.maximum(above, 0)], -1)
    return evidence & (words >= rules.thread_min_words)


def _evidence_compiled(table: ElementTable, marked: np.ndarray, positions: np.ndarray,
                       words: np.ndarray) -> np.ndarray:
    # One C pass: the numpy steps above cost 0.05 ms a dragnet page.
    rules = active()
    return BACKEND.kernel.thread_evidence(
        np.ascontiguousarray(marked, dtype=np.uint8), np.ascontiguousarray(positions, np.int64),
        np.ascontiguousarray(table.end, np.int32), np.ascontiguousarray(table.parent, np.int32),
        rules.thread_markup_ancestors, np.ascontiguousarray(words, np.float64),
        float(rules.thread_min_words))


_evidence = BACKEND.dispatch(_evidence_pure, _evidence_compiled)


def without_unfounded_comments(table: ElementTable, proba: np.ndarray,
                               rows: np.ndarray | None = None, *,
                               evidence: Callable[[], np.ndarray] | None = None) -> np.ndarray:
    """``proba`` with the comment score (of at least MIN_COMMENT_SCORE) of every subtree
    without :func:`comment_evidence` set aside (the row's other scores renormalised);
    ``proba`` itself when there is none. ``rows``: the elements ``proba``'s rows score (every
    element by default); ``evidence``: gives the table's :func:`comment_evidence` (a caller
    scoring a page's rows a few at a time finds it once), asked only when a row needs it."""
    if proba.shape[1] <= COMMENT or not len(proba):
        return proba
    scored = proba[:, COMMENT] >= active().min_comment_score
    if not scored.any():
        return proba
    founded = comment_evidence(table) if evidence is None else evidence()
    unfounded = scored & ~(founded if rows is None else founded[rows])
    if not unfounded.any():
        return proba
    out = proba.copy()
    out[unfounded, COMMENT] = 0.0
    rest = out[unfounded].sum(axis=1)
    # A score that was all comment, without a thread's markup, is furniture about comments.
    empty = np.flatnonzero(unfounded)[rest < 1e-6]
    out[empty, NOISE] = 1.0
    rest[rest < 1e-6] = 1.0
    out[unfounded] /= rest[:, None]
    return out
