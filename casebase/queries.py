"""Reading cases: filtered listing and iteration, single cases, label history, the stored
page and a case's subtree in it, and counts of everything.

    for case in cb.iter_cases(label="noise", site="example.com"): ...
    cb.list_cases(limit=50, offset=0, source="human", text="cookie")
    cb.get_case(42).features()

Every read runs in a read transaction of its own (``engine.connect()``), which never waits for
a writer; :meth:`QueriesMixin.iter_cases` reads one batch per transaction, so a long iteration
holds no snapshot open.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any

import numpy as np
from sqlalchemy import and_, func, null, select, text

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import LABELS

from .connection import ConnectionMixin
from .derived import decode_vectors, stored_entries
from .errors import NotFoundError
from .models import Case, LabelHistory, Page, Site, decompress_html
from .pages import check_label, check_source, find_element, parse_stored

__all__ = ["CASE_COLUMNS", "CaseRecord", "QueriesMixin", "case_records"]


@dataclass(frozen=True)
class CaseRecord:
    """One case as read from the database (detached: no session needed)."""

    id: int
    page_id: int
    site: str
    path: str
    position: int
    tag: str
    label: str
    label_source: str
    text: str
    schema_version: int
    count: int
    created_at: datetime
    updated_at: datetime
    #: The page's stored vectors (compressed, shared by the records of one page): decoded only
    #: when :attr:`vector` is read, which a listing or an explanation never does.
    vectors_blob: bytes | None = field(default=None, repr=False, compare=False)
    #: False when the record was read without its page's vectors (``get_cases(vectors=False)``)
    vectors_read: bool = field(default=True, repr=False, compare=False)

    @property
    def vector(self) -> np.ndarray:
        """The case's vector: its page's at its position (empty when the page has none).
        Raises ``LookupError`` for a record read without the vectors."""
        if not self.vectors_read:
            raise LookupError(f"case {self.id} was read without its vector "
                              "(get_cases(..., vectors=False))")
        return _vector(self.vectors_blob, self.position)

    def features(self) -> dict[str, float]:
        """The vector by feature name (when the case's schema is the current one)."""
        if self.schema_version != VECTOR_SCHEMA or len(self.vector) != len(FEATURE_NAMES):
            return {f"x{i}": float(v) for i, v in enumerate(self.vector)}
        return {name: float(v) for name, v in zip(FEATURE_NAMES, self.vector)}


#: A case's own columns, its page's and site's: what a record needs besides the page's blobs.
CASE_COLUMNS = (Case.id, Case.page_id, Site.host, Case.position, Case.label, Case.label_source,
                 Page.vector_schema, Case.count,
                 func.coalesce(Case.created_at, Page.created_at),
                 func.coalesce(Case.updated_at, Case.created_at, Page.created_at))


def case_records(connection, rows: list, vectors: bool = True) -> list[CaseRecord]:
    """Records of case rows (:data:`CASE_COLUMNS`, read on ``connection``): each page's blobs
    read once and decoded once (:mod:`casebase.derived`), the case's path, tag, text and vector
    taken at its position; without ``vectors`` the pages' vectors are not read (three
    quarters of a page's blobs; an explanation shows its neighbours' texts, not their
    vectors)."""
    pages = sorted({row[1] for row in rows})
    blobs: dict[int, tuple] = {}
    vectors_column = Page.vectors if vectors else null()
    for start in range(0, len(pages), 500):
        blobs.update((page_id, (outline, blob)) for page_id, outline, blob in
                     connection.execute(select(Page.id, Page.outline, vectors_column)
                                        .where(Page.id.in_(pages[start:start + 500]))))
    return [_record(row, *blobs.get(row[1], (None, None)), vectors) for row in rows]


def _record(row: Any, outline_blob: bytes | None, vectors_blob: bytes | None,
            vectors_read: bool = True) -> CaseRecord:
    case_id, page_id, site, position, label, source, schema, count, created, updated = row
    outline = stored_entries(outline_blob)
    at = outline is not None and 0 <= position < len(outline)
    return CaseRecord(
        id=case_id, page_id=page_id, site=site, path=outline.path(position) if at else "",
        position=position, tag=outline.tag(position) if at else "", label=label,
        label_source=source, text=outline.text(position) if at else "",
        vectors_blob=vectors_blob, vectors_read=vectors_read,
        schema_version=schema if schema is not None else 0, count=count,
        created_at=created, updated_at=updated)


_NO_VECTOR = np.zeros(0, dtype=np.float32)


def _vector(blob: bytes | None, position: int) -> np.ndarray:
    if blob is None:
        return _NO_VECTOR
    try:
        matrix = decode_vectors(blob)
    except ValueError:
        return _NO_VECTOR
    return matrix[position] if position < len(matrix) else _NO_VECTOR


class QueriesMixin(ConnectionMixin):
    """The reading methods of :class:`~casebase.store.CaseBase`."""

    @staticmethod
    def _where(
        label: str | None = None,
        site: str | None = None,
        source: str | None = None,
        schema_version: int | None = None,
        dataset: str | None = None,
        page_id: int | None = None,
    ) -> list:
        """The SQL conditions of the filters (a text filter is no column: see
        :meth:`iter_cases`)."""
        clauses = []
        if label is not None:
            check_label(label)
            clauses.append(Case.label == label)
        if site is not None:
            clauses.append(Site.host == site)
        if source is not None:
            check_source(source)
            clauses.append(Case.label_source == source)
        if schema_version is not None:
            clauses.append(Page.vector_schema == schema_version)
        if dataset is not None:
            clauses.append(Page.source == dataset)
        if page_id is not None:
            clauses.append(Case.page_id == page_id)
        return clauses

    @staticmethod
    def _joined(statement):
        return (statement.select_from(Case).join(Page, Case.page_id == Page.id)
                .join(Site, Page.site_id == Site.id))

    def iter_cases(
        self,
        label: str | None = None,
        site: str | None = None,
        source: str | None = None,
        schema_version: int | None = None,
        batch: int = 10000,
        *,
        dataset: str | None = None,
        text: str | None = None,
        page_id: int | None = None,
    ) -> Iterator[CaseRecord]:
        """Cases in id order, read ``batch`` at a time (each batch a short read transaction).

        ``source`` filters on the label source (ground_truth, site_template, human, model),
        ``dataset`` on the page's source (the dataset's name or "import"), ``text`` on the
        case's text (case-insensitive): the text is its page's (:mod:`casebase.derived`), so
        that filter reads the pages of the cases the other filters leave, a page at a time.
        """
        clauses = self._where(label, site, source, schema_version, dataset, page_id)
        needle = text.casefold() if text else None
        last = 0
        while True:
            statement = (self._joined(select(*CASE_COLUMNS))
                         .where(and_(Case.id > last, *clauses)).order_by(Case.id).limit(batch))
            with self.engine.connect() as connection:
                rows = connection.execute(statement).all()
                records = case_records(connection, rows)
            for record in records:
                if needle is None or needle in record.text.casefold():
                    yield record
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def count_cases(self, **filters: Any) -> int:
        """How many cases match ``filters`` (those of :meth:`list_cases`)."""
        if filters.get("text"):
            return sum(1 for _ in self.iter_cases(**filters))
        filters.pop("text", None)
        statement = self._joined(select(func.count())).where(*self._where(**filters))
        with self.engine.connect() as connection:
            return int(connection.execute(statement).scalar_one())

    def list_cases(self, *, limit: int = 50, offset: int = 0, **filters: Any
                   ) -> list[CaseRecord]:
        """One page of cases matching the filters of :meth:`iter_cases`, in id order."""
        if filters.get("text"):
            return list(islice(self.iter_cases(**filters), offset, offset + limit))
        filters.pop("text", None)
        statement = (self._joined(select(*CASE_COLUMNS)).where(*self._where(**filters))
                     .order_by(Case.id).limit(limit).offset(offset))
        with self.engine.connect() as connection:
            return case_records(connection, connection.execute(statement).all())

    def get_case(self, case_id: int) -> CaseRecord:
        """The case ``case_id``; :class:`NotFoundError` when there is none."""
        statement = self._joined(select(*CASE_COLUMNS)).where(Case.id == case_id)
        with self.engine.connect() as connection:
            row = connection.execute(statement).first()
            if row is None:
                raise NotFoundError(f"no case with id {case_id}")
            return case_records(connection, [row])[0]

    def get_cases(self, case_ids: Iterable[int], *, chunk: int = 500,
                  vectors: bool = True) -> dict[int, CaseRecord]:
        """The cases with these ids (those that exist), by id: one read transaction, ``chunk``
        ids per query (SQLite bounds the number of bound parameters); ``vectors=False`` leaves
        the pages' vectors unread (a record's :attr:`~CaseRecord.vector` then raises)."""
        wanted = sorted({int(i) for i in case_ids})
        rows = []
        with self.engine.connect() as connection:
            for start in range(0, len(wanted), chunk):
                statement = self._joined(select(*CASE_COLUMNS)).where(
                    Case.id.in_(wanted[start:start + chunk]))
                rows += connection.execute(statement).all()
            return {record.id: record for record in case_records(connection, rows, vectors)}

    def case_history(self, case_id: int) -> list[dict[str, Any]]:
        """The label changes of a case, oldest first (old, new, source, when, note)."""
        statement = (select(LabelHistory.old_label, LabelHistory.new_label, LabelHistory.source,
                            LabelHistory.changed_at, LabelHistory.note)
                     .where(LabelHistory.case_id == case_id).order_by(LabelHistory.id))
        with self.engine.connect() as connection:
            return [row._asdict() for row in connection.execute(statement)]

    def page_html(self, page_id: int) -> str:
        """The tidied ``<body>`` of a page as stored."""
        with self.engine.connect() as connection:
            blob = connection.execute(select(Page.html).where(Page.id == page_id)).scalar()
        if blob is None:
            raise NotFoundError(f"no page with id {page_id}")
        return decompress_html(blob)

    def subtree_html(self, case: CaseRecord) -> str | None:
        """The case's subtree cut from its stored page by its path (None if the path names no
        element: only for cases written by hand or by an older import, with other paths)."""
        from lxml import html as lxml_html

        found = find_element(parse_stored(self.page_html(case.page_id)), case.path)
        if found is None:
            return None
        return lxml_html.tostring(found, encoding="unicode", with_tail=False)

    def stats(self) -> dict[str, Any]:
        """Counts of pages, sites and cases (per label, label source, site, dataset, schema)."""
        with self.engine.connect() as connection:
            def scalar(sql: str) -> int:
                return int(connection.execute(text(sql)).scalar_one() or 0)

            def grouped(sql: str) -> dict:
                return {key: int(value) for key, value in connection.execute(text(sql))}

            by_site: dict[str, dict[str, int]] = {}
            for host, label, number in connection.execute(text(
                    "SELECT s.host, c.label, COUNT(*) FROM cases c "
                    "JOIN pages p ON p.id = c.page_id JOIN sites s ON s.id = p.site_id "
                    "GROUP BY s.host, c.label ORDER BY s.host")):
                by_site.setdefault(host, {})[label] = int(number)
            return {
                "pages": scalar("SELECT COUNT(*) FROM pages"),
                "sites": scalar("SELECT COUNT(*) FROM sites"),
                "cases": scalar("SELECT COUNT(*) FROM cases"),
                "weighted_cases": scalar("SELECT SUM(count) FROM cases"),
                "history": scalar("SELECT COUNT(*) FROM label_history"),
                "by_label": {label: 0 for label in LABELS} | grouped(
                    "SELECT label, COUNT(*) FROM cases GROUP BY label"),
                "by_source": grouped("SELECT label_source, COUNT(*) FROM cases "
                                     "GROUP BY label_source ORDER BY label_source"),
                "by_schema": {str(k): v for k, v in grouped(
                    "SELECT p.vector_schema, COUNT(*) FROM cases c JOIN pages p "
                    "ON p.id = c.page_id GROUP BY p.vector_schema").items()},
                "pages_by_dataset": grouped("SELECT source, COUNT(*) FROM pages GROUP BY source "
                                            "ORDER BY source"),
                "by_site": by_site,
                "db_size": self.db_size(),
            }
