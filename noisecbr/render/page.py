"""A decided page rendered: the text at once, the headline and byline out of it into the
metadata; the HTML, Markdown, comments, decisions, date, author and confidence when first
asked for.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from urllib.parse import urljoin

import numpy as np
from lxml import etree

from ..decide.decisions import Decisions
from ..decide.fallback import kept_pieces
from ..prepare.metadata import (
    PageMetadata,
    found_date,
)
from ..prepare.page import Page
from ..prepare.strings import drop_elements, printable
from ..prepare.subtrees import ElementTable
from ..result import COMMENT, LABELS, NOISE, CleanResult, Decision
from ..score.kind import KINDS, declared_url
from ..settings import active
from .byline import classed_author, find_byline
from .confidence import ConfidenceModel, confidence_evidence
from .markdown import escape_inline, render_markdown
from .text import render_html, render_text, render_texts


def render(page: Page, decisions: Decisions, *, comments: bool = False,
           confidence: ConfidenceModel | None = None, title: bool = False,
           read_kinds: np.ndarray | None = None, safe_html: bool = True,
           keep_media: bool = False) -> CleanResult:
    """The :class:`CleanResult` of a decided page: the headline and the byline out of the
    text into the metadata, the comments apart (after the text with ``comments=True``); the
    HTML, Markdown, comments and decisions rendered when first asked for, and so is the
    result's expected F1 by the ``confidence`` model (None without one), from the kind
    probabilities its kind model read (``read_kinds``; the decisions' kinds when not given).
    ``title=True`` puts the headline first in the text and the Markdown (as ``# …``);
    ``safe_html=False`` leaves the HTML unsanitised, ``keep_media=True`` keeps its images and
    media (:func:`noisecbr.render.text.sanitised_body`)."""
    table, body, decision = page.table, page.body, decisions.decision
    metadata = page.shown_metadata
    decided = np.flatnonzero(decision >= 0)
    elements = table.elements
    verdict = decision[decided]
    removed_at = set(decided[(verdict == NOISE) | (verdict == COMMENT)].tolist())
    comment_roots = [elements[i] for i in decided[verdict == COMMENT].tolist()]
    if page.headline is not None:
        removed_at.add(page.headline)
    if len(table):
        # The byline, like the headline, is metadata: out of the text, its name the author's
        # when the page declares none.
        byline = find_byline(table, kept_pieces(table, decision, page.headline),
                             metadata.author)
        if byline is not None:
            index, named = byline
            removed_at.add(index)
            if metadata.author is None:
                metadata = dataclasses.replace(metadata, author=printable(named or "") or None)
    # Control characters the parser left in the text (from raw bytes or references such as
    # &#1;) are not text, and would reach a terminal as they are.
    removed = {elements[i] for i in removed_at}
    text = printable(render_text(body, removed, has_pre="pre" in table.tags))
    headline = _headline_text(page, page.metadata) if title else None
    if headline:
        text = f"{headline}\n\n{text}" if text else headline
    thread = _Thread(comment_roots)
    if comments and thread():
        text = f"{text}\n\n{thread()}" if text else thread()
    later = _OnDemand(page, decisions, sorted(removed_at), metadata, thread, comments, headline,
                      safe_html, keep_media)
    expected = None
    if confidence is not None:
        read = decisions.kinds if read_kinds is None else read_kinds
        expected = functools.partial(_confidence, page, decisions, confidence, read)
    # No declared author, no byline: the element the markup calls the author's, looked for
    # when the result's author is first read (a caller of the text alone never pays it).
    # (The settings in force now, not when it is read: the cleaner's, whoever reads it.)
    author = metadata.author or (functools.partial(_classed_author, table,
                                                   active().byline_max_words)
                                 if len(table) else None)
    date = metadata.date
    if not date and (decisions.kinds is None
                     or KINDS[int(np.argmax(decisions.kinds))] in DATED_KINDS):
        # htmldate looks for the date of a page that declares none when the result's date is
        # first asked for: 5 ms a wcxb-dev page (23 ms more where its extensive search runs), which
        # a caller of the text alone never pays.
        date = functools.partial(found_date, body.getroottree().getroot(), page.url)
    return CleanResult(html=later.html, text=text, decisions=later.decisions, url=page.url,
                       comments=thread, metadata=metadata, fallback=decisions.fell_back,
                       markdown=later.markdown, mode=decisions.mode, kinds=decisions.kinds,
                       confidence=expected, date=date, author=author)


def _classed_author(table: ElementTable, max_words: int) -> str | None:
    return printable(classed_author(table, max_words) or "") or None


#: The kinds of page that have a publication date: in wcxb-dev's truth 510 of 621 articles
#: and 87 of 93 forum threads, 15 of its 443 other pages. Elsewhere htmldate's finds are
#: mostly a copyright year or a product's release (and cost as much).
DATED_KINDS = frozenset({"article", "forum"})


def _headline_text(page: Page, metadata: PageMetadata) -> str | None:
    """The page's headline as it shows it (its headline element's text), else as its metadata
    declares it; None when it has neither."""
    if page.headline is not None:
        shown = " ".join("".join(page.table.elements[page.headline].itertext()).split())
        if shown:
            return printable(shown)
    return metadata.title


def _confidence(page: Page, decisions: Decisions, model: ConfidenceModel,
                kinds: np.ndarray | None) -> float:
    """The expected F1 of the page's result (:mod:`noisecbr.render.confidence`), ``kinds`` the kind
    probabilities its kind model read."""
    table = page.table
    kept = kept_pieces(table, decisions.decision, page.headline)
    evidence = confidence_evidence(table, decisions.proba, decisions.decision, kept, kinds,
                                   decisions.fell_back)
    return round(float(model.predict(evidence)), 4)


class _Thread:
    """The comments' text, rendered once when first asked for: most callers never read it."""

    def __init__(self, roots: list[etree._Element]) -> None:
        self.roots = roots
        self._text: str | None = None

    def __call__(self) -> str:
        if self._text is None:
            self._text = printable(render_texts(self.roots))
        return self._text


@dataclasses.dataclass
class _OnDemand:
    """What a result renders when first asked for: the decisions, the HTML, the Markdown."""

    page: Page
    decided: Decisions
    removed_at: list[int]  # the removed subtrees' table indices
    metadata: PageMetadata
    thread: _Thread
    comments: bool
    headline: str | None = None  # written first, as a heading
    safe_html: bool = True  # the HTML sanitised
    keep_media: bool = False  # its images and media kept (loaded when it is opened)

    def decisions(self) -> list[Decision]:
        # Paths from the table: still those of the tidied page after the noise is detached.
        table, decision, proba = self.page.table, self.decided.decision, self.decided.proba
        decided = np.flatnonzero(decision >= 0)
        chars = table.subtree(table.piece_chars)[decided]
        all_paths = table.paths()
        return [
            # A tag libxml2 read from garbage may hold a control character ("hx\x7fvour").
            Decision(path=printable(all_paths[i]), tag=printable(table.tags[i]),
                     label=LABELS[decision[i]],
                     probabilities=tuple(round(float(p), 4) for p in proba[i]),
                     text_length=int(length), **_sources(self.decided, i))
            for i, length in zip(decided.tolist(), chars)
        ]

    def html(self) -> str:
        # From a copy of the page: the removed subtrees are detached there, and the page stays
        # whole for any other rendering (its scores decided again, the review page's drawing).
        clone = copy.deepcopy(self.page.body)
        copies = list(clone.iter(etree.Element, etree.Entity))  # the table's order
        drop_elements([copies[i] for i in self.removed_at])
        return printable(render_html(clone, self.metadata.document_title, self.metadata.lang,
                                     safe=self.safe_html, keep_media=self.keep_media))

    def markdown(self, links: bool = False, images: bool = False) -> str:
        # The same decided tree as the text.
        options = {"links": links, "images": images, "base_url": _base_url(self.page)}
        elements = self.page.table.elements
        written = render_markdown(self.page.body, {elements[i] for i in self.removed_at},
                                  **options)
        if self.headline:
            heading = "# " + escape_inline(" ".join(self.headline.split()))
            written = f"{heading}\n\n{written}" if written else heading
        if self.comments:
            thread = "\n\n".join(filter(None, (render_markdown(root, **options)
                                               for root in self.thread.roots)))
            if thread:
                written = f"{written}\n\n---\n\n{thread}" if written else thread
        return printable(written)


def _base_url(page: Page) -> str | None:
    """The address a page's relative links are read against: its ``<base href>`` (against its
    URL), else its URL, else the address its head declares (canonical link, ``og:url``)."""
    root = page.body.getroottree().getroot()
    base = root.find("head/base")
    href = (base.get("href") or "").strip() if base is not None else ""
    address = page.url or declared_url(root)
    if href:
        return urljoin(address or "", href)
    return address


def _sources(decisions: Decisions, i: int) -> dict:
    """The source fields of element ``i``'s :class:`Decision` (none: the model's): the site
    memory's recall and its stored cases, or the site evidence's template."""
    if decisions.recalled is not None and decisions.recalled[i] >= 0:
        return {"source": "memory", "cases": decisions.stored[i]}
    if decisions.templates is not None and decisions.templates[i]:
        return {"source": "site"}
    return {}
