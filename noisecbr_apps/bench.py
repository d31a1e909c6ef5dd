"""Benchmark: shingle P / R / F1 and docs/s of noisecbr and its peers on a dataset in the
article-extraction layout.

Every extractor sees the same pages in the same process; speed is CPU time (``process_time``)
per page, so a second process on the machine does not distort it, and the extractors take turns
every few pages, so a drift of the machine's speed during the run favours none of them. The
F1's ± is the half-width of a 95 % bootstrap interval over pages. Peers come from the optional
``[bench]`` extra; one that is not installed is reported as missing, not fatal.

``cv`` (K site-grouped folds) trains K models, each on the pages of the other folds' sites, and
scores every page with the model that never saw its site — the only fair way to score noisecbr on
the data it is developed on. Training lives in :mod:`training` (torch), the site memory of
``adapt`` in :mod:`casebase`: both are imported only when asked for, so a bench of the peers
needs neither torch nor a database.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from noisecbr.cleaner import FAVOR, Cleaner, default_model
from noisecbr.decide.walk import AUTO
from noisecbr.errors import NoisecbrError
from noisecbr.eval.datasets import LabelledPage, read_dataset, split_truth
from noisecbr.eval.metric import (
    PageScore,
    Scores,
    aggregate,
    bootstrap_f1,
    mean_word_f1,
    score_page,
    tokens,
    word_f1,
)
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import InputError, tidy
from noisecbr.site.evidence import SiteEvidence
from noisecbr.site.memory import SiteMemory

from .structure import StructureCounts, page_structure, structure_counts

__all__ = ["PEERS", "BenchRow", "BenchUsageError", "Extractor", "bench", "bench_pages",
           "best_per_page", "cv_models", "format_table", "get_extractor", "oracle_row",
           "page_cleaner", "page_cleaners", "page_key"]


class BenchUsageError(NoisecbrError, ValueError):
    """The options asked of :func:`bench` do not fit together or the dataset."""


#: An extractor maps (page bytes, url) to the main content as text.
Extractor = Callable[[bytes, str], str]

#: What the ground truth is scored as: ``full`` (as the dataset gives it) or ``article`` (the
#: text before a reader-comments marker, :func:`noisecbr.eval.datasets.split_truth`).
TRUTHS = ("full", "article")
#: A page is a *near-empty failure* when an extractor keeps fewer than EMPTY_WORDS words of it
#: although its ground truth has at least TRUTH_WORDS.
EMPTY_WORDS, TRUTH_WORDS = 10, 50


def _noisecbr(model=None, comments: bool = False) -> Extractor:
    cleaner = Cleaner(model, comments=comments)
    return lambda html, url: cleaner.clean(html, url=url).text


def _no_cleaning() -> Extractor:
    from noisecbr.prepare.tidy import tidy
    from noisecbr.render.text import render_text

    return lambda html, url: render_text(tidy(html))


def _trafilatura(comments: bool = False) -> Extractor:
    import trafilatura

    return lambda html, url: trafilatura.extract(html, url=url or None,
                                                 include_comments=comments) or ""


def _readability() -> Extractor:
    from lxml import html as lxml_html
    from readability import Document

    def extract(html: bytes, url: str) -> str:
        summary = Document(html, url=url or None).summary(html_partial=True)
        from noisecbr.render.text import render_text

        return render_text(lxml_html.fromstring(summary)) if summary.strip() else ""

    return extract


def _justext() -> Extractor:
    import justext

    stoplist = justext.get_stoplist("English")

    def extract(html: bytes, url: str) -> str:
        paragraphs = justext.justext(html, stoplist)
        return "\n\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


def _resiliparse() -> Extractor:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    def extract(html: bytes, url: str) -> str:
        return extract_plain_text(bytes_to_str(html, detect_encoding(html)), main_content=True)

    return extract


def _boilerpy3() -> Extractor:
    from boilerpy3 import extractors

    article = extractors.ArticleExtractor(raise_on_failure=False)
    return lambda html, url: article.get_content(html.decode("utf-8", "replace")) or ""


#: Extractor factories by name: ``none`` is the whole page's text, the floor every cleaner
#: must beat.
PEERS: dict[str, Callable[[], Extractor]] = {
    "noisecbr": _noisecbr,
    "none": _no_cleaning,
    "trafilatura": _trafilatura,
    "readability": _readability,
    "justext": _justext,
    "resiliparse": _resiliparse,
    "boilerpy3": _boilerpy3,
}


def get_extractor(name: str, comments: bool = False) -> Extractor:
    """The extractor ``name`` of :data:`PEERS`; ``comments`` asks those that can tell reader
    comments apart (noisecbr, trafilatura) to keep them after the main text."""
    if name not in PEERS:
        raise ValueError(f"unknown extractor {name!r}; known: {', '.join(PEERS)}")
    if name in ("noisecbr", "trafilatura"):
        return PEERS[name](comments=comments)
    return PEERS[name]()


@dataclass
class BenchRow:
    """One extractor's row of a bench: its scores, speed, failures and near-empty pages."""

    name: str
    scores: Scores | None = None
    f1_ci: float = 0.0
    docs_per_second: float = 0.0
    failures: int = 0
    #: pages with fewer than EMPTY_WORDS words kept where the ground truth has TRUTH_WORDS+
    empty: int = 0
    note: str = ""
    pages: list[PageScore] = field(default_factory=list, repr=False)
    #: each page's word F1 (WCXB's metric: :func:`noisecbr.eval.metric.word_f1`)
    page_words: list[float] = field(default_factory=list, repr=False)
    page_types: list[str] = field(default_factory=list, repr=False)
    page_langs: list[str] = field(default_factory=list, repr=False)
    page_empty: list[bool] = field(default_factory=list, repr=False)
    #: code lines and table rows kept, and kept intact (with ``structure``: noisecbr_apps.structure)
    structure: StructureCounts | None = None


