"""``casebase``: build and curate the case base.

    casebase [--db URL] COMMAND ...

The database is ``--db URL`` (a SQLAlchemy URL or a SQLite file path), else ``$NOISECBR_DB``,
else a SQLite file in the per-user data directory. Every command migrates it to the newest schema
first.

Exit codes (every command; the table of :mod:`noisecbr.exits`, shared with ``noisecbr``):

    0    success
    1    partial failure: some pages could not be read (import), some label paths matched
         nothing (import-page), some cases' elements were not found (revectorize)
    2    usage error (unknown option, bad value: click's own code; a text argument that is
         not UTF-8 (a file name may be any bytes: casebase.arguments); a record of
         import-jsonl that cannot be stored, a label path that selects no elements)
    3    not found (unknown case id; delete: any id not found, the others are deleted)
    4    model error (explain: the model file cannot be read)
    5    database error (cannot open, locked, corrupt, unknown revision, …)
    6    other error (a file that cannot be read or written, an unexpected failure)
    130  interrupted (Ctrl-C): the running transaction was rolled back, nothing was written
         (revectorize: the pages finished before stay recomputed; run it again to go on)

Errors are one line on stderr; set ``CASEBASE_DEBUG=1`` for the traceback.

Adding a command: write a function decorated with ``@cli.command(...)`` and
``@_handle_errors``, take ``ctx`` with ``@click.pass_context`` and get the case base with
``_open(ctx)`` to read it as it is (``_open(ctx, write=True)`` to change it, which migrates an
older one; ``_open(ctx, create=True)`` if it fills a new one); write in one
``with cb.session() as session:`` block.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click

from noisecbr.exits import (
    EXIT_CASEBASE,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_OTHER,
    EXIT_PARTIAL,
    EXIT_USAGE,
)
from noisecbr.fsnames import shown
from noisecbr.prepare.subtrees import is_element_path
from noisecbr.result import LABELS
from noisecbr.web.fetch import DEFAULT_DELAY, DEFAULT_TIMEOUT

from .arguments import CheckedGroup
from .errors import InvalidInputError
from .labelling import MAX_COVERAGE, T_DATA, T_NOISE
from .models import LABEL_SOURCES
from .store import CaseBase, CaseBaseError, CaseRecord, NotFoundError

#: The largest row id, count or offset a database stores (SQLite's and PostgreSQL's 64-bit
#: integers): a larger number is a usage error, not an OverflowError deep in the driver.
ROW_MAX = 2**63 - 1
#: A row id on the command line.
ROW_ID = click.IntRange(min=0, max=ROW_MAX)


class _Failure(click.ClickException):
    """A one-line error with its own exit code (a file name in it with its bytes that are not
    UTF-8 as ``\\xNN``)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(shown(message))
        self.exit_code = exit_code


def _handle_errors(command):
    """Turn the case base's exceptions into one line on stderr and the documented exit code."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from alembic.util import CommandError
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # the reader went away (casebase list | head): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_OK)
        except KeyboardInterrupt:
            click.echo("casebase: interrupted: the transaction was rolled back, nothing was "
                       "written", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Exception as error:
            if os.environ.get("CASEBASE_DEBUG"):
                raise
            if isinstance(error, NotFoundError):
                raise _Failure(str(error), EXIT_NOT_FOUND) from None
            if isinstance(error, InvalidInputError):  # the input given, not the database
                raise _Failure(str(error), EXIT_USAGE) from None
            if isinstance(error, SQLAlchemyError):
                message = str(getattr(error, "orig", None) or error).splitlines()[0]
                raise _Failure(f"database error: {message}", EXIT_CASEBASE) from None
            if isinstance(error, CommandError):
                raise _Failure(f"database schema: {error} (a newer casebase wrote this "
                               "database?)", EXIT_CASEBASE) from None
            if isinstance(error, CaseBaseError):
                raise _Failure(str(error), EXIT_CASEBASE) from None
            if isinstance(error, OSError):
                raise _Failure(f"{error.strerror or error}: {error.filename or ''}".rstrip(": "),
                               EXIT_OTHER) from None
            raise _Failure(f"unexpected {type(error).__name__}: {error}", EXIT_OTHER) from None

    return wrapper


def _open(ctx: click.Context, create: bool = False, write: bool = False) -> CaseBase:
    """The case base of ``--db``. Only the commands that fill one (``create``: init and the
    imports) create it, and say so: any other command on a SQLite file that does not exist
    fails (exit 3) rather than reading a new, empty case base made by a typo. Those that
    create or ``write`` migrate an older one; a reading command reads it as it is, at this
    code's revision, else fails (exit 5) saying what it is."""
    state = ctx.find_root().obj
    if state.get("cb") is None:
        state["cb"] = CaseBase.open(state["db"], create=create, upgrade=create or write)
        ctx.find_root().call_on_close(state["cb"].close)
        if state["cb"].created is not None:
            click.echo(f"casebase: created a new case base at {state['cb'].created}", err=True)
    return state["cb"]


def _size(nbytes: int | None) -> str:
    if nbytes is None:
        return "n/a"
    for unit in ("B", "kB", "MB", "GB"):
        if nbytes < 1000 or unit == "GB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1000
    return ""


def _label_counts(counts: Counter | dict) -> str:
    total = sum(counts.values()) or 1
    return "  ".join(
        f"{label} {counts.get(label, 0):,} ({100 * counts.get(label, 0) / total:.1f} %)"
        for label in LABELS)


