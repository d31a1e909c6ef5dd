"""Comments only where people discuss: the evidence a reader-comment thread leaves in markup.

The network scores a subtree *comment* from what it looks like, and a run of short dated
paragraphs looks like a thread: documentation sections (19 sections of the PostgreSQL
``SELECT`` page), author bios, "related" teasers and a lone "Comments are closed." were filed
as comments. A thread is marked up as one, in every template and language: ``comments``,
``commentlist``, ``comment-body``, ``disqus_thread``, ``replies``, ``kommentare``,
``comentarios``, ``reacties``… on the thread's box, a box just around it or the comments
inside it. A subtree keeps its comment score only with such markup on itself, one of its
ANCESTORS nearest ancestors or a descendant, and with MIN_WORDS words at least; elsewhere the
score is set aside (the other classes' scores renormalised), as if the network had not seen a
comment there.
"""

from __future__ import annotations

import re

import numpy as np

from .result import COMMENT
from .subtrees import ElementTable

__all__ = ["DISCUSSION_MARKUP", "MIN_WORDS", "ANCESTORS", "comment_evidence",
           "without_unfounded_comments"]

#: Class / id / role fragments of discussion markup (matched in the lower-cased value):
#: comment, reply, response, discussion, and their spellings in the web's main languages.
DISCUSSION_MARKUP = re.compile(
    r"comment|coment|komment|reply|replies|respons|discus|disqus|reactie|reaction|antwort"
    r"|yorum|коммент|评论|評論|コメント|댓글")
#: A thread holds this many words at least: "No comments yet" or "Comments are closed." is
#: furniture about comments, not comments.
MIN_WORDS = 10
#: The markup of a thread's box sits on the box or at most a few wrappers above it.
ANCESTORS = 3

#: Whether an attribute value is discussion markup, by value (class names repeat across a
#: site's pages); emptied past its size.
_MARKED: dict[str, bool] = {}
_CACHE_SIZE = 65536


def _marked(value: str | None) -> bool:
    if not value:
        return False
    found = _MARKED.get(value)
    if found is None:
        if len(_MARKED) > _CACHE_SIZE:
            _MARKED.clear()
        found = _MARKED[value] = DISCUSSION_MARKUP.search(value.lower()) is not None
    return found


def comment_evidence(table: ElementTable) -> np.ndarray:
    """Per element: may it be a comment thread (discussion markup on it, on one of its
    ANCESTORS nearest ancestors or inside it, and MIN_WORDS words)?"""
    n = len(table)
    values, positions = table.attribute_values()
    marked = np.fromiter(map(_marked, values), dtype=bool, count=len(values))
    own = marked[positions].any(axis=0) if n else np.zeros(0, dtype=bool)
    inside = np.concatenate([[0], np.cumsum(own)])
    evidence = inside[table.end] - inside[np.arange(n)] > 0
    parent = table.parent.astype(np.int64)
    above = parent
    for _ in range(ANCESTORS):
        has = above >= 0
        evidence[has] |= own[above[has]]
        above = np.where(has, parent[np.maximum(above, 0)], -1)
    return evidence & (table.subtree(table.piece_words) >= MIN_WORDS)


def without_unfounded_comments(table: ElementTable, proba: np.ndarray) -> np.ndarray:
    """``proba`` with the comment score of every subtree without :func:`comment_evidence`
    set aside (the row's other scores renormalised); ``proba`` itself when there is none."""
    if proba.shape[1] <= COMMENT or not len(proba):
        return proba
    unfounded = ~comment_evidence(table) & (proba[:, COMMENT] > 0)
    if not unfounded.any():
        return proba
    out = proba.copy()
    out[unfounded, COMMENT] = 0.0
    rest = out[unfounded].sum(axis=1, keepdims=True)
    out[unfounded] /= np.maximum(rest, 1e-12)
    return out
