"""Cleaning WARC files on one machine: records stream from the archive to a process pool in
chunks and back to one output file per WARC, in record order (``noisecbr clean x.warc.gz``).

Only a bounded number of chunks is in flight at once, so memory stays flat however large the
crawl. Each worker loads the model once (:func:`noisecbr_apps.crawl.warc.cached_cleaner`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any

from noisecbr.decide.walk import AUTO

from .warc import (
    SITE_WINDOW,
    CrawlStats,
    RowWriter,
    WarcPage,
    cached_cleaner,
    clean_pages,
    iter_pages,
)

__all__ = ["CleanSettings", "clean_warc"]

#: Pages sent to a worker at once: 16 pages are ~0.25 s of work, enough to make the cost of
#: pickling a chunk to and from the worker small, few enough to keep the workers evenly busy.
CHUNK_PAGES = 16
#: Chunks in flight per worker: two keep a worker busy while its last result is written.
CHUNKS_PER_WORKER = 2


@dataclass(frozen=True)
class CleanSettings:
    """How each page is cleaned: the Cleaner's settings and the optional site memories."""

    model: str | None = None
    parser: str = "lxml"
    smooth: float | None = None
    max_bytes: int | None = None
    memories: Callable | None = None
    favor: str = AUTO
    comments: bool = False
    max_elements: int | None = None
    markdown: bool = False  # a markdown column in the rows
    by_site: bool = False  # clean each host's pages with what recurs on them
    title: bool | None = None  # the headline first in the text (None: as the page's kind)
    page_type: str | None = None  # every page's kind, in place of the kind model's

    def cleaner(self) -> Any:
        """This process's Cleaner for these settings (loaded once per process)."""
        return cached_cleaner(self.model, self.parser, self.smooth, self.max_bytes,
                              self.favor, self.comments, self.max_elements, self.title)


_settings: CleanSettings | None = None


def _init_worker(settings: CleanSettings) -> None:
    global _settings
    _settings = settings
    settings.cleaner()  # load the model now, once per worker


def _clean_chunk(pages: list[WarcPage]) -> tuple[list[dict[str, Any]], CrawlStats]:
    stats = CrawlStats()
    rows = list(clean_pages(_settings.cleaner(), pages, stats, _settings.memories,
                            _settings.markdown, _settings.by_site, _settings.page_type))
    return rows, stats


def _chunks(pages: Iterator[WarcPage], size: int) -> Iterator[list[WarcPage]]:
    while chunk := list(islice(pages, size)):
        yield chunk


def _pooled(pool: ProcessPoolExecutor, pages: Iterator[WarcPage], jobs: int, stats: CrawlStats,
            size: int = CHUNK_PAGES) -> Iterator[dict[str, Any]]:
    """The rows of ``pages`` cleaned in ``pool``, in order, with a bounded number in flight
    (chunks of ``size`` pages: with ``by_site``, a whole window of hosts goes to one worker)."""
    pending: deque[Future] = deque()
    for chunk in _chunks(pages, size):
        pending.append(pool.submit(_clean_chunk, chunk))
        while len(pending) >= jobs * CHUNKS_PER_WORKER:
            yield from _collect(pending.popleft(), stats)
    while pending:
        yield from _collect(pending.popleft(), stats)


def _collect(future: Future, stats: CrawlStats) -> list[dict[str, Any]]:
    rows, chunk_stats = future.result()
    stats.add(chunk_stats)
    return rows


def clean_warc(source: Any, writer: RowWriter, settings: CleanSettings,
               pool: ProcessPoolExecutor | None = None, jobs: int = 1,
               progress: Callable[[int], Any] | None = None) -> CrawlStats:
    """Clean every HTML page of the WARC ``source`` (a path or a binary stream) into
    ``writer``, in ``pool`` when one is given; returns the counts of the file. ``progress``
    is called with 1 for every page written."""
    stats = CrawlStats()
    pages = iter_pages(source, stats, settings.max_bytes)
    if pool is None:
        rows = clean_pages(settings.cleaner(), pages, stats, settings.memories, settings.markdown,
                           settings.by_site, settings.page_type)
    else:
        rows = _pooled(pool, pages, jobs, stats, SITE_WINDOW if settings.by_site else CHUNK_PAGES)
    for row in rows:
        writer.write(row)
        if progress is not None:
            progress(1)
    return stats


def worker_pool(jobs: int, settings: CleanSettings) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers, each with its own Cleaner of ``settings``."""
    return ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(settings,))
