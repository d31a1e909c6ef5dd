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

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from noisecbr.eval.datasets import dataset_size, read_dataset
from noisecbr.eval.metric import PageScore, Scores, aggregate, score_page
from noisecbr.fsnames import shown
from noisecbr.prepare.tidy import InputError
from noisecbr.render.text import render_text

from .derived import PageDerived, derive
from .labelling import MAX_COVERAGE, T_DATA, T_NOISE
from .labelling import oracle as oracle_walk
from .models import Page
from .pages import content_hash, page_cases
from .retain import case_rows, insert_cases, insert_page

__all__ = ["BATCH_ROWS", "ImportReport", "default_jobs", "import_dataset", "show_progress"]

#: Case rows sent to the database per executemany inside the import's transaction.
BATCH_ROWS = 20_000


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
        """Shingle scores of the ground-truth labels' own walk (the labelling's ceiling), if
        measured.
        """
        return aggregate(self.oracle_pages) if self.oracle_pages else None

    @property
    def pages_per_second(self) -> float:
        """Pages read per wall-clock second of the import."""
        return self.read / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _Prepared:
    """A labelled page made ready in a worker: what the main process needs to store it."""

    html: bytes | None = None  # compressed stored HTML
    derived: PageDerived | None = None  # the page's vectors and outline
    declared_article: bool | None = None  # whether the page's head declared it an article
    rows: list[tuple] = field(default_factory=list)  # case rows with page_id 0
    score: PageScore | None = None  # oracle ceiling
    error: str | None = None  # the InputError, when the page could not be read


def _prepare_labelled(raw: bytes, truth: str, digest: str, parser: str,
                      thresholds: dict[str, float], oracle: bool) -> _Prepared:
    """Tidy, tabulate, vectorise and label one dataset page (in a worker process or inline)."""
    try:
        cases = page_cases(raw, truth=truth, parser=parser, digest=digest, **thresholds)
    except InputError as error:
        return _Prepared(error=str(error))
    except Exception as error:  # noqa: BLE001 - one page never stops an import: it is reported
        return _Prepared(error=f"unexpected {type(error).__name__}: {error}")
    page = cases.page
    rows = case_rows(page, 0, cases.labels, "ground_truth")
    score = None
    if oracle:
        removed, dropped_text = oracle_walk(page.table, cases.subtree_labels)
        elements = page.table.elements
        kept = render_text(page.body, {elements[i] for i in removed},
                           {elements[i] for i in dropped_text})
        score = score_page(kept, truth)
    return _Prepared(html=page.html, derived=derive(page.table), rows=rows, score=score,
                     declared_article=page.declared_article)


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
    from tqdm import tqdm

    directory = Path(directory)
    # The folder's name is the pages' source, stored as text: its bytes that are not UTF-8
    # backslash-escaped (issue 43, item 8).
    run = _DatasetImport(session, shown(directory.name), parser, batch_rows, on_page)
    total = dataset_size(directory) if limit is None else min(dataset_size(directory), limit)
    thresholds = {"t_data": t_data, "t_noise": t_noise, "max_coverage": max_coverage}
    pool = _worker_pool(jobs) if jobs > 0 else None
    started = time.perf_counter()
    run.bar = tqdm(total=total, unit="page", file=sys.stderr, disable=not show_progress(progress),
                   dynamic_ncols=True, desc=shown(directory.name))
    try:
        for labelled in read_dataset(directory, on_unreadable=run.unreadable):
            if limit is not None and run.report.read >= limit:
                break
            digest = run.read(labelled)
            if digest is None:
                continue
            arguments = (labelled.html, labelled.truth, digest, parser, thresholds, oracle)
            if pool is None:
                run.store(labelled, digest, _prepare_labelled(*arguments))
                continue
            run.inflight.append((labelled, digest,
                                 pool.apply_async(_prepare_labelled, arguments)))
            # A few pages per worker in flight: workers stay busy, memory stays bounded.
            while len(run.inflight) > 3 * jobs or (run.inflight and run.inflight[0][2] is None):
                run.drain_one()
        while run.inflight:
            run.drain_one()
        insert_cases(session, run.pending)
    finally:
        run.bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()
        run.report.seconds = time.perf_counter() - started
    return run.report


