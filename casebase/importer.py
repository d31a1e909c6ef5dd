"""Pages → cases: tidy, element table, vectors, labels, and bulk inserts.

:func:`import_dataset` reads a dataset in the article-extraction layout (``html/<id>.html.gz`` +
``ground-truth.json``) one page at a time and, for each page, stores the tidied body once and one
case per element (every element is a candidate subtree, so cases exist at every level), labelled
from the ground truth by :func:`casebase.labelling.label_table`. The whole import is one
transaction: rows are sent to the database in batches inside it (memory stays bounded) and
committed once at the end, so an interrupted import leaves the database as it was.

The oracle ceiling (keep data, drop noise, descend mixture with the known labels, then score
the rendered text against the ground truth) is computed in the same pass, on the same tree.
"""

from __future__ import annotations

import hashlib
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree
from lxml import html as lxml_html
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from noisecbr.layout import dataset_size, read_dataset, site_of
from noisecbr.metric import PageScore, Scores, aggregate, score_page
from noisecbr.render import render_text
from noisecbr.result import LABELS
from noisecbr.subtrees import ElementTable, build_table
from noisecbr.tidy import InputError, normalize_space, tidy
from noisecbr.vectors import VECTOR_SCHEMA, vectorize

from .labelling import MAX_COVERAGE, T_DATA, T_NOISE, label_table
from .labelling import oracle as oracle_walk
from .models import MAX_TEXT_CHARS, Case, Page, compress_html, decompress_html

__all__ = [
    "BATCH_ROWS",
    "CASE_COLUMNS",
    "AddedPage",
    "ImportReport",
    "PreparedPage",
    "add_page",
    "case_rows",
    "content_hash",
    "default_jobs",
    "import_dataset",
    "import_site",
    "insert_cases",
    "label_elements",
    "parse_stored",
    "prepare_page",
    "site_pages",
    "subtree_texts",
]

#: Case rows sent to the database per executemany inside the import's transaction.
BATCH_ROWS = 20_000


def content_hash(raw: bytes | str) -> str:
    """sha256 (hex) of the page as read (a str is hashed as UTF-8)."""
    return hashlib.sha256(raw.encode("utf-8") if isinstance(raw, str) else raw).hexdigest()


def subtree_texts(table: ElementTable, max_chars: int = MAX_TEXT_CHARS) -> list[str]:
    """Each subtree's text: its pieces whitespace-normalised and joined by one space, cut to
    ``max_chars``. Only the pieces that reach ``max_chars`` are joined, so the body (the whole
    page's text) costs no more than a paragraph."""
    pieces = [normalize_space(piece) for piece in table.piece_text]
    lengths = np.fromiter((len(p) + 1 for p in pieces), dtype=np.int64, count=len(pieces))
    cumulative = np.concatenate([[0], np.cumsum(lengths)])
    start, end = table.piece_start, table.piece_end
    # Pieces start..k-1 joined are cumulative[k] - cumulative[start] - 1 characters long.
    enough = np.searchsorted(cumulative, cumulative[start] + max_chars + 1, side="left")
    stop = np.minimum(enough, end)
    return [" ".join(pieces[a:b])[:max_chars] for a, b in zip(start.tolist(), stop.tolist())]


@dataclass
class PreparedPage:
    """A page tidied and tabulated, ready to be stored."""

    content_hash: str
    body: etree._Element
    table: ElementTable
    html: bytes  # compressed tidied body

    @property
    def paths(self) -> list[str]:
        return self.table.paths()


def parse_stored(html: str | bytes) -> etree._Element:
    """The ``<body>`` of a stored page (``Page.html`` decompressed), parsed the one way every
    case of the page was built from: a case's path selects its element in this tree."""
    if isinstance(html, bytes):
        html = html.decode("utf-8")
    document = lxml_html.document_fromstring(html, parser=_STORED_PARSER)
    body = document.find("body")
    return body if body is not None else document


_STORED_PARSER = lxml_html.HTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)


def stored_table(blob: bytes) -> ElementTable | None:
    """The element table of a stored page (``Page.html`` as the database holds it, compressed),
    in which each case's ``position`` and ``path`` were taken; None when the page cannot be read
    back (a damaged blob)."""
    try:
        return build_table(parse_stored(decompress_html(blob)))
    except (zlib.error, UnicodeDecodeError, ValueError, etree.LxmlError):
        return None


