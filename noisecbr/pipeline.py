"""The cleaning pipeline, stage by stage, over values:

    page = prepare(html)                              # tidy → body → element table
    proba = score(page, model)                        # features → network → class scores
    decisions = decide(page, proba, thresholds)       # the walk, the fallback, the rules
    result = render(page, decisions)                  # text, Markdown, HTML, comments, metadata

:class:`~noisecbr.cleaner.Cleaner` composes them with one model and its settings (its ``clean``
fuses the middle two: :func:`score_and_decide` scores only the subtrees the walk reaches, with
the same decisions); a caller that needs a stage alone (the thresholds' search of
:mod:`training.modes` walks one page's scores under many thresholds, the review page explains
the decisions it renders) calls that stage.

After the walk (:mod:`noisecbr.walk`): when it kept almost nothing of a page that has text,
:mod:`noisecbr.fallback` keeps the subtree with the most data mass instead, and the result says
so (``CleanResult.fallback``); otherwise a furniture heading goes with the box the walk removed
(:mod:`noisecbr.orphans`) and a dateline leaves the text (:mod:`noisecbr.datelines`). In the
result, the page's headline (declared in its metadata, :mod:`noisecbr.metadata`) is taken out
of the text into ``CleanResult.title`` and a byline into ``author`` (:mod:`noisecbr.byline`).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Sequence
from urllib.parse import urljoin

import numpy as np
from lxml import etree

from .byline import classed_author, find_byline
from .confidence import ConfidenceModel, confidence_evidence
from .convention import declares_article, page_mode, prose_share
from .datelines import datelines
from .discussion import comment_evidence, without_unfounded_comments
from .evidence import SiteEvidence
from .fallback import fall_back, fallback_subtree, kept_pieces, kept_words
from .features.lexical import lexical_inputs
from .features.vectors import row_vectors
from .kind import KINDS, declared_url, nested_types, one_hot, page_evidence
from .markdown import escape_inline, render_markdown
from .memory import SiteMemory
from .metadata import (
    PageMetadata,
    declared_types,
    found_date,
    headline_element,
    iso_date,
    json_ld,
    page_elements,
    page_metadata,
    shown_title,
)
from .model import Model
from .orphans import orphaned_headings
from .render import render_html, render_text, render_texts
from .result import COMMENT, DATA, LABELS, NOISE, CleanResult, Decision
from .settings import FALLBACK_MIN_WORDS, MAX_HEADLINE_WORDS, TEMPLATE_MAX_DATA
from .subtrees import ElementTable, build_table
from .tidy import Parser, drop_elements, printable, tidy
from .walk import Thresholds, walk, walk_lazily

__all__ = ["Decisions", "NoiseEvidence", "Page", "RowScores", "decide", "prepare", "render",
           "score", "score_and_decide"]

#: Extra evidence from outside the network (e.g. a site style tree's noisy nodes): given a page's
#: table, the indices of the subtrees it marks as noise.
NoiseEvidence = Callable[[ElementTable], "set[int] | np.ndarray"]


# -- prepare ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class Page:
    """A page ready to be decided: its tidied ``<body>``, its element table and URL; its
    metadata and headline are read once, when first asked for. ``declared``: whether the
    page's head declares it an article, for a page whose head is not in the tree (a stored
    page keeps its body only); None: read from the page."""

    body: etree._Element
    table: ElementTable
    url: str | None = None
    declared: bool | None = None
    #: The page's kind when the caller knows it (:data:`noisecbr.kind.KINDS`): it then
    #: replaces the kind model's probabilities.
    page_type: str | None = None

    def __post_init__(self) -> None:
        if self.page_type is not None:
            one_hot(self.page_type)  # ValueError for a kind that is not one

    @functools.cached_property
    def evidence(self) -> np.ndarray:
        """The page's evidence of its kind (:func:`noisecbr.kind.page_evidence`): what it
        declares, its URL (or the one its head declares), its structure and words."""
        og_type, _ = declared_types(self._elements, self._json_ld)
        root = self.body.getroottree().getroot()
        metadata = self.metadata
        return page_evidence(self.table, self.url or declared_url(root), og_type,
                             nested_types(self._json_ld),
                             metadata.title, dated=metadata.date is not None,
                             authored=metadata.author is not None)

    def kinds(self, model: Model) -> np.ndarray | None:
        """The page's kind probabilities (:data:`noisecbr.kind.KINDS` order): its
        ``page_type``'s when given, else the ``model``'s kind model's (None without one)."""
        if self.page_type is not None:
            return one_hot(self.page_type)
        return self.read_kinds(model)

    def read_kinds(self, model: Model) -> np.ndarray | None:
        """The kind probabilities the ``model``'s kind model reads off the page, whatever kind
        the caller gave (None without a kind model); found once per model."""
        if model.kind_model is None:
            return None
        found = self._kinds.get(id(model))
        if found is None or found[0] is not model:
            found = self._kinds[id(model)] = (model,
                                              model.kind_model.predict_proba(self.evidence))
        return found[1]

    @functools.cached_property
    def _kinds(self) -> dict[int, tuple[Model, np.ndarray]]:
        return {}

    @functools.cached_property
    def metadata(self) -> PageMetadata:
        """The page's metadata, as the result holds it (no control characters)."""
        return self._read_metadata[0]

    @functools.cached_property
    def shown_metadata(self) -> PageMetadata:
        """The metadata a result holds: :attr:`metadata` (what the page declares, which its
        kind's evidence and its headline are read from) with the title as the page shows it
        (:func:`noisecbr.metadata.shown_title`)."""
        declared, headline = self._read_metadata
        title = shown_title(self._elements, headline, declared.title, declared.site_name)
        return dataclasses.replace(declared, title=printable(title) if title else None,
                                   date=iso_date(declared.date))

    @functools.cached_property
    def headline(self) -> int | None:
        """The table index of the page's headline element (taken out of the text), if any."""
        return _index_of(self.table, self._read_metadata[1])

    @functools.cached_property
    def mode(self) -> str:
        """The walk's mode of the page's convention, for ``favor="auto"``
        (:func:`noisecbr.convention.page_mode`: ``precision`` for a declared article,
        ``recall`` for a page with little prose, else ``balanced``)."""
        return page_mode(self.declares_article, prose_share(self.table))

    @functools.cached_property
    def declares_article(self) -> bool:
        """Whether the page declares itself an article (``og:type``, a JSON-LD article type:
        :func:`noisecbr.convention.declares_article`), or ``declared`` when given."""
        if self.declared is not None:
            return self.declared
        return declares_article(*declared_types(self._elements, self._json_ld))

    @functools.cached_property
    def _elements(self) -> dict[str, list[etree._Element]]:
        # The body's elements of the tags read come from the table: only the head is walked.
        return page_elements(self.body, self.table.elements, self.table.tags)

    @functools.cached_property
    def _json_ld(self) -> list[dict]:
        return json_ld(self._elements["script"])

    @functools.cached_property
    def _read_metadata(self) -> tuple[PageMetadata, etree._Element | None]:
        metadata = _xml_safe_metadata(page_metadata(self.body, self._elements, self._json_ld))
        return metadata, headline_element(self.body, metadata.title, self._elements)


