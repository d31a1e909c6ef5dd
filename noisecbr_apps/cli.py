"""``noisecbr`` command line: clean | bench | train | runs | serve | spark.

Thin: parse arguments, call the API. ``train`` and ``runs`` live in :mod:`training` (torch),
``serve`` in :mod:`noisecbr_apps.service`, ``spark`` in :mod:`noisecbr_apps.crawl.spark`: each is
imported only when it is invoked (:data:`_LAZY`), so ``noisecbr clean`` starts without torch,
FastAPI or pyspark. Other distributions may add subcommands as entry points
(:mod:`noisecbr_apps.plugins`).

Exit codes (:mod:`noisecbr.exits`, shared with ``casebase``): 0 success; 1 some inputs failed
(the others were written, the failures are listed on stderr); 2 usage error (an argument that
is not UTF-8 text included: a file name may be any bytes); 3 an input does not exist; 4 model
error; 5 the case base of ``--memory`` cannot be read; 6 bench's DATASET cannot be read.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import click

from noisecbr.decide.walk import AUTO, FAVOR
from noisecbr.exits import (
    EXIT_CASEBASE,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_NOT_FOUND,
    EXIT_OTHER,
    EXIT_PARTIAL,
    EXIT_USAGE,
)
from noisecbr.fsnames import shown
from noisecbr.prepare.limits import DEFAULT_MAX_BYTES, MAX_ELEMENTS, reading_problem
from noisecbr.score.kind import KINDS
from noisecbr.web.fetch import DEFAULT_DELAY, DEFAULT_RETRIES, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT

_FORMATS = {"text": ".txt", "markdown": ".md", "html": ".html", "json": ".json"}
#: The formats of WARC input: one row per page (noisecbr_apps.crawl.warc.FORMATS).
_CRAWL_FORMATS = {"jsonl": ".jsonl", "parquet": ".parquet"}
_HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".html.gz", ".htm.gz", ".gz")


#: The subcommands defined in other modules, imported when invoked: torch, FastAPI and pyspark
#: are slow to import (module, attribute).
_LAZY = {"train": ("training.cli", "train"), "runs": ("training.cli", "runs"),
         "serve": ("noisecbr_apps.service.cli", "serve"),
         "spark": ("noisecbr_apps.crawl.spark", "spark")}
#: What to install when a subcommand's import fails.
_EXTRA = {"train": "torch==2.13.0 'noisecbr[train]'", "runs": "torch==2.13.0 'noisecbr[train]'",
          "serve": "'noisecbr[serve]'", "spark": "'noisecbr[spark]'"}


def _lazy_command(name: str) -> click.Command:
    """The command ``name`` of :data:`_LAZY`, imported now."""
    import importlib

    module, attribute = _LAZY[name]
    return getattr(importlib.import_module(module), attribute)


class _LazyGroup(click.Group):
    """The ``noisecbr`` group: the commands defined here, those of :data:`_LAZY` and those
    other distributions register as entry points (:data:`noisecbr_apps.plugins.COMMANDS`),
    each of the last two loaded only when invoked. The text arguments of every one of them
    must be UTF-8, as below :class:`casebase.arguments.CheckedGroup` (imported when a command
    runs: importing the cleaner's command line loads no case base module)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from casebase.arguments import check_text_parameters

        rest = super().parse_args(ctx, args)
        check_text_parameters(ctx)
        return rest

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        from casebase.arguments import checked

        name, command, rest = super().resolve_command(ctx, args)
        return name, None if command is None else checked(command), rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .plugins import command_entry_points

        return sorted({*super().list_commands(ctx), *_LAZY, *command_entry_points()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from .plugins import command_entry_points

        own = super().get_command(ctx, name)
        if own is not None:
            return own
        point = command_entry_points().get(name)
        if name not in _LAZY and point is None:
            return None
        try:
            return _lazy_command(name) if name in _LAZY else point.load()
        except ImportError as error:
            missing = error.name or "a package"
            extra = _EXTRA.get(name, f"the distribution that registers '{name}'")
            return click.Command(name, help=f"Needs {missing}: pip install {extra}.",
                                 callback=lambda: _fail(
                                     f"'noisecbr {name}' needs {missing}: pip install {extra}",
                                     EXIT_USAGE))


def _fail(message: str, code: int) -> None:
    """Say ``message`` on stderr (a file name in it with its bytes that are not UTF-8 as
    ``\\xNN``) and exit with ``code``."""
    click.echo(f"noisecbr: {shown(message)}", err=True)
    sys.exit(code)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="noisecbr")
def main() -> None:
    """Remove navigation, ads, banners and other noise from web pages."""


# -- clean ---------------------------------------------------------------------------------------
def _expand(inputs: tuple[str, ...]) -> Iterator[tuple[str, Path]]:
    """Each input page and where its output goes under ``-o DIR``: a directory's pages at their
    place below it (the input tree mirrored), a file by its name, standard input as "stdin"."""
    for item in inputs:
        path = Path(item)
        if item != "-" and path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.name.lower().endswith(_HTML_SUFFIXES):
                    yield str(child), child.relative_to(path)
        else:
            yield item, Path("stdin" if item == "-" else path.name)


def _read(item: str, max_bytes: int | None = None) -> bytes:
    """The page bytes of a file (or ``-``: standard input), gunzipped; read and decompressed
    in steps that stop at ``max_bytes`` (:class:`noisecbr.prepare.tidy.InputTooLargeError`)."""
    from noisecbr.prepare.limits import DEFAULT_MAX_BYTES, read_file_limited, read_limited

    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    if item == "-":
        return read_limited(sys.stdin.buffer, limit)
    return read_file_limited(item, limit)


def _output_name(relative: Path, fmt: str) -> Path:
    """``relative`` (an input's place, :func:`_expand`) with the format's suffix for its own."""
    name = relative.name
    for suffix in (".gz", ".html", ".htm", ".xhtml"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return relative.with_name(name + _FORMATS[fmt])


def _format_of(output: Path | None, many: bool) -> str:
    """The format of HTML input's output when ``-f`` names none: the one the output file's
    extension names (``-o page.json`` writes JSON, ``.md`` Markdown, ``.html`` HTML), else text
    (a folder of outputs, standard output, another extension)."""
    if output is None or many:
        return "text"
    by_suffix = {suffix: name for name, suffix in _FORMATS.items()}
    by_suffix.update({".markdown": "markdown", ".htm": "html"})
    return by_suffix.get(output.suffix.lower(), "text")


def _targets(items: list[tuple[str, Path]], output: Path, fmt: str) -> dict[str, Path]:
    """Each input's output file under ``output``; two inputs that would write one file (a.html
    and a.htm, or two folders' a.html given together) are refused before anything is written."""
    targets: dict[str, Path] = {}
    first: dict[Path, str] = {}
    for item, relative in items:
        target = output / _output_name(relative, fmt)
        if target in first:
            _fail(f"{first[target]} and {item} would both be written to {target}: clean them "
                  "into different folders", EXIT_USAGE)
        first[target], targets[item] = item, target
    return targets


_worker_cleaner = None
_worker_memory = None
_worker_page_type = None


def _init_worker(model: str | None, parser: str, smooth: float | None, memory=None,
                 favor: str = AUTO, comments: bool = False,
                 max_bytes: int | None = None, max_elements: int | None = None,
                 title: bool | None = None, page_type: str | None = None,
                 unsafe_html: bool = False, keep_media: bool = False) -> None:
    global _worker_cleaner, _worker_memory, _worker_page_type
    from noisecbr.cleaner import Cleaner

    _worker_cleaner = Cleaner(model, parser=parser, smooth=smooth, favor=favor,
                              comments=comments, max_bytes=max_bytes,
                              max_elements=max_elements, title=title,
                              unsafe_html=unsafe_html, keep_media=keep_media)
    _worker_memory = memory
    _worker_page_type = page_type


def _page_memories(database: str, site: str | None, url: str | None,
                   record: str | None = None):
    """The memories of ``--memory DB``: of ``--site`` (or the host of ``--url``) for every
    input, or else of the site each page declares (``record`` names the URL a WARC record or
    a fetched page has instead), read from the case base
    (:func:`casebase.reuse.open_page_memories`)."""
    from casebase.reuse import open_page_memories as open_memories
    from noisecbr.site.memory import MemorySourceError

    if "://" not in database and not Path(database).is_file():
        # Opening a missing SQLite file would create an empty case base: say so instead.
        _fail(f"no case base at {database}", EXIT_CASEBASE)
    try:
        memories = open_memories(database, site or url)
    except ValueError as error:
        _fail(str(error), EXIT_USAGE)
    except MemorySourceError as error:
        _fail(str(error), EXIT_CASEBASE)
    if memories.host is None:
        click.echo("noisecbr: --memory: each page's site is the host of "
                   + (record or "the URL it declares (<link rel=canonical> or og:url)"),
                   err=True)
        return memories
    memory = memories.memory(memories.host)
    if not len(memory):
        click.echo(f"noisecbr: the case base has no labelled page of {memories.host}: the model "
                   "alone decides", err=True)
    else:
        click.echo(f"noisecbr: {memories.host}: {memory.pages} labelled page(s), {len(memory)} "
                   "subtree signatures in memory", err=True)
    return memories


def _clean_site(items: list[str], fmt: str, url: str | None
                ) -> list[tuple[str, str | None, str | None, bool]]:
    """Clean the page files of one site together (``--by-site``): each with what recurs on
    the site's other pages (:mod:`noisecbr.site.evidence`); results as :func:`_clean_one`'s."""
    from noisecbr.prepare.tidy import InputError

    def readable():
        for item in items:
            try:
                yield _read(item, _worker_cleaner.max_bytes)
            except (InputError, OSError):
                continue  # no evidence; cleaning it says why

    evidence = _worker_cleaner.site_evidence(readable())
    return [_clean_one(item, None, fmt, url, evidence) for item in items]


def _clean_one(item: str, data: bytes | None, fmt: str, url: str | None, evidence=None
               ) -> tuple[str, str | None, str | None, bool]:
    """Returns (input, output, error, whether the page named no site for --memory): one bad
    page never stops the batch. ``evidence``: the page's site's, with ``--by-site``."""
    from noisecbr.prepare.tidy import InputError

    from .formats import rendered

    try:
        data = _read(item, _worker_cleaner.max_bytes) if data is None else data
        memory = _worker_memory(data) if _worker_memory is not None else None
        unnamed = _worker_memory is not None and memory is None
        result = _worker_cleaner.clean(data, url=url, memory=memory, site=evidence,
                                       page_type=_worker_page_type)
        # Rendered here, inside the guard: the HTML and the decisions are built on access.
        out = rendered(result, fmt)
    except (InputError, OSError) as error:
        return item, None, reading_problem(error), False
    except Exception as error:  # noqa: BLE001 - reported per page, the batch goes on
        return item, None, f"{type(error).__name__}: {error}", False
    return item, out, None, unnamed


@main.command()
# A path (any bytes a file name may hold), checked for existence below, not by click.
@click.argument("inputs", nargs=-1, required=False, type=click.Path(readable=False))
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Output file (one input) or directory (several). Default: standard output.")
@click.option("-f", "--format", "fmt", type=click.Choice([*_FORMATS, *_CRAWL_FORMATS]),
              default=None, help="text (the default): main content; markdown: the same with "
              "its headings, lists, tables and code; html: cleaned page; json: all of them plus "
              "every decision. Without -f, one page's -o file chooses by its extension "
              "(out.json, out.md, out.html, out.txt). WARC input: jsonl (the default) or "
              "parquet, one row per page (also chosen by the name of -o: out.jsonl, "
              "out.parquet).")
@click.option("--model", type=click.Path(exists=True, dir_okay=False),
              help="A model artifact (.safetensors). Default: the embedded model.")
@click.option("--url", help="The page's URL (recorded in JSON output).")
@click.option("--parser", type=click.Choice(["lxml", "html5lib"]), default="lxml",
              show_default=True, help="html5lib is spec-conformant but about 40x slower.")
@click.option("--smooth", type=float, default=None,
              help="Smooth noise scores over the tree (isotonic regression, penalty c·A/A_i).")
@click.option("--favor", type=click.Choice(list(FAVOR)), default=AUTO, show_default=True,
              help="Where the model is unsure: remove more (precision) or keep more (recall) on "
              "every page, or each page as its convention asks (auto: precision on a declared "
              "article, recall on a page with little prose). The thresholds are stored with "
              "the model.")
@click.option("--comments", is_flag=True, help="Keep the reader comments, after the main text "
              "(JSON output has them in 'comments' either way).")
@click.option("-j", "--jobs", type=int, default=1, show_default=True,
              help="Worker processes for batches.")
@click.option("--memory", "memory_db", metavar="DB",
              help="A case base (SQLite path or SQLAlchemy URL): where its labelled pages of "
              "the same site agree on a subtree with the same markup, their label decides.")
@click.option("--site", help="With --memory: the site of the inputs (default: the host of "
              "--url, else of the URL each page declares in <link rel=canonical> or og:url).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES,
              show_default=True, help="Refuse a page (or WARC record) larger than this (after "
              "gunzipping; a .gz is decompressed only up to it).")
@click.option("--max-elements", type=click.IntRange(min=1), default=MAX_ELEMENTS,
              show_default=True, help="Refuse a page of more elements than this (each costs "
              "about 3 kB while the page is cleaned).")
@click.option("--links", is_flag=True, help="With -f markdown: links as [text](url), made "
              "absolute against --url.")
@click.option("--images", is_flag=True, help="With -f markdown: images as ![alt](src).")
@click.option("--markdown", "markdown_column", is_flag=True, help="WARC input: add a markdown "
              "column to the rows (the main content as Markdown).")
@click.option("--by-site", is_flag=True, help="Clean each site's pages together: what recurs "
              "on a site's pages (menus, footers, rails) is removed from each. A page's site "
              "is the host it declares (canonical link, og:url), else its folder; of a WARC "
              "record, the host of its target URI.")
@click.option("--page-type", type=click.Choice(list(KINDS)), default=None,
              help="The pages' kind, in place of the kind the model reads off each page: its "
              "walk and what its text keeps follow that kind's conventions.")
@click.option("--title/--no-title", default=None,
              help="Put the page's headline first in the text and Markdown (as '# …'), or "
              "leave it out (it is the JSON's title either way). Default: as the page's kind "
              "does (an article's body starts after its headline).")
@click.option("--unsafe-html", is_flag=True, help="-f html and json: the page's HTML as it "
              "wrote it, not sanitised (by default no script, event handler, frame, form, "
              "style or <base> of the page is in it, nor the sources of its images and media: "
              "opened, it loads nothing).")
@click.option("--keep-media", is_flag=True, help="-f html and json: keep the page's images, "
              "video and audio with their sources in the sanitised HTML (a browser that opens "
              "it loads them).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--urls", "urls_file", metavar="FILE", help="Fetch and clean the URLs of FILE "
              "(one per line; - for stdin).")
@click.option("--sitemap", "sitemaps", multiple=True, metavar="URL", help="Fetch and clean "
              "the pages of a sitemap (an index, gzipped, or a robots.txt naming sitemaps). "
              "Repeatable.")
@click.option("--feed", "feeds", multiple=True, metavar="URL", help="Fetch and clean the pages "
              "an RSS or Atom feed links to. Repeatable.")
@click.option("--crawl", "crawls", multiple=True, metavar="URL", help="Fetch and clean URL "
              "and the pages of its site it links to, and theirs, breadth first (100 pages "
              "unless --max-pages). Repeatable.")
@click.option("--max-pages", type=click.IntRange(min=1), default=None,
              help="Fetch at most N pages (after de-duplication).")
@click.option("--delay", type=click.FloatRange(min=0), default=DEFAULT_DELAY,
              show_default=True, help="Seconds between two requests to one host (a longer "
              "Crawl-delay of its robots.txt wins). Hosts are fetched in parallel.")
@click.option("--user-agent", default=None, help="The User-Agent of requests, and the name "
              f"robots.txt rules are read for. Default: {DEFAULT_USER_AGENT}.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT,
              show_default=True, help="Seconds to wait for a server's answer (a download may "
              "take three times this).")
@click.option("--retries", type=click.IntRange(min=0), default=DEFAULT_RETRIES,
              show_default=True, help="Retries of a 429 or 5xx answer (its Retry-After "
              "honoured, else a back-off from 1 s, doubled each time).")
@click.option("--resume", is_flag=True, help="URL input: skip the URLs whose pages -o (a "
              "JSONL file or a folder) already holds, and add the others.")
def clean(inputs: tuple[str, ...], output: Path | None, fmt: str | None, model: str | None,
          url: str | None, parser: str, smooth: float | None, favor: str, comments: bool,
          jobs: int, memory_db: str | None, site: str | None, max_bytes: int,
          max_elements: int, links: bool, images: bool, markdown_column: bool,
          by_site: bool, page_type: str | None, title: bool | None, unsafe_html: bool,
          keep_media: bool, quiet: bool, **web_options: Any) -> None:
    """Clean pages: INPUT is an HTML file, a .gz, a directory of them, or - for stdin; or
    WARC files (.warc, .warc.gz), whose HTML responses are written one row per page; or
    http(s) URLs, fetched politely (robots.txt obeyed, one request at a time per host).

    One URL is written as one page file is. Many (several, --urls, --sitemap, --feed, --crawl) are
    written one JSONL row per page (to stdout, or -o out.jsonl / out.parquet), or one file per
    page in the folder -o names; --resume goes on where a stopped crawl left off.

    With --memory, pages of a site whose labelled pages are in the case base (imported, or
    corrected with `casebase label`) are cleaned with what those pages say, without retraining.
    With --by-site, what recurs across a site's pages is removed from each, without labels."""
    from noisecbr.prepare.tidy import InputError
    from noisecbr.score.model import ModelError
    from noisecbr.web.discover import is_url

    from .crawl.warc import is_warc
    from .web.command import WebOptions

    web = [item for item in inputs if is_url(item)]
    resume = web_options.pop("resume")  # the other options (--urls, --sitemap, …): WebOptions
    if web or any(web_options[name] for name in ("urls_file", "sitemaps", "feeds", "crawls")):
        if len(web) < len(inputs):
            _fail("give URLs alone, not with files", EXIT_USAGE)
        options = WebOptions(tuple(web), resume=resume, **web_options)
        _clean_urls(options, output, fmt, url, memory_db, site, jobs, quiet, links, images,
                    markdown_column, (model, parser, smooth, max_bytes, favor, comments,
                                      max_elements, by_site, title, page_type))
        return
    placed = _file_inputs(inputs, resume)
    items = [item for item, _ in placed]
    warcs = [item for item in items if item != "-" and is_warc(item)]
    if warcs:
        if len(warcs) < len(items):
            _fail("give WARC files alone, not with HTML pages", EXIT_USAGE)
        from .crawl.pool import CleanSettings

        memory = _page_memories(memory_db, site, url, "its WARC-Target-URI") if memory_db else None
        _clean_crawl(warcs, output, fmt, CleanSettings(
            model, parser, smooth, max_bytes, memory, favor, comments, max_elements,
            markdown=markdown_column, by_site=by_site, title=title, page_type=page_type),
            jobs, quiet)
        return
    # A folder in, a folder out: even with one page in it.
    many = len(items) > 1 or any(item != "-" and Path(item).is_dir() for item in inputs)
    fmt = fmt or _format_of(output, many)
    _check_page_options(items, fmt, markdown_column, links or images, by_site)
    targets = _targets(placed, output, fmt) if output is not None and many else None
    if targets is not None:
        output.mkdir(parents=True, exist_ok=True)
    if site and not memory_db:
        _fail("--site names the site of --memory: give --memory DB too", EXIT_USAGE)
    memory = _page_memories(memory_db, site, url) if memory_db else None
    try:
        _init_worker(model, parser, smooth, memory, favor, comments, max_bytes, max_elements,
                     title, page_type, unsafe_html, keep_media)
    except ModelError as error:
        _fail(str(error), EXIT_MODEL)
    stdin_data = None
    if "-" in items:
        try:
            stdin_data = _read("-", max_bytes)
        except InputError as error:
            _fail(f"-: {error}", EXIT_PARTIAL)
    groups = None
    if by_site:
        from .sites import group_by_site

        groups = list(group_by_site(items, lambda item: _read(item, max_bytes)).values())
    _clean_files(items, output, targets, _shaped(fmt, links, images), url, stdin_data,
                 jobs, quiet, (model, parser, smooth, memory, favor, comments, max_bytes,
                               max_elements, title, page_type, unsafe_html, keep_media), groups)


def _file_inputs(inputs: tuple[str, ...], resume: bool) -> list[tuple[str, Path]]:
    """The pages of the file inputs, each with its place (:func:`_expand`); exits when there
    are none, with ``--resume`` (of URL input only) or when an input does not exist."""
    if not inputs:
        _fail("give pages to clean: files, folders, WARCs, URLs, - (stdin), --urls, "
              "--sitemap, --feed or --crawl", EXIT_USAGE)
    if resume:
        _fail("--resume goes on with a crawl of URLs: give URLs, --urls, --sitemap, --feed or "
              "--crawl", EXIT_USAGE)
    missing = [item for item in inputs if item != "-" and not Path(item).exists()]
    if missing:
        _fail(f"no such file or directory: {', '.join(missing)} (nothing was cleaned)",
              EXIT_NOT_FOUND)
    placed = list(_expand(inputs))
    if not placed:
        _fail("no HTML files found in the inputs", EXIT_USAGE)
    return placed


def _clean_urls(options, output: Path | None, fmt: str | None, url: str | None,
                memory_db: str | None, site: str | None, jobs: int, quiet: bool, links: bool,
                images: bool, markdown_column: bool, cleaning: tuple) -> None:
    """``noisecbr clean`` of web input (:mod:`noisecbr_apps.web.command`)."""
    from noisecbr.score.model import ModelError

    from .crawl.pool import CleanSettings
    from .web.command import WebUsageError, clean_web

    model, parser, smooth, max_bytes, favor, comments, max_elements, by_site, title, \
        page_type = cleaning
    if url:
        _fail("--url names the page of a file; a fetched page's URL is where it came from",
              EXIT_USAGE)
    if (links or images) and fmt not in (None, "markdown"):
        _fail("--links and --images shape the Markdown: give -f markdown", EXIT_USAGE)
    fmt = _shaped(fmt, links, images) if fmt is not None else None
    memory = (_page_memories(memory_db, site, None, "the URL it was fetched from")
              if memory_db else None)
    settings = CleanSettings(model, parser, smooth, max_bytes, memory, favor, comments,
                             max_elements, markdown=markdown_column, by_site=by_site,
                             title=title, page_type=page_type)
    try:
        settings.cleaner()
    except ModelError as error:
        _fail(str(error), EXIT_MODEL)
    try:
        failed = clean_web(options, output, fmt, settings, max_bytes, jobs, quiet,
                           _format_of(output, False))
    except WebUsageError as error:
        _fail(str(error), error.code)
    except ImportError as error:
        _fail(str(error), EXIT_USAGE)
    except OSError as error:  # the output: a full disk, a folder not writable
        _fail(f"cannot write {output}: {error}", EXIT_PARTIAL)
    except KeyboardInterrupt:  # outside the crawl (reading a sitemap): the crawl's says more
        _fail("interrupted", EXIT_INTERRUPTED)
    if failed:
        sys.exit(EXIT_PARTIAL)


def _shaped(fmt: str, links: bool, images: bool) -> str:
    """The format a page is rendered in: Markdown with what --links and --images ask for
    ("markdown+links+images"), any other format as it is."""
    if fmt != "markdown":
        return fmt
    return "+".join(["markdown", *(["links"] if links else []), *(["images"] if images else [])])


def _check_page_options(items: list[str], fmt: str, markdown_column: bool, shaped: bool,
                        by_site: bool) -> None:
    """Refuse the options that do not fit HTML input (exit 2, one line)."""
    if markdown_column:
        _fail("--markdown adds a column to the rows of WARC input; for pages give -f markdown",
              EXIT_USAGE)
    if shaped and fmt != "markdown":
        _fail("--links and --images shape the Markdown: give -f markdown", EXIT_USAGE)
    if fmt in _CRAWL_FORMATS:
        _fail(f"-f {fmt} is for WARC input (one row per page): give .warc or .warc.gz files",
              EXIT_USAGE)
    if items.count("-") > 1:
        _fail("standard input can be read only once", EXIT_USAGE)
    if by_site and "-" in items:
        _fail("--by-site groups page files by site: give files or folders, not -", EXIT_USAGE)


def _clean_files(items: list[str], output: Path | None, targets: dict[str, Path] | None,
                 fmt: str, url: str | None, stdin_data: bytes | None, jobs: int, quiet: bool,
                 worker: tuple, groups: list[list[str]] | None = None) -> None:
    """Clean HTML inputs (in ``jobs`` processes, each set up by ``_init_worker(*worker)``) and
    write each result (several: to its file in ``targets``); one bad input never stops the
    others: the failures are listed at the end, and the exit code is then
    :data:`EXIT_PARTIAL`. With ``groups`` (the items by site), each group is cleaned
    together (:func:`_clean_site`)."""
    from tqdm import tqdm

    many = len(items) > 1
    failures: list[tuple[str, str]] = []
    bar = tqdm(total=len(items), unit="page", disable=quiet or not many or None,
               file=sys.stderr)

    def tasks():
        for item in items:
            yield item, stdin_data if item == "-" else None, fmt, url

    unnamed: list[str] = []
    written = 0

    def emit(item: str, text: str | None, error: str | None, no_site: bool) -> None:
        nonlocal written
        bar.update(1)
        if no_site:
            unnamed.append(item)
        if error is not None:
            failures.append((item, error))
            return
        if output is None:
            if many:
                sys.stdout.write(f"==> {shown(item)} <==\n")
            sys.stdout.write(text)
        else:
            target = targets[item] if targets is not None else output
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            except OSError as problem:
                failures.append((item, f"cannot write {shown(str(target))}: "
                                       + (problem.strerror or str(problem))))
                return
            written += 1

    if groups is not None:
        # A site's pages go to one process together: its evidence is read once.
        site_tasks = [(group, fmt, url) for group in groups]
        if jobs > 1 and len(groups) > 1:
            with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=worker) as pool:
                for results in pool.map(_clean_site, *zip(*site_tasks)):
                    for result in results:
                        emit(*result)
        else:
            for task in site_tasks:
                for result in _clean_site(*task):
                    emit(*result)
    elif jobs > 1 and many:
        with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=worker) as pool:
            for result in pool.map(_clean_one, *zip(*tasks()), chunksize=4):
                emit(*result)
    else:
        for task in tasks():
            emit(*_clean_one(*task))
    bar.close()
    if targets is not None:
        click.echo(f"noisecbr: wrote {written} of {len(items)} pages to {shown(str(output))}",
                   err=True)
    if unnamed:
        click.echo(f"noisecbr: {len(unnamed)} of {len(items)} pages declare no URL, so no site "
                   "memory: the model alone cleaned them (give --site)", err=True)
    if failures:
        click.echo(f"noisecbr: {len(failures)} of {len(items)} inputs failed:", err=True)
        for item, error in failures:
            click.echo(f"  {shown(item)}: {error}", err=True)
        sys.exit(EXIT_PARTIAL)


def _crawl_targets(warcs: list[str], output: Path | None, fmt: str) -> list:
    """Where each WARC's rows go: stdout, one file for all, or one file per WARC in a folder."""
    if output is None:
        if fmt == "parquet":
            _fail("Parquet is written to a file: give -o out.parquet or -o a folder", EXIT_USAGE)
        return [sys.stdout] * len(warcs)
    from .crawl.warc import warc_stem

    if output.suffix.lower() in _CRAWL_FORMATS.values() and not output.is_dir():
        return [output] * len(warcs)
    output.mkdir(parents=True, exist_ok=True)
    names = [warc_stem(item) for item in warcs]
    if len(set(names)) < len(names):
        _fail("two WARC inputs have the same name: write them to different folders", EXIT_USAGE)
    return [output / (name + _CRAWL_FORMATS[fmt]) for name in names]


def _clean_crawl(warcs: list[str], output: Path | None, fmt: str | None, settings,
                 jobs: int, quiet: bool) -> None:
    """``noisecbr clean`` of WARC files: one row per HTML page, a summary per file on stderr."""
    from tqdm import tqdm

    from noisecbr.score.model import ModelError

    from .crawl.pool import clean_warc, worker_pool
    from .crawl.warc import CrawlStats, RowWriter, output_format

    fmt = output_format(output, fmt)
    if fmt not in _CRAWL_FORMATS:
        _fail(f"WARC input is written as jsonl or parquet, not {fmt}", EXIT_USAGE)
    targets = _crawl_targets(warcs, output, fmt)
    try:
        settings.cleaner()
    except ModelError as error:
        _fail(str(error), EXIT_MODEL)
    except ImportError as error:
        _fail(str(error), EXIT_USAGE)
    total, failed = CrawlStats(), []
    pool = worker_pool(jobs, settings) if jobs > 1 else None
    writer = None
    bar = tqdm(unit="page", disable=quiet or None, file=sys.stderr)
    try:
        for item, target in zip(warcs, targets):
            if writer is None or writer.target != target:
                if writer is not None:
                    writer.close()
                writer = RowWriter(target, fmt, settings.markdown)
            try:
                stream = open(item, "rb")  # noqa: SIM115 - closed by the with below
            except OSError as error:
                failed.append((item, reading_problem(error)))
                continue
            with stream:
                stats = clean_warc(stream, writer, settings, pool, jobs, bar.update)
            total.add(stats)
            bar.clear()
            click.echo(f"noisecbr: {shown(item)}: {stats.summary()}", err=True)
            for _, damage in stats.damages:
                click.echo(f"noisecbr: {shown(item)}: {damage.describe()}", err=True)
            if stats.damaged:
                parts = len(stats.damages)
                failed.append((item, f"damaged archive ({parts} damaged "
                                     f"part{'s' if parts > 1 else ''}: see above)"))
    except ImportError as error:
        _fail(str(error), EXIT_USAGE)
    except OSError as error:  # the output: a full disk, a folder not writable
        _fail(f"cannot write {writer.target if writer else output}: {error}", EXIT_PARTIAL)
    finally:
        bar.close()
        if writer is not None:
            writer.close()
        if pool is not None:
            pool.shutdown()
    if len(warcs) > 1:
        click.echo(f"noisecbr: {len(warcs)} WARC files: {total.summary()}", err=True)
    if failed:
        click.echo(f"noisecbr: {len(failed)} of {len(warcs)} WARC files failed:", err=True)
        for item, error in failed:
            click.echo(f"  {shown(item)}: {error}", err=True)
        sys.exit(EXIT_PARTIAL)


# -- bench ---------------------------------------------------------------------------------------
#: What ``bench --truth`` scores against, as its output says.
_TRUTHS = {"full": "the whole ground truth (reader comments included where it has them; "
                   "--truth article: the article alone)",
           "article": "the article part of the ground truth (the text before its reader-comments "
                      "marker)"}
def _click_counts(values: tuple[str, ...]) -> tuple[int, ...]:
    """The numbers of ``--adapt-clicks``, each given alone or in a comma list."""
    counts = []
    for part in (p.strip() for value in values for p in value.split(",")):
        if not part.isascii() or not part.isdigit() or int(part) < 1:
            raise click.BadParameter(f"{part!r} is not a number of clicks ≥ 1")
        counts.append(int(part))
    return tuple(dict.fromkeys(counts))


@main.command("bench")
@click.argument("dataset", type=click.Path(exists=True, file_okay=False))
@click.option("-e", "--extractor", "extractors", multiple=True,
              help="noisecbr, none (no cleaning), trafilatura, readability, justext, resiliparse, "
              "boilerpy3. Repeatable. Default: noisecbr.")
@click.option("--cv", type=int, default=None,
              help="Score noisecbr by K site-grouped folds: each page by a model trained "
              "without its site (needs the training extra).")
@click.option("--with", "with_sets", multiple=True,
              type=click.Path(exists=True, file_okay=False),
              help="With --cv: another dataset every fold model also trains on (its pages of "
              "the held-out sites excepted), as the embedded default learns several sets. "
              "Repeatable.")
@click.option("--limit", type=int, default=None, help="Only the first N pages.")
@click.option("--model", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the table as CSV.")
@click.option("--by-type", is_flag=True,
              help="Also print F1 per page type (the ground truth's page_type).")
@click.option("--by-lang", is_flag=True,
              help="Also print F1 per page language (its <html lang>, else the language "
              "noisecbr reads off its words).")
@click.option("--structure", is_flag=True, help="Also print the share of the pages' code lines "
              "and table rows each text keeps intact (a line as a line, a row's cells on one "
              "line), of those it keeps.")
@click.option("--truth", type=click.Choice(["full", "article"]), default="full",
              show_default=True, help="Score against the full ground truth, or only its article "
              "part (the text before a reader-comments marker line, as in dragnet).")
@click.option("--comments", is_flag=True, help="Ask noisecbr and trafilatura to keep reader "
              "comments after the main text.")
@click.option("--modes", is_flag=True, help="Add a noisecbr row for each mode on every page "
              "(balanced, precision, recall) beside the default (auto: each page's convention).")
@click.option("--oracle", is_flag=True, help="Add a row that scores each page by the row that "
              "did best on it: how high the extractors together reach on this ground truth.")
@click.option("--fold-models", type=click.Path(exists=True, file_okay=False), default=None,
              help="Score noisecbr by the fold models in this folder (written by python -m "
              "training.crossval): each page by a model trained as the embedded default is, "
              "on all its sets, without the page's site.")
@click.option("--adapt", type=click.IntRange(min=0), default=0, show_default=True,
              help="Score only the pages of sites with more than K pages, and add a noisecbr "
              "row that also uses a site memory of K other pages of each page's site, labelled "
              "from their ground truth (what correcting K pages of a site teaches).")
@click.option("--site-pages", type=click.IntRange(min=0), default=0, show_default=True,
              help="Score only the pages of sites with more than K pages, and add a noisecbr "
              "row that cleans each page with K other pages of its site as unlabelled "
              "evidence (what recurs on them is the site's template).")
@click.option("--adapt-clicks", "adapt_clicks", multiple=True, metavar="N[,N…]",
              callback=lambda ctx, param, value: _click_counts(value),
              help="Score only the pages of sites with more than one page, and add two "
              "noisecbr rows per N: with the site memory of N boxes of another page of the site "
              "labelled from its ground truth, the correction queue's first N and N at random. "
              "Repeatable or a comma list (1,3,5).")
def bench_command(dataset: str, extractors: tuple[str, ...], cv: int | None,
                  with_sets: tuple[str, ...], limit: int | None, model: str | None, seed: int,
                  csv_path: Path | None, by_type: bool, by_lang: bool, structure: bool,
                  truth: str,
                  comments: bool, modes: bool,
                  oracle: bool, fold_models: str | None, adapt: int, site_pages: int,
                  adapt_clicks: tuple[int, ...]) -> None:
    """Score extractors on DATASET (html/<id>.html.gz + ground-truth.json): shingle P/R/F1
    with a bootstrap ±, the mean word F1 (WCXB's metric) and docs/s (CPU time, one
    process)."""
    from noisecbr.eval.metric import mean_word_f1

    from .bench import PEERS, BenchUsageError, bench, format_by_type, format_structure, format_table

    unknown = [e for e in extractors if e not in PEERS]
    if unknown:
        _fail(f"unknown extractor(s) {', '.join(unknown)}; known: {', '.join(PEERS)}",
              EXIT_USAGE)
    if with_sets and not cv:
        _fail("--with adds training data to the --cv fold models: give --cv K too", EXIT_USAGE)
    for flag, value in (("--adapt", adapt), ("--site-pages", site_pages),
                        ("--adapt-clicks", adapt_clicks)):
        if value and "noisecbr" not in (extractors or ("noisecbr",)):
            _fail(f"{flag} adds a noisecbr row: give -e noisecbr too", EXIT_USAGE)
    try:
        rows = bench(dataset, extractors or ("noisecbr",), cv=cv, limit=limit, seed=seed,
                     model=model, progress=sys.stderr.isatty(), with_sets=with_sets, adapt=adapt,
                     site_pages=site_pages, truth=truth, comments=comments, modes=modes,
                     oracle=oracle, fold_models=fold_models, by_lang=by_lang, structure=structure,
                     adapt_clicks=adapt_clicks)
    except BenchUsageError as error:
        _fail(str(error), EXIT_USAGE)
    except OSError as error:  # DATASET is not a dataset (no ground-truth.json), a file unreadable
        _fail(str(error), EXIT_OTHER)
    pages = rows[0].scores.pages if rows[0].scores else 0
    click.echo(f"{shown(Path(dataset).name)}: {pages} pages, scored against {_TRUTHS[truth]}")
    click.echo(format_table(rows))
    if by_type:
        click.echo("\nF1 by page type (shingle/word):\n" + format_by_type(rows))
    if by_lang:
        click.echo("\nF1 by language (shingle/word):\n" + format_by_type(rows, "lang"))
    if structure:
        click.echo("\nStructure kept:\n" + format_structure(rows))
    if csv_path:
        import csv

        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["extractor", "precision", "recall", "f1", "f1_ci95", "word_f1",
                             "docs_per_s", "failures", "near_empty"])
            for row in rows:
                if row.scores:
                    writer.writerow([row.name, f"{row.scores.precision:.4f}",
                                     f"{row.scores.recall:.4f}", f"{row.scores.f1:.4f}",
                                     f"{row.f1_ci:.4f}",
                                     f"{mean_word_f1(row.page_words):.4f}",
                                     "" if math.isnan(row.docs_per_second)
                                     else f"{row.docs_per_second:.2f}",
                                     row.failures, row.empty])


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