#: The name of the row :func:`oracle_row` adds.
ORACLE = "oracle: best row per page"


def oracle_row(rows: Sequence[BenchRow]) -> BenchRow:
    """A row that scores each page by whichever scored row did best on it (the F1 of its
    shingles), ties to the first: the ceiling of the extractors together on this ground truth.
    No extractor can know which choice is best without the truth; the row tells how high a
    target stands. A target near it asks one extractor to do as well as the best of the others
    on every page (no speed: it cleans nothing)."""
    scored = [row for row in rows if row.scores is not None]
    if not scored:
        raise BenchUsageError("the oracle needs at least one scored row")
    best = best_per_page([row.pages for row in scored])
    pages = [scored[k].pages[i] for i, k in enumerate(best)]
    return BenchRow(ORACLE, scores=aggregate(pages), f1_ci=bootstrap_f1(pages),
                    docs_per_second=float("nan"), empty=sum(scored[k].page_empty[i]
                                                            for i, k in enumerate(best)),
                    pages=pages, page_words=[scored[k].page_words[i] for i, k in enumerate(best)],
                    page_types=list(scored[0].page_types),
                    page_langs=list(scored[0].page_langs))


def best_per_page(scores: Sequence[Sequence[PageScore]]) -> list[int]:
    """For each page, which of the extractors' score lists did best on it (its page F1; ties
    to the first): the choice behind :func:`oracle_row`."""
    return [max(range(len(scores)), key=lambda k, i=i: scores[k][i].f1)
            for i in range(len(scores[0]))]


#: Pages one extractor cleans before the next takes its turn. This machine's speed drifts by
#: ±15 % over minutes (other tenants): with one extractor timed over all pages, then the next,
#: noisecbr measured 54 docs/s in one run and 72 in the next while trafilatura's figure barely
#: moved. Taking turns every few pages exposes each to the same drift; blocks of 20 keep
#: each extractor's caches warm within its turn.
ROUND_PAGES = 20


def _turns(extractors: int, block: int) -> list[int]:
    """The order in which the extractors take their turns on block number ``block``: each
    block starts with the next one. The first to clean a block pays for its pages' first
    reads and for the memory the previous turn freed: with a fixed order, noisecbr's balanced
    row (always first) measured 306 docs/s on dragnet where its precision and recall rows,
    which do the same work after it, measured 321 and 331."""
    return [(block + k) % extractors for k in range(extractors)]


