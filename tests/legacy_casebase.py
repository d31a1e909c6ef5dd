"""A case base as the code before revision 0005 stored it: every case with its own path, tag,
text and float32 vector, written at revision 0004 with that code's rows (the importer of
commit 6821c54: ``case_rows`` with ``subtree_texts`` and ``vectorize`` of the re-parsed page).

Used by the tests of the migration to 0005 and of records that older code let in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sqlalchemy import text

from casebase.connection import _create_engine, migrate
from casebase.derived import subtree_texts
from casebase.pages import page_cases
from noisecbr.eval.datasets import read_dataset
from noisecbr.features import VECTOR_SCHEMA, vectorize
from noisecbr.result import LABELS

LEGACY_REVISION = "0004_declared_article"


def write_legacy(url: str, dataset: Path, limit: int | None = None) -> dict[str, int]:
    """Store the pages of ``dataset`` (labelled from their truth) in a new case base at
    revision 0004, as that revision's import stored them. Returns page ids by page id."""
    engine = _create_engine(url)
    migrate(engine, LEGACY_REVISION)
    ids: dict[str, int] = {}
    with engine.begin() as connection:
        sites: dict[str, int] = {}
        for n, page in enumerate(read_dataset(dataset)):
            if limit is not None and n >= limit:
                break
            cases = page_cases(page.html, truth=page.truth)
            prepared = cases.page
            if page.site not in sites:
                sites[page.site] = connection.execute(text(
                    "INSERT INTO sites (host) VALUES (:h) RETURNING id"),
                    {"h": page.site}).scalar_one()
            page_id = connection.execute(text(
                "INSERT INTO pages (site_id, url, source, external_id, content_hash, parser, "
                "html, truth, declared_article) VALUES (:s, :u, :src, :e, :c, 'lxml', :html, "
                ":t, :d) RETURNING id"),
                {"s": sites[page.site], "u": page.url or "", "src": dataset.name, "e": page.id,
                 "c": prepared.content_hash, "html": prepared.html, "t": page.truth,
                 "d": prepared.declared_article}).scalar_one()
            ids[page.id] = page_id
            table = prepared.table
            vectors = np.ascontiguousarray(vectorize(table), dtype="<f4")
            paths, texts = table.paths(), subtree_texts(table)
            connection.execute(text(
                "INSERT INTO cases (page_id, path, position, tag, label, label_source, text, "
                "vector, schema_version, count) VALUES (:p, :path, :pos, :tag, :label, "
                "'ground_truth', :text, :vector, :schema, 1)"), [
                {"p": page_id, "path": paths[i], "pos": i, "tag": table.tags[i][:64],
                 "label": LABELS[int(cases.labels[i])], "text": texts[i],
                 "vector": vectors[i].tobytes(), "schema": VECTOR_SCHEMA}
                for i in range(len(table))])
    engine.dispose()
    return ids


def legacy_rows(url: str) -> dict[int, dict]:
    """Every case of a revision-0004 case base, by id, as its columns hold it."""
    engine = _create_engine(url)
    try:
        with engine.connect() as connection:
            return {row.id: row._asdict() for row in connection.execute(text(
                "SELECT c.id, c.page_id, c.path, c.position, c.tag, c.label, c.label_source, "
                "c.text, c.vector, c.schema_version, c.count, s.host FROM cases c "
                "JOIN pages p ON p.id = c.page_id JOIN sites s ON s.id = p.site_id"))}
    finally:
        engine.dispose()