def prepare(html: str | bytes, *, url: str | None = None, parser: Parser = "lxml",
            max_bytes: int | None = None, max_elements: int | None = None,
            page_type: str | None = None) -> Page:
    """The page of ``html``: tidied (:func:`noisecbr.tidy.tidy`, which raises
    :class:`~noisecbr.tidy.InputError` for input that is not HTML) and tabulated;
    ``page_type``: its kind, when the caller knows it (ValueError for one that is not a kind
    of :data:`noisecbr.kind.KINDS`)."""
    if page_type is not None:
        one_hot(page_type)  # refused before the page is parsed
    limits = {} if max_bytes is None else {"max_bytes": max_bytes}
    body = tidy(html, parser=parser, max_elements=max_elements, **limits)
    return Page(body, build_table(body), url, page_type=page_type)


# -- score --------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def score(page: Page, model: Model, *, smooth: float | None = None) -> np.ndarray:
    """Class probabilities of every subtree of the page (rows in document order; columns in
    LABELS order, all four: a model of the paper's three classes scores comment 0; so does a
    subtree without a thread's markup, see :mod:`noisecbr.discussion`). ``smooth``: the
    isotonic smoothing's penalty (:func:`noisecbr.smoothing.isotonic_smooth`), none by
    default."""
    if len(page.table) == 0:
        return np.zeros((0, len(LABELS)), dtype=np.float32)
    # One BLAS thread: a page's matrices are small, and OpenBLAS's thread hand-offs cost
    # more than they save (measured 16 → 2.4 ms per page on the 2-core machine under load).
    with _blas_controller().limit(limits=1, user_api="blas"):
        return RowScores(page, model, smooth=smooth)(None)