def _run(named: Sequence[tuple[str, Callable[[LabelledPage], str]]],
         pages: Sequence[LabelledPage], structures: Sequence | None = None,
         progress: bool = False) -> list[BenchRow]:
    """Score and time each named extractor on every page, the extractors taking turns over
    blocks of :data:`ROUND_PAGES` pages (in an order that rotates from block to block); with
    ``structures`` (each page's :class:`~noisecbr_apps.structure.PageStructure`), count what each
    text keeps of it (untimed); ``progress``: a bar of the pages cleaned, on stderr."""
    import sys

    from tqdm import tqdm

    rows = [BenchRow(name, structure=StructureCounts() if structures else None)
            for name, _ in named]
    cpu = [0.0] * len(named)
    bar = tqdm(total=len(pages) * len(named), unit="page", desc="bench", leave=False,
               disable=not progress, file=sys.stderr)
    for number, first in enumerate(range(0, len(pages), ROUND_PAGES)):
        block = pages[first:first + ROUND_PAGES]
        for k in _turns(len(named), number):
            extract = named[k][1]
            for offset, page in enumerate(block):
                start = time.process_time()
                try:
                    text = extract(page)
                except Exception:  # noqa: BLE001 - a peer's crash on one page is its failure
                    text = ""
                    rows[k].failures += 1
                cpu[k] += time.process_time() - start
                empty = len(tokens(text)) < EMPTY_WORDS and len(tokens(page.truth)) >= TRUTH_WORDS
                rows[k].empty += empty
                rows[k].page_empty.append(empty)
                rows[k].pages.append(score_page(text, page.truth))
                rows[k].page_words.append(word_f1(text, page.truth))
                rows[k].page_types.append(page.page_type)
                rows[k].page_langs.append(page.lang)
                if structures:
                    rows[k].structure += structure_counts(structures[first + offset], text)
            bar.update(len(block))
    bar.close()
    for row, seconds in zip(rows, cpu):
        row.scores = aggregate(row.pages)
        row.f1_ci = bootstrap_f1(row.pages)
        row.docs_per_second = len(pages) / seconds if seconds > 0 else float("inf")
    return rows


def _fold_models() -> Callable:
    """:func:`training.crossval.fold_models`; :class:`BenchUsageError` saying what to install
    when torch is missing."""
    try:
        from training.crossval import fold_models
    except ImportError as error:
        raise BenchUsageError("cv trains fold models: it needs torch==2.13.0 and "
                              f"'noisecbr[train]': {error}") from error
    return fold_models


def page_key(page: LabelledPage) -> str:
    """A page's name across datasets: ``set/id``."""
    return f"{page.dataset}/{page.id}"


def _with_modes(model):
    """A fold model walks with the modes stored in the embedded default: the modes are part of
    the training recipe, chosen once on site-grouped folds (:mod:`training.modes`)."""
    modes = default_model().metadata.get("modes")
    if modes and "modes" not in model.metadata:
        model.metadata["modes"] = modes
    return model


def cv_models(pages: Sequence[LabelledPage], folds: int, seed: int, progress: bool,
               extra: Sequence[LabelledPage] = ()) -> dict:
    """The model of each page (by :func:`page_key`): the model of the fold that held the
    page's site out."""
    fold_models = _fold_models()
    models = {}
    for held_out, model in fold_models(pages, folds=folds, seed=seed, progress=progress,
                                       extra=extra):
        models.update(dict.fromkeys(held_out, _with_modes(model)))
    return models


#: A folder of fold models (``python -m training.crossval DATA --out DIR``): each page's fold
#: by ``set/id``, and ``fold{k}.safetensors``.
FOLDS_INDEX = "folds.json"


