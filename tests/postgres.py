"""A throwaway PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` on a free loopback port
in a temporary directory, stopped and removed at the end.

initdb refuses to run as root, and CI runs as root: the server then runs as an unprivileged
system user (``postgres`` when the machine has it, else ``nobody``) through ``setpriv``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["PostgresServer", "missing_reason"]

#: Database superuser of the throwaway cluster (trust authentication on loopback only).
SUPERUSER = "noisecbr"
#: Unprivileged accounts the server may run as when the tests run as root, in order.
_SERVER_USERS = ("postgres", "nobody")


def missing_reason() -> str | None:
    """Why a server cannot be started here (None when it can)."""
    for tool in ("initdb", "pg_ctl"):
        if shutil.which(tool) is None:
            return f"PostgreSQL's {tool} is not on PATH"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'noisecbr[postgres]')"
    if os.geteuid() == 0 and _server_user() is None:
        return f"running as root and none of the users {_SERVER_USERS} exists for initdb"
    return None


def _server_user() -> pwd.struct_passwd | None:
    for name in _SERVER_USERS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One PostgreSQL cluster; :meth:`database` makes a fresh database and returns its URL."""

    def __init__(self) -> None:
        # Directly under /tmp (world-traversable): pytest's temporary directories are private
        # to root, and the server may run as another user.
        self.root = Path(tempfile.mkdtemp(prefix="noisecbr-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._user = _server_user() if os.geteuid() == 0 else None
        self._count = 0
        if self._user is not None:
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)

    def _run(self, *command: str) -> None:
        prefix: list[str] = []
        if self._user is not None:
            prefix = ["setpriv", f"--reuid={self._user.pw_uid}", f"--regid={self._user.pw_gid}",
                      "--clear-groups", "--"]
        env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        completed = subprocess.run([*prefix, *command], capture_output=True, text=True,
                                   env=env, cwd=self.root, timeout=120, check=False)
        if completed.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {completed.stderr or completed.stdout}")

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                  "-E", "UTF8", "--no-sync")
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.root / "server.log"), "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database; its SQLAlchemy URL."""
        import psycopg

        self._count += 1
        name = f"t{self._count}_{int(time.time() * 1000) % 100000}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={SUPERUSER} "
                             "dbname=postgres", autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
