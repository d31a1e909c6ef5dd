"""Opening the case base: engines, SQLite settings, Alembic migrations, transactions.

:meth:`ConnectionMixin.open` migrates the database to the newest Alembic revision, from the
migrations installed with the package (``casebase.migrations``), so an installed wheel needs no
``alembic.ini``. SQLite connections run in WAL mode (readers never block the writer), with
foreign keys on, ``synchronous=NORMAL`` and a 30 s busy timeout. Every write goes through
:meth:`ConnectionMixin.session`, one transaction that commits when the block ends and rolls back
when it raises (Ctrl-C included); on SQLite it begins IMMEDIATE, so that a second writer waits
for the first instead of failing. Reads (:meth:`ConnectionMixin.reading`, ``engine.connect()``)
begin deferred and never wait.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import as_file, files
from pathlib import Path
from typing import Self

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from .errors import CaseBaseError, NotFoundError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CACHE_KIB",
    "DEFAULT_DB_NAME",
    "ConnectionMixin",
    "default_url",
    "migrate",
    "normalize_url",
    "writer",
]

DEFAULT_DB_NAME = "casebase.sqlite"
#: How long a SQLite connection waits for another writer before failing (milliseconds).
BUSY_TIMEOUT_MS = 30_000
#: SQLite page cache per connection (KiB).
CACHE_KIB = 65_536


def default_url() -> str:
    """``$NOISECBR_DB``, else ``sqlite:///<user data dir>/noisecbr/casebase.sqlite``."""
    url = os.environ.get("NOISECBR_DB")
    if url:
        return normalize_url(url)
    from platformdirs import user_data_dir

    return normalize_url(str(Path(user_data_dir("noisecbr")) / DEFAULT_DB_NAME))


def normalize_url(url: str) -> str:
    """A SQLAlchemy URL; a plain file path means a SQLite file there. A path with ``?`` in it
    is refused (:class:`CaseBaseError`): in a URL it would start the query, and the case base
    would be another file, named by the path's part before it."""
    if "://" in url:
        return url
    path = Path(url).expanduser().resolve()
    if "?" in str(path):
        raise CaseBaseError(f"{url}: a case base's file path cannot hold '?' (a SQLAlchemy URL "
                            "would read the rest as options): rename the file or its folder")
    return f"sqlite:///{path}"


