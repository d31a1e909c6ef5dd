"""A site's pages without ground truth: its template's subtrees stored as noise cases.

:func:`import_site` reads a folder of one site's pages, finds the subtrees repeated across them
(:func:`noisecbr.seeds.templates.template_labels`, the SiteLevel seed method) and stores each
page once with those subtrees as noise cases, label source ``site_template``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from noisecbr.fsnames import shown
from noisecbr.prepare.limits import read_file_limited, reading_problem
from noisecbr.prepare.tidy import InputError
from noisecbr.result import NOISE

from .derived import derive
from .importer import ImportReport, show_progress
from .models import Page
from .pages import content_hash, find_page, prepare_page
from .retain import case_rows, insert_cases, insert_page

__all__ = ["SitePage", "import_site", "import_site_pages", "read_page_bytes", "site_pages"]


@dataclass(frozen=True)
class SitePage:
    """One page of a site, read or fetched: its id in the case base (a file name, or the URL
    it was fetched from), its bytes and its URL when it has one."""

    name: str
    raw: bytes | str  # str: decoded by the HTTP charset it was served with
    url: str = ""


def site_pages(directory: str | Path) -> list[Path]:
    """The .html and .html.gz files of a folder (one site's pages), sorted by name."""
    directory = Path(directory)
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.name.endswith((".html", ".htm", ".html.gz", ".htm.gz")))


def read_page_bytes(path: Path) -> bytes:
    """A page file's bytes, gunzipped when they are gzip, up to the cleaner's byte limit
    (:func:`noisecbr.prepare.limits.read_file_limited`: a gzip bomb is stopped after 10 MB, never
    inflated whole). Raises :class:`noisecbr.prepare.tidy.InputError` for a damaged or oversized
    file."""
    return read_file_limited(path)


def _read_pages(files: list[Path], report: ImportReport) -> list[SitePage]:
    """The pages of the files that could be read; a damaged or oversized file is counted
    and reported in ``report.failed``, the others go on."""
    pages = []
    for path in files:
        try:
            pages.append(SitePage(shown(path.name), read_page_bytes(path)))
        except (InputError, OSError) as error:
            report.read += 1
            report.failed.append((shown(path.name), reading_problem(error)))
    return pages


def _templates(pages: Sequence[SitePage], theta: float, share: float, parser: str,
               report: ImportReport) -> tuple[Sequence[SitePage], list[dict[str, bool]]]:
    """The pages and, for each, :func:`noisecbr.seeds.templates.template_labels`' element path
    → is template; a page that cannot be read (too many elements, …) is left out, reported."""
    from noisecbr.seeds.templates import template_labels

    try:
        templates = template_labels([page.raw for page in pages], theta=theta, share=share)
    except InputError:  # one page's: it alone is left out
        pages = _readable(pages, parser, report)
        templates = template_labels([page.raw for page in pages], theta=theta, share=share)
    if len(templates) != len(pages):
        raise ValueError(f"template_labels returned {len(templates)} results for {len(pages)} "
                         "pages")
    return pages, templates


def _readable(pages: Sequence[SitePage], parser: str, report: ImportReport) -> list[SitePage]:
    """The pages that tidy; the others counted and reported in ``report.failed``."""
    from noisecbr.prepare.tidy import tidy

    kept = []
    for page in pages:
        try:
            tidy(page.raw, parser=parser)
        except InputError as error:
            report.read += 1
            report.failed.append((page.name, str(error)))
            continue
        kept.append(page)
    return kept


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
    :func:`noisecbr.seeds.templates.template_labels` finds repeated across them (the
    site's template) as noise cases, label source ``site_template``: see
    :func:`import_site_pages`, which does it for pages held in memory."""
    source = source or f"site:{host}"
    report = ImportReport(dataset=source)
    pages = _read_pages(site_pages(directory), report)
    return import_site_pages(session, pages, host, theta=theta, share=share, parser=parser,
                             source=source, progress=progress, report=report)


def import_site_pages(
    session: Session,
    pages: Sequence[SitePage],
    host: str,
    *,
    theta: float = 0.10,
    share: float = 0.85,
    parser: str = "lxml",
    source: str | None = None,
    progress: bool = False,
    report: ImportReport | None = None,
) -> ImportReport:
    """Import the pages of one site with the subtrees that
    :func:`noisecbr.seeds.templates.template_labels` finds repeated across them (the
    site's template) as noise cases, label source ``site_template``.

    Only template subtrees become cases: a subtree that is not part of the template is not
    thereby content (an ad or a related-links box differs from page to page), so it gets no
    label rather than a wrong one. Every template subtree is a case, at every level, as in a
    ground-truth import. Pages are stored under ``source`` (default ``site:<host>``) with
    their name as external id; pages already stored there are skipped, pages that are not
    HTML are reported in ``failed`` (of ``report``, when given: what reading them found).
    ``report.unmatched_paths`` counts template paths that are not elements of the tidied
    page (the two sides parsed differently).
    """
    from tqdm import tqdm

    source = source or f"site:{host}"
    report = report or ImportReport(dataset=source)
    started = time.perf_counter()
    pages, templates = _templates(pages, theta, share, parser, report)
    site_cache: dict[str, int] = {}
    bar = tqdm(total=len(pages), unit="page", file=sys.stderr, disable=not show_progress(progress),
               dynamic_ncols=True, desc=host)
    try:
        for item, template in zip(pages, templates):
            name, raw = item.name, item.raw
            report.read += 1
            bar.update(1)
            digest = content_hash(raw)
            existing = find_page(session, source, digest)
            if existing is not None:
                report.duplicates.append(name)
                report.duplicate_of[name] = session.execute(
                    select(Page.external_id).where(Page.id == existing)).scalar()
                continue
            try:
                page = prepare_page(raw, parser, digest)
            except InputError as error:
                report.failed.append((name, str(error)))
                continue
            except Exception as error:  # noqa: BLE001 - reported, the other pages go on
                report.failed.append((name, f"unexpected {type(error).__name__}: {error}"))
                continue
            page_id = insert_page(session, page.html, digest, url=item.url, source=source,
                                   external_id=name, host=host, truth=None,
                                   parser=parser, declared_article=page.declared_article,
                                   derived=derive(page.table), site_cache=site_cache)
            position = {p: i for i, p in enumerate(page.paths)}
            chosen = sorted(position[p] for p, is_template in template.items()
                            if is_template and p in position)
            report.unmatched_paths += sum(
                1 for p, is_template in template.items() if is_template and p not in position)
            labels = np.full(len(page.table), NOISE, dtype=np.int8)
            rows = case_rows(page, page_id, labels, "site_template", chosen)
            insert_cases(session, rows)
            report.cases["noise"] += len(rows)
            report.imported += 1
    finally:
        bar.close()
        report.seconds = time.perf_counter() - started
    return report
