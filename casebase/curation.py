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

import hashlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import bindparam, delete, func, or_, select, update
from sqlalchemy.orm import Session

from noisecbr.features import VECTOR_SCHEMA
from noisecbr.prepare.subtrees import build_table
from noisecbr.result import LABELS

from .connection import ConnectionMixin
from .derived import Extra, derive, stored_outline, with_extras
from .errors import NotFoundError
from .models import Case, LabelHistory, Page, decompress_html
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
from .retain import AddedPage, add_page, case_rows, insert_cases

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
    pages: int = 0  # pages whose vectors were of another schema (or missing), each read once
    updated: int = 0  # cases of those pages now derived under the schema
    #: of ``updated``, cases standing for several (``count`` > 1 after ``dedupe``)
    merged: int = 0
    #: (case id, page id, reason) of every case whose element was not found: kept without a
    #: vector (an extra row of its page), or left as it was (its page cannot be parsed)
    unmatched: list[tuple[int, int, str]] = field(default_factory=list)
    #: cases whose page is still of another schema when the run ended (pages that cannot be
    #: parsed, and any page changed or added meanwhile)
    remaining: int = 0
    seconds: float = 0.0

    @property
    def reasons(self) -> Counter:
        """How many cases were left unmatched, by reason."""
        return Counter(reason for _, _, reason in self.unmatched)


#: A vector that is not there (an extra row kept without one).
_NO_VECTOR = np.zeros(0, dtype=np.float32)
#: Why a case's element was not found in its stored page (``RevectorizeReport.unmatched``).
UNMATCHED_PAGE = "page cannot be parsed"
UNMATCHED_POSITION = "position out of range"
UNMATCHED_PATH = "path differs"


