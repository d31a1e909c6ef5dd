"""A site's pages without ground truth: its template's subtrees stored as noise cases.

:func:`import_site` reads a folder of one site's pages, finds the subtrees repeated across them
(:func:`noisecbr.seeds.templates.template_labels`, the SiteLevel seed method) and stores each
page once with those subtrees as noise cases, label source ``site_template``.
"""

from __future__ import annotations

import sys
import time
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

__all__ = ["import_site", "read_page_bytes", "site_pages"]


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


def _read_pages(files: list[Path], report: ImportReport) -> tuple[list[Path], list[bytes]]:
    """The files that could be read and their bytes; a damaged or oversized file is counted
    and reported in ``report.failed``, the others go on."""
    readable, raws = [], []
    for path in files:
        try:
            raws.append(read_page_bytes(path))
            readable.append(path)
        except (InputError, OSError) as error:
            report.read += 1
            report.failed.append((shown(path.name), reading_problem(error)))
    return readable, raws


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
    site's template) as noise cases, label source ``site_template``.

    Only template subtrees become cases: a subtree that is not part of the template is not
    thereby content (an ad or a related-links box differs from page to page), so it gets no
    label rather than a wrong one. Every template subtree is a case, at every level, as in a
    ground-truth import. Pages are stored under ``source`` (default ``site:<host>``); pages
    already stored there are skipped, pages that are not HTML are reported in ``failed``.
    ``report.unmatched_paths`` counts template paths that are not elements of the tidied
    page (the two sides parsed differently).
    """
    from tqdm import tqdm

    from noisecbr.seeds.templates import template_labels

    files = site_pages(directory)
    source = source or f"site:{host}"
    report = ImportReport(dataset=source)
    started = time.perf_counter()
    files, raws = _read_pages(files, report)
    templates = template_labels(raws, theta=theta, share=share)
    if len(templates) != len(raws):
        raise ValueError(f"template_labels returned {len(templates)} results for {len(raws)} "
                         "pages")
    site_cache: dict[str, int] = {}
    bar = tqdm(total=len(files), unit="page", file=sys.stderr, disable=not show_progress(progress),
               dynamic_ncols=True, desc=host)
    try:
        for path, raw, template in zip(files, raws, templates):
            name = shown(path.name)  # the page's id, stored as text
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
            page_id = insert_page(session, page.html, digest, url="", source=source,
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
