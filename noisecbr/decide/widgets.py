"""Page furniture is furniture on every kind of page, whatever the walk's mode.

A feedback widget ("Was this page helpful? Yes No"), an edit link ("Edit this page on
GitHub"), a last-updated line ("Last updated on March 14, 2025 by jdoe") and previous / next
links ("← Previous: Installation", "Next: Configuration →") sit at the end of documentation,
help articles, blog posts and product pages alike, and no truth of any kind holds them. The
network scores such a box near the walk's thresholds (a docs page's feedback box: 0.30
removal), so whether it went depended on the mode the page's kind is walked in: the balanced
mode removed it, the recall mode of documentation pages kept it (issue 54). This rule after
the walk removes them by their shape, in every mode and on every kind.

A kept element of at most :data:`~noisecbr.settings.WIDGET_WORDS` words is such a widget when

1. its whole text is furniture phrases and nothing else
   (:func:`~noisecbr.decide.phrases.is_furniture_text`): a feedback question with its answers,
   an edit link, a last-updated line of dates and a name; and it does not stand inside running
   text (its parent has no words of its own): a paragraph that says "Was this helpful to you?
   We think so", or a sentence with a link called "edit this page" in it, is more than the
   phrase, and stays;
2. or its text is previous / next links (:func:`is_prev_next`): it starts with a label
   ("Previous:", "← Next page", "Older posts"), its words outside links are labels only, and
   it holds a link (a heading "Next steps" or a title "Next-day refunds" is no such label: a
   label stands alone or before a separator);
3. or its class, id, role or aria-label names the widget (:data:`WIDGET_NAMES`:
   ``was-this-helpful``, ``edit-this-page``, ``last-updated``, ``pagination-nav``,
   ``prev-next``…, whatever the language of its text) and it holds no sentence outside links
   (:data:`~noisecbr.settings.SENTENCE_WORDS` words or more).

A feedback question's answer buttons that are its siblings ("Yes", "No") go with it, and so
does a heading just before it that only says "Feedback". Only the texts that hold a furniture
word (:data:`~noisecbr.decide.phrases.TRIGGER`) are read, so a page pays for a few elements,
not every one (0.4 ms a page).

The decisions stay a walk's: a widget inside a subtree the walk kept whole becomes noise under
mixtures, its kept neighbours data (:func:`carve`). Pure Python over the element table, which
the compiled kernel and the pure path fill alike, so both paths decide the same.
"""

from __future__ import annotations

import re

import numpy as np

from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, MIXTURE, NOISE
from ..settings import SENTENCE_WORDS, active
from .phrases import (
    FEEDBACK,
    FEEDBACK_HEADING,
    TRIGGER,
    is_answers,
    is_furniture_text,
    is_labels,
    starts_with_label,
)

__all__ = ["WIDGET_NAMES", "carve", "furniture_widgets", "is_prev_next"]

#: Class, id, role and aria-label names of the widgets (compared lower-cased, letters only:
#: ``theme-edit-this-page`` and ``editThisPage`` are ``editthispage``). Not "feedback" alone:
#: a shop's reviews are "feedback" too.
WIDGET_NAMES = ("wasthishelpful", "washelpful", "helpfulwidget", "pagehelpful", "pagefeedback",
                "contentfeedback", "docfeedback", "docsfeedback", "articlefeedback",
                "feedbackwidget", "feedbackprompt", "pagerating", "ratethispage",
                "editthispage", "editpage", "editlink", "editongithub", "suggestedit",
                "improvethispage", "lastupdated", "lastmodified", "lastedited", "lastreviewed",
                "paginationnav", "prevnext", "previousnext", "postnavigation", "docsnav")
_NAME_LETTERS = re.compile(r"[^a-z ]+")


