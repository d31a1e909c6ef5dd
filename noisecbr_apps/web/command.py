"""``noisecbr clean`` of URLs, a URL list, sitemaps and feeds: where the pages come from, where
each one goes, the progress bar and the summary. Called by :mod:`noisecbr_apps.cli`."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import click

from noisecbr.errors import NoisecbrError
from noisecbr.exits import EXIT_INTERRUPTED
from noisecbr.fsnames import shown
from noisecbr.prepare.limits import reading_problem
from noisecbr.web.discover import discover_urls, is_url, listed_urls, page_links, url_key
from noisecbr.web.fetch import (
    DEFAULT_DELAY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    Fetched,
    Fetcher,
)

from ..crawl.pool import CleanSettings
from .crawl import (
    ROW_FORMATS,
    CrawlCounts,
    Outcome,
    already_written,
    crawl,
    fetch_all,
    page_file,
    write_page_file,
)

__all__ = ["WebOptions", "WebUsageError", "is_url", "clean_web"]

#: Pages a ``--crawl`` fetches without ``--max-pages``: a site's links lead on without end (a
#: calendar, a search, a tag cloud), and a crawl is meant to be asked for by its size.
CRAWL_MAX_PAGES = 100
_SUFFIXES = {"text": ".txt", "markdown": ".md", "html": ".html", "json": ".json"}


class WebUsageError(NoisecbrError):
    """Options that do not fit web input, or a crawl interrupted (Ctrl-C): the command line
    says so and exits with ``code``."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class WebOptions:
    """Where the URLs come from and how they are fetched."""

    urls: tuple[str, ...] = ()
    urls_file: str | None = None
    sitemaps: tuple[str, ...] = ()
    feeds: tuple[str, ...] = ()
    max_pages: int | None = None
    user_agent: str | None = None
    delay: float = DEFAULT_DELAY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    connections: int = 8
    resume: bool = False
    #: Pages to start a crawl from: their links to pages of their own host are followed.
    crawls: tuple[str, ...] = ()

    @property
    def one_page(self) -> bool:
        """Whether one URL alone is asked for: it is written as one page file is."""
        return (len(self.urls) == 1 and not self.urls_file and not self.sitemaps
                and not self.feeds and not self.crawls)

    @property
    def limit(self) -> int | None:
        """The most pages to fetch: ``max_pages``; a crawl that follows links stops at
        :data:`CRAWL_MAX_PAGES` unless told otherwise."""
        if self.max_pages is None and self.crawls:
            return CRAWL_MAX_PAGES
        return self.max_pages


