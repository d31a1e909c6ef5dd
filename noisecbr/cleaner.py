"""The cleaner: one model and its settings, composing the pipeline's stages
(:mod:`noisecbr.pipeline`: prepare → score → decide → render).

    cleaner = Cleaner()                              # the embedded default model
    result = cleaner.clean(html, url=url)            # all four stages
    page = cleaner.prepare(html, url=url)            # or one at a time:
    proba = cleaner.score(page)                      # class scores per subtree
    decisions = cleaner.decide(page)                 # the walk's decisions (and the rules')
    result = cleaner.render(page, decisions)         # the CleanResult

The methods are the pipeline's stages, by the same names and with the same return types as
:mod:`noisecbr.pipeline`'s functions (``predict`` is the model's: label indices,
:meth:`noisecbr.score.model.Model.predict`; ``Cleaner.predict_proba`` and ``Cleaner.predict``
are deprecated names of ``score`` and ``decide``). The thresholds between scores and
decisions are a frozen value
(:class:`noisecbr.decide.walk.Thresholds`), those of the page's convention by default
(:meth:`Cleaner.thresholds_for`, ``favor="auto"``). Pages of one site cleaned together lose
what recurs across them (:meth:`Cleaner.clean_site`, :mod:`noisecbr.site.evidence`); the labelled
pages of a site decide the same markup on its other pages (``memory=``,
:mod:`noisecbr.site.memory`).
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path

import numpy as np

from .decide.walk import AUTO, FAVOR, MODES, Thresholds
from .pipeline import (
    Decisions,
    NoiseEvidence,
    Page,
    decide,
    prepare,
    render,
    score,
    score_and_decide,
)
from .prepare.strings import printable
from .prepare.tidy import InputError, Parser
from .result import CleanResult
from .score.artifact import load_model
from .score.kind import KINDS
from .score.model import Model
from .settings import DEFAULT_FALLBACK_BELOW, DEFAULTS, Settings, using
from .site.evidence import SiteEvidence
from .site.memory import SiteMemory

__all__ = ["DEFAULT_MODEL", "FAVOR", "Cleaner", "clean", "default_model"]

DEFAULT_MODEL = "default.safetensors"
#: A cleaner's ``fallback``: (the page's HTML, its URL) → main-content text, or None.
Fallback = Callable[[str | bytes, str | None], str | None]

_default: Model | None = None


def default_model() -> Model:
    """The model shipped in the package (loaded once per process)."""
    global _default
    if _default is None:
        path = resources.files("noisecbr") / "data" / DEFAULT_MODEL
        with resources.as_file(path) as file:
            _default = load_model(file)
    return _default


class Cleaner:
    """Removes the noise subtrees of pages with one model, loaded once.

    >>> cleaner = Cleaner()                     # the embedded default model
    >>> result = cleaner.clean(html, url=url)   # doctest: +SKIP
    >>> result.text, result.title, result.comments, result.decisions  # doctest: +SKIP

    ``favor`` picks the model's threshold set: ``"auto"`` (default) the set of each page's
    kind, as the model chose them on site-grouped folds (a model without a kind model: the
    page's convention, :mod:`noisecbr.decide.convention`), or one for every page:
    ``"precision"`` removes more where unsure, ``"recall"`` keeps more, ``"balanced"``;
    ``noise_threshold``, ``keep_threshold`` and ``leaf_threshold`` replace one of them (in
    every set). ``comments=True`` appends the reader comments to ``.text`` (they are
    in ``.comments`` either way). ``smooth``: isotonic smoothing of the noise scores over the
    tree (:func:`noisecbr.seeds.smoothing.isotonic_smooth`). ``max_bytes`` and ``max_elements``:
    the input limits (:mod:`noisecbr.settings`).

    ``title``: ``True`` puts the page's headline first in the text and the Markdown (as
    ``# …``), ``False`` leaves it out (it is ``.title`` either way); ``None`` (default) does
    what the truths of the page's kind do (the model's ``kind_titles``, chosen on the recipe's
    folds: the embedded model's puts it first on products only). ``fallback``: a callable given a
    page's HTML and URL, called for each page whose result's ``confidence`` is under
    ``fallback_below``; the text it returns (a ``str``; ``None`` declines) replaces the
    result's text and Markdown, and ``result.extractor`` says ``"fallback"``.
    ``unsafe_html=True``: ``result.html`` as the page wrote it, not sanitised (by default no
    script, event handler, frame, form, style or ``<base>`` of the page is in it, nor the
    sources of its images and media: opened, it loads nothing;
    :func:`noisecbr.render.text.sanitised_body`). ``keep_media=True``: the sanitised
    ``result.html`` keeps the page's images, video and audio with their sources (a browser
    that opens it loads them). ``settings``: the rules after the walk, of
    comments and of a site's pages (:class:`noisecbr.settings.Settings`, a frozen value;
    default :data:`noisecbr.settings.DEFAULTS`), which every stage method runs under.
    """

    def __init__(
        self,
        model: Model | str | Path | None = None,
        *,
        parser: Parser = "lxml",
        favor: str = AUTO,
        comments: bool = False,
        noise_threshold: float | None = None,
        keep_threshold: float | None = None,
        leaf_threshold: float | None = None,
        smooth: float | None = None,
        max_bytes: int | None = None,
        max_elements: int | None = None,
        title: bool | None = None,
        fallback: Fallback | None = None,
        fallback_below: float = DEFAULT_FALLBACK_BELOW,
        unsafe_html: bool = False,
        keep_media: bool = False,
        settings: Settings | None = None,
    ) -> None:
        if settings is not None and not isinstance(settings, Settings):
            raise TypeError("settings must be a noisecbr.settings.Settings, got "
                            f"{type(settings).__name__}")
        #: the rules the stages run under (a frozen value)
        self.settings = DEFAULTS if settings is None else settings
        if model is None:
            model = default_model()
        elif not isinstance(model, Model):
            model = load_model(model)
        self.model = model
        self.parser: Parser = parser
        if favor not in FAVOR:
            raise ValueError(f"favor must be one of {', '.join(FAVOR)}, got {favor!r}")
        self.favor = favor
        self.comments = comments
        given = {"noise": noise_threshold, "keep": keep_threshold, "leaf": leaf_threshold}
        #: each mode's thresholds (frozen values): the model's, with those given
        self.modes = {mode: Thresholds.of(model, mode, **given) for mode in MODES}
        #: the walk's thresholds: those of ``favor`` (of ``balanced`` under ``auto``, where
        #: :meth:`thresholds_for` picks each page's)
        self.thresholds = self.modes["balanced" if favor == AUTO else favor]
        #: the walk's mode of each kind of page, as the model chose them (empty: none)
        self.kind_modes = _kind_modes(model)
        self.smooth = smooth
        self.max_bytes = max_bytes
        self.max_elements = max_elements
        self.title = title
        #: whether each kind's text starts with its headline, as the model chose (empty: none)
        self.kind_titles = _kind_titles(model)
        if fallback is not None and not callable(fallback):
            raise TypeError("fallback must be a callable of (html, url) returning text or None")
        if not 0.0 <= fallback_below <= 1.0:
            raise ValueError(f"fallback_below is an expected F1 in [0, 1], got {fallback_below}")
        if fallback is not None and model.confidence_model is None:
            raise ValueError("fallback needs a model with a confidence model (the embedded one "
                             "has it)")
        self.fallback, self.fallback_below = fallback, fallback_below
        self.unsafe_html = unsafe_html
        self.keep_media = keep_media

    @property
    def noise_threshold(self) -> float:
        """The walk's removal threshold (``thresholds.noise``: under ``favor="auto"`` the
        balanced set's, each page's being :meth:`thresholds_for`; set it with the
        constructor)."""
        return self.thresholds.noise

    @property
    def keep_threshold(self) -> float:
        """The walk's keep-whole threshold (``thresholds.keep``, as :attr:`noise_threshold`)."""
        return self.thresholds.keep

    @property
    def leaf_threshold(self) -> float:
        """The walk's threshold for elements without element children (``thresholds.leaf``, as
        :attr:`noise_threshold`)."""
        return self.thresholds.leaf

    # -- the stages ------------------------------------------------------------------------------
    def prepare(self, html: str | bytes, *, url: str | None = None,
                page_type: str | None = None) -> Page:
        """The page of ``html``, tidied with this cleaner's parser and limits; ``page_type``:
        its kind, when known (:data:`noisecbr.score.kind.KINDS`), in place of the kind model's.
        Raises :class:`noisecbr.prepare.tidy.InputError` for input that is not HTML."""
        with using(self.settings):
            return prepare(html, url=url, parser=self.parser, max_bytes=self.max_bytes,
                           max_elements=self.max_elements, page_type=page_type)

    def score(self, page: Page) -> np.ndarray:
        """Class probabilities of every subtree of ``page`` (rows in document order, columns
        in LABELS order): :func:`noisecbr.pipeline.score` with this cleaner's model."""
        with using(self.settings):
            return score(page, self.model, smooth=self.smooth)

    def decide(self, page: Page, *, memory: SiteMemory | None = None,
               site: SiteEvidence | None = None,
               extra_noise: NoiseEvidence | None = None) -> Decisions:
        """The decisions of ``page`` under this cleaner's thresholds, from :meth:`score`'s
        scores (``memory``, ``site``: as in :meth:`clean`; ``extra_noise``: another method's
        noise subtrees, removed): :func:`noisecbr.pipeline.decide`."""
        proba = self.predict_proba(page) if _overrides(self, "predict_proba") else self.score(page)
        with using(self.settings):
            return decide(page, proba, self.thresholds_for(page), memory=memory, site=site,
                          extra_noise=extra_noise, kinds=page.kinds(self.model))

    def predict_proba(self, page: Page) -> np.ndarray:
        """Deprecated name of :meth:`score` (``predict_proba`` is a model's, on vectors)."""
        _renamed("predict_proba", "score")
        return self.score(page)

    def predict(self, page: Page, *, memory: SiteMemory | None = None,
                site: SiteEvidence | None = None,
                extra_noise: NoiseEvidence | None = None) -> Decisions:
        """Deprecated name of :meth:`decide` (``predict`` is a model's: label indices)."""
        _renamed("predict", "decide")
        return self.decide(page, memory=memory, site=site, extra_noise=extra_noise)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for old, new in _RENAMED.items():
            if old in vars(cls):
                warnings.warn(f"{cls.__name__} overrides Cleaner.{old}, a deprecated name: "
                              f"override {new} instead (the cleaner still calls {old} while "
                              "it is deprecated)", DeprecationWarning, stacklevel=2)

    def _decided(self, page: Page, **evidence) -> Decisions:
        """:meth:`decide`, or a subclass's override of its former name, :meth:`predict`."""
        if _overrides(self, "predict"):
            return self.predict(page, **evidence)
        return self.decide(page, **evidence)

    def thresholds_for(self, page: Page) -> Thresholds:
        """The thresholds the walk decides ``page`` by, under ``favor="auto"``: those of the
        mode the model chose for the page's most probable kind (its ``kind_modes``), else
        those of the page's convention (:attr:`Page.mode`); otherwise those of ``favor``."""
        if self.favor != AUTO:
            return self.thresholds
        kinds = page.kinds(self.model) if self.kind_modes else None
        if kinds is not None:
            return self.modes[self.kind_modes[KINDS[int(np.argmax(kinds))]]]
        return self.modes[page.mode]

    def render(self, page: Page, decisions: Decisions) -> CleanResult:
        """The :class:`CleanResult` of ``page`` as ``decisions`` decided it (decisions made
        without the page's kinds, by :func:`noisecbr.pipeline.decide` called alone, get them
        here)."""
        if decisions.kinds is None and page.kinds(self.model) is not None:
            decisions = dataclasses.replace(decisions, kinds=page.kinds(self.model))
        with using(self.settings):
            return render(page, decisions, comments=self.comments,
                          confidence=self.model.confidence_model,
                          title=self.title_for(page, decisions.kinds),
                          read_kinds=page.read_kinds(self.model),
                          safe_html=not self.unsafe_html, keep_media=self.keep_media)

    def title_for(self, page: Page, kinds: np.ndarray | None) -> bool:
        """Whether the text of ``page`` starts with its headline: ``title`` when given, else
        what the model chose for its most probable kind (no headline without kinds)."""
        if self.title is not None:
            return self.title
        if kinds is None or not self.kind_titles:
            return False
        return self.kind_titles[KINDS[int(np.argmax(kinds))]]

    # -- cleaning --------------------------------------------------------------------------------
    def clean(self, html: str | bytes, *, url: str | None = None,
              memory: SiteMemory | None = None, site: SiteEvidence | None = None,
              extra_noise: NoiseEvidence | None = None,
              page_type: str | None = None) -> CleanResult:
        """Clean one page. Raises :class:`noisecbr.prepare.tidy.InputError` for input that is not
        HTML.

        ``memory``: the labelled pages of the page's site
        (:class:`noisecbr.site.memory.SiteMemory`); where their subtrees of the same signature agree
        on a label, that label decides. ``site``: unlabelled pages of its site
        (:meth:`site_evidence`); what recurs on them is removed (:mod:`noisecbr.site.evidence`).
        ``page_type``: the page's kind, when known (:data:`noisecbr.score.kind.KINDS`), in place of
        the kind model's."""
        page = self.prepare(html, url=url, page_type=page_type)
        if self._scores_lazily(memory, site, extra_noise):
            with using(self.settings):
                decisions = score_and_decide(page, self.model, self.thresholds_for(page))
            result = self.render(page, decisions)
        else:
            result = self.render(page, self._decided(page, memory=memory, site=site,
                                                     extra_noise=extra_noise))
        return self._handed_off(result, html, url)

    def _handed_off(self, result: CleanResult, html: str | bytes, url: str | None
                    ) -> CleanResult:
        """``result``, or the fallback's text in its place when its confidence is under
        ``fallback_below`` and the fallback gives one."""
        if self.fallback is None or result.confidence >= self.fallback_below:
            return result
        text = self.fallback(html, url)
        if text is None:
            return result
        if not isinstance(text, str):
            raise TypeError(f"the fallback returned {type(text).__name__}, not text (str) or "
                            "None")
        return result.replaced(printable(text), extractor="fallback")

    def _scores_lazily(self, memory: SiteMemory | None, site: SiteEvidence | None,
                       extra_noise: NoiseEvidence | None) -> bool:
        """Whether :meth:`clean` scores only the subtrees the walk reaches (a tenth to a third
        of a page's: :func:`noisecbr.pipeline.score_and_decide`): not with a site memory or site
        evidence that holds pages, another method's noise or smoothing, which read every
        subtree, nor where a subclass or the instance scores or decides pages its own way
        (:meth:`score`, :meth:`decide`)."""
        own = not any(_overrides(self, name) for name in ("score", "decide", *_RENAMED))
        return (own and (memory is None or not len(memory)) and (site is None or not len(site))
                and extra_noise is None and not self.smooth)

    def site_evidence(self, pages: Iterable[str | bytes]) -> SiteEvidence:
        """The :class:`~noisecbr.site.evidence.SiteEvidence` of unlabelled pages of one site (the
        first :data:`~noisecbr.settings.EVIDENCE_MAX_PAGES` distinct pages that are HTML; the
        others are not read)."""
        evidence = SiteEvidence()
        for html in pages:
            if len(evidence) >= self.settings.evidence_max_pages:
                break
            page = self._prepared(html)
            # A page that is not HTML is no evidence; cleaning it will say why.
            if not isinstance(page, InputError):
                with using(self.settings):
                    evidence.add(page.table)
        return evidence

    def clean_site(self, pages: Iterable[str | bytes | tuple[str | bytes, str | None]], *,
                   memory: SiteMemory | None = None) -> Iterator[CleanResult]:
        """Clean the pages of one site together: each page with what recurs on the site's other
        pages (:meth:`site_evidence`, from the first
        :data:`~noisecbr.settings.EVIDENCE_MAX_PAGES`), in the order given. A page is its HTML
        or an (HTML, URL) pair; ``memory`` as in :meth:`clean`. Raises
        :class:`noisecbr.prepare.tidy.InputError` at a page that is not HTML (clean a crawl's pages
        with :meth:`site_evidence` and :meth:`clean` to go on past one)."""
        pairs = (page if isinstance(page, tuple) else (page, None) for page in pages)
        first = list(itertools.islice(pairs, self.settings.evidence_max_pages))
        # The first pages are prepared once: their tables are the evidence, and then what is
        # cleaned. (Each stage sets the settings itself: a generator's would reach its caller
        # between pages.)
        prepared = [self._prepared(html, url) for html, url in first]
        with using(self.settings):
            evidence = SiteEvidence(page.table for page in prepared
                                    if not isinstance(page, InputError))
        for (html, url), page in zip(first, prepared):
            if isinstance(page, InputError):
                raise page
            yield self._handed_off(self.render(page, self._decided(page, memory=memory,
                                                                   site=evidence)), html, url)
        for html, url in pairs:
            yield self.clean(html, url=url, memory=memory, site=evidence)

    def _prepared(self, html: str | bytes, url: str | None = None) -> Page | InputError:
        """:meth:`prepare`, or the error of a page that is not HTML."""
        try:
            return self.prepare(html, url=url)
        except InputError as error:
            return error


