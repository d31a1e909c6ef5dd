"""Cases by reference: a page's vectors, paths, tags and texts stored once, with the page.

Revision ID: 0005_cases_by_reference
Revises: 0004_declared_article
Create Date: 2026-11-28

Until now each case stored its own 884-byte vector, its path, tag and text (the text of a deep
page once per level): 1.2–1.4 MB a page. A case is now its page and the ``position`` of its
element; what it shows is derived from the page and stored once per page
(:mod:`casebase.derived`: ``pages.vectors``, ``pages.outline``, ``pages.vector_schema``).

Upgrading computes each page's blobs from its stored HTML, parsed as the import parsed it, a
page at a time. A case whose path is its page's element at its position (every case an import
stores) keeps its position; one whose path names another element of the page moves to that
element's position; one whose path names none (written by hand), and every case of a page
whose HTML cannot be read back, is kept as an extra row after the page's elements with its own
path, tag, text and vector (:func:`casebase.derived.with_extras`). Vectors of an older schema
are computed under the current one (what ``casebase revectorize`` did); an extra row's cannot
be, its path naming no element, and one of an older schema than its page's is not kept (it
was not trained on either: training reads the current schema only). Labels, label sources,
counts, creation times, history and runs are kept as they are; a case's ``updated_at`` equal
to its ``created_at`` (never changed) becomes NULL, as for new cases. The cases table gets
AUTOINCREMENT on SQLite (an id is never reused). On SQLite the file is vacuumed after the
upgrade (:func:`casebase.connection.migrate`): a migrated case base takes a tenth of the space.

Downgrading writes each case's path, tag, text and vector back from its page's blobs.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_cases_by_reference"
down_revision: str | Sequence[str] | None = "0004_declared_article"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Case updates sent per executemany.
_BATCH = 5000


def _recreate() -> str:
    # SQLite rebuilds the table; PostgreSQL alters it in place (rebuilding `cases` there would
    # drop the primary key that label_history's foreign key depends on).
    return "always" if op.get_bind().dialect.name == "sqlite" else "never"


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column("pages", sa.Column("vector_schema", sa.Integer(), nullable=True))
    op.add_column("pages", sa.Column("vectors", sa.LargeBinary(), nullable=True))
    op.add_column("pages", sa.Column("outline", sa.LargeBinary(), nullable=True))
    op.create_index("ix_pages_vector_schema", "pages", ["vector_schema"])
    moved = []  # (case id, position in its page's blobs)
    for page_id in bind.execute(sa.text("SELECT id FROM pages ORDER BY id")).scalars().all():
        moved += _page_upgrade(bind, page_id)
        if len(moved) >= _BATCH:
            _move(bind, moved)
            moved = []
    _move(bind, moved)
    # On SQLite the table is rebuilt with AUTOINCREMENT: an id is never reused after a
    # deletion (the nearest-case index tells new cases from old by their ids).
    with op.batch_alter_table("cases", recreate=_recreate(),
                              table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_index("ix_cases_label")
        batch.drop_index("ix_cases_label_source")
        batch.drop_index("ix_cases_schema_version")
        batch.drop_index("ix_cases_page_id")
        for column in ("path", "tag", "text", "vector", "schema_version"):
            batch.drop_column(column)
        batch.alter_column("created_at", existing_type=sa.DateTime(), nullable=True,
                           server_default=None)
        batch.alter_column("updated_at", existing_type=sa.DateTime(), nullable=True,
                           server_default=None)
        batch.create_index("ix_cases_page_id_position", ["page_id", "position"])
    bind.execute(sa.text("UPDATE cases SET updated_at = NULL WHERE updated_at = created_at"))


def _page_upgrade(bind, page_id: int) -> list[dict]:
    """Store one page's blobs; the cases whose position changes, with their new one."""
    import numpy as np

    from casebase.derived import Extra, derive, with_extras
    from casebase.pages import stored_table

    html = bind.execute(sa.text("SELECT html FROM pages WHERE id = :p"), {"p": page_id}).scalar()
    cases = bind.execute(sa.text(
        "SELECT id, path, position, tag, text, vector, schema_version FROM cases "
        "WHERE page_id = :p ORDER BY id"), {"p": page_id}).all()
    table = stored_table(html) if html is not None else None
    derived, paths = (derive(table), table.paths()) if table is not None else (None, [])
    position_of = {path: i for i, path in enumerate(paths)}
    placed, extras, extra_ids = {}, [], []
    for case_id, path, position, tag, text, vector, schema in cases:
        if 0 <= position < len(paths) and paths[position] == path:
            placed[case_id] = position
        elif path in position_of:
            placed[case_id] = position_of[path]
        else:
            extras.append(Extra(path, tag, text or "",
                                np.frombuffer(vector or b"", dtype="<f4",
                                              count=len(vector or b"") // 4), schema))
            extra_ids.append(case_id)
    if extras:
        derived, first = with_extras(derived, extras)
        placed.update((case_id, first + k) for k, case_id in enumerate(extra_ids))
    if derived is not None:
        bind.execute(sa.text("UPDATE pages SET vector_schema = :s, vectors = :v, outline = :o "
                             "WHERE id = :p"), {"s": derived.vector_schema, "v": derived.vectors,
                                                "o": derived.outline, "p": page_id})
    return [{"i": case_id, "n": placed[case_id]} for case_id, _, position, *_ in cases
            if placed[case_id] != position]


def _move(bind, rows: list[dict]) -> None:
    if rows:
        bind.execute(sa.text("UPDATE cases SET position = :n WHERE id = :i"), rows)


def downgrade() -> None:
    from casebase.derived import decode_outline, decode_vectors

    bind = op.get_bind()
    with op.batch_alter_table("cases", recreate=_recreate()) as batch:
        batch.add_column(sa.Column("path", sa.Text(), nullable=True))
        batch.add_column(sa.Column("tag", sa.String(64), nullable=True))
        batch.add_column(sa.Column("text", sa.Text(), nullable=True))
        batch.add_column(sa.Column("vector", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("schema_version", sa.Integer(), nullable=True))
    for page_id, schema, outline_blob, vectors_blob in bind.execute(sa.text(
            "SELECT id, vector_schema, outline, vectors FROM pages ORDER BY id")).all():
        try:
            outline = decode_outline(outline_blob) if outline_blob is not None else None
            vectors = decode_vectors(vectors_blob) if vectors_blob is not None else None
        except ValueError:
            outline = vectors = None
        rows = []
        for case_id, position in bind.execute(sa.text(
                "SELECT id, position FROM cases WHERE page_id = :p"), {"p": page_id}):
            at = outline is not None and vectors is not None and 0 <= position < len(outline)
            rows.append({
                "i": case_id, "path": outline.paths[position] if at else "",
                "tag": outline.tags[position] if at else "",
                "text": outline.texts[position] if at else "",
                "vector": vectors[position].astype("<f4").tobytes() if at else b"",
                "schema": schema if at and schema is not None else 0})
        if rows:
            bind.execute(sa.text(
                "UPDATE cases SET path = :path, tag = :tag, text = :text, vector = :vector, "
                "schema_version = :schema WHERE id = :i"), rows)
    bind.execute(sa.text("UPDATE cases SET created_at = (SELECT created_at FROM pages "
                         "WHERE pages.id = cases.page_id) WHERE created_at IS NULL"))
    bind.execute(sa.text("UPDATE cases SET updated_at = created_at WHERE updated_at IS NULL"))
    with op.batch_alter_table("cases", recreate=_recreate()) as batch:
        batch.drop_index("ix_cases_page_id_position")
        for name, type_ in (("path", sa.Text()), ("tag", sa.String(64)), ("text", sa.Text()),
                            ("vector", sa.LargeBinary()), ("schema_version", sa.Integer())):
            batch.alter_column(name, existing_type=type_, nullable=False)
        for name in ("created_at", "updated_at"):
            batch.alter_column(name, existing_type=sa.DateTime(), nullable=False,
                               server_default=sa.func.current_timestamp())
        batch.create_index("ix_cases_page_id", ["page_id"])
        batch.create_index("ix_cases_label", ["label"])
        batch.create_index("ix_cases_label_source", ["label_source"])
        batch.create_index("ix_cases_schema_version", ["schema_version"])
    op.drop_index("ix_pages_vector_schema", table_name="pages")
    with op.batch_alter_table("pages", recreate=_recreate()) as batch:
        batch.drop_column("outline")
        batch.drop_column("vectors")
        batch.drop_column("vector_schema")
