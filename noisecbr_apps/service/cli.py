"""``noisecbr serve``: the web service on uvicorn (registered on the ``noisecbr`` command).

FastAPI and uvicorn are imported when the command runs, so that ``noisecbr --help`` works
without the ``serve`` extra and the command says what to install.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from noisecbr.exits import EXIT_CASEBASE, EXIT_USAGE

if TYPE_CHECKING:
    from .app import Settings

__all__ = ["serve"]

#: Names of the loopback interface: listening there, the server answers only to them (a
#: request whose Host header names another, as a page of another site reaching it by DNS
#: rebinding does, gets a 400). IPv6's loopback is ``::1``, ``[::1]`` in a Host header.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: The Host names a loopback server answers to.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: Addresses of every interface: any machine that reaches this one reaches the server.
EVERY_INTERFACE = ("0.0.0.0", "::")


def allowed_hosts(host: str) -> str | None:
    """The Host names a server listening on ``host`` answers to (comma-separated), None for
    any (a server on a network interface is reached by the names its clients use)."""
    return ",".join(LOOPBACK_HOSTS) if host in LOOPBACK else None


def _fail(message: str, code: int) -> None:
    click.echo(f"noisecbr serve: {message}", err=True)
    sys.exit(code)


def _prepare_casebase(db: str) -> None:
    """Create the case base or migrate it to the newest schema once, before the workers start
    (they open it as it is); an unreadable one stops here with one line."""
    from alembic.util import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    from casebase.store import CaseBase, CaseBaseError

    try:
        with CaseBase.open(db) as casebase:
            click.echo(f"noisecbr serve: case base {casebase.url} (schema "
                       f"{casebase.revision()})", err=True)
    except (CaseBaseError, SQLAlchemyError, CommandError, OSError) as error:
        first = str(getattr(error, "orig", None) or error).splitlines()[0]
        _fail(f"cannot open the case base {db}: {first}", EXIT_CASEBASE)


def _hand_to_workers(settings: Settings) -> None:
    """Put ``settings`` (and only them) in the environment uvicorn's workers inherit. The
    service's internal variables found there already are removed with a warning: they are no
    way to configure the service (the options are), and a worker must run with what ``serve``
    decided and checked, nothing a user's environment filled in."""
    from .app import ENV_PREFIX

    for name in sorted(name for name in os.environ if name.startswith(ENV_PREFIX)):
        click.echo(f"noisecbr serve: warning: {name} is set in the environment: ignored "
                   "(internal to serve; give its options instead)", err=True)
        del os.environ[name]
    os.environ.update(settings.to_env())


def _token_source(token: str | None) -> str:
    """Whether a write token is in effect and where it comes from, for the banner (one from
    the environment is in effect without a word on the command line)."""
    from click.core import ParameterSource

    if not token:
        return "no write token (no writes)"
    source = click.get_current_context().get_parameter_source("token")
    return {ParameterSource.ENVIRONMENT: "write token from NOISECBR_TOKEN",
            ParameterSource.COMMANDLINE: "write token from --token"}.get(
                source, "a random write token (printed above)")


@click.command()
@click.option("--db", metavar="URL", help="Case base (SQLAlchemy URL or SQLite path): enables "
              "explain, the site memory and the write endpoints. Without it: read-only "
              "cleaning.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put TLS in front).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="HTTP worker processes; each has its own cleaning process(es).")
@click.option("--pool", type=click.IntRange(min=1), default=2, show_default=True,
              help="Cleaning processes per worker (each loads the model once): a page that "
              "runs to the time limit holds up one of them, not the service.")
@click.option("--token", envvar="NOISECBR_TOKEN", help="Bearer token of the write endpoints "
              "[env NOISECBR_TOKEN; default with --db: a random one, printed].")
@click.option("--model", type=click.Path(exists=True, dir_okay=False),
              help="A model artifact (.safetensors). Default: the embedded model.")
@click.option("--max-body", type=click.IntRange(min=1), default=None,
              help="Largest request body in bytes [default: 10 MB]; larger: 413.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds one page may take [default: 30]; longer: 503, process restarted.")
@click.option("--read-timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds a client may take to send a request's head, and again its body "
              "[default: 30]; slower: the connection is closed (408 for a body).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info",
                                                "debug"]), default="info", show_default=True)
def serve(db: str | None, host: str, port: int, workers: int, pool: int, token: str | None,
          model: str | None, max_body: int | None, timeout: float | None,
          read_timeout: float | None, log_level: str) -> None:
    """Serve clean / explain / correct over HTTP, and the review page at /review.

    OpenAPI docs at /docs. Pages are cleaned in separate processes under a time limit; write
    endpoints (relabel, store pages) need `Authorization: Bearer TOKEN`."""
    try:
        import uvicorn

        from .app import MAX_BODY, READ_TIMEOUT, TIMEOUT, Settings
        from .protocol import GuardedH11Protocol
    except ImportError as error:
        _fail(f"needs {error.name or 'the serve extra'}: pip install 'noisecbr[serve]'",
              EXIT_USAGE)
    if db:
        if "://" not in db:
            db = str(Path(db).expanduser().resolve())
        _prepare_casebase(db)
        if not token:
            token = secrets.token_urlsafe(24)
            click.echo(f"noisecbr serve: write token (give --token to choose it): {token}",
                       err=True)
    settings = Settings(db=db, token=token, model=model, max_body=max_body or MAX_BODY,
                        timeout=timeout or TIMEOUT, pool=pool,
                        read_timeout=read_timeout or READ_TIMEOUT,
                        hosts=allowed_hosts(host))
    _hand_to_workers(settings)
    click.echo(f"noisecbr serve: settings: {settings.described()}; {_token_source(token)}; "
               f"{workers} HTTP worker(s)", err=True)
    if host in EVERY_INTERFACE:
        click.echo(f"noisecbr serve: warning: listening on every interface ({host}): any machine "
                   "that reaches this one can clean pages here"
                   + (" and read the case base" if db else "")
                   + "; put TLS and an access control in front, or give --host 127.0.0.1",
                   err=True)
    shown = "127.0.0.1" if host in EVERY_INTERFACE else f"[{host}]" if ":" in host else host
    fragment = f"#token={token}" if token else ""
    click.echo(f"noisecbr serve: review page http://{shown}:{port}/review{fragment}", err=True)
    uvicorn.run("noisecbr_apps.service.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level=log_level, server_header=False,
                http=GuardedH11Protocol, log_config=_log_config(log_level))


def _log_config(level: str) -> dict:
    """uvicorn's logging set-up, with the service's own logger (``noisecbr.serve``: slow and
    vanished clients, dead cleaning processes) printed like uvicorn's at ``level``."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["noisecbr"] = {"handlers": ["default"], "level": level.upper(),
                                     "propagate": False}
    return config
