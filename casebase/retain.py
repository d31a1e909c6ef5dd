"""Retain: one page stored once and its cases by reference, in the caller's transaction.

A page row holds the page's compressed stored HTML and what its cases derive from it (vectors
and outline, :mod:`casebase.derived`); a case row is its page, position, label, label source and
count (:data:`CASE_COLUMNS`). :func:`add_page` stores one page (an import, a correction, the
service); :func:`insert_page`, :func:`case_rows` and :func:`insert_cases` are its steps, which
the bulk imports (:mod:`casebase.importer`, :mod:`casebase.site_import`) call in batches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import func, insert
from sqlalchemy.orm import Session

from noisecbr.eval.datasets import site_of
from noisecbr.result import LABELS

from .derived import PageDerived, derive
from .errors import UnknownPathsError
from .labelling import MAX_COVERAGE, T_DATA, T_NOISE
from .models import Case, Page
from .pages import PreparedPage, check_source, content_hash, find_page, page_cases, site_id

__all__ = ["CASE_COLUMNS", "AddedPage", "add_page", "case_rows", "insert_cases", "insert_page"]


#: Column order of the tuples :func:`case_rows` returns. A case's path, tag, text and vector are
#: its page's at its position (:mod:`casebase.derived`): none is stored per case.
CASE_COLUMNS = ("page_id", "position", "label", "label_source", "count")


def case_rows(
    page: PreparedPage,
    page_id: int,
    labels: np.ndarray,
    label_source: str,
    indices: Sequence[int] | np.ndarray | None = None,
) -> list[tuple]:
    """Rows (tuples in :data:`CASE_COLUMNS` order) of the elements ``indices`` (all by
    default); ``labels`` are indices into LABELS, one per element of the page."""
    if indices is not None and len(indices) == 0:
        return []
    names = [LABELS[k] for k in labels.tolist()]
    chosen = range(len(page.table)) if indices is None else [int(i) for i in indices]
    return [(page_id, i, names[i], label_source, 1) for i in chosen]


def insert_cases(session: Session, rows: list[tuple], *, stamped: bool = False) -> None:
    """Bulk-insert case rows (tuples in :data:`CASE_COLUMNS` order) in ``session``'s
    transaction. ``stamped``: the cases are added to a page stored before, so they get a
    creation time of their own (a page's first cases have their page's). On SQLite the tuples
    go straight to the driver's executemany (about twice as fast as a Core insert of dicts,
    which other databases get)."""
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql(_SQLITE_INSERT[stamped], rows)
    else:
        extra = {"created_at": func.current_timestamp()} if stamped else {}
        connection.execute(insert(Case.__table__).values(**extra),
                           [dict(zip(CASE_COLUMNS, row)) for row in rows])


_SQLITE_INSERT = {
    stamped: (f"INSERT INTO cases ({', '.join(CASE_COLUMNS)}{', created_at' * stamped}) "
              f"VALUES ({', '.join('?' * len(CASE_COLUMNS))}{', CURRENT_TIMESTAMP' * stamped})")
    for stamped in (False, True)
}


def insert_page(session: Session, html: bytes, digest: str, *, url: str, source: str,
                 external_id: str | None, host: str, truth: str | None, parser: str,
                 declared_article: bool | None, derived: PageDerived,
                 site_cache: dict[str, int] | None = None) -> int:
    """Insert one page row (its compressed stored HTML and what its cases derive from it) and
    return its id."""
    result = session.execute(insert(Page).values(
        site_id=site_id(session, host, site_cache), url=url or "", source=source,
        external_id=external_id, content_hash=digest, parser=parser, html=html, truth=truth,
        declared_article=declared_article, vector_schema=derived.vector_schema,
        vectors=derived.vectors, outline=derived.outline))
    return int(result.inserted_primary_key[0])


@dataclass
class AddedPage:
    """What :func:`add_page` stored: the page id (None for a duplicate), cases per label, unknown
    paths.
    """

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
    Raises :class:`noisecbr.prepare.tidy.InputError` for input that is not a page.
    """
    digest = content_hash(html)
    existing = find_page(session, source, digest)
    if existing is not None:
        return AddedPage(None, duplicate_of=existing)
    if labels is not None or truth is not None:
        label_source = label_source or ("human" if labels is not None else "ground_truth")
        check_source(label_source)
    cases = page_cases(html, truth=truth, paths=labels, parser=parser, digest=digest,
                       t_data=t_data, t_noise=t_noise, max_coverage=max_coverage)
    if labels and len(cases.unknown_paths) == len(labels):
        # A correction none of whose paths selects a box is refused whole: the page stored
        # without its cases would make the corrected run skip it as already stored.
        raise UnknownPathsError(f"no path selects an element of the page ({', '.join(labels)})"
                                ": nothing stored", cases.unknown_paths)
    host = site or site_of(url, f"{source}/{external_id or digest[:16]}")
    page_id = insert_page(session, cases.page.html, digest, url=url, source=source,
                           external_id=external_id, host=host, truth=truth, parser=parser,
                           declared_article=cases.page.declared_article,
                           derived=derive(cases.page.table))
    rows = case_rows(cases.page, page_id, cases.labels, label_source or "", cases.indices)
    insert_cases(session, rows)
    added = AddedPage(page_id, unknown_paths=cases.unknown_paths)
    added.cases.update(row[2] for row in rows)
    return added