def prepare_page(raw: bytes | str, parser: str = "lxml", digest: str | None = None
                 ) -> PreparedPage:
    """Tidy a page, serialise the tidied body (what is stored) and tabulate that serialisation
    parsed again (raises :class:`noisecbr.tidy.InputError`).

    Cases come from the stored HTML re-parsed, not from the tidied tree itself: on about 2 % of
    pages the serialisation does not parse back into the same tree (a list item outside a list,
    a second ``<html>`` after a premature ``</html>``), and the stored page must reproduce every
    case exactly, for ``casebase show`` and for recomputing vectors under a new schema.
    """
    tidied = tidy(raw, parser=parser)
    serialised = lxml_html.tostring(tidied, encoding="unicode", with_tail=False)
    body = parse_stored(serialised)
    table = build_table(body)
    return PreparedPage(digest or content_hash(raw), body, table, compress_html(serialised))


#: Column order of the tuples :func:`case_rows` returns.
CASE_COLUMNS = ("page_id", "path", "position", "tag", "label", "label_source", "text", "vector",
                "schema_version", "count")


def case_rows(
    page: PreparedPage,
    page_id: int,
    labels: np.ndarray,
    label_source: str,
    indices: Sequence[int] | np.ndarray | None = None,
    vectors: np.ndarray | None = None,
) -> list[tuple]:
    """Rows (tuples in :data:`CASE_COLUMNS` order) of the elements ``indices`` (all by
    default); ``labels`` are indices into LABELS, one per element of the page."""
    table = page.table
    if vectors is None:
        vectors = vectorize(table)
    vectors = np.ascontiguousarray(vectors, dtype="<f4")
    width = vectors.shape[1] * 4
    blob = vectors.tobytes()
    paths = table.paths()
    texts = subtree_texts(table)
    tags = table.tags
    names = [LABELS[k] for k in labels.tolist()]
    chosen = range(len(table)) if indices is None else [int(i) for i in indices]
    return [
        (page_id, paths[i], i, tags[i][:64], names[i], label_source, texts[i],
         blob[i * width:(i + 1) * width], VECTOR_SCHEMA, 1)
        for i in chosen
    ]


def insert_cases(session: Session, rows: list[tuple]) -> None:
    """Bulk-insert case rows (tuples in :data:`CASE_COLUMNS` order) in ``session``'s
    transaction. On SQLite the tuples go straight to the driver's executemany (about twice as
    fast as a Core insert of dicts, which other databases get)."""
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql(_SQLITE_INSERT, rows)
    else:
        connection.execute(insert(Case.__table__), [dict(zip(CASE_COLUMNS, row)) for row in rows])


_SQLITE_INSERT = (f"INSERT INTO cases ({', '.join(CASE_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(CASE_COLUMNS))})")


def _insert_page(session: Session, page: PreparedPage, *, url: str, source: str,
                 external_id: str | None, host: str, truth: str | None, parser: str,
                 site_cache: dict[str, int] | None = None) -> int:
    return _insert_page_row(session, page.html, page.content_hash, url=url, source=source,
                            external_id=external_id, host=host, truth=truth, parser=parser,
                            site_cache=site_cache)


def _insert_page_row(session: Session, html: bytes, digest: str, *, url: str, source: str,
                     external_id: str | None, host: str, truth: str | None, parser: str,
                     site_cache: dict[str, int] | None = None) -> int:
    from .store import CaseBase

    site_id = CaseBase.site_id(session, host, site_cache)
    result = session.execute(insert(Page).values(
        site_id=site_id, url=url or "", source=source, external_id=external_id,
        content_hash=digest, parser=parser, html=html, truth=truth))
    return int(result.inserted_primary_key[0])


@dataclass
class AddedPage:
    page_id: int | None  # None when the page was already there (duplicate)
    duplicate_of: int | None = None
    cases: Counter = field(default_factory=Counter)  # per label
    unknown_paths: list[str] = field(default_factory=list)