class RowScores:
    """The class scores of a page's elements, all or a few at a time, as :func:`score` gives
    them (the lazy walk asks for the elements it reaches): what every row's scores read (the
    page's quantities, its lexical inputs and their running sums, its comment evidence) is
    found once. ``smooth``: as in :func:`score`, for the whole page's scores only (smoothing
    reads every subtree's). The caller limits BLAS's threads."""

    def __init__(self, page: Page, model: Model, *, smooth: float | None = None) -> None:
        self.table, self.model, self.smooth = page.table, model, smooth
        self.kinds = page.kinds(model) if model.kind_inputs else None
        self.vectors = row_vectors(page.table)
        self.pooled = (None if model.lexicon is None
                       else model.lexicon.pooler(lexical_inputs(page.table)))
        self._evidence: np.ndarray | None = None

    def __call__(self, rows: np.ndarray | None) -> np.ndarray:
        """The scores of the elements ``rows`` (distinct indices; None: every element)."""
        if self.smooth and rows is not None:
            raise ValueError("smoothed scores are the whole page's (rows=None)")
        pooled = None if self.pooled is None else self.pooled(rows)
        out = self.model.predict_proba(self.vectors(rows), pooled, self.kinds)
        if self.smooth:
            out = _smoothed(self.table, out, self.smooth)
        if out.shape[1] == len(LABELS) and out.dtype == np.float32:
            proba = out  # every label already, as the model returned it
        else:
            proba = np.zeros((len(out), len(LABELS)), dtype=np.float32)
            proba[:, :out.shape[1]] = out
        # A comment needs a thread's markup (documentation sections, bios and teasers were
        # filed as comments): elsewhere its score is set aside.
        return without_unfounded_comments(self.table, proba, rows, evidence=self.evidence)

    def evidence(self) -> np.ndarray:
        """The page's :func:`~noisecbr.discussion.comment_evidence`, found when first asked."""
        if self._evidence is None:
            self._evidence = comment_evidence(self.table)
        return self._evidence


def _smoothed(table: ElementTable, proba: np.ndarray, c: float) -> np.ndarray:
    from .smoothing import isotonic_smooth, subtree_penalties

    parents = table.parent.tolist()
    noise = isotonic_smooth(parents, proba[:, NOISE].tolist(), subtree_penalties(parents, c))
    out = proba.copy()
    out[:, NOISE] = noise
    # Keep the row a distribution: the other classes share what noise gave up or took.
    rest = np.maximum(1.0 - out[:, NOISE], 0.0)
    others = proba[:, 1:].sum(axis=1)
    ratio = np.divide(rest, others, out=np.zeros_like(rest), where=others > 0)
    out[:, 1:] = proba[:, 1:] * ratio[:, None]
    return out


