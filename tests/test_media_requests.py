"""The sanitised HTML of a page crafted to load from elsewhere in every way it can
(tests/fixtures/unsafe/media.html: scripts, handlers, ``<video poster src>``, ``<audio><source>``,
``<img srcset>``, ``<picture><source srcset>``, ``<link>``, ``@import``, ``url()``,
``image-set()``, frames, objects, embeds, SVG ``<image>``/``<use>``, ``<base>``, refreshes),
opened by Debian's headless Chromium: 0 requests, and with ``keep_media=True`` the media's own
only (issue 54).

Every "remote" URL of the page (``http://evil.test/load/…``) is pointed at a local HTTP server
that records each request it receives, and Chromium's DevTools network log records every
request the page makes, whatever its host or scheme (a relative URL resolves to a file beside
the page once ``<base>`` is gone). The raw page opened the same way is the control: it shows that
both see what loads.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromiumhelpers import (
    RecordingServer,
    headless_chromium,
    recording_server,
    skip_without_chromium,
)
from conftest import FIXTURES
from lxml import html

from noisecbr import Cleaner
from noisecbr.render.text import render_html

pytest.importorskip("selenium.webdriver", reason="selenium (dev extra) is missing")

MEDIA = FIXTURES / "unsafe" / "media.html"
#: Seconds to wait for a page to load, and for the server to see the test's own sentinel
#: request (generous: a busy machine only makes the wait longer, never the test wrong).
PAGE_WAIT = 60
#: Seconds the page is left after the sentinel came in: a player asks for its medium after
#: its first layout, which may come after the load event.
SETTLE = 1.5
#: What the page's remote host stands for in the fixture.
EVIL = "http://evil.test"
#: The page's meta refresh: it would take the browser away from the raw page.
REFRESH = re.compile(rb'<meta http-equiv="refresh"[^>]*>')
#: URL schemes whose requests never leave the browser: its own pages (the new-tab page it
#: starts on), the icons of its media controls (data:).
BROWSER_SCHEMES = ("chrome:", "chrome-untrusted:", "chrome-extension:", "devtools:", "data:",
                   "blob:", "about:")
#: The file names the images and media of the page load, and what the raw page loads
#: besides them (what every loading vector of it requests, as Chromium showed it).
MEDIA_SOURCES = {"video.mp4", "poster.png", "captions.vtt", "poster-two.png", "source.webm",
                 "source.mp4", "audio.mp3", "audio-source.ogg", "img.jpg", "srcset.jpg",
                 "srcset-2x.jpg", "picture-source.webp", "picture-img.jpg", "broken.png",
                 "relative.png"}
SEEN_IN_THE_RAW_PAGE = {
    "video.mp4", "poster.png", "poster-two.png", "source.webm", "audio.mp3", "audio-source.ogg",
    "srcset.jpg", "picture-source.webp", "broken.png", "relative.png", "head-script.js",
    "script", "script.js", "body-onload", "img-onerror", "svg-onload", "link.css",
    "import.css", "style-background.png", "inline-background.png", "image-set.png",
    "svg-image.png", "table-background.png", "cell-background.png", "frame", "srcdoc",
    "object", "embed", "input.png"}
ARTICLE = ["the sandbars drying out below the lighthouse",
           "the film shows the walkers crossing to the island",
           "The coastguard posts the day's times on the board by the slipway"]

skip_without_chromium()


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with recording_server() as recorder:
        yield recorder


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium with its DevTools network log, resolving no host name but the
    loopback address (a URL that is not the test server's goes nowhere, but is still logged)."""
    with headless_chromium(tmp_path_factory.mktemp("chromium") / "profile", PAGE_WAIT,
                           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           width=1200,
                           capabilities={"goog:loggingPrefs": {"performance": "ALL"}}) as driver:
        yield driver


@pytest.fixture
def crafted(server) -> bytes:
    """The crafted page with its remote host pointed at the test server."""
    return MEDIA.read_bytes().replace(EVIL.encode(), server.origin.encode())