@click.group(cls=CheckedGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", metavar="URL", envvar="NOISECBR_DB",
              help="SQLAlchemy URL or SQLite file path [env NOISECBR_DB; default: a SQLite file "
                   "in the user data directory].")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """Build and curate the noisecbr case base (labelled subtrees of web pages).

    Exit codes: 0 ok, 1 partial failure, 2 usage error, 3 not found, 4 model error,
    5 database error, 6 other error, 130 interrupted.
    """
    ctx.obj = {"db": db, "cb": None}


@cli.command()
@click.pass_context
@_handle_errors
def init(ctx: click.Context) -> None:
    """Create the case base (or upgrade it to the newest schema)."""
    cb = _open(ctx, create=True)
    click.echo(f"case base ready: {cb.url} (schema revision {cb.revision()})")


@cli.command("import")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--t-data", type=click.FloatRange(0, 1), default=T_DATA, show_default=True,
              help="Matched-word share from which a pure subtree is data.")
@click.option("--t-noise", type=click.FloatRange(0, 1), default=T_NOISE, show_default=True,
              help="Matched-word share up to which a subtree is noise.")
@click.option("--max-coverage", type=click.FloatRange(0, 1), default=MAX_COVERAGE,
              show_default=True, help="Largest share of the page's content a noise subtree "
              "may hold.")
@click.option("--limit", type=click.IntRange(min=1), help="Read at most N pages.")
@click.option("--parser", type=click.Choice(["lxml", "html5lib"]), default="lxml",
              show_default=True)
@click.option("--oracle/--no-oracle", default=True, show_default=True,
              help="Score the oracle ceiling (known labels, top-down) of the imported pages.")
@click.option("--jobs", "-j", type=click.IntRange(min=0),
              help="Worker processes preparing pages while the main one inserts; 0: none "
                   "[default: one per CPU, at most 4].")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--no-index", is_flag=True,
              help="Do not bring the nearest-case index of `casebase explain` up to date "
              "(its next call does).")
@click.option("--batch-rows", type=click.IntRange(min=1), default=20_000, hidden=True)
@click.pass_context
@_handle_errors
def import_(ctx: click.Context, directory: Path, t_data: float, t_noise: float,
            max_coverage: float, limit: int | None, parser: str, oracle: bool,
            jobs: int | None, quiet: bool, no_index: bool, batch_rows: int) -> None:
    """Import a labelled dataset (html/<id>.html.gz + ground-truth.json) as cases.

    Every element of every page becomes a case labelled from the ground truth. The import is
    one transaction: interrupted, it leaves the case base as it was. Pages already imported
    from this dataset are skipped; pages that are not HTML are reported and skipped (exit 1).
    Then the nearest-case index of `casebase explain` is brought up to date (after the
    import is committed: a failure there loses no case).
    """
    from .importer import default_jobs, import_dataset

    if t_noise >= t_data:
        raise click.BadParameter("--t-noise must be below --t-data", param_hint="--t-noise")
    cb = _open(ctx, create=True)
    with cb.session() as session:
        report = import_dataset(session, directory, t_data=t_data, t_noise=t_noise,
                                max_coverage=max_coverage, limit=limit, parser=parser,
                                oracle=oracle, progress=not quiet and sys.stderr.isatty(),
                                batch_rows=batch_rows,
                                jobs=default_jobs() if jobs is None else jobs)
    _checkpoint(cb)
    for page_id in report.duplicates:
        original = report.duplicate_of.get(page_id)
        same = f" (same bytes as {original})" if original and original != page_id else ""
        click.echo(f"skipped {page_id}: already in the case base{same}", err=True)
    for page_id, error in report.failed:
        click.echo(f"failed {page_id}: {error}", err=True)
    cases = sum(report.cases.values())
    click.echo(f"{report.dataset}: {report.read} pages read, {report.imported} imported, "
               f"{len(report.duplicates)} already there, {len(report.failed)} failed "
               f"in {report.seconds:.1f} s ({report.pages_per_second:.1f} pages/s)")
    click.echo(f"cases: {cases:,}  {_label_counts(report.cases)}")
    if report.oracle is not None:
        click.echo(f"oracle ceiling: {report.oracle}")
    click.echo(f"database: {cb.url} ({_size(cb.db_size())})")
    if not no_index:
        _follow(cb, quiet)
    if report.failed:
        ctx.exit(EXIT_PARTIAL)


def _follow(cb: CaseBase, quiet: bool = False) -> None:
    """Bring the nearest-case index of ``explain`` up to date after a committed write
    (:func:`casebase.upkeep.follow`). It is derived data: a failure is reported on stderr and
    leaves the write and the exit code as they are."""
    from .upkeep import follow

    def say(message: str) -> None:
        if not quiet:
            click.echo(f"casebase: {message}", err=True)

    try:
        done = follow(cb, progress=not quiet and sys.stderr.isatty(), say=say)
    except KeyboardInterrupt:
        click.echo("casebase: interrupted while indexing: the changes are stored; the next "
                   "`casebase explain` builds the index (or `casebase index`)", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as error:
        if os.environ.get("CASEBASE_DEBUG"):
            raise
        click.echo("casebase: the changes are stored, but the nearest-case index could not be "
                   f"brought up to date ({type(error).__name__}: {error}): `casebase explain` "
                   "builds it or searches exactly; `casebase index` tries again", err=True)
        return
    if done.action in ("built", "updated", "kept"):
        click.echo(f"casebase: {done.describe()}", err=True)


def _checkpoint(cb: CaseBase) -> None:
    """Fold SQLite's write-ahead log into the database file after a big write."""
    if cb.engine.dialect.name == "sqlite":
        with cb.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


@cli.command("import-page")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", default="", help="The page's URL (its host is the site).")
@click.option("--labels", "labels_file", type=click.Path(exists=True, dir_okay=False,
                                                          path_type=Path),
              help='JSON object {"XPath": "noise|data|mixture"}: one case per element each '
                   "path selects in the tidied page.")
@click.option("--truth", "truth_file", type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path),
              help="Text file with the page's main content: every element becomes a case "
                   "labelled from it (when --labels is not given).")