class CurationMixin(ConnectionMixin):
    """The writing methods of :class:`~casebase.store.CaseBase`."""

    #: The id of a site, created if new: :func:`casebase.pages.site_id`.
    site_id = staticmethod(site_id)
    #: The id of the page stored for a source with a sha256: :func:`casebase.pages.find_page`.
    find_page = staticmethod(find_page)

    def add_page(self, html: bytes | str, *, session: Session | None = None,
                 **options: Any) -> AddedPage:
        """Add one page and its cases: :func:`casebase.retain.add_page`, whose keyword
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
            insert_cases(session, case_rows(page, page_id, per_element, "human", new),
                         stamped=True)
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
        site-grouped split sees each distinct vector once, on the kept case's site. A case
        whose page has no readable vectors is left alone.
        """
        with self.session() as session:
            kept, totals, merged = _duplicates(self, session.connection())
            history = LabelHistory.__table__
            for start in range(0, len(kept), _DEDUPE_ROWS):
                session.execute(
                    update(Case.__table__).where(Case.__table__.c.id == bindparam("k"))
                    .values(count=bindparam("total"), updated_at=func.current_timestamp()),
                    [{"k": k, "total": t} for k, t in zip(
                        kept[start:start + _DEDUPE_ROWS].tolist(),
                        totals[start:start + _DEDUPE_ROWS].tolist())])
            for start in range(0, len(merged), _DEDUPE_ROWS):
                pairs = [{"m": m, "k": k} for m, k in merged[start:start + _DEDUPE_ROWS].tolist()]
                session.execute(update(history).where(history.c.case_id == bindparam("m"))
                                .values(case_id=bindparam("k")), pairs)
                session.execute(
                    delete(Case.__table__).where(Case.__table__.c.id == bindparam("m")), pairs)
            return len(merged)

    def revectorize(self, *, progress: bool = False,
                    on_page: Callable[[RevectorizeReport], None] | None = None
                    ) -> RevectorizeReport:
        """Compute again, from its stored HTML, what the cases of a page derive from it (its
        vectors and outline, :mod:`casebase.derived`), for every page whose vectors are not of
        :data:`~noisecbr.features.VECTOR_SCHEMA` (or missing).

        Each page is parsed as the import parsed it (:func:`casebase.pages.stored_table`) and
        each case's element found again by its path (the old outline's at its position: they
        agree unless the parser changed; a case whose element moved follows it). Labels, label
        sources, history and counts stay as they are. A case whose path names no element of
        the page now (an extra row, a parser that changed the page) is kept as an extra row,
        its path, tag and text kept, without a vector (its old one is of the old schema, which
        training does not read); a page that cannot be parsed is left as it was. Both are
        listed in ``unmatched``.

        Each page is one transaction, so an interruption leaves every page either fully
        recomputed or as it was; running again continues with the pages left. A page is only
        written if its schema is still the one it was read with: a page changed meanwhile by
        another process is left to the next run.

        ``progress`` shows a progress bar (pages) on stderr; ``on_page`` is called after each
        page.
        """
        from tqdm import tqdm

        started = time.perf_counter()
        report = RevectorizeReport(schema_version=VECTOR_SCHEMA)
        with self.engine.connect() as connection:
            pages = connection.execute(select(Page.id).where(_stale()).order_by(Page.id)
                                       ).scalars().all()
        bar = tqdm(total=len(pages), unit="page", file=sys.stderr,
                   disable=not progress or not sys.stderr.isatty(), dynamic_ncols=True,
                   desc="revectorize")
        try:
            for page_id in pages:
                self._revectorize_page(page_id, report)
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
                select(func.count()).select_from(Case).join(Page, Page.id == Case.page_id)
                .where(_stale())).scalar_one())
        return report

    def _revectorize_page(self, page_id: int, report: RevectorizeReport) -> None:
        """Recompute one stale page in one transaction (see :meth:`revectorize`), adding to
        ``report``."""
        with self.engine.connect() as connection:
            blob, schema, outline_blob = connection.execute(
                select(Page.html, Page.vector_schema, Page.outline)
                .where(Page.id == page_id)).one()
            cases = connection.execute(
                select(Case.id, Case.position, Case.count).where(Case.page_id == page_id)
                .order_by(Case.id)).all()
        report.pages += 1
        table = stored_table(blob) if blob is not None else None
        if table is None:
            report.unmatched += [(case_id, page_id, UNMATCHED_PAGE) for case_id, _, _ in cases]
            return
        paths = table.paths()
        old = stored_outline(outline_blob)
        # Each case's element, found again by its path in the page parsed now (positions
        # agree unless the parser changed). A case whose element is not found is kept as an
        # extra row of the page, with its old path, tag and text and without a vector (its
        # old one is of the old schema): listed in ``unmatched``, its label kept.
        position_of = {path: i for i, path in enumerate(paths)}
        moved, lost, extras = [], [], []
        for case_id, position, _ in cases:
            if old is None:  # no outline to read its path from: its position stands
                found = position if position < len(paths) else None
                reason = UNMATCHED_POSITION
            elif position < len(old):
                found, reason = position_of.get(old.paths[position]), UNMATCHED_PATH
            else:
                found, reason = None, UNMATCHED_POSITION
            if found is not None:
                if found != position:
                    moved.append({"b_id": case_id, "b_position": found})
                continue
            lost.append((case_id, page_id, reason))
            at = old is not None and position < len(old)
            extras.append(Extra(old.paths[position] if at else "",
                                old.tags[position] if at else "",
                                old.texts[position] if at else "", _NO_VECTOR, schema))
        derived = derive(table)
        if extras:
            derived, first = with_extras(derived, extras)
            moved += [{"b_id": case_id, "b_position": first + k}
                      for k, (case_id, _, _) in enumerate(lost)]
        with self.session() as session:
            if not self._write_page(session, page_id, schema, derived, moved):
                return
        report.unmatched += lost
        kept = {case_id for case_id, _, _ in lost}
        report.updated += sum(1 for case_id, _, _ in cases if case_id not in kept)
        report.merged += sum(1 for case_id, _, count in cases if count > 1 and case_id not in kept)

    @staticmethod
    def _write_page(session: Session, page_id: int, old: int | None, derived,
                    moved: list[dict[str, int]]) -> bool:
        """Store a page's recomputed blobs and its cases' new positions, if the page's schema
        is still ``old`` (else nothing, and False: another process changed it meanwhile)."""
        same_schema = (Page.vector_schema.is_(None) if old is None
                       else Page.vector_schema == old)
        written = session.execute(
            update(Page).where(Page.id == page_id, same_schema)
            .values(vectors=derived.vectors, outline=derived.outline,
                    vector_schema=derived.vector_schema)).rowcount
        if written and moved:
            cases = Case.__table__
            session.execute(
                update(cases).where(cases.c.id == bindparam("b_id"))
                .values(position=bindparam("b_position"), updated_at=func.current_timestamp()),
                moved)
        return bool(written)


