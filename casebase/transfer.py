"""Lossless JSON Lines export and import of a whole case base.

One JSON object per line, in this order (each page's cases and history right after the page, so
both directions stream with memory bounded by one page):

    {"type": "casebase", "format": 1, "revision": "0001_initial", "exported_at": "..."}
    {"type": "site", "id": 1, "host": "example.com"}                          every site
    {"type": "page", "id": 7, "site": "example.com", "url": ..., "source": ...,
     "external_id": ..., "content_hash": ..., "parser": "lxml", "html": "<body>…</body>",
     "truth": ..., "created_at": ...}
    {"type": "case", "id": 42, "page": 7, "path": ..., "position": ..., "tag": ..., "label": ...,
     "label_source": ..., "text": ..., "vector": "<base64 of float32 LE bytes>",
     "schema_version": 1, "count": 1, "created_at": ..., "updated_at": ...}
    {"type": "history", "id": 3, "case": 42, "old_label": ..., "new_label": ..., "source": ...,
     "changed_at": ..., "note": ...}

Times are ISO 8601 (UTC, as stored). Importing into an empty case base keeps every id, so
exporting it again gives the same lines; importing into a non-empty one assigns new ids and skips
pages already there (same source and sha256) with their cases.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import IO, Any

from sqlalchemy import func, insert, select

from .models import Case, LabelHistory, Page, Site, compress_html, decompress_html
from .store import CaseBase, CaseBaseError

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
                         "exported_at": datetime.now(timezone.utc).isoformat()}))
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
                "created_at": _time(page.created_at),
            }))
            session.expunge(page)
            counts["page"] += 1
            cases = session.execute(
                select(Case.id, Case.path, Case.position, Case.tag, Case.label, Case.label_source,
                       Case.text, Case.vector, Case.schema_version, Case.count, Case.created_at,
                       Case.updated_at).where(Case.page_id == page_id).order_by(Case.id))
            for (case_id, path, position, tag, label, source, text, vector, schema, count,
                 created, updated) in cases:
                out.write(_line({
                    "type": "case", "id": case_id, "page": page_id, "path": path,
                    "position": position, "tag": tag, "label": label, "label_source": source,
                    "text": text, "vector": base64.b64encode(vector).decode("ascii"),
                    "schema_version": schema, "count": count, "created_at": _time(created),
                    "updated_at": _time(updated),
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


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CaseBaseError(f"line {number}: not JSON ({error.msg})") from error
        if not isinstance(record, dict) or "type" not in record:
            raise CaseBaseError(f"line {number}: not a case base record")
        yield number, record


def import_jsonl(cb: CaseBase, lines: Iterable[str]) -> Counter:
    """Read an export into the case base in one transaction. Returns counts per type, plus
    ``duplicate_page`` for pages that were already there (their cases are skipped too)."""
    counts: Counter = Counter()
    cases_table, history_table = Case.__table__, LabelHistory.__table__
    with cb.session() as session:
        empty = not any(session.execute(select(func.count()).select_from(t)).scalar_one()
                        for t in (Site.__table__, Page.__table__, Case.__table__))
        keep_ids = empty
        site_ids: dict[str, int] = {}
        page_map: dict[int, int | None] = {}  # exported page id → new id (None: skipped)
        case_map: dict[int, int] = {}  # exported case id → new id, for the current page only
        pending_cases: list[dict] = []
        pending_history: list[dict] = []

        def flush() -> None:
            if pending_cases:
                session.execute(insert(cases_table), pending_cases)
                pending_cases.clear()
            if pending_history:
                session.execute(insert(history_table), pending_history)
                pending_history.clear()

        for number, record in _records(lines):
            kind = record["type"]
            try:
                if kind == "casebase":
                    if record.get("format") != FORMAT:
                        raise CaseBaseError(f"line {number}: export format "
                                            f"{record.get('format')!r}, expected {FORMAT}")
                elif kind == "site":
                    host = record["host"]
                    if keep_ids:
                        session.execute(insert(Site).values(id=record["id"], host=host))
                        site_ids[host] = record["id"]
                    else:
                        CaseBase.site_id(session, host, site_ids)
                    counts["site"] += 1
                elif kind == "page":
                    flush()
                    case_map.clear()
                    existing = CaseBase.find_page(session, record["source"],
                                                  record["content_hash"])
                    if existing is not None:
                        page_map[record["id"]] = None
                        counts["duplicate_page"] += 1
                        continue
                    values = {
                        "site_id": CaseBase.site_id(session, record["site"], site_ids),
                        "url": record["url"],
                        "source": record["source"],
                        "external_id": record["external_id"],
                        "content_hash": record["content_hash"],
                        "parser": record["parser"],
                        "html": compress_html(record["html"]),
                        "truth": record["truth"],
                        "created_at": _parse_time(record["created_at"]),
                    }
                    if keep_ids:
                        values["id"] = record["id"]
                    result = session.execute(insert(Page).values(**values))
                    page_map[record["id"]] = int(result.inserted_primary_key[0])
                    counts["page"] += 1
                elif kind == "case":
                    if record["page"] not in page_map:
                        raise CaseBaseError(f"line {number}: case of unknown page "
                                            f"{record['page']}")
                    page_id = page_map[record["page"]]
                    if page_id is None:
                        continue
                    values = {
                        "page_id": page_id, "path": record["path"], "position": record["position"],
                        "tag": record["tag"], "label": record["label"],
                        "label_source": record["label_source"], "text": record["text"],
                        "vector": base64.b64decode(record["vector"]),
                        "schema_version": record["schema_version"], "count": record["count"],
                        "created_at": _parse_time(record["created_at"]),
                        "updated_at": _parse_time(record["updated_at"]),
                    }
                    if keep_ids:
                        values["id"] = record["id"]
                        pending_cases.append(values)
                    else:
                        # New ids are needed for the history lines that follow: insert now.
                        flush()
                        result = session.execute(insert(cases_table).values(**values))
                        case_map[record["id"]] = int(result.inserted_primary_key[0])
                    counts["case"] += 1
                    if len(pending_cases) >= _BATCH:
                        flush()
                elif kind == "history":
                    case_id = record["case"] if keep_ids else case_map.get(record["case"])
                    if case_id is None:
                        continue  # the case's page was a duplicate
                    values = {"case_id": case_id, "old_label": record["old_label"],
                              "new_label": record["new_label"], "source": record["source"],
                              "changed_at": _parse_time(record["changed_at"]),
                              "note": record["note"]}
                    if keep_ids:
                        values["id"] = record["id"]
                    pending_history.append(values)  # flush() inserts cases first
                    counts["history"] += 1
                else:
                    raise CaseBaseError(f"line {number}: unknown record type {kind!r}")
            except KeyError as error:
                raise CaseBaseError(f"line {number}: {kind} record without {error}") from error
        flush()
    return counts
