"""Changing the cases: adding pages, relabelling, deleting, merging duplicates, and
recomputing vectors of older schemas from the stored pages.

    cb.add_page(html, url=url, source="import", truth=truth)
    cb.relabel(42, "data", note="caption, not an ad")
    cb.dedupe()                                # identical vectors → one case with a count
    cb.revectorize()                           # vectors of older schemas → VECTOR_SCHEMA

Each call is one write transaction (:meth:`~casebase.connection.ConnectionMixin.session`;
``add_page`` can join the caller's instead), except :meth:`CurationMixin.revectorize`, which
writes one transaction per page so that an interrupted run keeps the pages it finished.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import bindparam, delete, func, select, text, update
from sqlalchemy.orm import Session

from noisecbr.features import VECTOR_SCHEMA, vectorize
from noisecbr.prepare.subtrees import build_table
from noisecbr.result import LABELS

from .connection import ConnectionMixin
from .errors import NotFoundError
from .importer import AddedPage, add_page, case_rows, insert_cases
from .models import Case, LabelHistory, Page, decompress_html, vector_to_bytes
from .pages import (
    PreparedPage,
    cases_from_paths,
    check_label,
    check_source,
    find_page,
    parse_stored,
    site_id,
    stored_table,
)

__all__ = [
    "UNMATCHED_PAGE",
    "UNMATCHED_PATH",
    "UNMATCHED_POSITION",
    "CurationMixin",
    "RevectorizeReport",
]

#: Which copy of a group of duplicates ``dedupe`` keeps: a person's label first.
_SOURCE_PRIORITY = {"human": 0, "site_template": 1, "ground_truth": 2, "model": 3}


@dataclass
class RevectorizeReport:
    """What :meth:`CurationMixin.revectorize` did."""

    schema_version: int  # the schema the vectors were recomputed for
    pages: int = 0  # pages with cases of another schema, each read once
    updated: int = 0  # cases whose vector and schema were recomputed
    #: of ``updated``, cases standing for several (``count`` > 1 after ``dedupe``), recomputed
    #: from the page and position of the case dedupe kept
    merged: int = 0
    #: (case id, page id, reason) of every case left as it was: its element was not found
    unmatched: list[tuple[int, int, str]] = field(default_factory=list)
    #: cases still of another schema when the run ended (unmatched ones, and any added meanwhile)
    remaining: int = 0
    seconds: float = 0.0

    @property
    def reasons(self) -> Counter:
        """How many cases were left unmatched, by reason."""
        return Counter(reason for _, _, reason in self.unmatched)


#: Why a case's element was not found in its stored page (``RevectorizeReport.unmatched``).
UNMATCHED_PAGE = "page cannot be parsed"
UNMATCHED_POSITION = "position out of range"
UNMATCHED_PATH = "path differs"


def _page_vectors(blob: bytes) -> tuple[list[str], np.ndarray] | None:
    """Paths and vectors (current schema) of the elements of a stored page, as the import
    computed them (:func:`casebase.pages.prepare_page`); None if the page cannot be parsed."""
    table = stored_table(blob)
    if table is None:
        return None
    return table.paths(), vectorize(table)


class CurationMixin(ConnectionMixin):
    """The writing methods of :class:`~casebase.store.CaseBase`."""

    #: The id of a site, created if new: :func:`casebase.pages.site_id`.
    site_id = staticmethod(site_id)
    #: The id of the page stored for a source with a sha256: :func:`casebase.pages.find_page`.
    find_page = staticmethod(find_page)

    def add_page(self, html: bytes | str, *, session: Session | None = None,
                 **options: Any) -> AddedPage:
        """Add one page and its cases: :func:`casebase.importer.add_page`, whose keyword
        arguments ``options`` are (url, source, site, truth or labels, thresholds…). Runs in
        ``session`` if given, else in a transaction of its own."""
        if session is not None:
            return add_page(session, html, **options)
        with self.session() as own:
            return add_page(own, html, **options)

    def relabel(self, case_id: int, label: str, source: str = "human",
                note: str | None = None) -> str:
        """Set a case's label and label source, recording the change in its history (one
        transaction). Returns the old label; raises :class:`NotFoundError`."""
        check_label(label)
        check_source(source)
        with self.session() as session:
            case = session.get(Case, case_id)
            if case is None:
                raise NotFoundError(f"no case with id {case_id}")
            old = case.label
            case.label = label
            case.label_source = source
            session.add(LabelHistory(case_id=case_id, old_label=old, new_label=label,
                                     source=source, note=note))
            return old

    def add_labels(self, page_id: int, labels: Mapping[str, str],
                   note: str = "review page") -> dict:
        """Label the subtrees ``labels`` selects (XPath → label) on the stored page ``page_id``
        (a page's second and later corrections: ``casebase import-page`` of a stored page, the
        review page's boxes after its first); a path that already has a case relabels it (its
        history keeps the change), the others get a new case with the human label.

        Returns the page id, the case of each path (id, label, source), the number of new and
        relabelled cases, and the paths that select nothing. New cases are inserted in one
        transaction; each relabelling is one more, with its history entry (and ``note``)."""
        with self.session() as session:
            row = session.execute(select(Page.html, Page.content_hash)
                                  .where(Page.id == page_id)).first()
            if row is None:
                raise NotFoundError(f"no page with id {page_id}")
            body = parse_stored(decompress_html(row.html))
            page = PreparedPage(row.content_hash, body, build_table(body), row.html)
            cases = cases_from_paths(page, labels)
            per_element, unknown = cases.labels, cases.unknown_paths
            chosen = [int(i) for i in cases.indices]
            existing = dict(session.execute(
                select(Case.position, Case.id).where(Case.page_id == page_id)).all())
            new = [i for i in chosen if i not in existing]
            insert_cases(session, case_rows(page, page_id, per_element, "human", new))
        relabelled = 0
        for i in chosen:
            if i in existing:
                self.relabel(existing[i], LABELS[per_element[i]], source="human", note=note)
                relabelled += 1
        paths = page.paths
        wanted = {paths[i] for i in chosen}
        cases = self.list_cases(page_id=page_id, limit=len(page.table) + 1)
        return {"page_id": page_id, "added": len(new), "relabelled": relabelled,
                "unknown_paths": unknown,
                "cases": {c.path: {"id": c.id, "label": c.label, "source": c.label_source}
                          for c in cases if c.path in wanted}}

    def delete_cases(self, case_ids: Sequence[int]) -> tuple[list[int], list[int]]:
        """Delete cases (and their history) in one transaction: returns (deleted, missing)."""
        wanted = list(dict.fromkeys(int(i) for i in case_ids))
        with self.session() as session:
            found: list[int] = []
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                found += session.execute(select(Case.id).where(Case.id.in_(chunk))).scalars()
            for start in range(0, len(found), 500):
                session.execute(delete(Case).where(Case.id.in_(found[start:start + 500])))
        present = set(found)
        return [i for i in wanted if i in present], [i for i in wanted if i not in present]

    def dedupe(self) -> int:
        """Merge cases with identical vector bytes, label and schema into one case whose
        ``count`` is the group's sum (one transaction). Returns how many cases were merged away.

        The kept case is the group's human-labelled one if any, else its lowest id; the merged
        cases' history moves to it. Merged cases of other pages and sites are gone, so a
        site-grouped split sees each distinct vector once, on the kept case's site.
        """
        priority = " ".join(f"WHEN '{s}' THEN {p}" for s, p in _SOURCE_PRIORITY.items())
        groups = text(f"""
            SELECT id, keep_id, total FROM (
                SELECT id,
                       FIRST_VALUE(id) OVER (PARTITION BY schema_version, label, vector
                                             ORDER BY CASE label_source {priority} ELSE 9 END,
                                                      id) AS keep_id,
                       SUM(count) OVER (PARTITION BY schema_version, label, vector) AS total,
                       COUNT(*) OVER (PARTITION BY schema_version, label, vector) AS n
                FROM cases
            ) AS grouped WHERE n > 1""")
        with self.session() as session:
            rows = session.execute(groups).all()
            keep = [{"k": i, "total": t} for i, k, t in rows if i == k]
            merged = [{"m": i, "k": k} for i, k, _ in rows if i != k]
            if not merged:
                return 0
            session.execute(
                update(Case.__table__).where(Case.__table__.c.id == bindparam("k"))
                .values(count=bindparam("total"), updated_at=func.current_timestamp()),
                keep,
            )
            history = LabelHistory.__table__
            session.execute(
                update(history).where(history.c.case_id == bindparam("m"))
                .values(case_id=bindparam("k")),
                merged,
            )
            session.execute(
                delete(Case.__table__).where(Case.__table__.c.id == bindparam("m")), merged
            )
            return len(merged)

    def revectorize(self, *, progress: bool = False,
                    on_page: Callable[[RevectorizeReport], None] | None = None
                    ) -> RevectorizeReport:
        """Recompute, from the stored pages, the vector of every case whose ``schema_version``
        is not :data:`~noisecbr.features.VECTOR_SCHEMA`, and set its schema to it.

        Each page is parsed as the import parsed it (:func:`casebase.pages.parse_stored`,
        ``build_table``, ``vectorize``); a case is matched to the element at its ``position``,
        whose path must be the case's ``path``. Only ``vector``, ``schema_version`` (and
        ``updated_at``) change: labels, label sources, history, text and counts stay as they
        are. A case whose element is not found (the page does not parse, the position is out of
        range, the path differs) keeps its vector and schema and is listed in ``unmatched``.

        Each page's updates are one transaction, so an interruption leaves every page either
        fully recomputed or as it was; running again continues with the pages left (a case
        already of the current schema is never touched, so a second run changes nothing). An
        update only applies to a case that still has the schema it was read with: a case changed
        meanwhile by another process is left to the next run.

        A case merged by :meth:`dedupe` (``count`` > 1) is recomputed from the page and position
        of the case dedupe kept, and keeps its count; the merged copies' own pages are not
        consulted (their cases are gone), so copies that the new schema would tell apart stay
        merged under the kept case's vector.

        ``progress`` shows a progress bar (pages) on stderr; ``on_page`` is called after each
        page.
        """
        from tqdm import tqdm

        started = time.perf_counter()
        report = RevectorizeReport(schema_version=VECTOR_SCHEMA)
        with self.engine.connect() as connection:
            pages = connection.execute(
                select(Case.page_id, func.count()).where(Case.schema_version != VECTOR_SCHEMA)
                .group_by(Case.page_id).order_by(Case.page_id)).all()
        table = Case.__table__
        guarded = (update(table)
                   .where(table.c.id == bindparam("b_id"), table.c.page_id == bindparam("b_page"),
                          table.c.schema_version == bindparam("b_old"))
                   .values(vector=bindparam("b_vector"), schema_version=VECTOR_SCHEMA,
                           updated_at=func.current_timestamp()))
        bar = tqdm(total=len(pages), unit="page", file=sys.stderr,
                   disable=not progress or not sys.stderr.isatty(), dynamic_ncols=True,
                   desc="revectorize")
        try:
            for page_id, _ in pages:
                self._revectorize_page(page_id, guarded, report)
                bar.update(1)
                bar.set_postfix(updated=report.updated, unmatched=len(report.unmatched),
                                refresh=False)
                if on_page is not None:
                    on_page(report)
        finally:
            bar.close()
            report.seconds = time.perf_counter() - started
        with self.engine.connect() as connection:
            report.remaining = int(connection.execute(
                select(func.count()).select_from(Case)
                .where(Case.schema_version != VECTOR_SCHEMA)).scalar_one())
        return report

    def _revectorize_page(self, page_id: int, guarded, report: RevectorizeReport) -> None:
        """Recompute the stale cases of one page in one transaction (see :meth:`revectorize`),
        adding to ``report``."""
        with self.engine.connect() as connection:
            blob = connection.execute(select(Page.html).where(Page.id == page_id)).scalar()
            stale = connection.execute(
                select(Case.id, Case.position, Case.path, Case.schema_version, Case.count)
                .where(Case.page_id == page_id, Case.schema_version != VECTOR_SCHEMA)
                .order_by(Case.id)).all()
        report.pages += 1
        computed = _page_vectors(blob) if blob is not None and stale else None
        rows: list[dict[str, Any]] = []
        merged: set[int] = set()
        for case_id, position, path, old, count in stale:
            if computed is None:
                report.unmatched.append((case_id, page_id, UNMATCHED_PAGE))
                continue
            paths, vectors = computed
            if not 0 <= position < len(paths):
                report.unmatched.append((case_id, page_id, UNMATCHED_POSITION))
            elif paths[position] != path:
                report.unmatched.append((case_id, page_id, UNMATCHED_PATH))
            else:
                rows.append({"b_id": case_id, "b_page": page_id, "b_old": old,
                             "b_vector": vector_to_bytes(vectors[position])})
                if count > 1:
                    merged.add(case_id)
        if rows:
            with self.session() as session:
                done = self._update_each(session, guarded, rows)
            report.updated += len(done)
            report.merged += len(merged & done)

    @staticmethod
    def _update_each(session: Session, statement, rows: list[dict[str, Any]]) -> set[int]:
        """Run a guarded update for each row; returns the ids (``b_id``) it changed."""
        connection = session.connection()
        if connection.dialect.supports_sane_multi_rowcount:
            result = connection.execute(statement, rows)
            if result.rowcount == len(rows):
                return {row["b_id"] for row in rows}
            # Some rows changed meanwhile: find which ones now carry the new schema. (Rare: a
            # concurrent writer; the transaction is still open, so this reads our own update.)
            ids = [row["b_id"] for row in rows]
            done: set[int] = set()
            for start in range(0, len(ids), 500):
                done.update(connection.execute(
                    select(Case.id).where(Case.id.in_(ids[start:start + 500]),
                                          Case.schema_version == VECTOR_SCHEMA)).scalars())
            return done
        return {row["b_id"] for row in rows if connection.execute(statement, row).rowcount}
