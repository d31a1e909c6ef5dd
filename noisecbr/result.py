"""The result of cleaning a page: kept HTML, main-content text and the decisions that led there."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["LABELS", "PAPER_LABELS", "NOISE", "DATA", "MIXTURE", "COMMENT", "KINDS", "Decision",
           "CleanResult", "named_probabilities"]

#: Class order of every model output and every one-hot target: [1 0 0] noise, [0 1 0] data,
#: [0 0 1] mixture, as in the paper, then ``comment``: the reader-comment thread under a page's
#: main content, which is not main content but is kept apart (``CleanResult.comments``) rather
#: than thrown away. A model outputs the first 3 (the paper's classes) or all 4.
LABELS: tuple[str, str, str, str] = ("noise", "data", "mixture", "comment")
#: The paper's three classes: the ``paper`` preset's outputs (its comment cases count as noise).
PAPER_LABELS: tuple[str, str, str] = LABELS[:3]
#: Each class's index in LABELS: its column in a model's output and its value in a label array.
NOISE, DATA, MIXTURE, COMMENT = range(len(LABELS))
#: The kinds of page, in the order of the kind model's outputs (WCXB's page types).
KINDS: tuple[str, ...] = ("article", "documentation", "service", "forum", "product",
                          "collection", "listing")


def named_probabilities(probabilities: Sequence[float]) -> dict[str, float]:
    """Class probabilities by class name, for output that must say which number is which.

    A model of the paper's three classes gives three numbers, a 4-class model four.

    >>> named_probabilities((0.9, 0.1, 0.0))
    {'noise': 0.9, 'data': 0.1, 'mixture': 0.0}
    """
    return dict(zip(LABELS, probabilities))


@dataclass(frozen=True)
class Decision:
    """What the cleaner decided for one subtree."""

    path: str
    tag: str
    #: noise (removed) | data (kept whole) | mixture (descended into) | comment (removed from
    #: the main text into ``CleanResult.comments``)
    label: str
    probabilities: tuple[float, ...]  # in LABELS order (a 3-class model's comment: 0.0)
    #: the subtree's word characters (its words' letters, digits and signs, without the spaces
    #: between them), what every cleaner of this package counts
    text_length: int
    #: "model" (the network's scores decided), "memory" (stored cases of the page's site with
    #: the same markup agreed on the label; see :mod:`noisecbr.site.memory`) or "site" (its text
    #: recurs on the site's other pages: a template; see :mod:`noisecbr.site.evidence`)
    source: str = "model"
    #: for a decision by memory: ids of (up to 5) stored cases of the site with the same markup
    #: (``casebase show ID``), when the memory was read from a case base
    cases: tuple[int, ...] = ()


class CleanResult:
    """A cleaned page: ``.html`` (valid HTML), ``.text`` (main content) and ``.decisions``.

    The HTML, the decisions and the comments are built on first access: most callers want only
    the text, and serialising the page or a thousand decisions' paths costs a tenth of the
    cleaning (rendering the comments, 3 % of a dragnet page's).
    """

    def __init__(
        self,
        html: str | Callable[[], str],
        text: str,
        decisions: list[Decision] | Callable[[], list[Decision]] | None = None,
        url: str | None = None,
        *,
        comments: str | Callable[[], str] = "",
        metadata: Any = None,
        fallback: bool = False,
        markdown: str | Callable[..., str] = "",
        mode: str | None = None,
        kinds: Sequence[float] | None = None,
        confidence: float | Callable[[], float] | None = None,
        extractor: str = "noisecbr",
        date: str | Callable[[], str | None] | None = None,
        author: str | Callable[[], str | None] | None = None,
    ) -> None:
        self._confidence = confidence
        #: what wrote ``.text``: ``"noisecbr"``, or ``"fallback"`` where a low confidence
        #: handed the page to the cleaner's ``fallback``
        self.extractor = extractor
        self._html = html
        self._markdown = markdown
        self._default_markdown: str | None = None
        #: the main content, without the headline (``title``) and, unless the cleaner was
        #: asked to keep them, without the reader comments
        self.text = text
        self.url = url
        self._decisions = decisions if decisions is not None else []
        self._comments = comments
        #: True when the walk kept almost nothing and the subtree with the most data mass was
        #: kept instead (:mod:`noisecbr.decide.fallback`)
        self.fallback = fallback
        #: the walk's mode on this page: ``precision``, ``balanced`` or ``recall`` (under
        #: ``favor="auto"`` the page's convention's, :mod:`noisecbr.decide.convention`), None for
        #: thresholds made by hand
        self.mode = mode
        #: each kind of page's probability (:data:`KINDS`: article, documentation, service,
        #: forum, product, collection, listing), {} when the model
        #: knows no kinds; a kind the caller gave (``page_type=``) has probability 1
        self.page_types: dict[str, float] = (
            {} if kinds is None else {kind: round(float(p), 4) for kind, p in zip(KINDS, kinds)})
        #: the page's most probable kind (of the unrounded probabilities, as the walk's mode
        #: and the headline's choice read them), None when the model knows no kinds
        self.page_type: str | None = (None if kinds is None
                                      else KINDS[max(range(len(KINDS)), key=kinds.__getitem__)])
        #: the headline, author, publication date and language the page declares
        #: (:class:`noisecbr.prepare.metadata.PageMetadata`)
        self.title: str | None = getattr(metadata, "title", None)
        self._author = author if author is not None else getattr(metadata, "author", None)
        self._date = date if date is not None else getattr(metadata, "date", None)
        self.lang: str | None = getattr(metadata, "lang", None)
        self.site_name: str | None = getattr(metadata, "site_name", None)
        self.description: str | None = getattr(metadata, "description", None)

    @property
    def author(self) -> str | None:
        """The author: as the page declares it, else as its byline names them, else the text
        of an element its markup calls the author's, looked for when first asked
        (:func:`noisecbr.render.byline.classed_author`)."""
        if callable(self._author):
            self._author = self._author()
        return self._author

    @property
    def date(self) -> str | None:
        """The publication date: as the page declares it (``<meta>``, JSON-LD, ``<time>``; a
        declared date that is not ISO 8601 as its day, ``YYYY-MM-DD``), else the day htmldate
        finds in the page, looked for when first asked
        (:func:`noisecbr.prepare.metadata.found_date`)."""
        if callable(self._date):
            self._date = self._date()
        return self._date

    @property
    def confidence(self) -> float | None:
        """The result's expected word F1 in [0, 1], from the page's own evidence (how sure
        the kind and the decisions were, how much was kept: :mod:`noisecbr.render.confidence`);
        None when the model has no confidence model."""
        if callable(self._confidence):
            self._confidence = self._confidence()
        return self._confidence

    @property
    def html(self) -> str:
        """The tidied page without its noise subtrees (rendered on first access)."""
        if callable(self._html):
            self._html = self._html()
        return self._html

    @property
    def markdown(self) -> str:
        """The main content as Markdown: headings, lists, tables, fenced code, quotes and
        emphasis, without links and images (:meth:`to_markdown` adds them); rendered on first
        access."""
        if self._default_markdown is None:
            self._default_markdown = self.to_markdown()
        return self._default_markdown

    def to_markdown(self, *, links: bool = False, images: bool = False) -> str:
        """The main content as Markdown, with ``[text](url)`` links and ``![alt](src)`` images
        when asked (their URLs made absolute against the page's URL); the kept comments follow
        a rule when the cleaner keeps them (:mod:`noisecbr.render.markdown`)."""
        if not callable(self._markdown):
            return self._markdown
        return self._markdown(links=links, images=images)

    @property
    def comments(self) -> str:
        """The reader comments under the main content ("" when none were found; rendered on
        first access)."""
        if callable(self._comments):
            self._comments = self._comments()
        return self._comments

    @property
    def decisions(self) -> list[Decision]:
        """The decision taken for each subtree the walk reached, in document order."""
        if callable(self._decisions):
            self._decisions = self._decisions()
        return self._decisions

    def __repr__(self) -> str:
        return f"CleanResult(url={self.url!r}, text={self.text[:60]!r}…)"

    def replaced(self, text: str, extractor: str) -> CleanResult:
        """The same result with another extractor's ``text`` (its Markdown too: plain text)."""
        out = copy.copy(self)
        out.text, out._markdown, out._default_markdown = text, text, None
        out.extractor = extractor
        return out

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data: text, metadata, HTML and decisions, probabilities by class
        name.
        """
        return {
            "url": self.url,
            "title": self.title,
            "author": self.author,
            "date": self.date,
            "lang": self.lang,
            "site_name": self.site_name,
            "description": self.description,
            "text": self.text,
            "markdown": self.markdown,
            "comments": self.comments,
            "fallback": self.fallback,
            "mode": self.mode,
            "page_type": self.page_type,
            "page_types": self.page_types,
            "confidence": self.confidence,
            "extractor": self.extractor,
            "html": self.html,
            # Probabilities by class name: a bare list would not say which class each is for.
            "decisions": [{**asdict(decision),
                           "probabilities": named_probabilities(decision.probabilities)}
                          for decision in self.decisions],
        }

    def to_json(self, **kwargs: Any) -> str:
        """``to_dict()`` as JSON (UTF-8 text kept as is); ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)
