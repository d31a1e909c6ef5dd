"""Fetch many URLs politely and clean them as they arrive (``noisecbr clean URL…``, ``--urls``,
``--sitemap``, ``--feed``).

Fetching runs in threads, one host per thread at a time (the :class:`noisecbr.web.fetch.Fetcher`
keeps each host's requests ``delay`` apart), so different hosts are fetched in parallel; the
pages are cleaned in this process or in ``jobs`` worker processes as they arrive, and each one
is written as soon as it is cleaned. A failure (robots.txt forbids the page, a timeout, an error
status, a page that is not HTML or too large) is that URL's only: it is named in the summary and
the others go on.

A crawl can resume: each JSONL row records the URL it was asked for, each file of a folder of
pages is named after it and written whole (moved into place), so :func:`already_written` knows
what a killed crawl finished, and the next run with ``--resume`` skips exactly those.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from noisecbr.prepare.limits import reading_problem
from noisecbr.prepare.tidy import InputError
from noisecbr.web.discover import page_urls, url_key
from noisecbr.web.fetch import Fetched, Fetcher, FetchError, RobotsDeniedError

from ..crawl.pool import CleanSettings
from ..crawl.warc import WarcPage, memory_for, result_row, site_windows
from ..formats import rendered

__all__ = ["Outcome", "fetch_all", "crawl", "already_written", "page_file", "ROW_FORMATS"]

#: Formats written one row per page (resumable by the row's ``requested_url``).
ROW_FORMATS = ("jsonl", "parquet")
#: Pages handed to a worker process at once: fetching, not cleaning, is a crawl's pace, so
#: chunks are small and a page is written soon after it arrives.
CHUNK_PAGES = 4
#: Fetched pages waiting to be cleaned, per worker: bounds memory when fetching outruns cleaning.
QUEUED_PER_WORKER = 8
#: The error of a URL robots.txt forbids (:attr:`Outcome.forbidden`).
FORBIDDEN = "forbidden by robots.txt"
_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class WebPage:
    """A fetched page on its way to be cleaned: the URL asked for, and the page."""

    requested: str
    redirects: tuple[str, ...]
    page: WarcPage


@dataclass
class Outcome:
    """What became of one URL: its output (a row, or a page's rendered text), or why not."""

    url: str
    output: dict[str, Any] | str | None = None
    error: str | None = None
    final_url: str | None = None
    forbidden: bool = False  # robots.txt forbids it: not requested, not a failure of the crawl


@dataclass
class CrawlCounts:
    """A crawl's counts, for its summary line."""

    cleaned: int = 0
    skipped: int = 0  # written by an earlier run (--resume), or the same page after redirects
    failures: list[tuple[str, str]] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)  # by robots.txt


# -- fetching --------------------------------------------------------------------------------
def fetch_all(fetcher: Fetcher, urls: Iterable[str], connections: int = 8,
              stop: threading.Event | None = None,
              follow: Callable[[Fetched], Iterable[str]] | None = None,
              limit: int | None = None
              ) -> Iterator[tuple[str, Fetched | None, str | None]]:
    """Fetch ``urls``: (url, fetched page, None) or (url, None, why not) for each, as they come.
    Each host's URLs are fetched in order by one thread at a time; up to ``connections``
    hosts at once. ``follow``: the links of a fetched page to fetch as well, those of its own
    host (each URL once, by :func:`url_key`), until ``limit`` URLs in all."""
    by_host: dict[str, deque[str]] = {}
    for url in urls:
        by_host.setdefault(_host(url), deque()).append(url)
    frontier = _Frontier({url_key(url) for group in by_host.values() for url in group}, limit)
    hosts: queue.SimpleQueue[tuple[str, deque[str]]] = queue.SimpleQueue()
    for item in by_host.items():
        hosts.put(item)
    results: queue.Queue = queue.Queue(maxsize=max(connections, 1) * 4)
    stop = stop or threading.Event()
    done = object()

    def work() -> None:
        try:
            while not stop.is_set():
                try:
                    host, group = hosts.get_nowait()
                except queue.Empty:
                    break
                while group and not stop.is_set():
                    url = group.popleft()
                    fetched, error = _fetch_one(fetcher, url)
                    if follow is not None and fetched is not None:
                        group.extend(_followed(follow, fetched, host, frontier))
                    _put(results, stop, (url, fetched, error))
        finally:  # whatever happens, the consumer hears that this thread is done
            _put(results, stop, done)

    threads = [threading.Thread(target=work, daemon=True, name=f"fetch-{i}")
               for i in range(max(1, min(connections, len(by_host))))]
    for thread in threads:
        thread.start()
    running = len(threads)
    try:
        while running:
            item = results.get()
            if item is done:
                running -= 1
            else:
                yield item
    finally:
        stop.set()  # a consumer that stops early stops the threads at their next page


