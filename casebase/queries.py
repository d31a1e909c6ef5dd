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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import and_, func, select, text

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import LABELS

from .connection import ConnectionMixin
from .errors import NotFoundError
from .models import Case, LabelHistory, Page, Site, decompress_html, vector_from_bytes
from .pages import check_label, check_source, find_element, parse_stored

__all__ = ["CaseRecord", "QueriesMixin"]


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
    vector: np.ndarray
    schema_version: int
    count: int
    created_at: datetime
    updated_at: datetime

    def features(self) -> dict[str, float]:
        """The vector by feature name (when the case's schema is the current one)."""
        if self.schema_version != VECTOR_SCHEMA or len(self.vector) != len(FEATURE_NAMES):
            return {f"x{i}": float(v) for i, v in enumerate(self.vector)}
        return {name: float(v) for name, v in zip(FEATURE_NAMES, self.vector)}


_CASE_COLUMNS = (Case.id, Case.page_id, Site.host, Case.path, Case.position, Case.tag, Case.label,
                 Case.label_source, Case.text, Case.vector, Case.schema_version, Case.count,
                 Case.created_at, Case.updated_at)


def _record(row: Any) -> CaseRecord:
    values = list(row)
    values[9] = vector_from_bytes(values[9])
    return CaseRecord(*values)


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class QueriesMixin(ConnectionMixin):
    """The reading methods of :class:`~casebase.store.CaseBase`."""

    @staticmethod
    def _where(
        label: str | None = None,
        site: str | None = None,
        source: str | None = None,
        schema_version: int | None = None,
        dataset: str | None = None,
        text: str | None = None,
        page_id: int | None = None,
    ) -> list:
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
            clauses.append(Case.schema_version == schema_version)
        if dataset is not None:
            clauses.append(Page.source == dataset)
        if text:
            clauses.append(Case.text.ilike(f"%{_escape_like(text)}%", escape="\\"))
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
        ``dataset`` on the page's source (the dataset's name or "import").
        """
        clauses = self._where(label, site, source, schema_version, dataset, text, page_id)
        last = 0
        while True:
            statement = (self._joined(select(*_CASE_COLUMNS))
                         .where(and_(Case.id > last, *clauses)).order_by(Case.id).limit(batch))
            with self.engine.connect() as connection:
                rows = connection.execute(statement).all()
            for row in rows:
                yield _record(row)
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def count_cases(self, **filters: Any) -> int:
        """How many cases match ``filters`` (those of :meth:`list_cases`)."""
        statement = self._joined(select(func.count())).where(*self._where(**filters))
        with self.engine.connect() as connection:
            return int(connection.execute(statement).scalar_one())

    def list_cases(self, *, limit: int = 50, offset: int = 0, **filters: Any
                   ) -> list[CaseRecord]:
        """One page of cases matching the filters of :meth:`iter_cases`, in id order."""
        statement = (self._joined(select(*_CASE_COLUMNS)).where(*self._where(**filters))
                     .order_by(Case.id).limit(limit).offset(offset))
        with self.engine.connect() as connection:
            return [_record(row) for row in connection.execute(statement)]

    def get_case(self, case_id: int) -> CaseRecord:
        """The case ``case_id``; :class:`NotFoundError` when there is none."""
        statement = self._joined(select(*_CASE_COLUMNS)).where(Case.id == case_id)
        with self.engine.connect() as connection:
            row = connection.execute(statement).first()
        if row is None:
            raise NotFoundError(f"no case with id {case_id}")
        return _record(row)

    def get_cases(self, case_ids: Iterable[int], *, chunk: int = 500) -> dict[int, CaseRecord]:
        """The cases with these ids (those that exist), by id: one read transaction, ``chunk``
        ids per query (SQLite bounds the number of bound parameters)."""
        wanted = sorted({int(i) for i in case_ids})
        found: dict[int, CaseRecord] = {}
        with self.engine.connect() as connection:
            for start in range(0, len(wanted), chunk):
                statement = self._joined(select(*_CASE_COLUMNS)).where(
                    Case.id.in_(wanted[start:start + chunk]))
                found.update((row[0], _record(row)) for row in connection.execute(statement))
        return found

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
                    "SELECT schema_version, COUNT(*) FROM cases GROUP BY schema_version").items()},
                "pages_by_dataset": grouped("SELECT source, COUNT(*) FROM pages GROUP BY source "
                                            "ORDER BY source"),
                "by_site": by_site,
                "db_size": self.db_size(),
            }