@click.option("--label-source", type=click.Choice(LABEL_SOURCES),
              help="Source of the labels [default: human with --labels, ground_truth with "
                   "--truth].")
@click.option("--source", default="import", show_default=True,
              help="Source name of the page (pages are unique per source and content).")
@click.option("--site", help="Site (host) of the page [default: the URL's host].")
@click.option("--parser", type=click.Choice(["lxml", "html5lib"]), default="lxml",
              show_default=True)
@click.option("--no-index", is_flag=True,
              help="Do not bring the nearest-case index of `casebase explain` up to date "
              "(its next call does).")
@click.pass_context
@_handle_errors
def import_page(ctx: click.Context, file: Path, url: str, labels_file: Path | None,
                truth_file: Path | None, label_source: str | None, source: str,
                site: str | None, parser: str, no_index: bool) -> None:
    """Import one page (.html or .html.gz) with labels for some of its subtrees."""
    from noisecbr.prepare.tidy import InputError

    from .site_import import read_page_bytes

    if labels_file is None and truth_file is None:
        raise click.UsageError("give --labels LABELS.json or --truth TEXT")
    labels = None
    if labels_file is not None:
        try:
            labels = json.loads(labels_file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise click.BadParameter(f"not JSON: {error}", param_hint="--labels") from None
        if not isinstance(labels, dict) or not all(
                isinstance(k, str) and v in LABELS for k, v in labels.items()):
            raise click.BadParameter('expected {"path": "noise|data|mixture", ...}',
                                     param_hint="--labels")
    truth = truth_file.read_text(encoding="utf-8") if truth_file is not None else None
    try:
        raw = read_page_bytes(file)
    except InputError as error:
        raise _Failure(f"{file}: {error}", EXIT_PARTIAL) from None
    cb = _open(ctx, create=True)
    try:
        # The file's name as the page's id: stored as text, its bytes that are not UTF-8
        # backslash-escaped.
        added = cb.add_page(raw, url=url, source=source, external_id=shown(file.name),
                            site=site, truth=truth, labels=labels, label_source=label_source,
                            parser=parser)
    except InputError as error:
        raise _Failure(f"{file}: {error}", EXIT_PARTIAL) from None
    if added.page_id is None and labels:
        # The page is stored: the labels are a further correction of it (a path that has a
        # case relabels it, with its history), not a page to skip.
        more = cb.add_labels(added.duplicate_of, labels, note="import-page")
        if more["unknown_paths"] and len(more["unknown_paths"]) == len(labels):
            raise _Failure(f"{file}: no path selects an element of the stored page "
                           f"{added.duplicate_of} ({', '.join(labels)}): nothing changed",
                           EXIT_NOT_FOUND)
        click.echo(f"page {added.duplicate_of} (already stored): {more['added']} new cases, "
                   f"{more['relabelled']} relabelled")
        added.unknown_paths = more["unknown_paths"]
    elif added.page_id is None:
        click.echo(f"{shown(str(file))}: already in the case base as page "
                   f"{added.duplicate_of}: skipped")
        return
    else:
        click.echo(f"page {added.page_id}: {sum(added.cases.values())} cases  "
                   f"{_label_counts(added.cases)}")
    if not no_index:
        _follow(cb)
    for path in added.unknown_paths:
        click.echo(f"unknown path (selects no element): {path}", err=True)
    if added.unknown_paths:
        click.echo(f"{len(added.unknown_paths)} of {len(labels or {})} paths matched nothing",
                   err=True)
        ctx.exit(EXIT_PARTIAL)


def _template_options(function):
    """The options of the commands that import a site's pages as its template's noise cases
    (import-site, import-urls)."""
    for option in reversed((
        click.option("--theta", type=click.FloatRange(0, 1), default=0.10, show_default=True,
                     help="template_labels' theta (see noisecbr.seeds.templates)."),
        click.option("--share", type=click.FloatRange(0, 1), default=0.85, show_default=True,
                     help="template_labels' share (see noisecbr.seeds.templates)."),
        click.option("--source", help="Source name of the pages [default: site:HOST]."),
        click.option("--parser", type=click.Choice(["lxml", "html5lib"]), default="lxml",
                     show_default=True),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
        click.option("--no-index", is_flag=True,
                     help="Do not bring the nearest-case index of `casebase explain` up to "
                     "date (its next call does)."))):
        function = option(function)
    return function


@cli.command("import-site")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--site", "host", required=True, help="The site's host, e.g. example.com.")
@_template_options
@click.pass_context
@_handle_errors
def import_site_(ctx: click.Context, directory: Path, host: str, theta: float, share: float,
                 source: str | None, parser: str, quiet: bool, no_index: bool) -> None:
    """Import the pages of one site (DIR of .html/.html.gz files) with their site template as
    noise cases (label source site_template).

    Subtrees repeated across the site's pages (noisecbr.seeds.templates.template_labels)
    become noise cases, at every level; the other subtrees get no case, since not being
    template does not make a subtree content. One transaction; pages already imported are
    skipped, pages that are not HTML are reported (exit 1).
    """
    from .site_import import import_site, site_pages

    try:
        import noisecbr.seeds.templates  # noqa: F401
    except ImportError:
        raise _Failure("site templates are not available in this version "
                       "(noisecbr.seeds.templates is missing)", EXIT_OTHER) from None
    if not site_pages(directory):
        raise click.BadParameter(f"no .html or .html.gz files in {directory}",
                                 param_hint="DIRECTORY")
    cb = _open(ctx, create=True)
    with cb.session() as session:
        report = import_site(session, directory, host, theta=theta, share=share, parser=parser,
                             source=source, progress=not quiet and sys.stderr.isatty())
    _checkpoint(cb)
    for name in report.duplicates:
        click.echo(f"skipped {name}: already in the case base", err=True)
    for name, error in report.failed:
        click.echo(f"failed {name}: {error}", err=True)
    click.echo(f"{host}: {report.read} pages read, {report.imported} imported, "
               f"{len(report.duplicates)} already there, {len(report.failed)} failed "
               f"in {report.seconds:.1f} s")
    click.echo(f"template cases (noise, site_template): {report.cases['noise']:,}"
               + (f"; {report.unmatched_paths:,} template paths matched no element"
                  if report.unmatched_paths else ""))
    if not no_index:
        _follow(cb, quiet)
    if report.failed:
        ctx.exit(EXIT_PARTIAL)


@cli.command("import-urls")
@click.argument("urls", nargs=-1)
@click.option("--urls", "urls_file", type=click.File("r", encoding="utf-8", errors="replace"),
              help="A file of URLs, one per line (- for stdin; # comments).")
@click.option("--sitemap", "sitemaps", multiple=True, metavar="URL",
              help="Import the pages of a sitemap (an index, gzipped). Repeatable.")
@click.option("--feed", "feeds", multiple=True, metavar="URL",
              help="Import the pages an RSS or Atom feed links to. Repeatable.")
@click.option("--max-pages", type=click.IntRange(min=1), default=200, show_default=True,
              help="Fetch at most N pages (after de-duplication).")
@click.option("--delay", type=click.FloatRange(min=0), default=DEFAULT_DELAY, show_default=True,
              help="Seconds between two requests to one host (a longer Crawl-delay wins).")
@click.option("--user-agent", default=None, help="The User-Agent of requests and of the "
              "robots.txt rules read.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT,
              show_default=True, help="Seconds to wait for a server's answer.")
@_template_options
@click.pass_context
@_handle_errors
def import_urls(ctx: click.Context, urls: tuple[str, ...], urls_file, sitemaps: tuple[str, ...],
                feeds: tuple[str, ...], max_pages: int, delay: float, user_agent: str | None,
                timeout: float, theta: float, share: float, source: str | None, parser: str,
                quiet: bool, no_index: bool) -> None:
    """Fetch pages (URLs, a sitemap, a feed) and import each site's pages as import-site
    does: the subtrees repeated across a site's pages become its noise cases.

    Fetching is polite (robots.txt obeyed, one request per host every --delay seconds). Pages
    are grouped by the host they end on; each page's id is its URL, and a page imported
    before is skipped, so the command can be run again to go on. One transaction; URLs that
    could not be fetched or imported are named (exit 1).
    """
    from noisecbr.web.discover import discover_urls, is_url, listed_urls
    from noisecbr.web.fetch import DEFAULT_USER_AGENT, Fetcher

    from .fetched_sites import fetch_sites
    from .site_import import import_site_pages

    given = list(urls) + (listed_urls(urls_file) if urls_file is not None else [])
    bad = [url for url in given if not is_url(url)]
    if bad:
        raise click.BadParameter(f"not an http(s) URL: {bad[0]}", param_hint="URLS")
    if not (given or sitemaps or feeds):
        raise click.UsageError("give URLs, --urls FILE, --sitemap URL or --feed URL")
    progress = not quiet and sys.stderr.isatty()
    cb = _open(ctx, create=True)  # before fetching: a case base that cannot be opened says so now
    fetcher = Fetcher(user_agent=user_agent or DEFAULT_USER_AGENT, timeout=timeout,
                      delay=delay)
    failed: list[tuple[str, str]] = []
    try:
        try:
            todo = discover_urls(fetcher, given, sitemaps=sitemaps, feeds=feeds,
                                 max_pages=max_pages, failures=failed,
                                 say=lambda line: click.echo(line, err=True))
        except ImportError as error:
            raise _Failure(str(error), EXIT_USAGE) from None
        found = fetch_sites(fetcher, todo, progress=progress)
    finally:
        fetcher.close()
    failed += found.failed
    for url in found.forbidden:
        click.echo(f"forbidden by robots.txt (not requested): {url}", err=True)
    reports = []
    with cb.session() as session:  # one transaction: every site's pages, or none
        for host, pages in found.pages.items():
            reports.append((host, import_site_pages(
                session, pages, host, theta=theta, share=share, parser=parser,
                source=source, progress=progress)))
    _checkpoint(cb)
    for host, report in reports:
        for name in report.duplicates:
            click.echo(f"skipped {name}: already in the case base", err=True)
        failed += report.failed
        click.echo(f"{host}: {report.read} pages fetched, {report.imported} imported, "
                   f"{len(report.duplicates)} already there, {len(report.failed)} failed; "
                   f"template cases (noise, site_template): {report.cases['noise']:,}")
    for url, error in failed:
        click.echo(f"failed {url}: {error}", err=True)
    click.echo(f"{len(todo)} URLs: {found.count} pages fetched, {len(found.forbidden)} "
               f"forbidden by robots.txt, {len(failed)} failed")
    if not no_index and any(report.imported for _, report in reports):
        _follow(cb, quiet)
    if failed:
        ctx.exit(EXIT_PARTIAL)


def _filters(function):
    options = [
        click.option("--site", help="Only cases of this site (host)."),
        click.option("--label", type=click.Choice(LABELS), help="Only cases with this label."),
        click.option("--source", type=click.Choice(LABEL_SOURCES),
                     help="Only cases whose label came from this source."),
        click.option("--dataset", help="Only cases of pages from this dataset (page source)."),
        click.option("--page", "page_id", type=ROW_ID, help="Only cases of this page id."),
        click.option("--schema", "schema_version", type=ROW_ID,
                     help="Only this vector schema."),
        click.option("--limit", type=click.IntRange(min=1, max=ROW_MAX), default=50,
                     show_default=True),
        click.option("--offset", type=click.IntRange(min=0, max=ROW_MAX), default=0,
                     show_default=True),
        click.option("--json", "as_json", is_flag=True, help="One JSON object per line."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _shorten(value: str, width: int, left: bool = False) -> str:
    value = " ".join(value.split())
    if len(value) <= width:
        return value
    return "…" + value[-(width - 1):] if left else value[:width - 1] + "…"


def _print_cases(cb: CaseBase, as_json: bool, limit: int, offset: int, **filters: Any) -> None:
    cases = cb.list_cases(limit=limit, offset=offset, **filters)
    if as_json:
        for case in cases:
            click.echo(json.dumps(_case_dict(case, vector=False), ensure_ascii=False))
        return
    total = cb.count_cases(**filters)
    header = f"{'id':>8}  {'site':<24}  {'path':<40}  {'tag':<8}  {'label':<7}  " \
             f"{'source':<13}  text"
    click.echo(header)
    for case in cases:
        click.echo(f"{case.id:>8}  {_shorten(case.site, 24):<24}  "
                   f"{_shorten(case.path, 40, left=True):<40}  {_shorten(case.tag, 8):<8}  "
                   f"{case.label:<7}  {case.label_source:<13}  {_shorten(case.text, 50)}")
    shown = f"{offset + 1}–{offset + len(cases)}" if cases else "none"
    click.echo(f"({shown} of {total:,})", err=True)


@cli.command("list")
@_filters
@click.option("--text", help="Only cases whose text contains this (case-insensitive).")
@click.pass_context
@_handle_errors
def list_(ctx: click.Context, as_json: bool, limit: int, offset: int, **filters: Any) -> None:
    """List cases (id order), filtered, a page at a time (--limit/--offset)."""
    _print_cases(_open(ctx), as_json, limit, offset, **filters)


@cli.command()
@click.argument("text")
@_filters
@click.pass_context
@_handle_errors
def search(ctx: click.Context, text: str, as_json: bool, limit: int, offset: int,
           **filters: Any) -> None:
    """Cases whose text contains TEXT (case-insensitive), with the filters of list."""
    _print_cases(_open(ctx), as_json, limit, offset, text=text, **filters)


def _case_dict(case: CaseRecord, vector: bool = True) -> dict[str, Any]:
    record = {
        "id": case.id, "page_id": case.page_id, "site": case.site, "path": case.path,
        "position": case.position, "tag": case.tag, "label": case.label,
        "label_source": case.label_source, "text": case.text,
        "schema_version": case.schema_version, "count": case.count,
        "created_at": case.created_at.isoformat(), "updated_at": case.updated_at.isoformat(),
    }
    if vector:
        record["vector"] = case.features()
    return record


@cli.command()
@click.argument("case_id", type=ROW_ID)
@click.option("--json", "as_json", is_flag=True, help="Everything as one JSON object.")
@click.option("--all-features", is_flag=True, help="Print zero features too.")
@click.pass_context
@_handle_errors
def show(ctx: click.Context, case_id: int, as_json: bool, all_features: bool) -> None:
    """Show a case: its text, its subtree's HTML (cut from the stored page by its path), its
    vector by feature name and its label history."""
    cb = _open(ctx)
    case = cb.get_case(case_id)
    html = cb.subtree_html(case)
    history = cb.case_history(case_id)
    if as_json:
        record = _case_dict(case) | {"html": html, "history": [
            {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in entry.items()}
            for entry in history]}
        click.echo(json.dumps(record, ensure_ascii=False, indent=2))
        return
    click.echo(f"case {case.id}  {case.label} ({case.label_source})  count {case.count}")
    click.echo(f"page {case.page_id}  site {case.site}")
    click.echo(f"path {case.path}  <{case.tag}>  position {case.position}")
    click.echo(f"schema {case.schema_version}  created {case.created_at}  "
               f"updated {case.updated_at}")
    click.echo("\ntext:")
    click.echo(f"  {case.text}" if case.text else "  (none)")
    click.echo("\nhtml:")
    if html is None and not is_element_path(case.path):
        click.echo("  (the path is not an element path, so it names no subtree: the case was "
                   "stored by hand or by an older import; delete it)")
    elif html is None:
        click.echo("  (the path is not found in the stored page)")
    else:
        click.echo(html if len(html) <= 4000 else html[:4000] + f"\n… ({len(html):,} chars)")
    features = case.features()
    shown = {k: v for k, v in features.items() if all_features or v != 0.0}
    click.echo(f"\nvector ({len(features)} features, {len(shown)} shown"
               f"{'' if all_features else ', zeros hidden'}):")
    for name, value in shown.items():
        click.echo(f"  {name:<32} {value:.4f}")
    if history:
        click.echo("\nhistory:")
        for entry in history:
            note = f"  ({entry['note']})" if entry["note"] else ""
            click.echo(f"  {entry['changed_at']}  {entry['old_label']} → {entry['new_label']}  "
                       f"by {entry['source']}{note}")


def _case_line(n, kind: str = "") -> str:
    text = " ".join(n.text.split())
    text = text[:70] + "…" if len(text) > 70 else text
    kind = f"{kind}  " if kind else ""
    return (f"    {kind}case {n.case_id:<8} {n.label:<7} {n.similarity:.3f}  {n.site}  {n.path}  "
            f"{text!r}")


@cli.command()
@click.argument("page", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--url", default="", help="The page's URL (its host is its site).")
@click.option("--model", "model_path", type=click.Path(exists=True, dir_okay=False,
                                                       path_type=Path),
              help="Model file [default: the embedded default model].")
@click.option("-k", "k", type=click.IntRange(min=1, max=50), default=3, show_default=True,
              help="Stored cases shown per subtree.")
@click.option("--path", "path_contains", help="Only the subtrees whose path contains this.")
@click.option("--other-sites", is_flag=True,
              help="Leave out the stored cases of the page's own site (needs --url).")
@click.option("--memory", "use_memory", is_flag=True,
              help="Clean as `noisecbr clean --memory` does, with the stored pages of the "
              "page's site (needs --url), and list the site's cases with the same markup.")
@click.option("--index", "index_mode", type=click.Choice(["auto", "exact", "approximate"]),
              default="auto", show_default=True,
              help="Nearest cases by exact search (every embedding in memory) or from the "
              "approximate index on disk; auto: exact up to 100,000 cases.")
@click.option("--no-cache", is_flag=True,
              help="Exact search: do not read or write the index file kept beside a SQLite "
              "case base.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per subtree.")
@click.pass_context
@_handle_errors
def explain(ctx: click.Context, page: Path, url: str, model_path: Path | None, k: int,
            path_contains: str | None, other_sites: bool, use_memory: bool, index_mode: str,
            no_cache: bool, as_json: bool) -> None:
    """Explain how a page is cleaned: each decided subtree, the model's decision and the K
    stored cases most like it (cosine in the model's first hidden layer), with their labels.
    A case whose label looks wrong can be corrected with `casebase label`.

    PAGE is an HTML file (`.gz` too) or - for standard input. The exact search reads and
    embeds every case of the current vector schema (kept beside a SQLite case base in
    DB.explain-index.npz until a case is added, deleted or relabelled or another model is
    used). The approximate index (a faiss inverted file, memory-mapped from DB.index/, see
    `casebase index`) is built once for a model and follows the case base: new cases are
    searched beside it, deleted ones masked, and it is rebuilt when they pass a tenth of it.
    The commands that change the case base (import, label, dedupe, …) bring the index of the
    default model up to date themselves, so that the first explanation after them is not
    the one that builds it; if it cannot be built, the cases are searched exactly."""
    from noisecbr.cleaner import default_model
    from noisecbr.prepare.limits import DEFAULT_MAX_BYTES, read_limited
    from noisecbr.prepare.tidy import InputError
    from noisecbr.score.artifact import load_model
    from noisecbr.score.model import ModelError

    from .retrieve import agreement_summary, explain_page
    from .reuse import site_host, site_memory
    from .site_import import read_page_bytes
    from .upkeep import open_for_explain

    if other_sites and not url:
        raise click.UsageError("--other-sites needs the page's --url")
    if use_memory and not url:
        raise click.UsageError("--memory needs the page's --url (its host is the site)")
    try:
        html = (read_limited(sys.stdin.buffer, DEFAULT_MAX_BYTES) if str(page) == "-"
                else read_page_bytes(page))
    except InputError as error:
        raise _Failure(f"{page}: {error}", EXIT_OTHER) from None
    try:
        model = load_model(model_path) if model_path else default_model()
    except ModelError as error:
        raise _Failure(f"{model_path}: {error}", EXIT_MODEL) from None
    cb = _open(ctx)
    try:
        memory = site_memory(cb, site_host(url)) if use_memory else None
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    index = open_for_explain(cb, model, mode=index_mode, cache=not no_cache,
                             progress=not as_json and sys.stderr.isatty(),
                             say=lambda message: click.echo(f"casebase: {message}", err=True))
    try:
        explanations = explain_page(index, cb, html, url=url or None, k=k,
                                    other_sites=other_sites, path_contains=path_contains,
                                    memory=memory)
    except InputError as error:
        raise _Failure(f"{page}: {error}", EXIT_OTHER) from None
    if as_json:
        for item in explanations:
            click.echo(json.dumps(item.to_dict(), ensure_ascii=False))
        return
    for item in explanations:
        agree = sum(n.label == item.decision for n in item.neighbours)
        scores = ", ".join(f"{label} {p:.2f}" for label, p in zip(LABELS, item.probabilities))
        by = "  by site memory" if item.source == "memory" else ""
        click.echo(f"{item.path}  <{item.tag}>  {item.decision} ({scores}){by}  "
                   f"neighbours agree {agree}/{len(item.neighbours)}")
        for n in item.neighbours:
            click.echo(_case_line(n))
        for n in item.same_markup:
            click.echo(_case_line(n, "same markup"))
    summary = agreement_summary(explanations)
    click.echo(f"{len(explanations)} subtrees explained from {len(index):,} stored cases; mean "
               "agreement by decision: " + (", ".join(f"{label} {share:.2f}"
                                                     for label, share in summary.items())
                                            or "n/a"), err=True)


@cli.command()
@click.argument("case_id", type=ROW_ID)
@click.argument("label", type=click.Choice(LABELS))
@click.option("--note", help="Why: kept in the label history.")
@click.option("--source", type=click.Choice(LABEL_SOURCES), default="human", show_default=True)
@click.pass_context
@_handle_errors
def label(ctx: click.Context, case_id: int, label: str, note: str | None, source: str) -> None:
    """Relabel a case (the change is kept in its history)."""
    cb = _open(ctx, write=True)
    old = cb.relabel(case_id, label, source=source, note=note)
    click.echo(f"case {case_id}: {old} → {label} ({source})")
    _follow(cb)


@cli.command()
@click.argument("case_ids", type=ROW_ID, nargs=-1, required=True)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
@_handle_errors
def delete(ctx: click.Context, case_ids: tuple[int, ...], yes: bool) -> None:
    """Delete cases (with their history)."""
    cb = _open(ctx, write=True)
    if not yes:
        try:
            confirmed = click.confirm(f"delete {len(set(case_ids))} case(s)?", err=True)
        except click.Abort:  # no answer (stdin closed)
            raise click.UsageError("not confirmed: nothing deleted (use --yes)") from None
        if not confirmed:
            click.echo("nothing deleted")
            return
    deleted, missing = cb.delete_cases(case_ids)
    click.echo(f"deleted {len(deleted)} case(s)")
    if deleted:
        _follow(cb)
    if missing:
        raise _Failure(f"not found: {', '.join(map(str, missing))}", EXIT_NOT_FOUND)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--sites", "top_sites", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many sites to list (most cases first).")
@click.pass_context
@_handle_errors
def stats(ctx: click.Context, as_json: bool, top_sites: int) -> None:
    """Counts of pages, sites and cases per label, source and site; database size."""
    cb = _open(ctx)
    numbers = cb.stats()
    if as_json:
        click.echo(json.dumps(numbers, indent=2))
        return
    click.echo(f"database  {cb.url}  ({_size(numbers['db_size'])}, "
               f"schema revision {cb.revision()})")
    datasets = ", ".join(f"{k} {v:,}" for k, v in numbers["pages_by_dataset"].items())
    click.echo(f"pages     {numbers['pages']:,}" + (f"  ({datasets})" if datasets else ""))
    click.echo(f"sites     {numbers['sites']:,}")
    click.echo(f"cases     {numbers['cases']:,}  (weighted by count {numbers['weighted_cases']:,}"
               f"; {numbers['history']:,} relabellings)")
    click.echo(f"labels    {_label_counts(numbers['by_label'])}")
    click.echo("sources   " + "  ".join(f"{k} {v:,}" for k, v in numbers["by_source"].items()))
    click.echo("schemas   " + "  ".join(f"v{k} {v:,}" for k, v in numbers["by_schema"].items()))
    by_site = sorted(numbers["by_site"].items(), key=lambda item: -sum(item[1].values()))
    if by_site and top_sites:
        click.echo(f"\n{'site':<40} {'cases':>9} " + " ".join(f"{x:>9}" for x in LABELS))
        for host, counts in by_site[:top_sites]:
            click.echo(f"{_shorten(host, 40):<40} {sum(counts.values()):>9,} "
                       + " ".join(f"{counts.get(x, 0):>9,}" for x in LABELS))
        if len(by_site) > top_sites:
            click.echo(f"… {len(by_site) - top_sites} more sites (--sites N)")


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
@click.pass_context
@_handle_errors
def export(ctx: click.Context, file: Path) -> None:
    """Export everything (pages with HTML, cases with vectors, history) to a JSON Lines file
    (FILE.jsonl; FILE.jsonl.gz is gzipped)."""
    import gzip

    from .transfer import export_jsonl

    cb = _open(ctx)
    temporary = file.with_name(file.name + ".part")
    opener = gzip.open if file.name.endswith(".gz") else open
    try:
        with opener(temporary, "wt", encoding="utf-8", newline="\n") as out:
            counts = export_jsonl(cb, out)
        temporary.replace(file)
    finally:
        temporary.unlink(missing_ok=True)
    click.echo(f"exported {counts['page']:,} pages, {counts['case']:,} cases, "
               f"{counts['history']:,} history entries, {counts['site']:,} sites to "
               f"{shown(str(file))}")


@cli.command("import-jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-index", is_flag=True,
              help="Do not bring the nearest-case index of `casebase explain` up to date "
              "(its next call does).")
@click.pass_context
@_handle_errors
def import_jsonl_(ctx: click.Context, file: Path, no_index: bool) -> None:
    """Import a file written by export (one transaction). Into an empty case base the ids are
    kept; otherwise new ids are given and pages already present are skipped."""
    import gzip

    from .transfer import import_jsonl

    cb = _open(ctx, create=True)
    opener = gzip.open if file.name.endswith(".gz") else open
    with opener(file, "rt", encoding="utf-8") as lines:
        counts = import_jsonl(cb, lines)
    _checkpoint(cb)
    click.echo(f"imported {counts['page']:,} pages, {counts['case']:,} cases, "
               f"{counts['history']:,} history entries"
               + (f"; {counts['duplicate_page']:,} pages already there were skipped"
                  if counts["duplicate_page"] else ""))
    if not no_index:
        _follow(cb)


@cli.command()
@click.option("--model", "model_path", type=click.Path(exists=True, dir_okay=False,
                                                       path_type=Path),
              help="Model file [default: the embedded default model].")
@click.option("--rebuild", is_flag=True, help="Build it anew even if it is up to date.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
@_handle_errors
def index(ctx: click.Context, model_path: Path | None, rebuild: bool, quiet: bool) -> None:
    """Build (or bring up to date) the approximate nearest-case index of a model: what
    `explain --index approximate` and the service read for a large case base. Kept beside a
    SQLite case base in DB.index/, else in the user's cache folder; about 40 s for 3.7 million
    cases on 2 cores. The commands that change the case base (import, label, dedupe, …) keep
    the default model's index up to date themselves: this one builds another model's, or
    catches up after `--no-index`."""
    from noisecbr.cleaner import default_model
    from noisecbr.score.artifact import load_model
    from noisecbr.score.model import ModelError

    from .neighbours import ApproximateIndex, index_directory
    from .upkeep import update_approximate

    try:
        model = load_model(model_path) if model_path else default_model()
    except ModelError as error:
        raise _Failure(f"{model_path}: {error}", EXIT_MODEL) from None
    cb = _open(ctx)
    started = time.perf_counter()
    directory = index_directory(cb)
    update_approximate(cb, model, directory, rebuild=rebuild, fold_from=1,
                       progress=not quiet and sys.stderr.isatty())
    built = ApproximateIndex.open(cb, model, directory,
                                  progress=not quiet and sys.stderr.isatty())
    click.echo(f"index of {len(built):,} cases ({built.index.ntotal:,} in its lists, "
               f"{len(built.delta):,} new beside them, {len(built.masked):,} masked) in "
               f"{directory}, ready in {time.perf_counter() - started:.1f} s")


@cli.command()
@click.pass_context
@_handle_errors
def dedupe(ctx: click.Context) -> None:
    """Merge cases with identical vectors and labels into one case with the summed count."""
    cb = _open(ctx, write=True)
    merged = cb.dedupe()
    click.echo(f"merged {merged:,} duplicate case(s); {cb.count_cases():,} cases remain")
    if merged:
        _follow(cb)


#: How many unmatched case ids revectorize prints.
_SHOW_IDS = 10


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
@_handle_errors
def revectorize(ctx: click.Context, quiet: bool) -> None:
    """Recompute the vectors of pages of an older vector schema from their stored HTML.

    After an upgrade that changes the vector definition, the cases of pages of the old schema
    are not trained on: this recomputes each such page's vectors and outline (and sets its
    schema to the current one) from the page HTML stored with it. Labels, label sources,
    history and counts are kept.

    Each page is one transaction: interrupted, the pages done stay done, and running again
    continues with the others. A case whose element is not found again (path differs,
    position out of range) keeps its label, path and text without a vector; a page that
    cannot be parsed keeps its old vectors. Both are reported (exit 1).
    """
    from noisecbr.features import VECTOR_SCHEMA

    cb = _open(ctx, write=True)
    done: dict[str, int] = {"pages": 0, "updated": 0}

    def on_page(report) -> None:
        done.update(pages=report.pages, updated=report.updated)

    try:
        report = cb.revectorize(progress=not quiet and sys.stderr.isatty(), on_page=on_page)
    except KeyboardInterrupt:
        click.echo(f"casebase: interrupted: {done['pages']:,} page(s) recomputed "
                   f"({done['updated']:,} cases) are kept, the page in progress was rolled "
                   "back; run revectorize again to continue", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if report.updated:
        _checkpoint(cb)
    for case_id, page_id, reason in report.unmatched[:_SHOW_IDS]:
        click.echo(f"case {case_id} (page {page_id}): {reason}", err=True)
    merged = f" ({report.merged:,} merged by dedupe)" if report.merged else ""
    click.echo(f"schema {VECTOR_SCHEMA}: {report.pages:,} pages, {report.updated:,} case(s) "
               f"updated{merged}, {report.remaining:,} case(s) left at another schema "
               f"in {report.seconds:.1f} s")
    if report.updated:
        _follow(cb, quiet)
    if report.unmatched:
        reasons = ", ".join(f"{n:,} {reason}" for reason, n in report.reasons.most_common())
        more = ("" if len(report.unmatched) <= _SHOW_IDS
                else f"; the first {_SHOW_IDS} are listed above")
        click.echo(f"{len(report.unmatched):,} case(s) not found in their stored page: kept "
                   "with their labels, without a vector (their page cannot be parsed: left as "
                   f"it was) ({reasons}){more}", err=True)
        ctx.exit(EXIT_PARTIAL)


def main(argv: list[str] | None = None) -> None:
    """Run the ``casebase`` command line (``argv`` defaults to the process's arguments)."""
    cli.main(args=argv, prog_name="casebase")


if __name__ == "__main__":  # pragma: no cover
    main()
