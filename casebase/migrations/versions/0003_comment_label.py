"""The ``comment`` label: reader comments under a page's main content.

Revision ID: 0003_comment_label
Revises: 0002_runs
Create Date: 2026-11-23

Widens the label CHECK constraints of ``cases`` and ``label_history``. SQLite cannot alter a
constraint, so there the tables are rebuilt in batch mode (copied within the migration's
transaction: every row is kept); other databases alter the constraints in place. Downgrading
refuses while a comment label is stored, rather than drop or rewrite the user's labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_comment_label"
down_revision: str | Sequence[str] | None = "0002_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "('noise', 'data', 'mixture')"
_NEW = "('noise', 'data', 'mixture', 'comment')"


def _checks(labels: str) -> None:
    # SQLite rebuilds the tables; PostgreSQL alters the constraints in place (rebuilding
    # `cases` there would drop the primary key that label_history's foreign key depends on).
    recreate = "always" if op.get_bind().dialect.name == "sqlite" else "never"
    with op.batch_alter_table("cases", recreate=recreate) as batch:
        batch.drop_constraint(op.f("ck_cases_label"), type_="check")
        batch.create_check_constraint(op.f("ck_cases_label"), f"label IN {labels}")
    with op.batch_alter_table("label_history", recreate=recreate) as batch:
        batch.drop_constraint(op.f("ck_label_history_new_label"), type_="check")
        batch.drop_constraint(op.f("ck_label_history_old_label"), type_="check")
        batch.create_check_constraint(op.f("ck_label_history_new_label"),
                                      f"new_label IN {labels}")
        batch.create_check_constraint(op.f("ck_label_history_old_label"),
                                      f"old_label IS NULL OR old_label IN {labels}")


def upgrade() -> None:
    _checks(_NEW)


def downgrade() -> None:
    stored = op.get_bind().execute(sa.text(
        "SELECT (SELECT COUNT(*) FROM cases WHERE label = 'comment') + (SELECT COUNT(*) FROM "
        "label_history WHERE new_label = 'comment' OR old_label = 'comment')")).scalar()
    if stored:
        raise RuntimeError(f"{stored} stored labels are 'comment', which revision 0002 cannot "
                           "hold: relabel or export them before downgrading")
    _checks(_OLD)