# -- decide -------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class Decisions(Sequence):
    """What was decided for a page: per element (document order) its class probabilities and
    decision (−1 inside a decided subtree, else a LABELS index; the scores of the subtrees a
    lazy walk never reached are 0: :func:`score_and_decide`); whether the walk fell back;
    with a site memory, what it recalled (−1 or a label per element) and the ids of the stored
    cases behind each recall; with site evidence, which subtrees recur on the site's other
    pages; the mode of the thresholds the walk used (``precision``, ``balanced``, ``recall``,
    None for a set made by hand).

    As a sequence, the decided subtrees in document order, each ``(element index, label
    name)``: ``len(decisions)`` is the number of ``result.decisions`` (which adds each one's
    path, probabilities and sources)."""

    proba: np.ndarray
    decision: np.ndarray
    fell_back: bool = False
    recalled: np.ndarray | None = None
    stored: list | None = None
    templates: np.ndarray | None = None
    mode: str | None = None
    #: the page's kind probabilities (:data:`noisecbr.kind.KINDS` order), None when unknown
    kinds: np.ndarray | None = None

    @functools.cached_property
    def _decided(self) -> list[int]:
        return np.flatnonzero(self.decision >= 0).tolist()

    def __len__(self) -> int:
        return len(self._decided)

    def __getitem__(self, k: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        i = self._decided[k]
        return i, LABELS[self.decision[i]]


def decide(page: Page, proba: np.ndarray, thresholds: Thresholds, *,
           memory: SiteMemory | None = None, site: SiteEvidence | None = None,
           extra_noise: NoiseEvidence | None = None,
           kinds: np.ndarray | None = None) -> Decisions:
    """The page's decisions from its scores: the walk (with the labelled pages of its site,
    ``memory``, and what recurs on its other pages, ``site``), then the fallback when the walk
    kept almost nothing, else the rules after the walk. Deciding the same scores again under
    other thresholds costs no network pass. ``kinds``: the page's kind probabilities, which
    the decisions report."""
    table = page.table
    forced = set() if extra_noise is None else {int(i) for i in extra_noise(table)}
    recalled, stored = (memory.lookup(table) if memory is not None and len(memory)
                        else (None, None))
    templates = None
    if site is not None and len(site):
        # What recurs on the site's other pages, unless the network is confident it is
        # data (TEMPLATE_MAX_DATA): the decisions then say which subtrees the site decided.
        templates = site.templates(table) & (proba[:, DATA] < TEMPLATE_MAX_DATA)
    decision = walk(table, proba, thresholds, forced=forced, recalled=recalled,
                    templates=templates)
    root = _fallback_root(page, proba, decision)
    if root is not None:
        walked = walk(table, proba, thresholds, forced=forced, recalled=recalled, start=root,
                      templates=templates)
        decision = fall_back(table, walked, root, without=page.headline)
    else:
        _after_walk(table, decision, recalled)
    return Decisions(proba, decision, root is not None, recalled, stored, templates,
                     thresholds.mode, kinds)


def _after_walk(table: ElementTable, decision: np.ndarray,
                recalled: np.ndarray | None) -> None:
    """The rules after a walk that kept enough, on ``decision`` in place: a furniture heading
    goes with the box the walk removed, and a dateline is metadata; but not where the site's
    stored cases decided (``recalled``)."""
    decision[orphaned_headings(table, decision, recalled)] = NOISE
    decision[datelines(table, decision, recalled)] = NOISE


def score_and_decide(page: Page, model: Model, thresholds: Thresholds, *,
                     scores: RowScores | None = None) -> Decisions:
    """``decide(page, score(page, model), thresholds)`` (no memory, site, other evidence or
    smoothing), scoring only the subtrees the walk reaches (:func:`noisecbr.walk.walk_lazily`: a
    tenth to a third of a page's): the cleaner's path. Where the walk keeps too little and the
    fallback weighs every subtree, the whole page is scored and decided. The result's scores of the
    subtrees the walk never reached are 0. A score is the whole page's up to the last bits of the
    matrix product (BLAS blocks the rows of a product by their number), so a score within rounding
    of a threshold may go the other way than in :func:`decide`. ``scores``: the page's
    :class:`RowScores` when the caller made them (benchmarks/stages.py times that apart)."""
    kinds = page.kinds(model)
    if not len(page.table):
        return decide(page, score(page, model), thresholds, kinds=kinds)
    scores = scores if scores is not None else RowScores(page, model)
    # One BLAS thread: see score.
    with _blas_controller().limit(limits=1, user_api="blas"):
        decision, proba = walk_lazily(page.table, scores, thresholds)
        if _kept_too_little(page, decision):
            return decide(page, scores(None), thresholds, kinds=kinds)
    _after_walk(page.table, decision, None)
    return Decisions(proba, decision, False, mode=thresholds.mode, kinds=kinds)


def _fallback_root(page: Page, proba: np.ndarray, decision: np.ndarray) -> int | None:
    """The subtree the fallback keeps when the walk kept almost nothing of a page that has
    text, else None."""
    if not _kept_too_little(page, decision):
        return None
    return fallback_subtree(page.table, proba, page.headline)


def _kept_too_little(page: Page, decision: np.ndarray) -> bool:
    """Whether the walk's ``decision`` kept too few words of the page's text (the fallback's
    cue)."""
    if kept_words(page.table, decision) >= FALLBACK_MIN_WORDS + 2 * MAX_HEADLINE_WORDS:
        return False
    # A result this small may be little more than the headline, which the text leaves out
    # (it is the result's title; up to 40 distinct words, so twice that many tokens is
    # ample): count only the words the text will show.
    return kept_words(page.table, decision, page.headline) < FALLBACK_MIN_WORDS


# -- render -------------------------------------------------------------------------------------

def render(page: Page, decisions: Decisions, *, comments: bool = False,
           confidence: ConfidenceModel | None = None, title: bool = False,
           read_kinds: np.ndarray | None = None, safe_html: bool = True) -> CleanResult:
    """The :class:`CleanResult` of a decided page: the headline and the byline out of the
    text into the metadata, the comments apart (after the text with ``comments=True``); the
    HTML, Markdown, comments and decisions rendered when first asked for, and so is the
    result's expected F1 by the ``confidence`` model (None without one), from the kind
    probabilities its kind model read (``read_kinds``; the decisions' kinds when not given).
    ``title=True`` puts the headline first in the text and the Markdown (as ``# …``);
    ``safe_html=False`` leaves the HTML unsanitised (:func:`noisecbr.render.sanitised_body`)."""
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
                      safe_html)
    expected = None
    if confidence is not None:
        read = decisions.kinds if read_kinds is None else read_kinds
        expected = functools.partial(_confidence, page, decisions, confidence, read)
    # No declared author, no byline: the element the markup calls the author's, looked for
    # when the result's author is first read (a caller of the text alone never pays it).
    author = metadata.author or (functools.partial(_classed_author, table) if len(table) else None)
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


def _classed_author(table: ElementTable) -> str | None:
    return printable(classed_author(table) or "") or None


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
    """The expected F1 of the page's result (:mod:`noisecbr.confidence`), ``kinds`` the kind
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
                                     safe=self.safe_html))

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


def _index_of(table: ElementTable, element: etree._Element | None) -> int | None:
    """The table index of ``element`` (None for None)."""
    if element is None:
        return None
    try:
        return table.elements.index(element)  # lxml elements compare by identity: a C scan
    except ValueError:
        return None


def _xml_safe_metadata(metadata: PageMetadata) -> PageMetadata:
    """``metadata`` without control characters (:func:`noisecbr.tidy.printable`, which also
    drops what lxml refuses): the page's own text, or JSON-LD's ``\\u0001`` escapes, may hold
    them, and the title is written into the cleaned HTML and every field into the JSON output."""
    return dataclasses.replace(metadata, **{
        field.name: printable(value) or None
        for field in dataclasses.fields(metadata)
        if isinstance(value := getattr(metadata, field.name), str)})
