"""Lossless JSON Lines export and import of a whole case base.

One JSON object per line, in this order (each page's cases and history right after the page, so
both directions stream with memory bounded by one page):

    {"type": "casebase", "format": 1, "revision": "0001_initial", "exported_at": "..."}
    {"type": "site", "id": 1, "host": "example.com"}                          every site
    {"type": "page", "id": 7, "site": "example.com", "url": ..., "source": ...,
     "external_id": ..., "content_hash": ..., "parser": "lxml", "html": "<body>…</body>",
     "truth": ..., "declared_article": true, "created_at": ...}
                                         (declared_article: absent before revision 0004)
    {"type": "case", "id": 42, "page": 7, "path": ..., "position": ..., "tag": ..., "label": ...,
     "label_source": ..., "text": ..., "vector": "<base64 of float32 LE bytes>",
     "schema_version": 1, "count": 1, "created_at": ..., "updated_at": ...}
    {"type": "history", "id": 3, "case": 42, "old_label": ..., "new_label": ..., "source": ...,
     "changed_at": ..., "note": ...}

A case's path, tag, text and vector are written out from its page (:mod:`casebase.derived`)
and, read back, derived again from the page's HTML: the file is the same for every schema
revision that has them. Times are ISO 8601 (UTC, as stored). Importing into an empty case base
keeps every id, so exporting it again gives the same lines; importing into a non-empty one
assigns new ids and skips pages already there (same source and sha256) with their cases.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import IO, Any

import numpy as np
from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.prepare.subtrees import is_element_path
from noisecbr.result import LABELS

from .derived import Extra, PageDerived, derive, with_extras
from .errors import InvalidRecordError
from .models import LABEL_SOURCES, Case, LabelHistory, Page, Site, compress_html, decompress_html
from .pages import find_page, site_id, stored_table
from .queries import CASE_COLUMNS, case_records
from .store import CaseBase

__all__ = ["FORMAT", "export_jsonl", "import_jsonl"]

FORMAT = 1
#: Rows per executemany when importing.
_BATCH = 5000


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_jsonl(cb: CaseBase, out: IO[str]) -> Counter:
    """Write the whole case base to ``out`` (one read transaction). Returns counts per type."""
    counts: Counter = Counter()
    with cb.reading() as session:
        out.write(_line({"type": "casebase", "format": FORMAT, "revision": cb.revision(),
                         "exported_at": datetime.now(UTC).isoformat()}))
        hosts: dict[int, str] = {}
        for site_id, host in session.execute(select(Site.id, Site.host).order_by(Site.id)):
            hosts[site_id] = host
            out.write(_line({"type": "site", "id": site_id, "host": host}))
            counts["site"] += 1
        page_ids = session.execute(select(Page.id).order_by(Page.id)).scalars().all()
        for page_id in page_ids:
            page = session.execute(select(Page).where(Page.id == page_id)).scalar_one()
            out.write(_line({
                "type": "page", "id": page.id, "site": hosts[page.site_id], "url": page.url,
                "source": page.source, "external_id": page.external_id,
                "content_hash": page.content_hash, "parser": page.parser,
                "html": decompress_html(page.html), "truth": page.truth,
                "declared_article": page.declared_article,
                "created_at": _time(page.created_at),
            }))
            session.expunge(page)
            counts["page"] += 1
            rows = session.execute(cb._joined(select(*CASE_COLUMNS))
                                   .where(Case.page_id == page_id).order_by(Case.id)).all()
            for case in case_records(session.connection(), rows):
                out.write(_line({
                    "type": "case", "id": case.id, "page": page_id, "path": case.path,
                    "position": case.position, "tag": case.tag, "label": case.label,
                    "label_source": case.label_source, "text": case.text,
                    "vector": _exported_vector(case.vector),
                    "schema_version": case.schema_version, "count": case.count,
                    "created_at": _time(case.created_at), "updated_at": _time(case.updated_at),
                }))
                counts["case"] += 1
            history = session.execute(
                select(LabelHistory).join(Case, Case.id == LabelHistory.case_id)
                .where(Case.page_id == page_id).order_by(LabelHistory.id)).scalars()
            for entry in history:
                out.write(_line({
                    "type": "history", "id": entry.id, "case": entry.case_id,
                    "old_label": entry.old_label, "new_label": entry.new_label,
                    "source": entry.source, "changed_at": _time(entry.changed_at),
                    "note": entry.note,
                }))
                counts["history"] += 1
            session.expunge_all()
    return counts


def _exported_vector(vector: np.ndarray) -> str:
    """A case's vector as an export writes it: base64 of float32 LE bytes, or "" for a case
    that has none (an extra row kept without one: :func:`casebase.derived.with_extras`)."""
    if not len(vector) or not np.isfinite(vector).all():
        return ""
    return base64.b64encode(np.ascontiguousarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _declared(number: int, record: dict) -> bool | None:
    """A page record's ``declared_article``: absent from exports made before revision 0004
    (not known)."""
    value = record.get("declared_article")
    if value is not None and not isinstance(value, bool):
        raise InvalidRecordError(f"line {number}: declared_article {value!r} is not true, false "
                                 "or null")
    return value


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidRecordError(f"line {number}: not JSON ({error.msg})") from error
        if not isinstance(record, dict) or "type" not in record:
            raise InvalidRecordError(f"line {number}: not a case base record")
        yield number, record


def _check_case(number: int, record: dict) -> None:
    """Refuse a case record whose fields a later read would trip on: a path that is not an
    element path (an XPath such as ``count(//*)`` computes, and ``//div[1]`` names no one
    element: ``casebase show`` and the service cut a case's subtree by its path), an unknown
    label or label source, a schema version, position or count that is no whole number."""
    path = record["path"]
    for name in ("path", "tag", "text"):
        value = record[name]
        if not isinstance(value, str) or "\x1e" in value or "\x1f" in value:
            # No parsed page holds them, and a page's outline separates its strings by them.
            raise InvalidRecordError(f"line {number}: case {name} is not text of a page (a "
                                     "string without the control characters U+001E, U+001F)")
    if not is_element_path(path):
        raise InvalidRecordError(f"line {number}: case path {str(path)[:80]!r} is not an "
                                 "element path such as /html/body/div[2]/p")
    for name, known in (("label", LABELS), ("label_source", LABEL_SOURCES)):
        if record[name] not in known:
            raise InvalidRecordError(f"line {number}: case {name} {record[name]!r} is not one "
                                     f"of {', '.join(known)}")
    for name, least in (("schema_version", 0), ("position", 0), ("count", 1)):
        value = record[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise InvalidRecordError(f"line {number}: case {name} {value!r} is not a whole "
                                     f"number from {least}")


def _case_vector(number: int, record: dict, widths: dict[int, int]) -> bytes:
    """The stored bytes of a case record's vector, refused unless they are finite float32
    values, as many as the schema has features (the current schema: the model's feature count;
    an older one: as many as its first vector in the file), or none at all (""). ``widths``
    keeps those counts."""
    try:
        blob = base64.b64decode(record["vector"], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise InvalidRecordError(f"line {number}: case vector is not base64") from None
    if not blob:  # a case without a vector (exported from an extra row kept without one)
        return blob
    schema = record["schema_version"]
    expected = len(FEATURE_NAMES) if schema == VECTOR_SCHEMA else widths.setdefault(
        schema, len(blob) // 4)
    if len(blob) != 4 * expected:
        raise InvalidRecordError(f"line {number}: case vector is {len(blob)} bytes, vector "
                                 f"schema {schema} has {expected} features ({4 * expected} "
                                 "bytes)")
    if not np.isfinite(np.frombuffer(blob, dtype="<f4")).all():
        # NaN or infinity: a case near everything or nothing, a poison for training.
        raise InvalidRecordError(f"line {number}: case vector holds NaN or infinite values")
    return blob


def import_jsonl(cb: CaseBase, lines: Iterable[str]) -> Counter:
    """Read an export into the case base in one transaction. Returns counts per type, plus
    ``duplicate_page`` for pages that were already there (their cases are skipped too).

    Every record is checked before it is written (:class:`InvalidRecordError` names its line
    and field); the first bad one rolls the transaction back, so nothing is written."""
    with cb.session() as session:
        run = _JsonlImport(session)
        for number, record in _records(lines):
            kind = record["type"]
            handler = run.handlers.get(kind)
            if handler is None:
                raise InvalidRecordError(f"line {number}: unknown record type {kind!r}")
            try:
                handler(number, record)
            except KeyError as error:
                raise InvalidRecordError(f"line {number}: {kind} record without {error}"
                                         ) from error
        run.flush()
        run.finish_page()
    return run.counts


class _JsonlImport:
    """The state of one :func:`import_jsonl`: ids kept as exported into an empty case base,
    else new ids mapped from the exported ones; cases and history inserted in batches."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.counts: Counter = Counter()
        self.keep_ids = not any(session.execute(select(func.count()).select_from(t)).scalar_one()
                                for t in (Site.__table__, Page.__table__, Case.__table__))
        self.site_ids: dict[str, int] = {}
        self.page_map: dict[int, int | None] = {}  # exported page id → new id (None: skipped)
        self.case_map: dict[int, int] = {}  # exported case id → new id, for the current page
        self.pending_cases: list[dict] = []
        self.pending_history: list[dict] = []
        self.widths: dict[int, int] = {}  # an older schema → its vectors' length in the file
        # The last page inserted: its blobs, its elements' paths and the extra rows of its
        # cases that are none of them (:func:`casebase.derived.with_extras`).
        self.page_id: int | None = None
        self.derived: PageDerived | None = None
        self.paths: tuple[str, ...] = ()
        self.position_of: dict[str, int] = {}
        self.extras: list[Extra] = []
        self.handlers = {"casebase": self.header, "site": self.site, "page": self.page,
                         "case": self.case, "history": self.history}

    def flush(self) -> None:
        """Insert the cases, then the history lines, waiting to be inserted."""
        if self.pending_cases:
            self.session.execute(insert(Case.__table__), self.pending_cases)
            self.pending_cases.clear()
        if self.pending_history:
            self.session.execute(insert(LabelHistory.__table__), self.pending_history)
            self.pending_history.clear()

    def header(self, number: int, record: dict) -> None:
        """The export's first line: its format must be this code's."""
        if record.get("format") != FORMAT:
            raise InvalidRecordError(f"line {number}: export format {record.get('format')!r}, "
                                     f"expected {FORMAT}")

    def site(self, number: int, record: dict) -> None:
        """A site: inserted with its id into an empty case base, else found or created."""
        host = record["host"]
        if self.keep_ids:
            self.session.execute(insert(Site).values(id=record["id"], host=host))
            self.site_ids[host] = record["id"]
        else:
            site_id(self.session, host, self.site_ids)
        self.counts["site"] += 1

    def finish_page(self) -> None:
        """Store the extra rows of the last page's cases with its blobs."""
        if self.extras and self.page_id is not None:
            derived, _ = with_extras(self.derived, self.extras)
            self.session.execute(update(Page).where(Page.id == self.page_id).values(
                vector_schema=derived.vector_schema, vectors=derived.vectors,
                outline=derived.outline))
        self.extras, self.page_id = [], None

    def page(self, number: int, record: dict) -> None:
        """A page, unless the case base has it already (then its cases are skipped)."""
        self.flush()
        self.finish_page()
        self.case_map.clear()
        session = self.session
        if find_page(session, record["source"], record["content_hash"]) is not None:
            self.page_map[record["id"]] = None
            self.counts["duplicate_page"] += 1
            return
        html = compress_html(record["html"])
        table = stored_table(html)
        derived = derive(table) if table is not None else None
        values = {
            "site_id": site_id(session, record["site"], self.site_ids),
            "url": record["url"],
            "source": record["source"],
            "external_id": record["external_id"],
            "content_hash": record["content_hash"],
            "parser": record["parser"],
            "html": html,
            "truth": record["truth"],
            "declared_article": _declared(number, record),
            "vector_schema": derived.vector_schema if derived else None,
            "vectors": derived.vectors if derived else None,
            "outline": derived.outline if derived else None,
            "created_at": _parse_time(record["created_at"]),
        }
        if self.keep_ids:
            values["id"] = record["id"]
        result = session.execute(insert(Page).values(**values))
        self.page_map[record["id"]] = int(result.inserted_primary_key[0])
        self.derived, self.page_id = derived, self.page_map[record["id"]]
        self.paths = tuple(table.paths()) if table is not None else ()
        self.position_of = {path: i for i, path in enumerate(self.paths)}
        self.counts["page"] += 1

    def case(self, number: int, record: dict) -> None:
        """A case of the last page read (skipped with a duplicate page)."""
        if record["page"] not in self.page_map:
            raise InvalidRecordError(f"line {number}: case of unknown page {record['page']}")
        # Checked even when the page is a duplicate: a bad file is refused whole.
        _check_case(number, record)
        vector = _case_vector(number, record, self.widths)
        page_id = self.page_map[record["page"]]
        if page_id is None:
            return
        # The case's element, by its path, in the page as stored here: its text and vector are
        # derived from the page, not copied from the file. A path naming no element of the page
        # (a case written by hand) is kept as an extra row with the file's own fields.
        path, position = record["path"], record["position"]
        if not (0 <= position < len(self.paths) and self.paths[position] == path):
            if path in self.position_of:
                position = self.position_of[path]
            else:
                position = len(self.paths) + len(self.extras)
                self.extras.append(Extra(path, record["tag"], record["text"],
                                         np.frombuffer(vector, dtype="<f4"),
                                         record["schema_version"]))
        values = {
            "page_id": page_id, "position": position,
            "label": record["label"], "label_source": record["label_source"],
            "count": record["count"],
            "created_at": _parse_time(record["created_at"]),
            "updated_at": _parse_time(record["updated_at"]),
        }
        if self.keep_ids:
            values["id"] = record["id"]
            self.pending_cases.append(values)
        else:
            # New ids are needed for the history lines that follow: insert now.
            self.flush()
            result = self.session.execute(insert(Case.__table__).values(**values))
            self.case_map[record["id"]] = int(result.inserted_primary_key[0])
        self.counts["case"] += 1
        if len(self.pending_cases) >= _BATCH:
            self.flush()

    def history(self, number: int, record: dict) -> None:
        """A label change of a case read before (skipped with a duplicate page)."""
        case_id = record["case"] if self.keep_ids else self.case_map.get(record["case"])
        if case_id is None:
            return  # the case's page was a duplicate
        values = {"case_id": case_id, "old_label": record["old_label"],
                  "new_label": record["new_label"], "source": record["source"],
                  "changed_at": _parse_time(record["changed_at"]), "note": record["note"]}
        if self.keep_ids:
            values["id"] = record["id"]
        self.pending_history.append(values)  # flush() inserts cases first
        self.counts["history"] += 1
