"""Shared fixtures. Nothing here reads ../shared at import time."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
#: The README's example page doubles as the cleaning fixture: a site absent from the dev data.
EXAMPLE_PAGE = Path(__file__).resolve().parents[1] / "examples" / "tide-pools.html"
#: The development data, when this checkout sits beside it (CI has it; a bare clone may not).
SHARED_DATA = Path(os.environ.get("NOISECBR_SHARED_DATA",
                                  Path(__file__).resolve().parents[2] / "shared" / "data"))


def _torch_missing() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return True
    return False


#: Tests that train (torch comes with the train extra): skipped, with the reason, without it.
needs_torch = pytest.mark.skipif(_torch_missing(), reason="torch is not installed: pip install "
                                 "torch==2.13.0 'noisecbr[train]'")


#: The slow set: long runs (a 10^4-input fuzz, the scorer check's --quick), skipped with the
#: reason unless NOISECBR_SLOW_TESTS=1 asks for them.
slow = pytest.mark.skipif(os.environ.get("NOISECBR_SLOW_TESTS") != "1",
                          reason="in the slow set: set NOISECBR_SLOW_TESTS=1 to run it")


def dataset_with_page(directory: Path, page_id: str, html: bytes) -> Path:
    """A copy of the casebase fixture dataset in ``directory`` with one more page."""
    import gzip
    import json
    import shutil

    shutil.copytree(FIXTURES / "casebase", directory)
    truth = json.loads((directory / "ground-truth.json").read_text())
    truth[page_id] = {"url": f"https://{page_id}.test/x", "articleBody": "a b"}
    (directory / "ground-truth.json").write_text(json.dumps(truth))
    (directory / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(html))
    return directory


@pytest.fixture
def flawed_model() -> str:
    """A model that keeps the news fixture's "Posted in" byline and small promo boxes: the
    tests of corrections need a box the model gets wrong, and the embedded model removes
    those. Made by hand for the current vector schema: a ``<nav>`` or ``<footer>`` scores noise,
    every other subtree mixture, so the walk removes the landmarks, descends into every other
    box and keeps every leaf."""
    return str(FIXTURES / "models" / "keeps-promos.safetensors")


@pytest.fixture
def article_html() -> bytes:
    return EXAMPLE_PAGE.read_bytes()


@pytest.fixture
def modernweb_dev() -> Path:
    path = SHARED_DATA / "modernweb-dev"
    if not (path / "ground-truth.json").is_file():
        pytest.skip(f"development data not found at {path} (set NOISECBR_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server for the whole test session (see tests/postgres.py)."""
    from postgres import PostgresServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server for this test: {reason}")
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The SQLAlchemy URL of a fresh, empty PostgreSQL database."""
    return postgres_server.database()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A fresh case base URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cb.sqlite'}"
    return request.getfixturevalue("postgres_url")


@contextlib.contextmanager
def serving(log_path: Path, *options: str, ready=lambda health: True, wait: float = 60):
    """`noisecbr serve OPTIONS` on a free loopback port, its output in ``log_path``: yields the
    base URL once ``/healthz`` answers and ``ready(its JSON)`` holds; stopped on leaving."""
    import json
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "noisecbr_apps.cli", "serve", "--port",
                                    str(port), *options], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + wait
            while True:
                try:
                    with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
                        if ready(json.load(answer)):
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("noisecbr serve did not start: "
                                + log_path.read_text(errors="replace")[-2000:])
                time.sleep(0.3)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
