"""Debian's headless Chromium for the browser tests: where it is, and one started as they use
it (its own profile folder, removed afterwards); the local HTTP server that records what a page
opened in it requests."""

from __future__ import annotations

import contextlib
import http.server
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def skip_without_chromium() -> None:
    """Skip the calling test module when Chromium or its driver is not installed."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("Chromium and its driver are not installed (apt-get install chromium "
                    "chromium-driver)", allow_module_level=True)


@contextlib.contextmanager
def headless_chromium(profile: Path, page_wait: float, *arguments: str, width: int = 1400,
                      capabilities: Mapping[str, object] | None = None) -> Iterator:
    """A headless Chromium driven by selenium, with the profile folder ``profile``, a page-load
    timeout of ``page_wait`` seconds, any further command-line ``arguments`` and WebDriver
    ``capabilities`` (``{"goog:loggingPrefs": {"performance": "ALL"}}``: the DevTools
    network log)."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-dev-shm-usage", f"--window-size={width},900",
                     f"--user-data-dir={profile}", *arguments):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(str(CHROMEDRIVER)))
    try:
        driver.set_page_load_timeout(page_wait)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with an empty 200 and records its path."""

    requests: list[str]

    def _answer(self) -> None:
        self.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass  # the test reads the record, not stderr


class RecordingServer:
    """A local HTTP server on 127.0.0.1 that stands for a crafted page's remote hosts and
    records every path requested (``requests``)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        handler = type("Handler", (_Recorder,), {"requests": self.requests})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def wait_for(self, path: str, timeout: float) -> list[str]:
        """The requests received once ``path`` is among them (bounded by ``timeout``)."""
        deadline = time.monotonic() + timeout
        while path not in self.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path in self.requests, f"the server never saw {path}: {self.requests}"
        return list(self.requests)


@contextlib.contextmanager
def recording_server() -> Iterator[RecordingServer]:
    """A :class:`RecordingServer` serving on a thread of its own, shut down afterwards."""
    recorder = RecordingServer()
    thread = threading.Thread(target=recorder.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.httpd.shutdown()
        recorder.httpd.server_close()
        thread.join()