def _stored_fold_models(folder: str | Path, pages: Sequence[LabelledPage]) -> dict:
    """The model of each page (by :func:`page_key`) from a folder of fold models."""
    import json

    from noisecbr.score.artifact import load_model
    from noisecbr.score.model import ModelError

    folder = Path(folder)
    try:
        fold_of = json.loads((folder / FOLDS_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BenchUsageError(f"{folder} holds no readable {FOLDS_INDEX} ({error}): write it "
                              "with python -m training.crossval DATA --out DIR") from error
    missing = [page_key(page) for page in pages if page_key(page) not in fold_of]
    if missing:
        raise BenchUsageError(f"{len(missing)} pages are in no fold of {folder} (the first: "
                              f"{missing[0]}): its models were trained on other sets")
    models: dict = {}
    try:
        for fold in sorted({fold_of[page_key(page)] for page in pages}):
            models[fold] = _with_modes(load_model(folder / f"fold{fold}.safetensors"))
    except ModelError as error:
        raise BenchUsageError(str(error)) from error
    return {page_key(page): models[fold_of[page_key(page)]] for page in pages}


def _others(pages: Sequence[LabelledPage], per_site: int) -> dict[str, list[LabelledPage]]:
    """For each page (by id), ``per_site`` *other* pages of its site: the first by id."""
    by_site: dict[str, list[LabelledPage]] = {}
    for page in pages:
        by_site.setdefault(page.site, []).append(page)
    return {page.id: sorted((p for p in by_site[page.site] if p.id != page.id),
                            key=lambda p: p.id)[:per_site] for page in pages}


def _site_evidence(pages: Sequence[LabelledPage], per_site: int) -> dict[str, SiteEvidence]:
    """For each page (by id), the :class:`SiteEvidence` of ``per_site`` other pages of its
    site, unlabelled: what a crawl of that many pages of the site would show."""
    others = _others(pages, per_site)
    read: dict[str, SiteEvidence] = {}
    for page in {p.id: p for chosen in others.values() for p in chosen}.values():
        try:
            read[page.id] = SiteEvidence([build_table(tidy(page.html))])
        except InputError:
            read[page.id] = SiteEvidence()
    out = {}
    for page in pages:
        evidence = SiteEvidence()
        for other in others[page.id]:
            evidence = evidence.merged(read[other.id])
        out[page.id] = evidence
    return out


def _site_memories(pages: Sequence[LabelledPage], per_site: int) -> dict[str, SiteMemory]:
    """For each page, the memory of ``per_site`` *other* pages of its site (the first by id),
    labelled from their ground truth: what correcting that many pages of a site would teach."""
    from casebase.reuse import memory_from_truth

    built: dict[tuple[str, ...], SiteMemory] = {}
    memories = {}
    others = _others(pages, per_site)
    for page in pages:
        chosen = others[page.id]
        key = tuple(p.id for p in chosen)
        if key not in built:
            built[key] = memory_from_truth(chosen)
        memories[page.id] = built[key]
    return memories


def bench(
    dataset: str,
    extractors: Iterable[str] = ("noisecbr",),
    *,
    cv: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    model: str | None = None,
    progress: bool = False,
    with_sets: Sequence[str] = (),
    adapt: int = 0,
    site_pages: int = 0,
    truth: str = "full",
    comments: bool = False,
    modes: bool = False,
    oracle: bool = False,
    fold_models: str | Path | None = None,
    by_lang: bool = False,
    structure: bool = False,
    adapt_clicks: Sequence[int] = (),
) -> list[BenchRow]:
    """Score each extractor on the dataset's pages (the first ``limit`` if given).

    With ``fold_models`` (a folder ``python -m training.crossval`` wrote), noisecbr scores
    each page with the model of the fold that held its site out, trained as the embedded
    default is on all its sets at once: the embedded recipe on sites it never saw. With
    ``by_lang`` each page's language is read (:func:`page_language`) for
    ``format_by_type(rows, "lang")``.

    With ``cv``, noisecbr is scored by site-grouped fold models, trained on the other folds
    and on every page of the ``with_sets`` datasets whose site is not held out.

    With ``adapt`` K, only the pages of sites with more than K pages are scored, and noisecbr
    gets a second row: the same cleaner with the :class:`~noisecbr.site.memory.SiteMemory` of K
    other pages of the page's site, labelled from their ground truth (as if a user had corrected
    them).

    With ``adapt_clicks`` (numbers of clicks N), only the pages of sites with more than one page
    are scored, and noisecbr gets two rows per N: the same cleaner with the memory of N boxes
    of another page of the site (the first by id), each labelled as its ground truth labels
    it: the first N of the correction queue (:mod:`noisecbr_apps.corrections`), and N drawn at
    random from the same candidates (seeded by ``seed``).

    ``truth`` picks the ground truth scored against (:data:`TRUTHS`); ``comments`` asks
    noisecbr and trafilatura to keep reader comments after the main text; ``modes`` adds a
    noisecbr row for each mode on every page besides the default (``favor="auto"``);
    ``structure`` counts the code lines and table rows each text keeps intact
    (:mod:`noisecbr_apps.structure`)."""
    _check_options(with_sets=with_sets, cv=cv, fold_models=fold_models, model=model,
                   adapt=adapt, truth=truth, site_pages=site_pages, adapt_clicks=adapt_clicks)
    adapt_clicks = list(dict.fromkeys(adapt_clicks))
    per_site = max(adapt, site_pages, 1 if adapt_clicks else 0)
    pages, labelled = bench_pages(dataset, limit, per_site, truth, by_lang)
    # Every extractor is made ready first (fold models trained, peers imported), then all are
    # timed together, taking turns (see ROUND_PAGES); rows come back in the order asked.
    slots: list[BenchRow | tuple[str, Callable[[LabelledPage], str]]] = []
    for name in extractors:
        if name == "noisecbr":
            slots.extend(_noisecbr_slots(pages, labelled, cv=cv, seed=seed, model=model,
                                         progress=progress, with_sets=with_sets, adapt=adapt,
                                         site_pages=site_pages, adapt_clicks=adapt_clicks,
                                         comments=comments, modes=modes,
                                         fold_models=fold_models))
            continue
        try:
            extract = get_extractor(name, comments)
        except ImportError as error:
            slots.append(BenchRow(name, note=f"not installed ({error.name}): pip install "
                                             "'noisecbr[bench]'"))
            continue
        slots.append((name, lambda page, f=extract: f(page.html, page.url)))
    structures = [page_structure(page.html) for page in pages] if structure else None
    timed = iter(_run([s for s in slots if not isinstance(s, BenchRow)], pages, structures,
                      progress))
    rows = [s if isinstance(s, BenchRow) else next(timed) for s in slots]
    return rows + [oracle_row(rows)] if oracle else rows


def _check_options(*, with_sets, cv, fold_models, model, adapt, truth, site_pages,
                   adapt_clicks) -> None:
    """:class:`BenchUsageError` for options of :func:`bench` that do not fit together."""
    if with_sets and not cv:
        raise BenchUsageError("with_sets adds training data to the --cv fold models: give cv too")
    if fold_models and (cv or model):
        raise BenchUsageError("fold_models are the noisecbr models: give neither cv nor model")
    if adapt < 0:
        raise BenchUsageError(f"adapt is a number of pages per site, got {adapt}")
    if truth not in TRUTHS:
        raise BenchUsageError(f"truth must be one of {', '.join(TRUTHS)}, got {truth!r}")
    if site_pages < 0:
        raise BenchUsageError(f"site_pages is a number of pages per site, got {site_pages}")
    if any(clicks < 1 for clicks in adapt_clicks):
        raise BenchUsageError(f"adapt_clicks are numbers of clicks ≥ 1, got {list(adapt_clicks)}")


def bench_pages(dataset: str, limit: int | None, adapt: int, truth: str, by_lang: bool = False
                 ) -> tuple[list[LabelledPage], list[LabelledPage]]:
    """The pages a bench scores, with the ground truth it scores them against; and the same
    pages with the dataset's own ground truth, which labels what noisecbr learns from them
    (fold models, site memories) as the embedded model's training labels them: dragnet's reader
    comments as comments, whatever truth the bench scores against."""
    from dataclasses import replace

    labelled = list(read_dataset(dataset))
    if limit:
        labelled = labelled[:limit]
    if adapt:
        per_site = Counter(page.site for page in labelled)
        labelled = [page for page in labelled if per_site[page.site] > adapt]
        if not labelled:
            raise BenchUsageError(f"no site of {dataset} has more than {adapt} pages: --adapt, "
                                  "--site-pages and --adapt-clicks need that many other pages "
                                  "of a page's site")
    if by_lang:
        labelled = [replace(page, lang=page_language(page.html)) for page in labelled]
    if truth == "article":
        return [replace(page, truth=split_truth(page.truth)[0]) for page in labelled], labelled
    return labelled, labelled


def _noisecbr_slots(pages: Sequence[LabelledPage], labelled: Sequence[LabelledPage], *, cv,
                    seed, model, progress, with_sets, adapt, comments, modes, fold_models=None,
                    site_pages=0, adapt_clicks: Sequence[int] = ()
                    ) -> list[tuple[str, Callable[[LabelledPage], str]]]:
    """The noisecbr rows of a bench: the default cleaner (``favor="auto"``: each page's
    convention), each mode for every page with ``modes``, and the rows of a site's other pages
    (:func:`_site_slots`). Fold models and site memories learn from ``labelled`` (the pages
    with the dataset's own ground truth)."""
    if fold_models:
        model_of = _stored_fold_models(fold_models, labelled).__getitem__
        label = "noisecbr (recipe folds)"
    elif cv:
        extra = [page for path in with_sets for page in read_dataset(path)]
        model_of = cv_models(labelled, cv, seed, progress, extra).__getitem__
        label = f"noisecbr (cv {cv}" + "".join(f" + {Path(p).name}" for p in with_sets) + ")"
    else:
        single = Cleaner(model).model
        model_of = lambda key: single  # noqa: E731 - one model for every page
        label = "noisecbr"
    slots = []
    for favor in (FAVOR if modes else (AUTO,)):
        cleaner_of = page_cleaners(pages, model_of, favor, comments)
        name = label if favor == AUTO else f"{label} {favor}"
        slots.append((name, lambda page, c=cleaner_of: c[page_key(page)].clean(
            page.html, url=page.url).text))
    cleaner_of = page_cleaners(pages, model_of, AUTO, comments)
    return slots + _site_slots(label, cleaner_of, labelled, adapt=adapt, site_pages=site_pages,
                               adapt_clicks=adapt_clicks, seed=seed)


def _site_slots(label: str, cleaner_of: dict[str, Cleaner], labelled: Sequence[LabelledPage], *,
                adapt: int, site_pages: int, adapt_clicks: Sequence[int], seed: int
                ) -> list[tuple[str, Callable[[LabelledPage], str]]]:
    """The rows that clean each page with what other pages of its site teach: the memory of
    ``adapt`` labelled pages, ``site_pages`` unlabelled ones as evidence, and for each N of
    ``adapt_clicks`` the memory of N clicks on another page, queued and at random
    (:func:`_click_memories`)."""
    def row(name: str, **evidence: dict) -> tuple[str, Callable[[LabelledPage], str]]:
        def clean(page: LabelledPage) -> str:
            chosen = {kind: of[page.id] for kind, of in evidence.items()}
            return cleaner_of[page_key(page)].clean(page.html, url=page.url, **chosen).text
        return name, clean

    slots = []
    if adapt:
        slots.append(row(f"{label} + {adapt} labelled page{'s' * (adapt > 1)} of the site",
                         memory=_site_memories(labelled, adapt)))
    if site_pages:
        slots.append(row(f"{label} + {site_pages} unlabelled page{'s' * (site_pages > 1)} of "
                         "the site", site=_site_evidence(labelled, site_pages)))
    if adapt_clicks:
        memories = _click_memories(labelled, cleaner_of, adapt_clicks, seed)
        for clicks in adapt_clicks:
            for kind in CLICK_CHOICES:
                slots.append(row(f"{label} + {clicks} {kind} click{'s' * (clicks > 1)}",
                                 memory=memories[clicks, kind]))
    return slots


#: How the clicks of ``--adapt-clicks`` are chosen: the correction queue's first N boxes
#: (:mod:`noisecbr_apps.corrections`), and N boxes drawn at random (seeded) from the same
#: candidates.
CLICK_CHOICES = ("queued", "random")


def _clicked(page: LabelledPage, cleaner: Cleaner, recurrence, clicks: Sequence[int],
             seed: int) -> dict[tuple[int, str], SiteMemory]:
    """The memories N clicks on ``page`` teach, for each N of ``clicks`` and each of
    :data:`CLICK_CHOICES`: the page decided by ``cleaner``, its boxes ranked (markup counted on
    the site's pages in ``recurrence``, a :class:`noisecbr_apps.corrections.Recurrence` that holds
    this page too) or shuffled (seeded by ``seed`` and the page), each of the first N labelled as
    its ground truth labels it. Empty memories for a page that is not HTML."""
    import random

    from casebase.labelling import label_table
    from casebase.reuse import memory_from_boxes
    from noisecbr_apps.corrections import rank_boxes

    try:
        prepared = cleaner.prepare(page.html, url=page.url)
    except InputError:
        return {(n, kind): SiteMemory() for n in clicks for kind in CLICK_CHOICES}
    table, decided = prepared.table, cleaner.decide(prepared)
    order = {"queued": [entry.index for entry in rank_boxes(
        table, decided.proba, decided.decision, recurrence.without(table))]}
    order["random"] = sorted(order["queued"])
    random.Random(f"{seed}:{page_key(page)}").shuffle(order["random"])
    labels = label_table(table, page.truth).labels.tolist()
    return {(n, kind): memory_from_boxes(table, labels, order[kind][:n]) for n in clicks
            for kind in CLICK_CHOICES}


def _click_memories(labelled: Sequence[LabelledPage], cleaner_of: dict[str, Cleaner],
                    clicks: Sequence[int], seed: int) -> dict[tuple[int, str], dict]:
    """For each N of ``clicks`` and each of :data:`CLICK_CHOICES`, each page's memory (by id):
    what N clicks on another page of its site (the first by id, as ``adapt`` 1 takes it),
    decided by the page's cleaner, teach (:func:`_clicked`). The queue counts recurring
    markup on every page of the site in the set."""
    from noisecbr_apps.corrections import Recurrence

    sites: dict[str, Recurrence] = {}
    for page in labelled:
        try:
            table = build_table(tidy(page.html))
        except InputError:
            continue
        sites.setdefault(page.site, Recurrence()).add(table)
    others = _others(labelled, 1)
    built: dict[tuple[str, int], dict[tuple[int, str], SiteMemory]] = {}
    memories: dict[tuple[int, str], dict] = {(n, kind): {} for n in clicks
                                              for kind in CLICK_CHOICES}
    for page in labelled:
        (other,) = others[page.id]
        cleaner = cleaner_of[page_key(page)]
        key = (other.id, id(cleaner))
        if key not in built:
            built[key] = _clicked(other, cleaner, sites.get(other.site, Recurrence()), clicks,
                                  seed)
        for choice, memory in built[key].items():
            memories[choice][page.id] = memory
    return memories


def page_cleaner(pages: Sequence[LabelledPage], fold_models: str | Path | None = None
                 ) -> Callable[[LabelledPage], Cleaner]:
    """The default cleaner (``favor="auto"``) of each of ``pages``: the embedded model's, or with
    ``fold_models`` (a folder ``python -m training.crossval`` wrote) the one of the fold model
    that never saw the page's site."""
    if fold_models is None:
        cleaner = Cleaner()
        return lambda page: cleaner
    cleaners = page_cleaners(pages, _stored_fold_models(fold_models, pages).__getitem__, AUTO,
                             False)
    return lambda page: cleaners[page_key(page)]


def page_cleaners(pages: Sequence[LabelledPage], model_of, favor: str, comments: bool
                  ) -> dict[str, Cleaner]:
    """A cleaner per page (by :func:`page_key`), one per distinct model."""
    made: dict[int, Cleaner] = {}
    out = {}
    for page in pages:
        model = model_of(page_key(page))
        if id(model) not in made:
            made[id(model)] = Cleaner(model, favor=favor, comments=comments)
        out[page_key(page)] = made[id(model)]
    return out


def format_by_type(rows: Sequence[BenchRow], by: str = "type") -> str:
    """Each extractor's shingle F1 and word F1 (``shingle/word``) per page type (the ground
    truth's ``page_type``), most pages first, and over all pages: where an extractor's notion
    of main content fails (forums, product pages…); with ``by`` "lang", per page language
    (:func:`page_language`)."""
    scored = [row for row in rows if row.scores is not None]
    if not scored:
        return ""
    group_of = (lambda row: row.page_types) if by == "type" else (lambda row: row.page_langs)
    types = Counter(group_of(scored[0]))
    widths = [max(len(row.name), 11) for row in scored]
    head = "page type" if by == "type" else "language"
    lines = [f"{head:<16} {'pages':>5} " + " ".join(f"{row.name:>{w}}"
                                                   for row, w in zip(scored, widths))]
    lines.append("-" * len(lines[0]))
    groups = [(page_type, count) for page_type, count in types.most_common()]
    for page_type, count in [*groups, (None, len(group_of(scored[0])))]:
        cells = []
        for row, width in zip(scored, widths):
            mine = [k for k, t in enumerate(group_of(row)) if page_type is None or t == page_type]
            shingle = aggregate([row.pages[k] for k in mine]).f1
            words = mean_word_f1([row.page_words[k] for k in mine])
            cells.append(f"{f'{shingle:.3f}/{words:.3f}':>{width}}")
        name = "all" if page_type is None else page_type or "(none)"
        lines.append(f"{name:<16} {count:>5} " + " ".join(cells))
    return "\n".join(lines)


_HTML_LANG = re.compile(rb"<html\b[^>]*?\slang\s*=\s*[\"']?\s*([a-zA-Z]{2,3})", re.I)


def page_language(html: bytes) -> str:
    """A page's language for the bench's table by language: its ``<html lang>`` (the primary
    subtag, lower case), else the language noisecbr reads off its words
    (:func:`noisecbr.features.language.page_language`), else "?"."""
    declared = _HTML_LANG.search(html[:65536])
    if declared:
        return declared.group(1).decode("ascii").lower()
    from noisecbr.features.language import LANGUAGES
    from noisecbr.features.language import page_language as read_off
    from noisecbr.features.tokens import word_codes
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import InputError, tidy

    try:
        found = read_off(word_codes(build_table(tidy(html))))
    except InputError:
        return "?"
    return "?" if found is None else LANGUAGES[found]


def format_structure(rows: Sequence[BenchRow]) -> str:
    """The code lines and table rows each extractor's text kept intact, of those it kept."""
    counted = [row for row in rows if row.structure is not None]
    width = max([22, *(len(row.name) for row in counted)])
    header = (f"{'extractor':<{width}} {'code lines intact':>20} {'table rows intact':>20}")
    lines = [header, "-" * len(header)]

    def share(intact: int, kept: int) -> str:
        return f"{intact / kept:6.1%} of {kept:>6,}" if kept else f"{'–':>16}"

    for row in counted:
        counts = row.structure
        lines.append(f"{row.name:<{width}} {share(counts.code_intact, counts.code_kept):>20} "
                     f"{share(counts.rows_intact, counts.rows_kept):>20}")
    return "\n".join(lines)


def format_table(rows: Sequence[BenchRow]) -> str:
    """The bench's rows as a plain-text table: shingle P, R, F1 and its ±, the mean word F1,
    docs/s, failures, near-empty pages."""
    width = max([22, *(len(row.name) for row in rows)])
    header = (f"{'extractor':<{width}} {'P':>6} {'R':>6} {'F1':>6} {'±':>6} {'word':>6} "
              f"{'docs/s':>8} {'fail':>5} {'empty':>5}")
    lines = [header, "-" * len(header)]
    for row in rows:
        if row.scores is None:
            lines.append(f"{row.name:<{width}} {row.note}")
            continue
        s = row.scores
        speed = "–" if math.isnan(row.docs_per_second) else f"{row.docs_per_second:.1f}"
        lines.append(
            f"{row.name:<{width}} {s.precision:6.3f} {s.recall:6.3f} {s.f1:6.3f} {row.f1_ci:6.3f} "
            f"{mean_word_f1(row.page_words):6.3f} {speed:>8} {row.failures:5d} {row.empty:5d}"
        )
    return "\n".join(lines)
