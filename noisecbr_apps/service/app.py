"""The app factory: :func:`create_app` builds the FastAPI app of ``noisecbr serve``.

    from noisecbr_apps.service.app import Settings, create_app
    app = create_app(Settings(db="cb.sqlite", token="secret"))

Limits and answers, the same on every endpoint:

- a request body over ``max_body`` bytes is refused with 413 while it is read (a declared
  ``Content-Length`` over the limit is refused before a byte is read);
- a client has ``read_timeout`` seconds to send a request's head (else the connection is
  closed: :mod:`.protocol`) and as long again for its body (else 408);
- the work on a page runs in a process pool with a time limit (:mod:`.work`), counted from the
  request's arrival, its wait for a free process included: past it, 503 and the job is ended;
- a client that goes away before its answer is one line in the log;
- bad input gets a 4xx with ``{"detail": "one line"}``; the case base unavailable, 503;
  anything else is a bug, logged with its traceback and answered with a one-line 500;
- every answer carries ``X-Content-Type-Options: nosniff`` and a Content-Security-Policy: API
  answers may run nothing and load nothing (``sandbox``), the review page only its own files.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import sys
from collections.abc import Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from pebble import ProcessPool
from pebble.common import ProcessExpired
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import work

__all__ = ["Settings", "app_from_env", "create_app"]

log = logging.getLogger("noisecbr.serve")

#: 10 MB: above the largest page of the dev sets (about 4 MB) with room, and small enough that
#: 16 concurrent requests hold at most 160 MB of bodies per worker.
MAX_BODY = 10_000_000
#: Seconds one page may take. The slowest dev page cleans in about 2 s on this 2-core machine
#: under load; a 10 MB page in about 15 s: 30 s is a limit no real page reaches.
TIMEOUT = 30.0
#: Seconds a client may take to send a request's head, and again its body: a slow client holds
#: a connection and a body buffer. 30 s: a 10 MB body over a 3 Mbit/s link arrives in 27 s.
READ_TIMEOUT = 30.0
#: Pages waiting or being cleaned per HTTP worker before it answers 503 "busy", and their bytes:
#: a queue that cannot grow without bound. 1 024 pages: 200 concurrent clients posting dev pages
#: (246 kB on average, about 25 ms each) are all served within a few seconds, where a bound of 64
#: refused 87 % of them. 640 MB: what a worker may hold of waiting bodies (64 of the largest).
MAX_PENDING = 1_024
MAX_PENDING_BYTES = 640_000_000
#: The prefix of the service's internal environment variables (``serve`` warns of any it finds).
ENV_PREFIX = "NOISECBR_SERVE_"
#: The one variable through which ``serve`` hands its settings to uvicorn's workers (spawned
#: processes, reached only by an import string and the environment): every field, as JSON.
#: ``serve`` always writes it, so no value a user put in the environment reaches a worker.
SETTINGS_ENV = ENV_PREFIX + "SETTINGS"

#: Review page: its own scripts and styles (the drawn page keeps its inline styles), images
#: only from itself or data: URLs, no plugins, no other host, not framed by another site.
REVIEW_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
              "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
              "frame-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'")
#: Everything else: runs and loads nothing, even a cleaned page opened in a browser.
API_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox"
#: Paths served with the review page's policy; /docs keeps FastAPI's own page.
_REVIEW_PATHS = ("/review", "/static/")
_DOCS_PATHS = ("/docs", "/redoc", "/openapi.json", "/static-offline-docs/")


@dataclass(frozen=True)
class Settings:
    """What ``noisecbr serve`` was started with."""

    db: str | None = None  # case base URL or SQLite path; None: read-only cleaning
    token: str | None = None  # bearer token of the write endpoints
    model: str | None = None  # model file; None: the embedded default
    max_body: int = MAX_BODY
    timeout: float = TIMEOUT
    pool: int = 1  # cleaning processes per HTTP worker
    read_timeout: float = READ_TIMEOUT
    #: Host names the server answers to (comma-separated; None: any). Set to the loopback
    #: names when it listens on loopback, so that a web page cannot reach it by DNS rebinding.
    hosts: str | None = None

    def to_env(self) -> dict[str, str]:
        """The settings as the environment of :func:`app_from_env` in each worker: every
        field, None included, so that nothing in a worker falls back on another source."""
        return {SETTINGS_ENV: json.dumps(asdict(self))}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings :meth:`to_env` wrote; the defaults (no case base, no token) when there
        are none, as for an app uvicorn was pointed at by hand."""
        environ = os.environ if environ is None else environ
        raw = environ.get(SETTINGS_ENV)
        return cls() if raw is None else cls(**json.loads(raw))

    def described(self) -> str:
        """Every setting but the token, in one line for the startup banner (a password in the
        case base's URL hidden)."""
        db = "none (read-only cleaning)"
        if self.db:
            from sqlalchemy.engine import make_url

            db = (make_url(self.db).render_as_string(hide_password=True) if "://" in self.db
                  else self.db)
        return (f"case base {db}; model {self.model or 'embedded'}; {self.pool} cleaning "
                f"process(es) per worker; body <= {self.max_body:,} bytes; page time limit "
                f"{self.timeout:g} s; read timeout {self.read_timeout:g} s; hosts "
                f"{self.hosts or 'any'}")


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes with 413, counting while they arrive, and
    bodies not complete ``read_timeout`` seconds after the request arrived with 408."""

    def __init__(self, app: ASGIApp, limit: int, read_timeout: float = READ_TIMEOUT) -> None:
        self.app = app
        self.limit = limit
        self.read_timeout = read_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            status, detail = ((413, self._too_large()) if declared.isdigit()
                              else (400, "invalid Content-Length"))
            await JSONResponse({"detail": detail}, status, headers={"Connection": "close"})(
                scope, receive, send)
            return
        received = 0
        complete = False
        deadline = asyncio.get_running_loop().time() + self.read_timeout

        async def counted() -> Message:
            nonlocal received, complete
            if complete:  # after the body: waiting for a disconnect, as long as it takes
                return await receive()
            try:
                message = await asyncio.wait_for(
                    receive(), max(deadline - asyncio.get_running_loop().time(), 0.0))
            except TimeoutError:
                raise HTTPException(408, f"the request body did not arrive within "
                                         f"{self.read_timeout:g} s", {"Connection": "close"}
                                    ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(413, self._too_large(), {"Connection": "close"})
                complete = not message.get("more_body", False)
            return message

        await self.app(scope, counted, send)

    def _too_large(self) -> str:
        return f"request body over the limit of {self.limit:,} bytes"


class SecurityHeaders:
    """``nosniff`` and a Content-Security-Policy on every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        policy = (REVIEW_CSP if path.startswith(_REVIEW_PATHS)
                  else None if path.startswith(_DOCS_PATHS) else API_CSP)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"no-referrer"))
                if policy:
                    headers.append((b"content-security-policy", policy.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class Pool:
    """The HTTP worker's cleaning processes: jobs of :mod:`.work` under the time limit."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pending = 0
        self.pending_bytes = 0
        # spawn, not fork: the HTTP worker runs threads (the event loop, the thread pool).
        self._pool = ProcessPool(max_workers=settings.pool, initializer=work.init_worker,
                                 initargs=(settings.db, settings.model),
                                 context=multiprocessing.get_context("spawn"))

    async def run(self, job, *args: Any) -> Any:
        """The job's result; :class:`work.JobError` for every failure. The time limit counts
        from now: a job still waiting for a process when it passes is dropped, one running is
        ended (its process replaced), so no request waits longer than the limit."""
        size = sum(len(a) for a in args if isinstance(a, bytes | str))
        if self.pending >= MAX_PENDING or self.pending_bytes + size > MAX_PENDING_BYTES:
            raise work.JobError(503, f"busy: {self.pending} pages waiting; try again shortly")
        self.pending += 1
        self.pending_bytes += size
        future = self._pool.schedule(job, args=args, timeout=self.settings.timeout)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.settings.timeout)
        except (FutureTimeout, TimeoutError):
            future.cancel()
            raise work.JobError(503, f"the page took longer than the limit of "
                                     f"{self.settings.timeout:g} s (its wait included): "
                                     "stopped") from None
        except ProcessExpired as error:
            log.error("a cleaning process died: %s", error)
            raise work.JobError(500, "the cleaning process died (a bug, logged by the "
                                     "server)") from None
        finally:
            self.pending -= 1
            self.pending_bytes -= size

    def close(self) -> None:
        """Stop the cleaning processes (a job still running is killed)."""
        self._pool.stop()
        self._pool.join(timeout=10)


def _install_error_answers(app: FastAPI) -> None:
    from .routes import one_line

    @app.exception_handler(work.JobError)
    async def job_error(_request, error: work.JobError) -> JSONResponse:
        return JSONResponse({"detail": error.message}, error.status)

    @app.exception_handler(ClientDisconnect)
    async def gone(request, _error: ClientDisconnect) -> Response:
        # Nobody reads this answer: one line in the log, not a traceback.
        client = request.client
        log.info("%s went away before its answer (%s %s)",
                 f"{client.host}:{client.port}" if client else "a client", request.method,
                 request.url.path)
        return Response(status_code=499)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": one_line(error)}, 422)

    @app.exception_handler(Exception)
    async def unexpected(_request, error: Exception) -> JSONResponse:
        log.error("unexpected error", exc_info=error)
        return JSONResponse({"detail": f"internal error ({type(error).__name__}), logged by "
                                       "the server"}, 500)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service's app. The model is loaded once per cleaning process; the case base (if
    ``settings.db``) is opened once per process, as it is (no migration: ``serve`` migrates
    before it starts the workers, and :func:`app_from_env` checks its revision in each)."""
    from .routes import router

    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.pool = Pool(settings)
        app.state.casebase = None
        if settings.db:
            from casebase.store import CaseBase

            app.state.casebase = CaseBase.open(settings.db, upgrade=False, create=False,
                                                  check=False)  # app_from_env checked it
        try:
            yield
        finally:
            app.state.pool.close()
            if app.state.casebase is not None:
                app.state.casebase.close()

    # Swagger UI and ReDoc from files on disk (fastapi-offline), not a CDN: /docs works offline.
    app = FastAPIOffline(title="noisecbr", summary="Clean, explain and correct web pages.",
                         version=_version(), lifespan=lifespan)
    app.state.settings = settings
    _install_error_answers(app)
    app.include_router(router)
    _document_page_bodies(app)
    static = resources.files("noisecbr_apps.service") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.add_middleware(BodyLimit, limit=settings.max_body, read_timeout=settings.read_timeout)
    app.add_middleware(SecurityHeaders)
    if settings.hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.hosts.split(","))
    return app


def _document_page_bodies(app: FastAPI) -> None:
    """Add the schemas of the bodies the endpoints parse themselves to the OpenAPI document."""
    from fastapi.openapi.utils import get_openapi

    from .routes import PAGE_SCHEMAS

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                                 routes=app.routes)
            schema.setdefault("components", {}).setdefault("schemas", {}).update(PAGE_SCHEMAS)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi


def app_from_env() -> FastAPI:
    """The app with the settings ``serve`` put in the environment (uvicorn's factory, called
    in each worker). Its case base is checked as ``serve`` checked it: the app opens it as it
    is, which must then be at this code's schema revision (it may have changed since, or the
    factory be run by hand)."""
    settings = Settings.from_env()
    if settings.db:
        _check_casebase(settings.db)
    return create_app(settings)


def _check_casebase(db: str) -> None:
    """Stop the worker, with one line in the log, unless ``db`` is a case base at this code's
    schema revision (opened as it is: a worker never migrates, ``serve`` did)."""
    from sqlalchemy.exc import SQLAlchemyError

    from casebase.store import CaseBase, CaseBaseError
    from noisecbr.exits import EXIT_CASEBASE

    try:
        CaseBase.open(db, upgrade=False, create=False).close()
    except (CaseBaseError, SQLAlchemyError, OSError) as error:
        first = str(getattr(error, "orig", None) or error).splitlines()[0]
        log.error("cannot serve the case base %s: %s", db, first)
        sys.exit(EXIT_CASEBASE)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("noisecbr")
    except PackageNotFoundError:
        return "0"