#: The stage methods' former names (scikit-learn's), deprecated: a model's ``predict`` gives
#: label indices, a cleaner's gave decisions.
_RENAMED = {"predict_proba": "score", "predict": "decide"}


def _overrides(cleaner: Cleaner, name: str) -> bool:
    """Whether a subclass or the instance itself gives ``name`` its own way."""
    return getattr(type(cleaner), name) is not getattr(Cleaner, name) or name in vars(cleaner)


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"Cleaner.{old} is deprecated: use Cleaner.{new} (the pipeline's stage of "
                  "the same name)", DeprecationWarning, stacklevel=3)


def _kind_titles(model: Model) -> dict[str, bool]:
    """Whether the text of each kind starts with its headline, as the model's metadata says
    (``kind_titles``, checked when the model file is read), when it has a kind model; {}
    otherwise."""
    declared = model.metadata.get("kind_titles") or {}
    return dict(declared) if model.kind_model is not None and set(declared) == set(KINDS) else {}


def _kind_modes(model: Model) -> dict[str, str]:
    """The walk's mode of each kind the model's metadata names (``kind_modes``, checked when
    the model file is read), when it has a kind model; {} otherwise."""
    declared = model.metadata.get("kind_modes") or {}
    if model.kind_model is None or set(declared) != set(KINDS):
        return {}
    if not set(declared.values()) <= set(MODES):  # a model made in code, not read from a file
        raise ValueError(f"the model's kind_modes name modes other than {', '.join(MODES)}")
    return dict(declared)