def _requested(driver, page: Path, server: RecordingServer) -> list[str]:
    """Open ``page`` from disk and return the file name of each request it made (by the
    DevTools log, which holds the server's record too: the test checks both)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("performance")  # what came before: the new-tab page, the last page
    server.requests.clear()
    driver.get(page.as_uri())
    WebDriverWait(driver, PAGE_WAIT).until(
        lambda d: d.execute_script("return document.readyState") == "complete")
    sentinel = f"{server.origin}/sentinel"
    driver.execute_script("new Image().src = arguments[0]", sentinel)
    server.wait_for("/sentinel", PAGE_WAIT)
    time.sleep(SETTLE)
    messages = [json.loads(entry["message"])["message"]
                for entry in driver.get_log("performance")]
    urls = [message["params"]["request"]["url"] for message in messages
            if message["method"] == "Network.requestWillBeSent"]
    urls = [url for url in urls
            if url not in (page.as_uri(), sentinel) and not url.startswith(BROWSER_SCHEMES)]
    served = {path.split("?")[0].rsplit("/", 1)[-1] for path in server.requests}
    names = [url.split("?")[0].split("#")[0].rsplit("/", 1)[-1] for url in urls]
    assert served - {"sentinel"} <= set(names), (served, urls)
    assert driver.current_url == page.as_uri()
    return sorted(names)


def _shown(driver) -> str:
    return " ".join(driver.execute_script("return document.body.innerText").split())


def _count(driver, selector: str) -> int:
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length",
                                 selector)


def _sanitised(crafted: bytes, **options) -> str:
    """The sanitiser alone on the whole page: every vector reaches it, whatever the cleaning
    would have removed."""
    body = html.document_fromstring(crafted).find("body")
    return render_html(body, title="Films of the harbour", **options)


def test_the_control_the_raw_page_loads_from_every_vector(browser, server, crafted, tmp_path):
    page = tmp_path / "raw.html"
    page.write_bytes(REFRESH.sub(b"", crafted))
    assert SEEN_IN_THE_RAW_PAGE <= set(_requested(browser, page, server))


def test_the_sanitised_html_makes_no_request(browser, server, crafted, tmp_path):
    page = tmp_path / "sanitised.html"
    page.write_text(_sanitised(crafted), encoding="utf-8")
    assert _requested(browser, page, server) == []
    assert server.requests == ["/sentinel"]  # nothing came in late either
    shown = _shown(browser)
    assert all(sentence in shown for sentence in ARTICLE), shown
    # The media's text stays: the players' fallback, the images' alt, the caption.
    assert "The ferry leaving on the morning ebb." in shown
    assert "The ferry at the pier in March." in shown
    assert _count(browser, 'img[alt="The lighthouse at low water"]:not([src])') == 1
    assert _count(browser, "video, audio, source, track, [src], [srcset], [poster]") == 0


def test_the_librarys_html_makes_no_request(browser, server, crafted, tmp_path):
    page = tmp_path / "library.html"
    page.write_text(Cleaner().clean(crafted).html, encoding="utf-8")
    assert _requested(browser, page, server) == []
    assert ARTICLE[0] in _shown(browser)


def test_keep_media_keeps_the_media_and_loads_them_alone(browser, server, crafted, tmp_path):
    page = tmp_path / "media.html"
    page.write_text(_sanitised(crafted, keep_media=True), encoding="utf-8")
    requested = set(_requested(browser, page, server))
    assert requested <= MEDIA_SOURCES, requested - MEDIA_SOURCES  # no script, style, frame…
    assert {"video.mp4", "audio.mp3", "srcset.jpg", "picture-source.webp"} <= requested
    assert _count(browser, "video[src][poster][controls]") == 1
    assert _count(browser, "video source[src], audio source[src], track[src]") == 4
    assert _count(browser, "picture source[srcset], img[srcset][sizes]") == 2
    assert _count(browser, "audio[src][controls]") == 1
    assert ARTICLE[0] in _shown(browser)