def show_progress(progress: bool) -> bool:
    """Show a progress bar only when asked to and stderr is a terminal: in a log, a bar is
    kilobytes of carriage returns."""
    return progress and sys.stderr.isatty()


def _worker_pool(jobs: int):
    """``jobs`` spawned worker processes that ignore Ctrl-C (the main process rolls back)."""
    import multiprocessing

    # spawn: workers share nothing with this process (no inherited database handles).
    return multiprocessing.get_context("spawn").Pool(jobs, initializer=_ignore_sigint)


class _DatasetImport:
    """The state of one :func:`import_dataset` run: the report, the pages known for the
    source, the case rows waiting to be inserted and the pages prepared by workers, stored in
    page order."""

    def __init__(self, session: Session, source: str, parser: str, batch_rows: int,
                 on_page: Callable[[ImportReport], None] | None) -> None:
        from collections import deque

        self.session, self.source, self.parser = session, source, parser
        self.batch_rows, self.on_page = batch_rows, on_page
        self.report = ImportReport(dataset=source)
        # sha256 → external id of the pages this source already has (one query, not one per
        # page).
        self.known: dict[str, str | None] = dict(session.execute(
            select(Page.content_hash, Page.external_id).where(Page.source == source)).all())
        self.site_cache: dict[str, int] = {}
        self.pending: list[tuple] = []
        self.inflight: deque = deque()
        self.bar = None

    def read(self, labelled) -> str | None:
        """Count a page read; its sha256, or None when it is a duplicate (then reported)."""
        report = self.report
        report.read += 1
        digest = content_hash(labelled.html)
        if digest not in self.known:
            self.known[digest] = labelled.id
            return digest
        report.duplicates.append(labelled.id)
        report.duplicate_of[labelled.id] = self.known[digest]
        if not self.inflight:
            self.finished()
        else:  # keep the report in page order: handle it after the pages before it
            self.inflight.append((labelled, digest, None))
        return None

    def unreadable(self, page_id: str, problem: str) -> None:
        """A page file that could not be read (damaged, too large): reported, skipped."""
        self.report.read += 1
        self.report.failed.append((page_id, problem))
        self.finished()

    def store(self, labelled, digest: str, prepared: _Prepared) -> None:
        """Insert a prepared page and queue its cases (inserted ``batch_rows`` at a time)."""
        report = self.report
        if prepared.error is not None:
            report.failed.append((labelled.id, prepared.error))
        else:
            page_id = insert_page(
                self.session, prepared.html, digest, url=labelled.url, source=self.source,
                external_id=labelled.id, host=labelled.site, truth=labelled.truth,
                parser=self.parser, declared_article=prepared.declared_article,
                derived=prepared.derived, site_cache=self.site_cache)
            report.cases.update(row[2] for row in prepared.rows)
            self.pending.extend((page_id, *row[1:]) for row in prepared.rows)
            if len(self.pending) >= self.batch_rows:
                insert_cases(self.session, self.pending)
                self.pending = []
            if prepared.score is not None:
                report.oracle_pages.append(prepared.score)
            report.imported += 1
        self.finished()

    def finished(self) -> None:
        """A page is done: advance the bar, call ``on_page``."""
        report = self.report
        self.bar.update(1)
        self.bar.set_postfix(new=report.imported, dup=len(report.duplicates),
                             failed=len(report.failed), refresh=False)
        if self.on_page is not None:
            self.on_page(report)

    def drain_one(self) -> None:
        """Store the oldest page in flight (waiting for its worker)."""
        labelled, digest, result = self.inflight.popleft()
        if result is None:  # a duplicate, already counted
            self.finished()
        else:
            self.store(labelled, digest, result.get())