def _sqlite_file(engine: Engine) -> Path | None:
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def _sqlite_url_file(url: str) -> Path | None:
    """The file a SQLite ``url`` names (None for another database, memory, a URI)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # noqa: BLE001 - a malformed URL fails with its own error on opening
        return None
    database = parsed.database
    if (not parsed.drivername.startswith("sqlite") or not database or database == ":memory:"
            or database.startswith("file:")):
        return None
    return Path(database)


def _missing_sqlite_file(url: str) -> Path | None:
    """The file a SQLite ``url`` names, when it does not exist (else None)."""
    path = _sqlite_url_file(url)
    return path if path is not None and not path.exists() else None


def _create_engine(url: str) -> Engine:
    engine = create_engine(url)
    if engine.dialect.name == "postgresql":
        _serialise_postgresql_writers(engine)
    if engine.dialect.name != "sqlite":
        return engine
    on_disk = _sqlite_file(engine) is not None
    if on_disk:
        _sqlite_file(engine).parent.mkdir(parents=True, exist_ok=True)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # Let SQLAlchemy's "begin" (below) start transactions instead of pysqlite's implicit
        # BEGIN before the first write, so reads are inside the transaction too.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if on_disk:
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        # 64 MiB of page cache: a bulk import updates five b-trees per case, and with the
        # default 2 MiB cache it spends half its insert time re-reading index pages.
        cursor.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        # A writer takes SQLite's write lock when its transaction begins, waiting out the busy
        # timeout for another writer to finish. Under a deferred BEGIN a transaction that reads
        # first cannot upgrade to writing once another connection wrote: SQLite fails it at
        # once ("database is locked") without waiting. Readers begin deferred and, in WAL
        # mode, read their snapshot without ever waiting for a writer.
        writing = connection.get_execution_options().get(_WRITES, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")

    return engine


#: Key of the PostgreSQL advisory lock every write transaction holds (any constant: it only has
#: to be the same in every process; these are the bytes "noisecbr").
_WRITE_LOCK_KEY = int.from_bytes(b"noisecbr", "big") & 0x7FFF_FFFF_FFFF_FFFF


def _serialise_postgresql_writers(engine: Engine) -> None:
    """Give write transactions on PostgreSQL SQLite's semantics: one writer at a time, the
    others wait (up to the same busy timeout), readers never wait (MVCC). Without it two
    imports of pages of one site both find the site missing and both insert it, and the second
    fails on the unique host."""

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        if connection.get_execution_options().get(_WRITES, False):
            connection.exec_driver_sql(f"SET LOCAL lock_timeout = {BUSY_TIMEOUT_MS}")
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK_KEY})")


#: Execution option of the connections that write (see :func:`writer`).
_WRITES = "casebase_writes"


def writer(engine: Engine) -> Engine:
    """The engine whose transactions write: on SQLite they begin IMMEDIATE, on PostgreSQL they
    take an advisory lock; either way they hold the case base's write lock from their start,
    waiting for another writer up to the busy timeout."""
    return engine.execution_options(**{_WRITES: True})


def migrate(engine: Engine, revision: str = "head", *, downgrade: bool = False) -> None:
    """Upgrade (or downgrade) the database to ``revision`` with the installed migrations, in
    one transaction."""
    from alembic import command
    from alembic.config import Config

    with as_file(files("casebase.migrations")) as location:
        config = Config()
        config.set_main_option("script_location", str(location))
        if not downgrade and revision == "head" and _at_head(engine, config):
            return  # nothing to write: a reader opening the case base takes no write lock
        with writer(engine).connect() as connection:
            sqlite = connection.dialect.name == "sqlite"
            if sqlite:
                # SQLite's procedure for schema changes: a table rebuilt in batch mode is
                # dropped, and with foreign keys on, dropping `cases` would cascade-delete its
                # label history. They are switched off outside the transaction (inside one the
                # pragma does nothing) and the keys are checked before the commit instead.
                connection.connection.driver_connection.execute("PRAGMA foreign_keys = OFF")
            try:
                # A write transaction (BEGIN IMMEDIATE on SQLite, the advisory lock on
                # PostgreSQL): a second process migrating at the same time waits for this one.
                with connection.begin():
                    config.attributes["connection"] = connection
                    moved_cases = not downgrade and _before_cases_by_reference(connection)
                    if downgrade:
                        command.downgrade(config, revision)
                    else:
                        command.upgrade(config, revision)
                    if sqlite and connection.exec_driver_sql(
                            "PRAGMA foreign_key_check").first() is not None:
                        raise CaseBaseError("the migration left rows whose foreign keys point "
                                            "nowhere: rolled back")
                if sqlite and moved_cases:
                    _vacuum(connection)
            finally:
                if sqlite:
                    connection.connection.driver_connection.execute("PRAGMA foreign_keys = ON")


def _before_cases_by_reference(connection) -> bool:
    """Whether the database holds tables older than revision 0005 (which moves every case's
    vector and text into its page): only that upgrade frees enough to vacuum for."""
    from alembic.runtime.migration import MigrationContext

    current = MigrationContext.configure(connection).get_current_heads()
    return any(revision[:4].isdigit() and int(revision[:4]) < 5 for revision in current)


def _vacuum(connection) -> None:
    """Give the file back the space the upgrade past revision 0005 freed (every case's vector
    and text moved into its page: a migrated case base shrinks to a tenth). Outside the
    migration's transaction, as SQLite requires; it needs free disk as large as the file, and
    a case base another process holds open, or a full disk, leaves the file as large, and as
    correct, as it was."""
    import sqlite3

    try:  # on the driver's connection: SQLAlchemy's would begin a transaction first
        connection.connection.driver_connection.execute("VACUUM")
    except sqlite3.OperationalError:
        pass


def _check_revision(engine: Engine, url: str) -> None:
    """Raise :class:`CaseBaseError` unless the database is a case base at this code's schema
    revision: one opened as it is (a reading command, a worker, a site memory) is neither
    migrated in passing nor read with the tables of another revision."""
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    with as_file(files("casebase.migrations")) as location:
        config = Config()
        config.set_main_option("script_location", str(location))
        scripts = ScriptDirectory.from_config(config)
        heads = set(scripts.get_heads())
        known = {script.revision for script in scripts.walk_revisions()}
    try:
        with engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    except SQLAlchemyError as error:
        first = str(getattr(error, "orig", None) or error).splitlines()[0]
        raise CaseBaseError(f"cannot read the case base {url}: {first}") from None
    if current == heads:
        return
    if not current:
        raise CaseBaseError(f"{url} is not a case base (no schema revision): make one with "
                            "`casebase init`")
    if current <= known:
        raise CaseBaseError(f"the case base {url} is at schema revision "
                            f"{', '.join(sorted(current))}, older than this noisecbr's "
                            f"({', '.join(sorted(heads))}): `casebase init` upgrades it, every "
                            "case kept")
    raise CaseBaseError(f"the case base {url} is at schema revision "
                        f"{', '.join(sorted(current))}, which this noisecbr does not know (made "
                        "by a newer version?): upgrade noisecbr to read it")


def _at_head(engine: Engine, config) -> bool:
    """Whether the database is already at the newest revision (read without a write lock)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = set(ScriptDirectory.from_config(config).get_heads())
    with engine.connect() as connection:
        current = set(MigrationContext.configure(connection).get_current_heads())
    return current == heads


