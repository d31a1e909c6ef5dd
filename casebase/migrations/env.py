"""Alembic environment of the case base.

Two ways in:

* programmatic (``casebase.connection``): the caller puts an open connection in
  ``config.attributes["connection"]`` and the migrations run on it, inside its transaction;
* by hand from the repository root (``alembic upgrade head``): the URL comes from
  ``-x db=URL``, else the ``NOISECBR_DB`` environment variable, else ``sqlalchemy.url`` in
  ``alembic.ini``.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

from alembic import context
from sqlalchemy import create_engine

from casebase.models import Base

config = context.config
if config.attributes.get("connection") is None:
    # By hand (alembic revision --autogenerate): every model declared on Base must be imported
    # for autogenerate to see its table. Packages above casebase declare theirs on Base and
    # register the module in the entry-point group casebase.tables (training.runs: the runs).
    for point in entry_points(group="casebase.tables"):
        point.load()
target_metadata = Base.metadata


def _configure(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things: batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def _url() -> str:
    return (context.get_x_argument(as_dictionary=True).get("db")
            or os.environ.get("NOISECBR_DB")
            or config.get_main_option("sqlalchemy.url"))


def run_migrations_offline() -> None:
    """Write the migrations' SQL instead of running it (``alembic upgrade --sql``)."""
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on the caller's connection, or on the URL's database."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(_url())
    with engine.connect() as connection:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