def add_page(
    session: Session,
    html: bytes | str,
    *,
    url: str = "",
    source: str = "import",
    external_id: str | None = None,
    site: str | None = None,
    truth: str | None = None,
    labels: Mapping[str, str] | None = None,
    label_source: str | None = None,
    parser: str = "lxml",
    t_data: float = T_DATA,
    t_noise: float = T_NOISE,
    max_coverage: float = MAX_COVERAGE,
) -> AddedPage:
    """Store one page and its cases in ``session``.

    ``labels`` maps XPaths (evaluated on the tidied page, e.g. the paths ``casebase show``
    prints) to labels: each element a path selects becomes a case with that label (default
    source ``human``); paths that select nothing are returned in ``unknown_paths``. Without
    ``labels`` but with ``truth``, every element becomes a case labelled from the ground truth
    (source ``ground_truth``). With neither, only the page is stored. A page already stored for
    ``source`` (same sha256) is not stored again: ``page_id`` is None and ``duplicate_of`` set.
    Raises :class:`noisecbr.tidy.InputError` for input that is not a page.
    """
    from .store import _check_source

    digest = content_hash(html)
    existing = _find_page(session, source, digest)
    if existing is not None:
        return AddedPage(None, duplicate_of=existing)
    page = prepare_page(html, parser, digest)
    host = site or site_of(url, f"{source}/{external_id or digest[:16]}")
    page_id = _insert_page(session, page, url=url, source=source, external_id=external_id,
                           host=host, truth=truth, parser=parser)
    added = AddedPage(page_id)
    if labels is not None:
        label_source = label_source or "human"
        _check_source(label_source)
        per_element, chosen, added.unknown_paths = label_elements(page, labels)
        rows = case_rows(page, page_id, per_element, label_source, chosen)
    elif truth is not None:
        label_source = label_source or "ground_truth"
        _check_source(label_source)
        subtree_labels = label_table(page.table, truth, t_data=t_data, t_noise=t_noise,
                                     max_coverage=max_coverage)
        rows = case_rows(page, page_id, subtree_labels.labels, label_source)
    else:
        rows = []
    insert_cases(session, rows)
    added.cases.update(row[4] for row in rows)
    return added


def label_elements(page: PreparedPage, labels: Mapping[str, str]
                   ) -> tuple[np.ndarray, list[int], list[str]]:
    """The elements of ``page`` that the XPaths of ``labels`` select: (a label index per
    element of the page, the selected elements' positions in document order, the paths that
    select no element). Raises :class:`casebase.store.CaseBaseError` for an unknown label or
    an invalid XPath."""
    from .store import CaseBaseError, _check_label

    index = {element: i for i, element in enumerate(page.table.elements)}
    tree = page.body.getroottree()
    per_element = np.zeros(len(page.table), dtype=np.int8)
    chosen: dict[int, None] = {}
    unknown: list[str] = []
    for path, label in labels.items():
        _check_label(label)
        try:
            found = tree.xpath(path)
        except etree.XPathError as error:
            raise CaseBaseError(f"invalid XPath {path!r}: {error}") from error
        elements = [index[e] for e in found if isinstance(e, etree._Element) and e in index]
        if not elements:
            unknown.append(path)
        for i in elements:
            per_element[i] = LABELS.index(label)
            chosen[i] = None
    return per_element, sorted(chosen), unknown


def _find_page(session: Session, source: str, digest: str) -> int | None:
    from .store import CaseBase

    return CaseBase.find_page(session, source, digest)


@dataclass
class ImportReport:
    """What :func:`import_dataset` did."""

    dataset: str
    read: int = 0
    imported: int = 0
    duplicates: list[str] = field(default_factory=list)  # page ids already in the case base
    #: for each duplicate, the external id of the stored page with the same bytes
    duplicate_of: dict[str, str | None] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (page id, error)
    cases: Counter = field(default_factory=Counter)  # per label
    oracle_pages: list[PageScore] = field(default_factory=list)
    #: site-template import: template paths that are no element of the tidied page
    unmatched_paths: int = 0
    seconds: float = 0.0

    @property
    def oracle(self) -> Scores | None:
        return aggregate(self.oracle_pages) if self.oracle_pages else None

    @property
    def pages_per_second(self) -> float:
        return self.read / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _Prepared:
    """A labelled page made ready in a worker: what the main process needs to store it."""

    html: bytes | None = None  # compressed stored HTML
    rows: list[tuple] = field(default_factory=list)  # case rows with page_id 0
    score: PageScore | None = None  # oracle ceiling
    error: str | None = None  # the InputError, when the page could not be read