def _listed(path: str) -> list[str]:
    """The URLs of a ``--urls`` file (one per line; blank lines and ``#`` comments skipped;
    ``-``: standard input)."""
    try:
        text = (sys.stdin.read() if path == "-"
                else Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError as error:
        raise WebUsageError(f"--urls {path}: {reading_problem(error)}", 3) from error
    return listed_urls(text.splitlines())


def _say(message: str) -> None:
    click.echo(f"noisecbr: {shown(message)}", err=True)


def _discovered(fetcher: Fetcher, options: WebOptions, failures: list[tuple[str, str]]
                ) -> list[str]:
    """Every URL to fetch, in order: those given, then each sitemap's and feed's."""
    given = (list(options.crawls) + list(options.urls)
             + (_listed(options.urls_file) if options.urls_file else []))
    bad = [url for url in (*given, *options.sitemaps, *options.feeds) if not is_url(url)]
    if bad:
        raise WebUsageError(f"not an http(s) URL: {bad[0]}" + (
            f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""), 2)
    return discover_urls(fetcher, given, sitemaps=options.sitemaps, feeds=options.feeds,
                         max_pages=options.limit, failures=failures, say=_say)


def clean_web(options: WebOptions, output: Path | None, fmt: str | None,
              settings: CleanSettings, max_bytes: int, jobs: int, quiet: bool,
              default_format: str) -> int:
    """Fetch and clean the pages of ``options`` into ``output``; returns the number of URLs
    that failed (each named on stderr)."""
    import threading

    from tqdm import tqdm

    fmt, folder = _shape(options, output, fmt, default_format)
    fetcher = Fetcher(user_agent=options.user_agent or DEFAULT_USER_AGENT,
                      timeout=options.timeout, max_bytes=max_bytes, delay=options.delay,
                      retries=options.retries)
    counts = CrawlCounts()
    stop = threading.Event()  # set on the way out, however it goes: the fetching threads stop
    try:
        urls = _discovered(fetcher, options, counts.failures)
        done = _done(output, fmt, folder, urls) if options.resume else set()
        # A crawl fetches its starts again for their links; the sink writes no page twice.
        starts = {url_key(url) for url in options.crawls}
        todo = [url for url in urls if url_key(url) not in done or url_key(url) in starts]
        counts.skipped = len(urls) - len(todo)
        if counts.skipped:
            _say(f"--resume: {counts.skipped} of {len(urls)} URLs are written already")
        bar = tqdm(total=None if options.crawls else len(todo), unit="page", file=sys.stderr,
                   disable=quiet or options.one_page or None)
        started = time.monotonic()
        with _Sink(output, fmt, folder, settings.markdown, options.resume, done,
                   headers=not options.one_page) as sink:
            def emit(outcome: Outcome) -> None:
                bar.update(1)
                if outcome.forbidden:
                    counts.forbidden.append(outcome.url)
                elif outcome.error is not None:
                    counts.failures.append((outcome.url, outcome.error))
                    bar.set_postfix(failed=len(counts.failures), refresh=False)
                elif sink.write(outcome):
                    counts.cleaned += 1
                else:
                    counts.skipped += 1

            try:
                crawl(fetch_all(fetcher, todo, options.connections, stop=stop,
                                follow=_follower(options), limit=options.limit),
                      settings, fmt, jobs, emit)
            except KeyboardInterrupt:  # what is written stays whole (the sink closes it)
                bar.close()
                raise WebUsageError(f"interrupted: {counts.cleaned} pages written" + (
                    "; the same command with --resume goes on" if folder or fmt == "jsonl"
                    and output is not None else ""),
                    EXIT_INTERRUPTED) from None
        bar.close()
        seconds = time.monotonic() - started
    finally:
        stop.set()
        fetcher.close()
    if options.one_page and counts.forbidden:
        counts.failures.append((counts.forbidden[0], "robots.txt forbids this page to "
                                f"{fetcher.user_agent}: it was not requested"))
    elif not options.one_page:
        rate = counts.cleaned / seconds if seconds > 0 else 0.0
        _say(f"{len(urls)} URLs: {counts.cleaned} cleaned, {len(counts.failures)} failed, "
             f"{len(counts.forbidden)} forbidden by robots.txt (not requested), "
             f"{counts.skipped} skipped (written before, or the same page after redirects); "
             f"{rate:.1f} pages/s")
        if counts.forbidden:
            _say(f"forbidden by robots.txt: {', '.join(counts.forbidden[:5])}"
                 + (f" and {len(counts.forbidden) - 5} more" if len(counts.forbidden) > 5
                    else ""))
    if counts.failures:
        if not options.one_page:
            _say(f"{len(counts.failures)} failed:")
        for url, error in counts.failures:
            click.echo(f"  {shown(url)}: {error}" if not options.one_page
                       else f"noisecbr: {shown(url)}: {error}", err=True)
    return len(counts.failures)


def _shape(options: WebOptions, output: Path | None, fmt: str | None, default_format: str
           ) -> tuple[str, Path | None]:
    """The output's format and, for one file per page, its folder; a :class:`WebUsageError`
    for what does not fit."""
    fmt = fmt or (default_format if options.one_page else _many_format(output))
    if fmt == "parquet" and output is None:
        raise WebUsageError("Parquet is written to a file: give -o out.parquet", 2)
    if options.resume and output is None:
        raise WebUsageError("--resume reads what -o holds: give -o FILE.jsonl or -o FOLDER", 2)
    if options.resume and options.one_page:
        raise WebUsageError("--resume goes on with many URLs (--urls, --sitemap, --feed, "
                            "--crawl); one page is simply fetched again", 2)
    rows = fmt in ROW_FORMATS
    return fmt, None if (options.one_page or rows or output is None) else output


def _follower(options: WebOptions) -> Callable[[Fetched], list[str]] | None:
    """With ``--crawl``, the links to follow from a fetched page: those of a page of a crawl's
    host, or of the host a start redirected to (not another page's redirect: a link through
    /go?u=… does not carry the crawl off the site); the fetching keeps to the page's host."""
    if not options.crawls:
        return None
    hosts = {urlsplit(url).netloc.lower() for url in options.crawls}
    starts = {url_key(url) for url in options.crawls}

    def follow(fetched: Fetched) -> list[str]:
        got = urlsplit(fetched.final_url).netloc.lower()
        if url_key(fetched.url) in starts:
            hosts.add(got)  # http://site → https://www.site: the crawl goes on there
        return page_links(fetched) if got in hosts else []

    return follow


def _many_format(output: Path | None) -> str:
    """The format of many pages without ``-f``: Parquet or JSONL rows by the name of ``-o``,
    text files in a folder ``-o`` names, JSONL rows on standard output."""
    if output is None:
        return "jsonl"
    suffix = output.suffix.lower()
    if suffix in (".jsonl", ".parquet") and not output.is_dir():
        return suffix[1:]
    return "text"


def _done(output: Path, fmt: str, folder: Path | None, urls: list[str]) -> set[str]:
    """The keys of the URLs an earlier run wrote to ``output``."""
    if folder is not None:
        suffix = _SUFFIXES[fmt.split("+")[0]]
        return {url_key(url) for url in urls if (folder / page_file(url, suffix)).is_file()}
    try:
        return already_written(output, fmt)
    except ValueError as error:
        raise WebUsageError(str(error), 2) from error


class _Sink:
    """Where cleaned pages go: rows to a JSONL/Parquet file or standard output, a folder of
    page files, one page to a file or standard output. Knows the pages it wrote (by the URL
    they came from after redirects) and writes none twice."""

    def __init__(self, output: Path | None, fmt: str, folder: Path | None, markdown: bool,
                 append: bool, done: set[str], headers: bool) -> None:
        self.output, self.fmt, self.folder, self.append = output, fmt, folder, append
        self.written = set(done)
        self.writer = None
        self.headers = headers  # many pages on standard output: each after its URL
        if fmt in ROW_FORMATS:
            from ..crawl.warc import RowWriter

            target = output if output is not None else sys.stdout
            self.writer = RowWriter(target, fmt, markdown, web=True, append=append,
                                    flush=True)

    def write(self, outcome: Outcome) -> bool:
        """Write one page; False when the page it came from is written already."""
        key = url_key(outcome.final_url or outcome.url)
        if key in self.written:
            return False
        self.written.update({key, url_key(outcome.url)})
        if self.writer is not None:
            self.writer.write(outcome.output)
        elif self.folder is not None:
            relative = page_file(outcome.url, _SUFFIXES[self.fmt.split("+")[0]])
            if self.append and (self.folder / relative).is_file():
                return False  # written by the crawl --resume goes on with (a followed link)
            write_page_file(self.folder, relative, outcome.output)
        elif self.output is not None:
            write_page_file(self.output.parent, Path(self.output.name), outcome.output)
        else:
            if self.headers:
                sys.stdout.write(f"==> {shown(outcome.url)} <==\n")
            sys.stdout.write(outcome.output)
            sys.stdout.flush()
        return True

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.writer is not None:
            self.writer.close()