def furniture_widgets(table: ElementTable, decision: np.ndarray,
                      recalled: np.ndarray | None = None) -> list[int]:
    """The outermost kept elements that are furniture widgets (see the module docstring), in
    document order; never one a site memory decided (``recalled`` ≥ 0)."""
    n = len(table)
    if n < 2:
        return []
    kept = ~_removed_elements(table, decision)
    if recalled is not None:
        kept &= recalled < 0
    words = table.subtree_words()
    small = kept & (words > 0) & (words <= active().widget_words)
    small[0] = False  # the body is the page
    found: set[int] = set()
    # 1 and 2: the texts that hold a furniture word, and their small ancestors, outermost
    # first (an ancestor's whole text is furniture only if each of its parts is).
    owners = _triggered_owners(table, small)
    chains: set[int] = set()
    parent = table.parent
    for i in owners:
        while i > 0 and small[i] and i not in chains:
            chains.add(i)
            i = int(parent[i])
    own_words = table.own(table.piece_words)
    for i in sorted(chains):
        if any(a in found for a in _ancestors(table, i)):
            continue
        if own_words[int(parent[i])] > 0 and not _all_labels(table, int(parent[i])):
            continue  # inside running text: a link or a phrase of a sentence
        text = _text(table, i)
        if is_furniture_text(text) or is_prev_next(table, i, text):
            found.add(i)
    # 3: the named widgets.
    for i in np.flatnonzero(small & _named(table)).tolist():
        if not any(a in found for a in (i, *_ancestors(table, i))) and not _holds_sentence(
                table, i):
            found.add(i)
    roots = _outermost(table, sorted(found))
    return sorted(set(roots) | _neighbours(table, roots, small))


def is_prev_next(table: ElementTable, i: int, text: str | None = None) -> bool:
    """Whether element ``i`` is previous / next links: its text starts with a label, it holds a
    link, and its words outside links are labels only."""
    if not starts_with_label(_text(table, i) if text is None else text):
        return False
    start, stop = int(table.piece_start[i]), int(table.piece_end[i])
    linked = table.piece_in_link[start:stop]
    if not linked.any():
        return False
    return all(is_labels(" ".join(table.piece_text[k].lower().split()))
               for k in range(start, stop) if not linked[k - start])


def carve(table: ElementTable, decision: np.ndarray, roots: list[int]) -> None:
    """Remove the subtrees of ``roots`` (disjoint) as noise in ``decision``, in place, keeping
    it a walk's decisions: a root the walk decided is noise (its inside undecided); one inside
    a subtree the walk kept whole makes that subtree and the elements on the way down to it
    mixtures, and every other child along the way data."""
    parent, end = table.parent, table.end
    for r in roots:
        above = r
        while above >= 0 and decision[above] < 0:
            above = int(parent[above])
        if above < 0 or decision[above] in (NOISE, COMMENT):
            continue
        if above != r:  # kept whole: split down to the root
            path = _ancestors(table, r)
            path = path[:path.index(above) + 1]
            for node in reversed(path):
                decision[node] = MIXTURE
                child = node + 1
                while child < end[node]:
                    if child not in path and child != r:
                        decision[child] = DATA
                    child = int(end[child])
        decision[r + 1:end[r]] = -1
        decision[r] = NOISE


# -- the table -------------------------------------------------------------------------------


def _removed_elements(table: ElementTable, decision: np.ndarray) -> np.ndarray:
    """Per element: is it inside a subtree the decisions remove?"""
    roots = np.flatnonzero((decision == NOISE) | (decision == COMMENT))
    n = len(table)
    marks = (np.bincount(roots, minlength=n + 1)
             - np.bincount(table.end[roots], minlength=n + 1))
    return np.cumsum(marks[:-1]) > 0


def _triggered_owners(table: ElementTable, small: np.ndarray) -> list[int]:
    """The owners of the text pieces that hold a furniture word (:data:`TRIGGER`), where the
    owner is ``small`` (a paragraph's long text is never read), ascending."""
    pieces = np.flatnonzero(small[table.piece_owner]).tolist()
    if not pieces:
        return []
    # Each text lower-cased before joining: lower-casing can lengthen a str ("İ" → "i̇"), and
    # the starts must be the lower-cased texts'.
    lowered = [table.piece_text[k].lower() for k in pieces]
    joined = "\x00".join(lowered)
    starts = np.cumsum([0] + [len(text) + 1 for text in lowered[:-1]])
    found = [match.start() for match in TRIGGER.finditer(joined)]
    if not found:
        return []
    hit = np.unique(np.searchsorted(starts, found, side="right") - 1)
    return sorted(set(table.piece_owner[np.asarray(pieces)[hit]].tolist()))