def _stale():
    """The pages whose stored vectors or outline are missing or of another schema."""
    return or_(Page.vector_schema.is_(None), Page.vector_schema != VECTOR_SCHEMA,
               Page.vectors.is_(None), Page.outline.is_(None))


#: Rows of the merge written per statement, and case rows read per fetch, by ``dedupe``.
_DEDUPE_ROWS = 65_536


def _case_columns(connection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every case's id (sorted), label-source priority and count, read a fetch at a time."""
    ids, priority, counts = [], [], []
    result = connection.execute(select(Case.id, Case.label_source, Case.count)
                                .order_by(Case.id).execution_options(stream_results=True))
    for rows in result.partitions(_DEDUPE_ROWS):
        ids.append(np.fromiter((r[0] for r in rows), np.int64, len(rows)))
        priority.append(np.fromiter((_SOURCE_PRIORITY.get(r[1], 9) for r in rows), np.int8,
                                    len(rows)))
        counts.append(np.fromiter((r[2] for r in rows), np.int64, len(rows)))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int64)
    return np.concatenate(ids), np.concatenate(priority), np.concatenate(counts)


def _duplicates(casebase, connection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups of cases :meth:`CurationMixin.dedupe` merges, as arrays: the kept cases' ids
    and their groups' total counts, and for each merged case its id and the kept one's. The
    kept case of a group is its human-labelled one if any, else its lowest id. Vectors are read
    as training reads them, page by page (:meth:`~casebase.arrays.ArraysMixin.iter_arrays`: a
    case without a finite vector is no duplicate of anything), and compared by their 16-byte
    digest; a group is (schema, label, digest), found by sorting numpy columns (about 50 bytes
    a case) rather than a dict of Python tuples."""
    ids, priority, counts = _case_columns(connection)
    schemas = connection.execute(select(Page.vector_schema).distinct()
                                 .where(Page.vector_schema.is_not(None))).scalars().all()
    parts = []
    for schema in schemas:
        for batch in casebase.iter_arrays(schema):
            at = np.minimum(np.searchsorted(ids, batch.case_ids), max(len(ids) - 1, 0))
            found = ids[at] == batch.case_ids
            digests = np.frombuffer(b"".join(
                hashlib.blake2b(vector.tobytes(), digest_size=16).digest()
                for vector in batch.X[found]), dtype=np.uint64).reshape(-1, 2)
            parts.append((np.full(int(found.sum()), schema, np.int64), batch.y[found],
                          digests[:, 0], digests[:, 1], at[found]))
    if not parts:
        empty = np.zeros(0, np.int64)
        return empty, empty, np.zeros((0, 2), np.int64)
    schema, label, high, low, row = (np.concatenate(column) for column in zip(*parts))
    order = np.lexsort((ids[row], priority[row], low, high, label, schema))
    key = np.stack([schema, label, high.view(np.int64), low.view(np.int64)], axis=1)[order]
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    sizes = np.diff(np.r_[starts, len(order)])
    rows = row[order]
    kept = rows[starts]
    totals = np.add.reduceat(counts[rows], starts) if len(rows) else np.zeros(0, np.int64)
    group = np.repeat(np.arange(len(starts)), sizes)
    is_merged = np.ones(len(rows), dtype=bool)
    is_merged[starts] = False
    merged = np.stack([ids[rows[is_merged]], ids[kept[group[is_merged]]]], axis=1)
    several = sizes > 1
    return ids[kept[several]], totals[several], merged