def _host(url: str) -> str:
    """The host (and port) of ``url``; "" for a URL too malformed to tell (fetching it fails,
    saying why)."""
    try:
        return urlsplit(url).netloc.lower()
    except ValueError:
        return ""


def _followed(follow: Callable[[Fetched], Iterable[str]], fetched: Fetched, host: str,
              frontier: _Frontier) -> list[str]:
    """The links of ``fetched`` to fetch next: those of its own host (the host asked, or the
    one it redirected to: the Fetcher keeps each host's turns, whichever thread asks) not
    taken on before. A page whose links cannot be read gives none: it is written all the
    same."""
    own = {host, _host(fetched.final_url)}
    try:
        return frontier.new(link for link in follow(fetched) if _host(link) in own)
    except Exception:  # noqa: BLE001 - a page's links never stop a crawl
        return []


class _Frontier:
    """The URLs a crawl has taken on (by :func:`url_key`), shared by the fetching threads, and
    how many more it may take."""

    def __init__(self, seen: set[str], limit: int | None) -> None:
        self.seen, self.left = seen, None if limit is None else max(0, limit - len(seen))
        self.lock = threading.Lock()

    def new(self, links: Iterable[str]) -> list[str]:
        """Those of ``links`` not taken on before, within the limit (now taken on)."""
        taken = []
        for link in page_urls(links):
            key = url_key(link)
            with self.lock:
                if key in self.seen or self.left == 0:
                    continue
                self.seen.add(key)
                if self.left is not None:
                    self.left -= 1
            taken.append(link)
        return taken


def _put(results: queue.Queue, stop: threading.Event, item: object) -> None:
    while not stop.is_set():
        try:
            results.put(item, timeout=0.2)
            return
        except queue.Full:
            continue


def _fetch_one(fetcher: Fetcher, url: str) -> tuple[Fetched | None, str | None]:
    try:
        return fetcher.fetch(url), None
    except RobotsDeniedError:
        return None, FORBIDDEN
    except (FetchError, InputError) as error:
        return None, str(error)
    except OSError as error:
        return None, reading_problem(error)
    except Exception as error:  # noqa: BLE001 - one URL never stops a crawl; named in the summary
        return None, f"{type(error).__name__}: {error}"


def web_page(url: str, fetched: Fetched) -> WebPage:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return WebPage(url, fetched.redirects, WarcPage(url=fetched.final_url, record_id="",
                                                     date=now, payload=fetched.payload))


# -- cleaning --------------------------------------------------------------------------------
_settings: CleanSettings | None = None
_format = "jsonl"


def _init_worker(settings: CleanSettings, fmt: str) -> None:
    global _settings, _format
    _settings, _format = settings, fmt
    settings.cleaner()  # the model loaded now, once per worker


def clean_chunk(pages: list[WebPage]) -> list[Outcome]:
    """Clean fetched pages with this process's settings (:func:`_init_worker`): each one's row
    (or rendered page), or why it failed. With ``by_site``, the chunk's pages of one host are
    each other's evidence."""
    settings, cleaner = _settings, _settings.cleaner()
    by_page = {id(item.page): item for item in pages}
    paired = (site_windows(cleaner, [item.page for item in pages]) if settings.by_site
              else ((item.page, None) for item in pages))
    outcomes = []
    for page, evidence in paired:
        item = by_page[id(page)]
        try:
            memory = (memory_for(settings.memories, page.url)
                      if settings.memories is not None else None)
            result = cleaner.clean(page.payload, url=page.url, memory=memory, site=evidence,
                                   page_type=settings.page_type)
            if _format in ROW_FORMATS:
                output: dict[str, Any] | str = {
                    **result_row(result, page, settings.markdown),
                    "requested_url": item.requested, "redirects": list(item.redirects)}
            else:
                output = rendered(result, _format)
        except (InputError, OSError) as error:
            outcomes.append(Outcome(item.requested, error=reading_problem(error)))
            continue
        except Exception as error:  # noqa: BLE001 - one page never stops a crawl
            outcomes.append(Outcome(item.requested, error=f"{type(error).__name__}: {error}"))
            continue
        outcomes.append(Outcome(item.requested, output, final_url=page.url))
    return outcomes


