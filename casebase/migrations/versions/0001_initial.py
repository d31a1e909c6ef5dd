"""Initial case base: sites, pages, cases, label history.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LABELS = "('noise', 'data', 'mixture')"
_SOURCES = "('ground_truth', 'site_template', 'human', 'model')"
_NOW = sa.text("(CURRENT_TIMESTAMP)")


def upgrade() -> None:
    op.create_table(
        "sites",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sites")),
        sa.UniqueConstraint("host", name=op.f("uq_sites_host")),
    )
    op.create_table(
        "pages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("parser", sa.String(length=16), nullable=False),
        sa.Column("html", sa.LargeBinary(), nullable=False),
        sa.Column("truth", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), server_default=_NOW, nullable=False),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name=op.f("fk_pages_site_id_sites"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pages")),
        sa.UniqueConstraint("source", "content_hash", name="uq_pages_source_content_hash"),
    )
    op.create_index("ix_pages_site_id", "pages", ["site_id"])
    op.create_table(
        "cases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=8), nullable=False),
        sa.Column("label_source", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_at", sa.DateTime(), server_default=_NOW, nullable=False),
        sa.Column("updated_at", sa.DateTime(), server_default=_NOW, nullable=False),
        sa.CheckConstraint(f"label IN {_LABELS}", name=op.f("ck_cases_label")),
        sa.CheckConstraint(f"label_source IN {_SOURCES}", name=op.f("ck_cases_label_source")),
        sa.CheckConstraint("count >= 1", name=op.f("ck_cases_count_positive")),
        sa.ForeignKeyConstraint(["page_id"], ["pages.id"], name=op.f("fk_cases_page_id_pages"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
    )
    op.create_index("ix_cases_page_id", "cases", ["page_id"])
    op.create_index("ix_cases_label", "cases", ["label"])
    op.create_index("ix_cases_label_source", "cases", ["label_source"])
    op.create_index("ix_cases_schema_version", "cases", ["schema_version"])
    op.create_table(
        "label_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("old_label", sa.String(length=8), nullable=True),
        sa.Column("new_label", sa.String(length=8), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("changed_at", sa.DateTime(), server_default=_NOW, nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.CheckConstraint(f"new_label IN {_LABELS}", name=op.f("ck_label_history_new_label")),
        sa.CheckConstraint(f"old_label IS NULL OR old_label IN {_LABELS}",
                           name=op.f("ck_label_history_old_label")),
        sa.CheckConstraint(f"source IN {_SOURCES}", name=op.f("ck_label_history_source")),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"],
                                name=op.f("fk_label_history_case_id_cases"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_label_history")),
    )
    op.create_index("ix_label_history_case_id", "label_history", ["case_id"])


def downgrade() -> None:
    op.drop_index("ix_label_history_case_id", table_name="label_history")
    op.drop_table("label_history")
    for index in ("ix_cases_schema_version", "ix_cases_label_source", "ix_cases_label",
                  "ix_cases_page_id"):
        op.drop_index(index, table_name="cases")
    op.drop_table("cases")
    op.drop_index("ix_pages_site_id", table_name="pages")
    op.drop_table("pages")
    op.drop_table("sites")
