"""The walk: class scores of every subtree → noise / data / mixture / comment decisions → a
cleaned page.

Top-down over the tidied body, in document order:

1. a subtree whose removal score (noise + comment) reaches ``noise_threshold`` is removed whole:
   **comment** when its comment score is the larger part (a reader-comment thread, kept apart in
   ``CleanResult.comments``), else **noise**;
2. else one whose data score reaches ``keep_threshold`` is **data**: kept whole, not descended;
3. else it is **mixture**: its own text is kept and each child is decided in turn;
4. an element without element children is removed when its removal score reaches
   ``leaf_threshold``, kept otherwise.

Keeping every subtree the network calls *data* whole lets the noise nested inside it through,
so the walk keeps a subtree whole only on a confident data score and otherwise descends. The
thresholds come in three sets, ``favor="balanced" | "precision" | "recall"``, stored with the
model and chosen on site-grouped validation folds (:mod:`training.modes`).

After the walk: the page's headline (declared in its metadata, :mod:`noisecbr.metadata`) is
taken out of the body text into ``CleanResult.title``; and when the walk kept almost nothing of
a page that has text, :mod:`noisecbr.fallback` keeps the subtree with the most data mass
instead, and the result says so (``CleanResult.fallback``).

Optionally the noise scores are smoothed over the tree first (regularised isotonic regression,
:func:`noisecbr.smoothing.isotonic_smooth`, penalty γ_i = c·A/A_i), so that a parent is never
scored noisier than its least noisy child and isolated flips are evened out.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path

import numpy as np
from lxml import etree

from .byline import find_byline
from .datelines import datelines
from .discussion import without_unfounded_comments
from .evidence import TEMPLATE_MAX_DATA, SiteEvidence
from .fallback import FALLBACK_MIN_WORDS, fall_back, fallback_subtree, kept_pieces, kept_words
from .features import vectorize
from .features.lexical import lexical_inputs
from .markdown import render_markdown
from .memory import SiteMemory
from .metadata import (
    MAX_HEADLINE_WORDS,
    PageMetadata,
    headline_element,
    page_elements,
    page_metadata,
)
from .model import Model, load_model
from .orphans import orphaned_headings
from .render import render_html, render_text, render_texts
from .result import COMMENT, DATA, LABELS, MIXTURE, NOISE, CleanResult, Decision
from .settings import DEFAULT_MODES, EVIDENCE_MAX_PAGES
from .subtrees import ElementTable, build_table
from .tidy import InputError, Parser, drop_elements, printable, tidy

__all__ = ["DEFAULT_MODEL", "FAVOR", "Cleaner", "DecidedPage", "clean", "default_model"]

DEFAULT_MODEL = "default.safetensors"

#: The walk's modes: which way to lean where the scores are unsure.
FAVOR = tuple(DEFAULT_MODES)

#: Extra evidence from outside the network (e.g. a site style tree's noisy nodes): given a page's
#: table, return the indices of the subtrees it marks as noise.
NoiseEvidence = Callable[[ElementTable], "set[int] | np.ndarray"]

_default: Model | None = None


@functools.lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def default_model() -> Model:
    """The model shipped in the package (loaded once per process)."""
    global _default
    if _default is None:
        path = resources.files("noisecbr") / "data" / DEFAULT_MODEL
        with resources.as_file(path) as file:
            _default = load_model(file)
    return _default


def model_thresholds(model: Model, favor: str = "balanced") -> dict[str, float]:
    """The walk thresholds of ``favor`` stored with ``model`` (``metadata["modes"]``), else the
    model's single set (``metadata["thresholds"]``, balanced only), else the defaults."""
    if favor not in DEFAULT_MODES:
        raise ValueError(f"favor must be one of {', '.join(FAVOR)}, got {favor!r}")
    modes = model.metadata.get("modes") or {}
    stored = modes.get(favor) or (model.thresholds if favor == "balanced" else {})
    return {**DEFAULT_MODES[favor], **stored}