def crawl(fetched: Iterable[tuple[str, Fetched | None, str | None]], settings: CleanSettings,
          fmt: str, jobs: int, emit: Callable[[Outcome], None], chunk: int = CHUNK_PAGES
          ) -> None:
    """Clean what :func:`fetch_all` yields (in ``jobs`` processes when more than one) and hand
    each URL's :class:`Outcome` to ``emit`` as soon as it is known."""
    _init_worker(settings, fmt)
    size = max(chunk, 64) if settings.by_site else chunk  # a host's pages are evidence together
    batch: list[WebPage] = []
    if jobs <= 1:
        for url, page, error in fetched:
            if page is None:
                emit(_failed(url, error))
                continue
            batch.append(web_page(url, page))
            if len(batch) >= (size if settings.by_site else 1):
                for outcome in clean_chunk(batch):
                    emit(outcome)
                batch = []
        for outcome in clean_chunk(batch):
            emit(outcome)
        return
    pending: deque[Future] = deque()
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(settings, fmt)) as pool:
        # The workers forked now, before the fetching threads start (forking a process whose
        # threads hold locks can leave the child a lock no one will release).
        pool.submit(_ready).result()
        def drain(limit: int) -> None:
            while len(pending) > limit or (pending and pending[0].done()):
                for outcome in pending.popleft().result():
                    emit(outcome)

        for url, page, error in fetched:
            if page is None:
                emit(_failed(url, error))
            else:
                batch.append(web_page(url, page))
                if len(batch) >= size:
                    pending.append(pool.submit(clean_chunk, batch))
                    batch = []
            drain(jobs * QUEUED_PER_WORKER // max(size, 1) + jobs)
        if batch:
            pending.append(pool.submit(clean_chunk, batch))
        drain(0)


def _ready() -> None:
    """Nothing: a first task, so that the pool's workers start at once."""


def _failed(url: str, error: str | None) -> Outcome:
    return Outcome(url, error=error, forbidden=error == FORBIDDEN)


# -- resuming --------------------------------------------------------------------------------
def page_file(url: str, fmt_suffix: str) -> Path:
    """The file (under the output folder) of one URL's page: its host's folder, a name read
    off its path and a digest of the whole URL (two URLs never share a file)."""
    parts = urlsplit(url)
    host = _NAME_CHARACTERS.sub("_", parts.netloc.lower()) or "_"
    tail = [part for part in parts.path.split("/") if part]
    stem = _NAME_CHARACTERS.sub("_", tail[-1] if tail else "index")
    for suffix in (".html", ".htm", ".php", ".aspx"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    digest = hashlib.sha256(url_key(url).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return Path(host) / f"{stem[:80] or 'page'}-{digest}{fmt_suffix}"


def write_page_file(folder: Path, relative: Path, text: str) -> None:
    """Write one page's file whole: to a temporary name, then moved into place, so that a
    killed crawl leaves no half-written page for ``--resume`` to take for a finished one."""
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".part")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, target)


def already_written(output: Path, fmt: str) -> set[str]:
    """The keys (:func:`url_key`) of the URLs whose rows a JSONL file already holds; a last
    line cut short by a killed crawl is removed, so that the file is whole JSONL again."""
    if fmt != "jsonl":
        raise ValueError("--resume reads a JSONL file or a folder of pages: a Parquet file is "
                         "readable only once closed (write -f jsonl, and convert at the end)")
    if not output.is_file():
        return set()
    done: set[str] = set()
    whole = 0
    with open(output, "rb+") as handle:  # read a line at a time: a crawl's rows may be GBs
        for line in handle:
            if not line.endswith(b"\n"):  # the row being written when the crawl was killed
                handle.truncate(whole)
                break
            whole += len(line)
            try:
                row = json.loads(line)
            except ValueError:
                continue  # not a row of ours: left as it is, its URL fetched again
            if isinstance(row, dict):  # the URL asked for, and the page it led to
                done.update(url_key(str(row[name])) for name in ("requested_url", "url")
                            if row.get(name))
    return done
