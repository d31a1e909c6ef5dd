"""The crafted page of issue 43, item 1 (tests/fixtures/unsafe/crafted.html), cleaned to HTML
and opened in a real browser (Debian's Chromium, driven by selenium): no script runs and nothing
loads, and the article's text and its safe links are there.

Every "remote" URL of the page (``http://evil.test/…``) is pointed at a local HTTP server that
records each request it receives, and every script or handler of the page would, if it ran, set
the title and ``window.name`` to PWNED and request ``/pwned/…`` from that server. The raw page
opened the same way is the control: it shows that the probe sees what runs and loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromiumhelpers import (
    RecordingServer,
    headless_chromium,
    recording_server,
    skip_without_chromium,
)
from click.testing import CliRunner
from conftest import FIXTURES
from lxml import html

from noisecbr import Cleaner
from noisecbr.render.text import render_html
from noisecbr_apps.cli import main

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (dev extra) is missing")

from selenium.webdriver.support.ui import WebDriverWait

CRAFTED = FIXTURES / "unsafe" / "crafted.html"
#: Seconds to wait for a page to load, and for the server to see the test's own sentinel
#: request (generous: a busy machine only makes the wait longer, never the test wrong).
PAGE_WAIT = 60
#: What the page's own host name stands for in the fixture.
EVIL = "http://evil.test"
ARTICLE = ["the sandbars off the lighthouse dry out for an hour",
           "the ferry keeps its summer timetable throughout",
           "the currents around the point are strong"]
SAFE_LINKS = ["https://harbour-notes.test/tides/2025-03", "https://harbour-notes.test/causeway"]
#: The page's meta refreshes: the last one wins, and takes the browser away from the page.
REFRESH = re.compile(rb'<meta http-equiv="refresh"[^>]*>')
#: What the page requests from its remote host when a vector runs or loads, by path.
PROBES = re.compile(r"evil\.test(/pwned/[\w.-]+)")
#: The form's own action (its button's formaction wins) and the refreshes.
NOT_SEEN_WITHOUT_REFRESH = {"/pwned/form", "/pwned/head-refresh", "/pwned/refresh"}

skip_without_chromium()


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as recorder:
        yield recorder


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium that resolves no host name but the loopback address: a URL that is
    not the test server's goes nowhere (the content's https images, in the raw page, fail to
    load, so an ``onerror`` handler runs; the sanitised HTML keeps no image source, and
    tests/test_media_requests.py checks the handlers of the images it keeps on request)."""
    with headless_chromium(tmp_path / "chromium-profile", PAGE_WAIT,
                           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           width=1200) as driver:
        yield driver


@pytest.fixture
def crafted(tmp_path, server) -> Path:
    """The crafted page with its remote host pointed at the test server."""
    page = tmp_path / "page.html"
    page.write_bytes(CRAFTED.read_bytes().replace(EVIL.encode(), server.origin.encode()))
    return page


#: Click and focus every element, as a reader might: an ``onclick``/``onfocus`` left in runs,
#: a form's button submits. Links are followed only when their URL is a script (following any
#: other link is the reader's choice, and would end the visit), and first, a task ahead of the
#: rest: a form submitted before would cancel the navigation that runs a ``javascript:`` URL.
_PROVOKE = """
const done = arguments[arguments.length - 1];
for (const a of document.links) if (a.protocol === 'javascript:') a.click();
setTimeout(() => {
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('a[href]')) continue;
    if (el.focus) el.focus();
    // A window without the system's focus (headless Chromium 150) fires no focus event on
    // focus(): the event is sent as well, so an onfocus handler left in runs either way.
    el.dispatchEvent(new FocusEvent('focus'));
    if (el.click) el.click();
    else el.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
  }
  done();
}, 0);
"""


def _visit(driver, page: Path, server: RecordingServer) -> list[str]:
    """Open ``page`` from disk, wait for it to load, click and focus everything, and return
    what the server received before the test's own sentinel request came in."""
    driver.get(page.as_uri())
    WebDriverWait(driver, PAGE_WAIT).until(
        lambda d: d.execute_script("return document.readyState") == "complete")
    driver.execute_async_script(_PROVOKE)
    # Whatever the page loads by itself was requested before the load event, and what a
    # handler requests, before the sentinel: the server's record is complete when it comes.
    driver.execute_script("new Image().src = arguments[0]", f"{server.origin}/sentinel")
    requests = server.wait_for("/sentinel", PAGE_WAIT)
    requests.remove("/sentinel")
    return requests


def _assert_safe_in_chromium(driver, page: Path, server: RecordingServer) -> None:
    """``page`` runs and loads nothing in Chromium, and shows the article and its links."""
    document = page.read_text(encoding="utf-8")
    assert all(sentence in document for sentence in ARTICLE)
    assert all(f'href="{link}"' in document for link in SAFE_LINKS)
    assert _visit(driver, page, server) == []
    assert "PWNED" not in driver.title
    assert driver.execute_script("return window.name") == ""
    assert driver.current_url == page.as_uri()
    shown = " ".join(driver.execute_script("return document.body.innerText").split())
    assert all(sentence in shown for sentence in ARTICLE), shown
    links = driver.execute_script("return Array.from(document.links, a => a.href)")
    assert set(SAFE_LINKS) <= set(links), links
    assert server.requests == ["/sentinel"]  # nothing came in late either


def test_the_control_every_vector_of_the_raw_page_runs_or_loads_in_chromium(
        browser, server, crafted):
    # Without its refreshes, so that the visit stays on the page until the end.
    crafted.write_bytes(REFRESH.sub(b"", crafted.read_bytes()))
    expected = set(PROBES.findall(CRAFTED.read_text(encoding="utf-8")))
    requests = {request.split("?")[0] for request in _visit(browser, crafted, server)}
    assert expected - NOT_SEEN_WITHOUT_REFRESH <= requests, requests
    assert browser.execute_script("return window.name") == "PWNED"


def test_the_control_the_raw_pages_refresh_leaves_it(browser, server, crafted):
    # Nothing clicked: the page is left as soon as it has loaded.
    browser.get(crafted.as_uri())
    server.wait_for("/pwned/refresh", PAGE_WAIT)


def test_the_command_lines_html_runs_and_loads_nothing(browser, server, crafted, tmp_path):
    out = tmp_path / "out.html"
    result = CliRunner().invoke(main, ["clean", str(crafted), "-f", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    _assert_safe_in_chromium(browser, out, server)


def test_the_librarys_html_runs_and_loads_nothing(browser, server, crafted, tmp_path):
    out = tmp_path / "library.html"
    out.write_text(Cleaner().clean(crafted.read_bytes()).html, encoding="utf-8")
    _assert_safe_in_chromium(browser, out, server)


def test_the_sanitiser_alone_on_the_whole_page_runs_and_loads_nothing(
        browser, server, crafted, tmp_path):
    # Every vector reaches the sanitiser here, whatever the cleaning would have removed.
    body = html.document_fromstring(crafted.read_bytes()).find("body")
    out = tmp_path / "body.html"
    out.write_text(render_html(body, title="Tide tables"), encoding="utf-8")
    assert re.search(r"autofocus|srcset|style=|<iframe|<form", out.read_text()) is None
    _assert_safe_in_chromium(browser, out, server)