def _text(table: ElementTable, i: int) -> str:
    """The text of element ``i``, lower case, whitespace collapsed."""
    pieces = table.piece_text[int(table.piece_start[i]):int(table.piece_end[i])]
    return " ".join(" ".join(pieces).lower().split())


def _all_labels(table: ElementTable, i: int) -> bool:
    """Whether the own text of element ``i`` is previous / next labels only ("Previous |
    Next")."""
    own = [table.piece_text[k] for k in range(int(table.piece_start[i]), int(table.piece_end[i]))
           if table.piece_owner[k] == i]
    return is_labels(" ".join(" ".join(own).lower().split()))


def _ancestors(table: ElementTable, i: int) -> list[int]:
    """The strict ancestors of element ``i``, nearest first."""
    out = []
    a = int(table.parent[i])
    while a >= 0:
        out.append(a)
        a = int(table.parent[a])
    return out


def _outermost(table: ElementTable, ascending: list[int]) -> list[int]:
    """The elements of ``ascending`` not inside another of them."""
    out: list[int] = []
    for i in ascending:
        if not out or i >= table.end[out[-1]]:
            out.append(i)
    return out


def _named(table: ElementTable) -> np.ndarray:
    """Per element: does its class, id, role or aria-label name a widget?"""
    values, positions = table.attribute_values()
    if len(_NAMING) > _NAMING_SIZE:
        _NAMING.clear()
        _NAMING[None] = False  # the absent value: no name
    naming = np.fromiter((_names_widget(value) for value in values), dtype=bool,
                         count=len(values))
    return naming[positions].any(axis=0)


#: Whether an attribute value names a widget, by value: class strings repeat across a site's
#: pages. Emptied when it grows past _NAMING_SIZE.
_NAMING: dict[str | None, bool] = {None: False}
_NAMING_SIZE = 65536
#: Any of :data:`WIDGET_NAMES` in a value's tokens, lower case and letters only.
_WIDGET_NAME = re.compile("|".join(WIDGET_NAMES))


def _names_widget(value: str | None) -> bool:
    """Whether an attribute value names a widget: one of its space-separated tokens, lower
    case and letters only, holds a name of :data:`WIDGET_NAMES`."""
    found = _NAMING.get(value)
    if found is None and value is not None:
        found = _NAMING[value] = _WIDGET_NAME.search(
            _NAME_LETTERS.sub("", " ".join(value.lower().split()))) is not None
    return bool(found)


def _holds_sentence(table: ElementTable, i: int) -> bool:
    """Whether element ``i`` holds a piece of SENTENCE_WORDS words or more outside links."""
    start, stop = int(table.piece_start[i]), int(table.piece_end[i])
    return bool(((table.piece_words[start:stop] >= SENTENCE_WORDS)
                 & ~table.piece_in_link[start:stop]).any())


def _neighbours(table: ElementTable, roots: list[int], small: np.ndarray) -> set[int]:
    """The answer buttons after a feedback question and a "Feedback" heading before it, where
    they are its siblings and the walk kept them."""
    out: set[int] = set()
    parent, end = table.parent, table.end
    for r in roots:
        if not FEEDBACK.search(_text(table, r)):
            continue
        following = int(end[r])
        while (following < len(table) and parent[following] == parent[r] and small[following]
               and is_answers(_text(table, following))):
            out.add(following)
            following = int(end[following])
        before = _previous_sibling(table, r)
        if (before is not None and small[before]
                and FEEDBACK_HEADING.fullmatch(_text(table, before).strip(" :"))):
            out.add(before)
    return out


def _previous_sibling(table: ElementTable, i: int) -> int | None:
    """The element sibling just before element ``i``, None for a first child."""
    p = int(table.parent[i])
    child, before = p + 1, None
    while child < i:
        before, child = child, int(table.end[child])
    return before