class ConnectionMixin:
    """The database side of :class:`~casebase.store.CaseBase`: its engine, opening and
    migrating, transactions, and what the database is (URL, revision, file, size). The other
    mixins build on it: they read through ``self.engine`` and write through
    :meth:`session`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._writer = writer(engine)
        #: the SQLite file :meth:`open` created (None when it was there, or for a server's)
        self.created: Path | None = None
        self._watch: sqlite3.Connection | None = None  # see change_token
        self._watches = 0  # watching connections opened: a token names its connection
        self._watch_lock = threading.Lock()

    def change_token(self) -> int | None:
        """A number that changes whenever a write to this SQLite case base is committed (by
        any connection or process): ``PRAGMA data_version`` on a read-only connection kept
        for it, which never writes (the pragma changes with other connections' commits). A
        reader that derived something from the case base (the service's case index) skips
        checking it again while the number stands: the check counts every case, and grows
        with the case base. None for a server database or an in-memory one (check always)."""
        file = _sqlite_file(self.engine)
        if file is None:
            return None
        with self._watch_lock:
            try:
                if self._watch is None:
                    self._watch = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro",
                                                  uri=True, isolation_level=None,
                                                  check_same_thread=False)
                    self._watches += 1
                version = int(self._watch.execute("PRAGMA data_version").fetchone()[0])
                # data_version counts on one connection only: a token of another (opened
                # again after close) must never equal an old one.
                return (self._watches << 32) | version
            except sqlite3.Error:
                return None  # e.g. a read-only folder without the WAL's files: check always

    @classmethod
    def open(cls, url: str | None = None, *, upgrade: bool = True,
             create: bool = True, check: bool = True) -> Self:
        """Open (creating if needed) the case base at ``url`` and migrate it to head; with
        ``upgrade=False`` as it is, which must then be a case base at this code's revision
        (else :class:`CaseBaseError` says which it is and what to do; ``check=False`` for a
        caller that checked it already and reads it later, as the service's workers do).

        ``url`` is a SQLAlchemy URL or a file path (a SQLite file); ``None`` means
        :func:`default_url`. With ``create=False`` a SQLite file that does not exist is a
        :class:`NotFoundError` (a mistyped path must not become a new, empty case base); a
        server database's existence is the server's to tell.
        """
        url = normalize_url(url) if url else default_url()
        missing = _missing_sqlite_file(url)
        if missing is not None and not create:
            raise NotFoundError(f"no case base at {missing} (create one with `casebase "
                                "init` or `casebase import`)")
        file = _sqlite_url_file(url)
        if (not upgrade and check and file is not None and file.is_file()
                and file.stat().st_size == 0):
            # Opening it would write SQLite's header into it: an empty file stays empty.
            raise CaseBaseError(f"{file} is an empty file, not a case base: make one with "
                                "`casebase init`")
        try:
            engine = _create_engine(url)
        except ImportError as error:  # the URL names a driver that is not installed
            raise CaseBaseError(f"cannot open {url}: {error}") from error
        try:
            if upgrade:
                migrate(engine)
            elif check:
                _check_revision(engine, url)
        except BaseException:
            engine.dispose()
            raise
        casebase = cls(engine)
        casebase.created = missing
        return casebase

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the database connections (the object cannot be used afterwards)."""
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in one write transaction: committed at the end of the block, rolled back
        if the block raises. On SQLite it waits (up to the busy timeout) for another writer to
        finish, then holds the write lock until the block ends."""
        with Session(self._writer, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A session in one read transaction (a consistent snapshot), for reading only: it
        never waits for a writer, and a writer never waits for it."""
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def revision(self) -> str | None:
        """The database's Alembic revision."""
        with self.engine.connect() as connection:
            try:
                return connection.execute(text("SELECT version_num FROM alembic_version")
                                          ).scalar()
            except SQLAlchemyError:  # no alembic_version table: never migrated
                return None

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file of the case base; None for an in-memory or server database."""
        return _sqlite_file(self.engine)

    def db_size(self) -> int | None:
        """Bytes on disk (SQLite file plus its write-ahead log), None for server databases."""
        path = self.sqlite_path
        if path is None:
            return None
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
