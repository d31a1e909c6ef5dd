"""What a stored page's head declared: ``pages.declared_article``.

Revision ID: 0004_declared_article
Revises: 0003_comment_label
Create Date: 2026-11-26

A stored page keeps its tidied body only, so the correction queue of a stored page could not
tell a page that declares itself an article (``og:type``, a JSON-LD article type), which the
review page walks in the precision mode, from one that does not (:mod:`noisecbr.decide.convention`).
The new column records it when a page is stored; pages stored before stay NULL (not known: their
mode is read from their prose, as before). Downgrading drops the column: revision 0003 has no
place for it, and the pages keep everything else (their labels, text and truth).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_declared_article"
down_revision: str | Sequence[str] | None = "0003_comment_label"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pages", sa.Column("declared_article", sa.Boolean(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by rebuilding the table (batch mode, inside the transaction).
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("declared_article")