def clean(html: str | bytes, *, url: str | None = None, model: Model | str | Path | None = None,
          parser: Parser = "lxml", memory: SiteMemory | None = None, favor: str = AUTO,
          comments: bool = False, max_bytes: int | None = None, page_type: str | None = None,
          title: bool | None = None, noise_threshold: float | None = None,
          keep_threshold: float | None = None, leaf_threshold: float | None = None,
          smooth: float | None = None, max_elements: int | None = None,
          fallback: Fallback | None = None, fallback_below: float = DEFAULT_FALLBACK_BELOW,
          unsafe_html: bool = False, keep_media: bool = False,
          settings: Settings | None = None) -> CleanResult:
    """Clean one page with the embedded default model (or ``model``), and the labelled pages
    of its site if a ``memory`` of them is given: ``Cleaner(model, ...).clean(html, url=url,
    memory=memory, page_type=page_type)``, every option :class:`Cleaner` takes taken here.

    ``favor``: ``"auto"`` (default: each page's kind's mode), ``"balanced"``, ``"precision"``
    or ``"recall"`` (see :class:`Cleaner`); ``comments=True`` keeps the reader comments after
    the main text (they are in ``.comments`` either way); ``page_type``: the page's kind, in
    place of the one the model reads; ``title``: the headline first (True) or left out
    (False), by default as the page's kind does.

    Raises an :class:`noisecbr.prepare.tidy.InputError` subclass with a one-line reason for input
    that is not a page, and :class:`noisecbr.prepare.tidy.InputTooLargeError` over ``max_bytes``
    bytes (default :data:`noisecbr.settings.DEFAULT_MAX_BYTES`) or the element limit."""
    cleaner = Cleaner(model, parser=parser, favor=favor, comments=comments, max_bytes=max_bytes,
                      title=title, noise_threshold=noise_threshold,
                      keep_threshold=keep_threshold, leaf_threshold=leaf_threshold,
                      smooth=smooth, max_elements=max_elements, fallback=fallback,
                      fallback_below=fallback_below, unsafe_html=unsafe_html,
                      keep_media=keep_media, settings=settings)
    return cleaner.clean(html, url=url, memory=memory, page_type=page_type)