def _prepare_labelled(raw: bytes, truth: str, digest: str, parser: str,
                      thresholds: dict[str, float], oracle: bool) -> _Prepared:
    """Tidy, tabulate, vectorise and label one dataset page (in a worker process or inline)."""
    try:
        page = prepare_page(raw, parser, digest)
    except InputError as error:
        return _Prepared(error=str(error))
    except Exception as error:  # noqa: BLE001 - one page never stops an import: it is reported
        return _Prepared(error=f"unexpected {type(error).__name__}: {error}")
    subtree_labels = label_table(page.table, truth, **thresholds)
    rows = case_rows(page, 0, subtree_labels.labels, "ground_truth")
    score = None
    if oracle:
        removed, dropped_text = oracle_walk(page.table, subtree_labels)
        elements = page.table.elements
        kept = render_text(page.body, {elements[i] for i in removed},
                           {elements[i] for i in dropped_text})
        score = score_page(kept, truth)
    return _Prepared(html=page.html, rows=rows, score=score)


def _ignore_sigint() -> None:
    import signal

    # Ctrl-C reaches the whole process group: only the main process handles it (rollback).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_jobs() -> int:
    """Worker processes for an import: one per CPU, at most 4 (the main process inserts)."""
    import os

    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1)))


def import_dataset(
    session: Session,
    directory: str | Path,
    *,
    t_data: float = T_DATA,
    t_noise: float = T_NOISE,
    max_coverage: float = MAX_COVERAGE,
    limit: int | None = None,
    parser: str = "lxml",
    oracle: bool = True,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
    jobs: int = 0,
    on_page: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import a dataset's pages into ``session`` (the caller commits: one transaction).

    Pages already stored for this dataset, or read earlier in this import (same sha256), are
    skipped and listed in ``duplicates``; pages that are not HTML (:class:`InputError`) are
    skipped and listed in ``failed``. ``jobs`` worker processes prepare pages (tidy, table,
    vectors, labels, oracle) while this process inserts; 0 prepares them here. The result does
    not depend on ``jobs``. ``on_page`` is called after each page read.
    """
    from collections import deque

    from tqdm import tqdm

    directory = Path(directory)
    source = directory.name
    report = ImportReport(dataset=source)
    total = dataset_size(directory)
    if limit is not None:
        total = min(total, limit)
    thresholds = {"t_data": t_data, "t_noise": t_noise, "max_coverage": max_coverage}
    # sha256 → external id of the pages this source already has (one query, not one per page).
    known: dict[str, str | None] = dict(session.execute(
        select(Page.content_hash, Page.external_id).where(Page.source == source)).all())
    site_cache: dict[str, int] = {}
    pending: list[tuple] = []
    pool = None
    if jobs > 0:
        import multiprocessing

        # spawn: workers share nothing with this process (no inherited database handles).
        pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_ignore_sigint)
    inflight: deque = deque()
    started = time.perf_counter()
    bar = tqdm(total=total, unit="page", file=sys.stderr, disable=not progress,
               dynamic_ncols=True, desc=source)

    def store(labelled, digest: str, prepared: _Prepared) -> None:
        nonlocal pending
        if prepared.error is not None:
            report.failed.append((labelled.id, prepared.error))
        else:
            page_id = _insert_page_row(
                session, prepared.html, digest, url=labelled.url, source=source,
                external_id=labelled.id, host=labelled.site, truth=labelled.truth,
                parser=parser, site_cache=site_cache)
            report.cases.update(row[4] for row in prepared.rows)
            pending.extend((page_id, *row[1:]) for row in prepared.rows)
            if len(pending) >= batch_rows:
                insert_cases(session, pending)
                pending = []
            if prepared.score is not None:
                report.oracle_pages.append(prepared.score)
            report.imported += 1
        finished()

    def finished() -> None:
        bar.update(1)
        bar.set_postfix(new=report.imported, dup=len(report.duplicates),
                        failed=len(report.failed), refresh=False)
        if on_page is not None:
            on_page(report)

    try:
        for labelled in read_dataset(directory):
            if limit is not None and report.read >= limit:
                break
            report.read += 1
            digest = content_hash(labelled.html)
            if digest in known:
                report.duplicates.append(labelled.id)
                report.duplicate_of[labelled.id] = known[digest]
                if not inflight:
                    finished()
                else:  # keep the report in page order: handle it after the pages before it
                    inflight.append((labelled, digest, None))
                continue
            known[digest] = labelled.id
            arguments = (labelled.html, labelled.truth, digest, parser, thresholds, oracle)
            if pool is None:
                store(labelled, digest, _prepare_labelled(*arguments))
                continue
            inflight.append((labelled, digest, pool.apply_async(_prepare_labelled, arguments)))
            # A few pages per worker in flight: workers stay busy, memory stays bounded.
            while len(inflight) > 3 * jobs or (inflight and inflight[0][2] is None):
                _drain_one(inflight, store, finished)
        while inflight:
            _drain_one(inflight, store, finished)
        insert_cases(session, pending)
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()
        report.seconds = time.perf_counter() - started
    return report


def _drain_one(inflight, store, finished) -> None:
    labelled, digest, result = inflight.popleft()
    if result is None:  # a duplicate, already counted
        finished()
    else:
        store(labelled, digest, result.get())


def site_pages(directory: str | Path) -> list[Path]:
    """The .html and .html.gz files of a folder (one site's pages), sorted by name."""
    directory = Path(directory)
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.name.endswith((".html", ".htm", ".html.gz", ".htm.gz")))


def read_page_bytes(path: Path) -> bytes:
    """A page file's bytes, gunzipped when its name ends in ``.gz``."""
    import gzip

    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def import_site(
    session: Session,
    directory: str | Path,
    host: str,
    *,
    theta: float = 0.10,
    share: float = 0.85,
    parser: str = "lxml",
    source: str | None = None,
    progress: bool = False,
) -> ImportReport:
    """Import the pages of one site (a folder of .html/.html.gz files) with the subtrees that
    :func:`noisecbr.sitelevel.templates.template_labels` finds repeated across them (the
    site's template) as noise cases, label source ``site_template``.

    Only template subtrees become cases: a subtree that is not part of the template is not
    thereby content (an ad or a related-links box differs from page to page), so it gets no
    label rather than a wrong one. Every template subtree is a case, at every level, as in a
    ground-truth import. Pages are stored under ``source`` (default ``site:<host>``); pages
    already stored there are skipped, pages that are not HTML are reported in ``failed``.
    ``report.unmatched_paths`` counts template paths that are not elements of the tidied
    page (the two sides parsed differently).
    """
    from noisecbr.sitelevel.templates import template_labels
    from tqdm import tqdm

    files = site_pages(directory)
    source = source or f"site:{host}"
    report = ImportReport(dataset=source)
    started = time.perf_counter()
    raws = [read_page_bytes(path) for path in files]
    templates = template_labels(raws, theta=theta, share=share)
    if len(templates) != len(raws):
        raise ValueError(f"template_labels returned {len(templates)} results for {len(raws)} "
                         "pages")
    site_cache: dict[str, int] = {}
    noise = LABELS.index("noise")
    bar = tqdm(total=len(files), unit="page", file=sys.stderr, disable=not progress,
               dynamic_ncols=True, desc=host)
    try:
        for path, raw, template in zip(files, raws, templates):
            report.read += 1
            bar.update(1)
            digest = content_hash(raw)
            existing = _find_page(session, source, digest)
            if existing is not None:
                report.duplicates.append(path.name)
                report.duplicate_of[path.name] = session.execute(
                    select(Page.external_id).where(Page.id == existing)).scalar()
                continue
            try:
                page = prepare_page(raw, parser, digest)
            except InputError as error:
                report.failed.append((path.name, str(error)))
                continue
            except Exception as error:  # noqa: BLE001 - reported, the other pages go on
                report.failed.append((path.name, f"unexpected {type(error).__name__}: {error}"))
                continue
            page_id = _insert_page(session, page, url="", source=source,
                                   external_id=path.name, host=host, truth=None,
                                   parser=parser, site_cache=site_cache)
            position = {p: i for i, p in enumerate(page.paths)}
            chosen = sorted(position[p] for p, is_template in template.items()
                            if is_template and p in position)
            report.unmatched_paths += sum(
                1 for p, is_template in template.items() if is_template and p not in position)
            labels = np.full(len(page.table), noise, dtype=np.int8)
            rows = case_rows(page, page_id, labels, "site_template", chosen)
            insert_cases(session, rows)
            report.cases["noise"] += len(rows)
            report.imported += 1
    finally:
        bar.close()
        report.seconds = time.perf_counter() - started
    return report
