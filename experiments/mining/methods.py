"""Cleaning methods of the mining evaluation: each turns the labelled pages of a
:class:`~experiments.mining.corpus.Corpus` into *documents*, the page's kept text (``str``) or, for
the CST, a weighted bag of words (``dict``).

The site-level methods (site style tree, CST weights, SiteLevel templates) and the site memory
act on pages whose host has at least :data:`MIN_SITE_PAGES` pages in the set; they are fitted on
all of that host's pages (the style tree, CST and templates are unsupervised, fitted on the
site's pages as in the papers; the memory, which reads ground truth, on the *other* pages only).
Elsewhere they fall back to the uncleaned text (the memory to the plain noisecbr text).

Documents are cached per set and method in ``cache/<set>/<method>.json`` (keyed by page and a
digest of its HTML), so a rerun recomputes only what is missing.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from lxml import etree

from noisecbr.cleaner import Cleaner
from noisecbr.eval.datasets import LabelledPage
from noisecbr.prepare.tidy import InputError, tidy
from noisecbr.render.text import render_text
from noisecbr.seeds import CompressedStructureTree, SiteStyleTree
from noisecbr.seeds.templates import label_templates

from .corpus import Corpus, page_key

__all__ = [
    "CACHE_VERSION",
    "METHODS",
    "METHOD_REVISIONS",
    "MIN_SITE_PAGES",
    "SITE_LEVEL",
    "Document",
    "FoldCleaners",
    "documents",
    "method_functions",
]

#: A host needs this many pages in the set for the site-level methods and the memory: two is
#: the least from which anything can repeat across a site (SiteLevel's own minimum).
MIN_SITE_PAGES = 2

#: Bumped whenever every method's output changes, so stale caches are recomputed.
CACHE_VERSION = 1

#: Per-method revisions on top of :data:`CACHE_VERSION`, bumped when one method's output
#: changes: 2 for the noisecbr methods since issue 14 (4-class models, the headline moved from
#: ``.text`` to ``.title``, reader comments out of ``.text``).
METHOD_REVISIONS = {"noisecbr (cv)": 2, "noisecbr + site memory (cv)": 2}

#: How often (pages) a slow method's partial results are written to its cache.
SAVE_EVERY = 50

Document = str | dict[str, float]

#: Method names in table order, and the site-level ones (which act on multi-page sites only).
METHODS = ("no cleaning", "noisecbr (cv)", "noisecbr + site memory (cv)", "site style tree",
           "CST weights", "SiteLevel templates removed", "trafilatura", "readability",
           "ground truth (reference)")
SITE_LEVEL = ("noisecbr + site memory (cv)", "site style tree", "CST weights",
              "SiteLevel templates removed")

#: Gives the cleaner that may clean a page (in the evaluation: the fold model that never saw
#: its site).
CleanerFor = Callable[[LabelledPage], Cleaner]


class FoldCleaners:
    """Cleaners of site-grouped cross-validation folds, trained on first use
    (:func:`training.crossval.fold_models`; the corpus's unlabelled pages join the training)."""

    def __init__(self, corpus: Corpus, folds: int = 5, seed: int = 0) -> None:
        self.corpus, self.folds, self.seed = corpus, folds, seed
        self._by_id: dict[str, Cleaner] | None = None

    def __call__(self, page: LabelledPage) -> Cleaner:
        if self._by_id is None:
            from training.crossval import fold_models

            print(f"{self.corpus.name}: training {self.folds} fold models…", file=sys.stderr)
            models = fold_models(self.corpus.pages, folds=self.folds, seed=self.seed,
                                 extra=self.corpus.extra)
            self._by_id = {pid: Cleaner(model) for ids, model in models for pid in ids}
        return self._by_id[page.id]


def _tidied(page: LabelledPage) -> etree._Element | None:
    try:
        return tidy(page.html)
    except InputError:
        return None


def _raw_text(page: LabelledPage) -> str:
    body = _tidied(page)
    return "" if body is None else render_text(body)


def _site_of(corpus: Corpus, page: LabelledPage) -> list[LabelledPage] | None:
    """The pages of the page's host when the site-level methods act on it, else None."""
    pages = corpus.site_pages.get(page.site, [])
    return pages if len(pages) >= MIN_SITE_PAGES else None


def _per_site(corpus: Corpus, todo: Sequence[LabelledPage],
              fit: Callable[[list[LabelledPage]], Callable[[LabelledPage], Document]],
              fallback: Callable[[LabelledPage], Document] = _raw_text) -> dict[str, Document]:
    """One fit per multi-page host (on all its pages), applied to its pages in ``todo``."""
    out: dict[str, Document] = {}
    fitted: dict[str, Callable[[LabelledPage], Document]] = {}
    for page in todo:
        site = _site_of(corpus, page)
        if site is None:
            out[page_key(page)] = fallback(page)
            continue
        if page.site not in fitted:
            fitted[page.site] = fit(site)
        out[page_key(page)] = fitted[page.site](page)
    return out


def _bodies(pages: Sequence[LabelledPage]) -> list[etree._Element]:
    return [body for page in pages if (body := _tidied(page)) is not None]


def _sst(site: list[LabelledPage]) -> Callable[[LabelledPage], Document]:
    bodies = _bodies(site)
    if not bodies:
        return _raw_text
    sst = SiteStyleTree().fit_bodies(bodies)

    def clean(page: LabelledPage) -> str:
        try:
            return sst.clean(page.html).text
        except InputError:
            return ""
    return clean


def _cst(site: list[LabelledPage]) -> Callable[[LabelledPage], Document]:
    bodies = _bodies(site)
    if not bodies:
        return _raw_text
    cst = CompressedStructureTree().fit_bodies(bodies)

    def weigh(page: LabelledPage) -> dict[str, float]:
        body = _tidied(page)
        return {} if body is None else cst.weights_of_body(body)
    return weigh


def _templates(site: list[LabelledPage]) -> Callable[[LabelledPage], Document]:
    tidied = [(page_key(page), body) for page in site if (body := _tidied(page)) is not None]
    labels = label_templates([body for _, body in tidied]) if tidied else []
    texts = {key: render_text(body, removed={e for e, is_t in marks.items() if is_t})
             for (key, body), marks in zip(tidied, labels, strict=True)}
    return lambda page: texts.get(page_key(page), "")


def _cleaned(cleaner_for: CleanerFor, page: LabelledPage, memory=None) -> str:
    """The headline and the main text (the headline is main content, which the papers' cleaned
    pages keep; noisecbr returns it apart in ``.title``). Reader comments are left out."""
    try:
        result = cleaner_for(page).clean(page.html, url=page.url or None, memory=memory)
    except InputError:
        return ""
    title = getattr(result, "title", None)
    return f"{title}\n\n{result.text}" if title else result.text


def _with_memory(corpus: Corpus, cleaner_for: CleanerFor, page: LabelledPage) -> str:
    from casebase.reuse import memory_from_truth

    site = _site_of(corpus, page)
    others = [p for p in site or () if page_key(p) != page_key(page)]
    memory = memory_from_truth(others) if others else None
    return _cleaned(cleaner_for, page, memory)


def _peer(name: str) -> Callable[[LabelledPage], str]:
    from noisecbr_apps.bench import get_extractor

    extract = get_extractor(name)

    def run(page: LabelledPage) -> str:
        try:
            return extract(page.html, page.url) or ""
        except Exception as error:  # noqa: BLE001 — a peer's own failure on a page: it extracted nothing
            print(f"{name} failed on {page_key(page)}: {error!r}", file=sys.stderr)
            return ""
    return run


PageMethod = Callable[[Corpus, Sequence[LabelledPage]], dict[str, Document]]


def _each(function: Callable[[LabelledPage], Document]) -> PageMethod:
    return lambda corpus, todo: {page_key(p): function(p) for p in todo}


def method_functions(cleaner_for: CleanerFor) -> dict[str, PageMethod]:
    """Every method of :data:`METHODS`, ``noisecbr`` ones cleaning with ``cleaner_for``."""
    return {
        "no cleaning": _each(_raw_text),
        "noisecbr (cv)": _each(lambda p: _cleaned(cleaner_for, p)),
        "noisecbr + site memory (cv)": lambda corpus, todo: {
            page_key(p): _with_memory(corpus, cleaner_for, p) for p in todo},
        "site style tree": lambda corpus, todo: _per_site(corpus, todo, _sst),
        "CST weights": lambda corpus, todo: _per_site(corpus, todo, _cst),
        "SiteLevel templates removed": lambda corpus, todo: _per_site(corpus, todo, _templates),
        "trafilatura": lambda corpus, todo: _each(_peer("trafilatura"))(corpus, todo),
        "readability": lambda corpus, todo: _each(_peer("readability"))(corpus, todo),
        "ground truth (reference)": _each(lambda p: p.truth),
    }


def _digest(page: LabelledPage) -> str:
    return hashlib.blake2b(page.html, digest_size=12).hexdigest()


def _version(method: str) -> int | str:
    revision = METHOD_REVISIONS.get(method)
    return CACHE_VERSION if revision is None else f"{CACHE_VERSION}.{revision}"


def _load(path: Path, version: int | str) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data.get("docs", {}) if data.get("version") == version else {}


def _save(path: Path, docs: dict[str, dict], version: int | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps({"version": version, "docs": docs}), encoding="utf-8")
    partial.replace(path)  # atomic: an interrupted run never leaves a torn cache


def _file_name(method: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in method).strip("-") + ".json"


def documents(corpus: Corpus, method: str, function: PageMethod,
              cache: Path | None = None) -> list[Document]:
    """The method's document of every labelled page of ``corpus``, computed where the cache
    (``cache/<set>/<method>.json``) has none for the page's current HTML."""
    path = cache / corpus.name / _file_name(method) if cache else None
    stored = _load(path, _version(method)) if path else {}
    todo = [p for p in corpus.pages if stored.get(page_key(p), {}).get("sha") != _digest(p)]
    # Per-site methods need a site's pages together; the others are saved as they go.
    batch = max(1, len(todo)) if method in SITE_LEVEL[1:] else SAVE_EVERY
    for start in range(0, len(todo), batch):
        part = todo[start:start + batch]
        docs = function(corpus, part)
        for page in part:
            stored[page_key(page)] = {"sha": _digest(page), "doc": docs[page_key(page)]}
        if path:
            _save(path, stored, _version(method))
    return [stored[page_key(p)]["doc"] for p in corpus.pages]