@dataclasses.dataclass(frozen=True)
class DecidedPage:
    """A page as :meth:`Cleaner.decide_page` decided it: per element (document order) its
    class probabilities and decision (−1 inside a decided subtree, else a LABELS index);
    whether the walk fell back; with a site memory, what it recalled (−1 or a label per
    element) and the ids of the stored cases behind each recall; with site evidence, which
    subtrees recur on the site's other pages."""

    table: ElementTable
    proba: np.ndarray
    decision: np.ndarray
    fell_back: bool
    recalled: np.ndarray | None = None
    stored: list | None = None
    templates: np.ndarray | None = None


class Cleaner:
    """Removes the noise subtrees of pages with one model, loaded once.

    >>> cleaner = Cleaner()                     # the embedded default model
    >>> result = cleaner.clean(html, url=url)   # doctest: +SKIP
    >>> result.text, result.title, result.comments, result.decisions  # doctest: +SKIP

    ``favor`` picks the model's threshold set: ``"precision"`` removes more where unsure,
    ``"recall"`` keeps more. ``comments=True`` appends the reader comments to ``.text``
    (they are in ``.comments`` either way).
    """

    def __init__(
        self,
        model: Model | str | Path | None = None,
        *,
        parser: Parser = "lxml",
        favor: str = "balanced",
        comments: bool = False,
        noise_threshold: float | None = None,
        keep_threshold: float | None = None,
        leaf_threshold: float | None = None,
        smooth: float | None = None,
        max_bytes: int | None = None,
        max_elements: int | None = None,
    ) -> None:
        if model is None:
            model = default_model()
        elif not isinstance(model, Model):
            model = load_model(model)
        self.model = model
        self.parser: Parser = parser
        self.favor = favor
        self.comments = comments
        thresholds = model_thresholds(model, favor)
        self.noise_threshold = thresholds["noise"] if noise_threshold is None else noise_threshold
        self.keep_threshold = thresholds["keep"] if keep_threshold is None else keep_threshold
        self.leaf_threshold = thresholds["leaf"] if leaf_threshold is None else leaf_threshold
        self.smooth = smooth
        self.max_bytes = max_bytes
        self.max_elements = max_elements

    # -- scores ------------------------------------------------------------------------------
    def scores(self, table: ElementTable) -> np.ndarray:
        """Class probabilities of every subtree of the page (rows in document order; columns
        in LABELS order, all four: a model of the paper's three classes scores comment 0; a
        subtree without a thread's markup too, see :mod:`noisecbr.discussion`)."""
        proba = np.zeros((len(table), len(LABELS)), dtype=np.float32)
        if len(table) == 0:
            return proba
        vectors = vectorize(table)
        lexical = lexical_inputs(table) if self.model.lexicon is not None else None
        # One BLAS thread: a page's matrices are small, and OpenBLAS's thread hand-offs cost
        # more than they save (measured 16 → 2.4 ms per page on the 2-core machine under load).
        with _blas_controller().limit(limits=1, user_api="blas"):
            out = self.model.predict_proba(vectors, lexical)
        if self.smooth:
            out = _smoothed(table, out, self.smooth)
        proba[:, :out.shape[1]] = out
        # A comment needs a thread's markup (documentation sections, bios and teasers were
        # filed as comments): elsewhere its score is set aside.
        return without_unfounded_comments(table, proba)

    def decide(self, table: ElementTable, extra_noise: set[int] | None = None,
               recalled: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Decide the page: returns (decision per element: −1 undecided (inside a decided
        subtree) or a LABELS index, and the class probabilities).

        ``recalled`` (from :meth:`noisecbr.memory.SiteMemory.recall`: −1, NOISE, DATA or
        COMMENT per element) overrides the network where a site's stored cases agree."""
        proba = self.scores(table)
        return self.walk(table, proba, extra_noise, recalled), proba

    def walk(self, table: ElementTable, proba: np.ndarray, extra_noise: set[int] | None = None,
             recalled: np.ndarray | None = None, start: int = 0,
             templates: np.ndarray | None = None) -> np.ndarray:
        """The top-down walk over the subtree of element ``start`` (the whole page by
        default) with the scores ``proba``; decisions as :meth:`decide` returns them.

        ``templates`` (per element, whether it is the site's template: see
        :meth:`decide_page`) removes those subtrees, and keeps none that holds one whole, where
        the site memory did not decide."""
        removal = proba[:, NOISE] + proba[:, COMMENT]
        is_leaf = table.n_children == 0
        # The threshold tests of the whole page at once, then a walk over plain Python lists
        # (indexing numpy arrays element by element costs more than the walk itself).
        noisy = np.where(is_leaf, _reaches(removal, self.leaf_threshold),
                         _reaches(removal, self.noise_threshold))
        keep = _reaches(proba[:, DATA], self.keep_threshold)
        comment = proba[:, COMMENT] > proba[:, NOISE]
        if recalled is not None:
            hit = recalled >= 0
            noisy = np.where(hit, (recalled == NOISE) | (recalled == COMMENT), noisy)
            keep = np.where(hit, recalled == DATA, keep)
            comment = np.where(hit, recalled == COMMENT, comment)
        if templates is not None:
            noisy, keep, comment = _with_templates(table, templates, recalled, noisy, keep,
                                                   comment)
        noisy, keep, comment = noisy.tolist(), keep.tolist(), comment.tolist()
        leaf = is_leaf.tolist()
        end = table.end.tolist()
        forced = extra_noise or set()
        n = len(table)
        decision = [-1] * n
        i, stop = start, end[start] if n else 0
        while i < stop:
            if (noisy[i] or i in forced) and i > start:
                decision[i] = COMMENT if comment[i] and i not in forced else NOISE
                i = end[i]
            elif keep[i] or leaf[i]:
                decision[i] = DATA
                i = end[i]
            else:
                decision[i] = MIXTURE
                i += 1
        return np.fromiter(decision, dtype=np.int8, count=n)

    # -- cleaning ----------------------------------------------------------------------------
    def clean_body(self, body: etree._Element, url: str | None = None,
                   extra_noise: NoiseEvidence | None = None,
                   memory: SiteMemory | None = None,
                   site: SiteEvidence | None = None) -> CleanResult:
        """Clean a tidied ``<body>`` (see :meth:`clean`)."""
        return self.page_result(body, self.decide_page(body, extra_noise, memory, site), url)

    def decide_page(self, body: etree._Element, extra_noise: NoiseEvidence | None = None,
                    memory: SiteMemory | None = None, site: SiteEvidence | None = None,
                    table: ElementTable | None = None) -> DecidedPage:
        """Everything :meth:`clean_body` decides about a tidied ``<body>``, before it renders
        the result: the review page and ``casebase explain`` explain these very decisions
        (the fallback's included) without cleaning the page a second time. ``table``: the
        body's, when already built."""
        table = build_table(body) if table is None else table
        forced = None
        if extra_noise is not None:
            forced = {int(i) for i in extra_noise(table)}
        recalled, stored = (memory.lookup(table) if memory is not None and len(memory)
                            else (None, None))
        proba = self.scores(table)
        templates = None
        if site is not None and len(site):
            # What recurs on the site's other pages, unless the network is confident it is
            # data (TEMPLATE_MAX_DATA): the decisions then say which subtrees the site decided.
            templates = site.templates(table) & (proba[:, DATA] < TEMPLATE_MAX_DATA)
        decision, fell_back = self.settle(table, proba, forced, recalled, templates)
        return DecidedPage(table, proba, decision, fell_back, recalled, stored, templates)

    def settle(self, table: ElementTable, proba: np.ndarray, forced: set[int] | None = None,
               recalled: np.ndarray | None = None, templates: np.ndarray | None = None
               ) -> tuple[np.ndarray, bool]:
        """The page's decisions from its scores (the walk, then the fallback when the walk
        kept almost nothing), and whether it fell back. Walking the same scores again with
        other thresholds costs no network pass (how :mod:`training.modes` compares them)."""
        decision, fell_back = self._walked(table, proba, forced, recalled, templates)
        if not fell_back:
            # A furniture heading goes with the box the walk removed (noisecbr.orphans), and
            # a dateline is metadata (noisecbr.datelines); but not where the site's stored
            # cases decided, nor from a result already tiny.
            decision[orphaned_headings(table, decision, recalled)] = NOISE
            decision[datelines(table, decision, recalled)] = NOISE
        return decision, fell_back

    def _walked(self, table: ElementTable, proba: np.ndarray, forced: set[int] | None,
                recalled: np.ndarray | None, templates: np.ndarray | None = None
                ) -> tuple[np.ndarray, bool]:
        """The walk's decisions, or the fallback's when the walk kept almost nothing."""
        decision = self.walk(table, proba, forced, recalled, templates=templates)
        if kept_words(table, decision) >= FALLBACK_MIN_WORDS + 2 * MAX_HEADLINE_WORDS:
            return decision, False
        # A result this small may be little more than the headline, which the text leaves out
        # (it is the result's title; up to 40 distinct words, so twice that many tokens is
        # ample): count only the words the text will show.
        headline = _headline_index(table)
        if kept_words(table, decision, headline) >= FALLBACK_MIN_WORDS:
            return decision, False
        root = fallback_subtree(table, proba, headline)
        if root is None:
            return decision, False
        walked = self.walk(table, proba, forced, recalled, start=root, templates=templates)
        return fall_back(table, walked, root, without=headline), True

    def result(self, body: etree._Element, table: ElementTable, decision: np.ndarray,
               proba: np.ndarray, fell_back: bool = False, url: str | None = None,
               recalled: np.ndarray | None = None, stored=None,
               templates: np.ndarray | None = None) -> CleanResult:
        """The :class:`CleanResult` of a decided page: the headline out of the body text,
        the comments apart (after the text with ``comments=True``)."""
        metadata, headline = _headline(body, table)
        return _result(table, body, decision, proba, url, metadata, headline, fell_back,
                       self.comments, _Sources(recalled, stored, templates))

    def page_result(self, body: etree._Element, page: DecidedPage,
                    url: str | None = None) -> CleanResult:
        """The :class:`CleanResult` of ``page``, as :meth:`decide_page` decided ``body``."""
        return self.result(body, page.table, page.decision, page.proba, page.fell_back, url,
                           page.recalled, page.stored, page.templates)

    def clean(self, html: str | bytes, url: str | None = None, *,
              extra_noise: NoiseEvidence | None = None,
              memory: SiteMemory | None = None,
              site: SiteEvidence | None = None) -> CleanResult:
        """Clean one page. Raises :class:`noisecbr.tidy.InputError` for input that is not HTML.

        ``memory``: the labelled pages of the page's site (:class:`noisecbr.memory.SiteMemory`);
        where their subtrees of the same signature agree on a label, that label decides.
        ``site``: unlabelled pages of its site (:meth:`site_evidence`); what recurs on them is
        removed (:mod:`noisecbr.evidence`)."""
        return self.clean_body(self._tidy(html), url=url, extra_noise=extra_noise,
                               memory=memory, site=site)

    def _tidy(self, html: str | bytes) -> etree._Element:
        kwargs = {} if self.max_bytes is None else {"max_bytes": self.max_bytes}
        return tidy(html, parser=self.parser, max_elements=self.max_elements, **kwargs)

    def _read_page(self, html: str | bytes
                   ) -> tuple[etree._Element, ElementTable] | InputError:
        """A page's tidied body and its table, or the error of a page that is not HTML."""
        try:
            body = self._tidy(html)
        except InputError as error:
            return error
        return body, build_table(body)

    def site_evidence(self, pages: Iterable[str | bytes]) -> SiteEvidence:
        """The :class:`~noisecbr.evidence.SiteEvidence` of unlabelled pages of one site (the
        first :data:`~noisecbr.settings.EVIDENCE_MAX_PAGES` distinct pages that are HTML; the others
        are not read)."""
        evidence = SiteEvidence()
        for html in pages:
            if len(evidence) >= EVIDENCE_MAX_PAGES:
                break
            read = self._read_page(html)
            # A page that is not HTML is no evidence; cleaning it will say why.
            if not isinstance(read, InputError):
                evidence.add(read[1])
        return evidence

    def clean_site(self, pages: Iterable[str | bytes | tuple[str | bytes, str | None]], *,
                   memory: SiteMemory | None = None) -> Iterator[CleanResult]:
        """Clean the pages of one site together: each page with what recurs on the site's other
        pages (:meth:`site_evidence`, from the first
        :data:`~noisecbr.settings.EVIDENCE_MAX_PAGES`), in the order given. A page is its HTML or an
        (HTML, URL) pair; ``memory`` as in :meth:`clean`. Raises
        :class:`noisecbr.tidy.InputError` at a page that is not HTML (clean a crawl's pages with
        :meth:`site_evidence` and :meth:`clean` to go on past one)."""
        pairs = (page if isinstance(page, tuple) else (page, None) for page in pages)
        first = list(itertools.islice(pairs, EVIDENCE_MAX_PAGES))
        # The first pages are read once: their tidied bodies and tables are the evidence, and
        # then what is cleaned.
        read = [self._read_page(html) for html, _ in first]
        evidence = SiteEvidence(ready[1] for ready in read if not isinstance(ready, InputError))
        for (_, url), ready in zip(first, read):
            if isinstance(ready, InputError):
                raise ready
            body, table = ready
            yield self.page_result(body, self.decide_page(body, memory=memory, site=evidence,
                                                          table=table), url)
        for html, url in pairs:
            yield self.clean(html, url, memory=memory, site=evidence)


def _headline(body: etree._Element, table: ElementTable
              ) -> tuple[PageMetadata, etree._Element | None]:
    """The page's metadata (as the result holds it) and its headline element, if found."""
    # The body's elements of the tags read come from the table: only the head is walked.
    elements = page_elements(body, table.elements, table.tags)
    metadata = _xml_safe_metadata(page_metadata(body, elements))
    return metadata, headline_element(body, metadata.title, elements)


def _headline_index(table: ElementTable) -> int | None:
    """The table index of the headline the result will take out of the text, if any."""
    if not len(table):
        return None
    return _index_of(table, _headline(table.elements[0], table)[1])  # element 0: the body


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


def _result(table: ElementTable, body: etree._Element, decision: np.ndarray, proba: np.ndarray,
            url: str | None, metadata, headline: etree._Element | None, fell_back: bool,
            with_comments: bool, sources: _Sources) -> CleanResult:
    """The CleanResult of a decided page: text now, HTML, comments and decisions on demand."""
    decided = np.flatnonzero(decision >= 0)
    elements = table.elements
    removed = {elements[i] for i in decided[decision[decided] == NOISE].tolist()}
    comment_roots = [elements[i] for i in decided[decision[decided] == COMMENT].tolist()]
    removed.update(comment_roots)
    if headline is not None:
        removed.add(headline)
    if len(table):
        # The byline, like the headline, is metadata: out of the text, its name the author's
        # when the page declares none.
        kept = kept_pieces(table, decision, _index_of(table, headline))
        byline = find_byline(table, kept, metadata.author)
        if byline is not None:
            index, named = byline
            removed.add(elements[index])
            if metadata.author is None:
                metadata = dataclasses.replace(metadata, author=printable(named or "") or None)
    # Control characters the parser left in the text (from raw bytes or references such as
    # &#1;) are not text, and would reach a terminal as they are.
    text = printable(render_text(body, removed, has_pre="pre" in table.tags))
    rendered: list[str] = []

    def comments() -> str:
        # Rendered once, on demand: most callers never read the comments. The HTML's
        # rendering detaches the removed subtrees, so it renders them first.
        if not rendered:
            rendered.append(printable(render_texts(comment_roots)))
        return rendered[0]

    if with_comments and comments():
        text = f"{text}\n\n{comments()}" if text else comments()

    def decisions() -> list[Decision]:
        # Paths from the table: still those of the tidied page after the noise is detached.
        chars = table.subtree(table.piece_chars)[decided]
        all_paths = table.paths()
        return [
            # A tag libxml2 read from garbage may hold a control character ("hx\x7fvour").
            Decision(path=printable(all_paths[i]), tag=printable(table.tags[i]),
                     label=LABELS[decision[i]],
                     probabilities=tuple(round(float(p), 4) for p in proba[i]),
                     text_length=int(length),
                     **sources.of(i))
            for i, length in zip(decided.tolist(), chars)
        ]

    def cleaned_html() -> str:
        comments()
        drop_elements(removed)
        return printable(render_html(body, metadata.document_title, metadata.lang))

    def markdown(links: bool = False, images: bool = False) -> str:
        # The same decided tree as the text (the removed subtrees may be detached already:
        # the HTML's rendering detaches them).
        options = {"links": links, "images": images, "base_url": url}
        written = render_markdown(body, removed, **options)
        if with_comments:
            thread = "\n\n".join(filter(None, (render_markdown(root, **options)
                                               for root in comment_roots)))
            if thread:
                written = f"{written}\n\n---\n\n{thread}" if written else thread
        return printable(written)

    return CleanResult(html=cleaned_html, text=text, decisions=decisions, url=url,
                       comments=comments, metadata=metadata, fallback=fell_back,
                       markdown=markdown)


def _with_templates(table: ElementTable, templates: np.ndarray, recalled: np.ndarray | None,
                    noisy: np.ndarray, keep: np.ndarray, comment: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The walk's tests with the site's template subtrees: noise, never comments; and a
    subtree that holds one is descended into, not kept whole (the template inside would go
    through). The site memory's recalls stand."""
    free = np.ones(len(table), dtype=bool) if recalled is None else recalled < 0
    marked = templates & free
    # Subtree i holds a template below it when the count of templates in (i, end[i]) is > 0.
    counted = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(marked, out=counted[1:])
    holds = (counted[table.end] - counted[1:]) > 0
    return noisy | marked, keep & ~(holds & free), comment & ~marked


@dataclasses.dataclass(frozen=True)
class _Sources:
    """What decided a page's subtrees besides the network: the site memory's recalls and
    their stored cases, and the site evidence's templates."""

    recalled: np.ndarray | None = None
    stored: list | None = None
    templates: np.ndarray | None = None

    def of(self, i: int) -> dict:
        """The source fields of element ``i``'s :class:`Decision` (none: the model's)."""
        if self.recalled is not None and self.recalled[i] >= 0:
            return {"source": "memory", "cases": self.stored[i]}
        if self.templates is not None and self.templates[i]:
            return {"source": "site"}
        return {}


def _reaches(scores: np.ndarray, threshold: float) -> np.ndarray:
    """``scores[i] >= threshold`` for every i, decided as the comparison of the numpy scalar
    ``scores[i]`` with ``threshold`` decides it: in the type numpy promotes the two to (float32
    for float32 scores and a Python float under NumPy 2's rules, float64 under NumPy 1's), so
    a score within rounding of a threshold goes the same way as in a scalar comparison."""
    common = (scores.dtype.type(0) + threshold).dtype
    return scores.astype(common, copy=False) >= np.asarray(threshold, dtype=common)


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


def clean(html: str | bytes, url: str | None = None, *, model: Model | str | Path | None = None,
          parser: Parser = "lxml", memory: SiteMemory | None = None, favor: str = "balanced",
          comments: bool = False, max_bytes: int | None = None) -> CleanResult:
    """Clean one page with the embedded default model (or ``model``), and the labelled pages
    of its site if a ``memory`` of them is given.

    ``favor``: ``"balanced"`` (default), ``"precision"`` or ``"recall"``; ``comments=True``
    keeps the reader comments after the main text (they are in ``.comments`` either way).

    Raises an :class:`noisecbr.tidy.InputError` subclass with a one-line reason for input that
    is not a page, and :class:`noisecbr.tidy.InputTooLargeError` over ``max_bytes`` bytes
    (default :data:`noisecbr.limits.DEFAULT_MAX_BYTES`) or the element limit."""
    return Cleaner(model, parser=parser, favor=favor, comments=comments,
                   max_bytes=max_bytes).clean(html, url=url, memory=memory)
