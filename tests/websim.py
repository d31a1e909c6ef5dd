"""A loopback web site for the crawler's tests: they must not reach the internet, and each thing a
crawler has to cope with (robots.txt rules, sitemap indexes, gzipped sitemaps, feeds, redirects,
slow, busy and mislabelled pages, endless bodies) needs a URL that reproduces it on demand.

``with serve_site(20) as site:`` serves, on 127.0.0.1 and a free port, until the block ends:

- ``/page/{n}.html`` (``0 <= n < pages``): article pages laid out like the development data
  (header menu, cookie banner, article, related links, footer); ``site.page_text(n)`` is a
  sentence only page n's article holds. ``/private/{n}.html``: the same kind, robots.txt forbids.
- ``/robots.txt``, ``/sitemap.xml`` (an index of ``/sitemap-pages.xml.gz``, gzipped, with a
  duplicate and a PDF among the pages, and ``/sitemap-private.xml``), ``/feed.xml`` (RSS 2.0),
  ``/atom.xml``.
- ``/redirect/1`` (301) to ``/redirect/2`` (302, relative) to ``/page/0.html``.
- ``/slow.html`` (headers after ``slow_seconds``), ``/trickle.html`` (a byte every 0.2 s,
  forever, never silent long enough for a read timeout), ``/busy.html`` (503 with Retry-After
  for the first ``busy_failures`` requests), ``/always-busy.html`` (503 forever).
- ``/wrong-charset.html`` (windows-1252 bytes sent as UTF-8), ``/big.html`` (``big_bytes`` with
  no Content-Length), ``/big-declared.html`` (with one), ``/not-html.json``; anything else 404.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import gzip
import http.server
import json
import random
import re
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape

#: The 200 page ``/busy.html`` sends once its failures are spent, and ``/slow.html``'s page.
BUSY_TEXT = "The busy page answered at last, after asking the crawler to come back later."
SLOW_TEXT = "The slow page took its time, but every word of it arrived in the end."
#: The phrase ``/wrong-charset.html`` repeats; its accents are single bytes in windows-1252.
CAFE = "café crème à la française"

_CHUNK = 64 * 1024
_SITE_NAME = "The Harbour Gazette"
_START = datetime.date(2024, 1, 1)

_WORDS = {
    "adj": ["quiet", "copper", "narrow", "patient", "distant", "brittle", "golden", "restless",
            "humble", "tidal", "woollen", "crooked", "silver", "early", "hollow", "bright",
            "heavy", "careful", "scattered", "ancient"],
    "noun": ["lantern", "harbour", "orchard", "kettle", "ledger", "compass", "meadow", "ferry",
             "archive", "garden", "bridge", "workshop", "river", "market", "signal", "tower",
             "library", "quarry", "engine", "village"],
    "place": ["old mill", "north pier", "railway bridge", "village green", "glass house",
              "river mouth", "market square", "lighthouse", "chalk cliffs", "town archive"],
    "role": ["harbour master", "archivist", "gardener", "surveyor", "baker", "ferryman",
             "schoolteacher", "engineer", "librarian", "cartographer"],
    "verb": ["repaired", "measured", "painted", "mapped", "described", "counted",
             "photographed", "rebuilt", "studied", "sketched", "restored", "catalogued"],
    "adverb": ["slowly", "carefully", "quietly", "eagerly", "reluctantly", "briskly",
               "patiently", "suddenly", "gradually", "cheerfully"],
    "time": ["dawn", "the spring tide", "the first frost", "market day", "the late train",
             "midsummer", "the harvest", "nightfall"],
    "gerund": ["watching", "mending", "sketching", "measuring", "polishing", "guarding"],
}
_WORDS["adj2"], _WORDS["noun2"] = _WORDS["adj"], _WORDS["noun"]
_TEMPLATES = [
    "the {adj} {noun} near the {place} was {verb} {adverb} by the {role} before {time}.",
    "{adverb}, the {role} {verb} every {noun} in the {place}, noting how {adj} the {noun2} had "
    "become.",
    "according to the {role}, nobody had {verb} a {adj} {noun} like this one since {time}.",
    "visitors to the {place} often ask why the {noun2} looks so {adj}, and the answer is rarely "
    "simple.",
    "the {role} kept {gerund} the {adj2} {noun2} long after the others had gone home.",
    "by {time} the {noun} had been {verb} twice, once {adverb} and once with {adj} attention.",
    "it is worth remembering that a {adj} {noun} tells us more about the {place} than any "
    "{noun2} could.",
    "in the records of the {place}, the {role} describes a {adj2} {noun} that was {verb} "
    "{adverb}.",
    "some readers wrote in to say that the {noun2} by the {place} is {adj}, though others "
    "disagree.",
    "when the {role} finally {verb} the {noun}, the whole {place} seemed {adj2} for a moment.",
]
_NAV = [("/", "Home"), ("/section/news/", "News"), ("/section/science/", "Science"),
        ("/section/culture/", "Culture"), ("/section/travel/", "Travel"),
        ("/section/opinion/", "Opinion"), ("/archive/", "Archive"), ("/subscribe/", "Subscribe")]
_FOOTER = [("/about.html", "About us"), ("/contact.html", "Contact"),
           ("/privacy.html", "Privacy policy"), ("/terms.html", "Terms of use")]
_AUTHORS = ["Ada Merrow", "Tomas Reyne", "Iris Calloway", "Owen Fairlie", "Maud Pellier"]


def page_text(n: int, kind: str = "page") -> str:
    """The sentence only page ``n`` of ``kind`` ("page" or "private") holds: the zero-padded
    number keeps page 1's sentence out of page 10's, the words keep it reading like prose."""
    adj, noun = _WORDS["adj"][n % 20], _WORDS["noun"][(7 * n + 3) % 20]
    place = _WORDS["place"][n % 10]
    label = "Field notebook" if kind == "page" else "Private ledger"
    return f"{label} {n:04d} records that the {adj} {noun} waited beside the {place}."


def _title(n: int, kind: str) -> str:
    """A headline for page ``n``: the same wherever it appears (the page, links to it, feeds)."""
    rng = random.Random(f"title-{kind}-{n}")
    adj, noun, place = (rng.choice(_WORDS[key]) for key in ("adj", "noun", "place"))
    return f"The {adj} {noun}s of the {place} (no. {n + 1})"


def _sentence(rng: random.Random) -> str:
    words = {key: rng.choice(choices) for key, choices in _WORDS.items()}
    text = re.sub(r"\b([Aa]) (?=[aeiou])", r"\1n ", rng.choice(_TEMPLATES).format(**words))
    return text[0].upper() + text[1:]


def _prose(rng: random.Random, paragraphs: int) -> list[str]:
    """``paragraphs`` paragraphs of 4 to 6 sentences each: varied, but fixed by ``rng``'s seed."""
    return [" ".join(_sentence(rng) for _ in range(rng.randint(4, 6))) for _ in range(paragraphs)]


def _date(n: int) -> datetime.date:
    return _START + datetime.timedelta(days=3 * n)


def _document(title: str, canonical: str, paragraphs: list[str], *, related: list[tuple[str, str]],
              date: datetime.date, author: str, charset: str = "utf-8") -> str:
    """An article page laid out as the development data's are: the boilerplate around the
    article (menu, cookie banner, related links, footer) is what the cleaner must drop."""
    nav = "\n".join(f'<li><a href="{href}">{label}</a></li>' for href, label in _NAV)
    foot = "\n".join(f'<li><a href="{href}">{label}</a></li>' for href, label in _FOOTER)
    body = "\n".join(f"<p>{escape(text, quote=False)}</p>" for text in paragraphs)
    aside = ""
    if related:
        links = "\n".join(f'<li><a href="{href}">{escape(label)}</a></li>'
                          for href, label in related)
        aside = (f'<aside class="related">\n<h2>Related articles</h2>\n<ul>\n{links}\n</ul>\n'
                 "</aside>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="{charset}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} | {_SITE_NAME}</title>
<link rel="canonical" href="{escape(canonical)}">
<link rel="alternate" type="application/rss+xml" href="/feed.xml" title="{_SITE_NAME}">
<style>body{{font-family:Georgia,serif;margin:0}}.cookie-banner{{position:fixed;bottom:0}}</style>
</head>
<body>
<header class="site-header">
<a class="logo" href="/">{_SITE_NAME}</a>
<nav class="main-nav">
<ul>
{nav}
</ul>
</nav>
</header>
<div class="cookie-banner" id="cookie-consent" role="dialog">
<p>We use cookies to remember your preferences and to measure how our pages are read.</p>
<button type="button">Accept all</button> <button type="button">Manage preferences</button>
</div>
<main>
<article>
<h1>{escape(title)}</h1>
<p class="byline">By <span class="author">{author}</span> &middot;
<time datetime="{date.isoformat()}">{date.strftime("%d %B %Y")}</time></p>
{body}
</article>
{aside}
</main>
<footer class="site-footer">
<p>&copy; 2024 {_SITE_NAME}. All rights reserved.</p>
<ul>
{foot}
</ul>
</footer>
<script>
document.querySelector("#cookie-consent button").addEventListener("click", function () {{
  this.parentNode.remove();
}});
</script>
</body>
</html>
"""


def _article(base: str, pages: int, n: int, kind: str) -> str:
    """Page ``n`` of ``kind`` ("page" or "private"): 5 to 7 paragraphs, page_text in the 2nd."""
    rng = random.Random(f"{kind}-{n}")
    paragraphs = _prose(rng, rng.randint(5, 7))
    paragraphs[1] = f"{paragraphs[1]} {page_text(n, kind)}"
    others = [k for k in dict.fromkeys((n + step) % pages for step in (1, 2, 3)) if k != n]
    related = [(f"/{kind}/{k}.html", _title(k, kind)) for k in others]
    return _document(_title(n, kind), f"{base}/{kind}/{n}.html", paragraphs, related=related,
                     date=_date(n), author=_AUTHORS[n % len(_AUTHORS)])


def _wrong_charset(base: str) -> bytes:
    paragraphs = [
        f"Every morning the little bistro by the station serves a {CAFE} to the first commuters, "
        "and the owner insists that the recipe has not changed in forty years. Regulars say the "
        f"{CAFE} tastes best when the windows are still fogged and the bread is warm.",
        f"Critics from the city have tried to explain why a {CAFE} feels different here. Some "
        "credit the copper pot, others the water, and a few simply blame nostalgia for the way "
        "the waiter sets down the cup with a small bow.",
        "When the bistro closed for repairs last winter, customers left notes on the door asking "
        f"for their {CAFE} to return. The owner reopened in spring with the same chairs, the same "
        "cups and, of course, the same slow pour of milk.",
    ]
    html = _document("Morning at the station bistro", f"{base}/wrong-charset.html", paragraphs,
                     related=[], date=_START, author=_AUTHORS[0], charset="windows-1252")
    return html.encode("windows-1252")


def _big_body(size: int) -> bytes:
    """``size`` bytes of an HTML page that never ends of its own accord: the crawler's size cap,
    not the page, is what stops a download of it."""
    head = b"<!DOCTYPE html>\n<html><head><title>Big</title></head><body>\n"
    tail = b"</body></html>\n"
    row = b"<p>This paragraph is one of very many that make this page far larger than any.</p>\n"
    filler = row * (max(0, size - len(head) - len(tail)) // len(row) + 1)
    return (head + filler[: max(0, size - len(head) - len(tail))] + tail)[:size]


def _urlset(locs: list[str]) -> bytes:
    urls = "\n".join(f"<url><loc>{escape(loc)}</loc><lastmod>{_START.isoformat()}</lastmod></url>"
                     for loc in locs)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}\n</urlset>\n").encode()


def _sitemap_index(base: str) -> bytes:
    maps = "\n".join(f"<sitemap><loc>{base}/{name}</loc></sitemap>"
                     for name in ("sitemap-pages.xml.gz", "sitemap-private.xml"))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{maps}\n</sitemapindex>\n").encode()


def _rss(base: str, pages: int) -> bytes:
    items = "\n".join(
        f"<item><title>{escape(_title(n, 'page'))}</title><link>{base}/page/{n}.html</link>"
        f"<guid>{base}/page/{n}.html</guid><pubDate>{_rfc822(_date(n))}</pubDate>"
        f"<description>{escape(_sentence(random.Random(n)))}</description></item>"
        for n in range(min(10, pages)))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>\n'
            f"<title>{_SITE_NAME}</title><link>{base}/</link>"
            f"<description>News from the harbour</description>\n{items}\n</channel></rss>\n"
            ).encode()


def _rfc822(date: datetime.date) -> str:
    return email.utils.format_datetime(
        datetime.datetime.combine(date, datetime.time(), datetime.UTC))


def _atom(base: str, pages: int) -> bytes:
    entries = "\n".join(
        f"<entry><title>{escape(_title(n, 'page'))}</title><id>{base}/page/{n}.html</id>"
        f'<link rel="alternate" href="{base}/page/{n}.html"/>'
        f"<updated>{_date(n).isoformat()}T00:00:00Z</updated>"
        f"<summary>{escape(_sentence(random.Random(n)))}</summary></entry>"
        for n in range(min(5, pages)))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns="http://www.w3.org/2005/Atom">\n'
            f"<title>{_SITE_NAME}</title><id>{base}/atom.xml</id>"
            f'<link rel="self" href="{base}/atom.xml"/>'
            f"<updated>{_START.isoformat()}T00:00:00Z</updated>"
            f"<author><name>{_AUTHORS[0]}</name></author>\n{entries}\n</feed>\n").encode()


@dataclass
class Site:
    """A running site: where it is, and what was asked of it (for tests' assertions)."""

    base: str
    pages: int
    #: Request targets (path and query) in the order they arrived.
    log: list[str] = field(default_factory=list)
    #: The User-Agent of each request, in the same order.
    agents: list[str] = field(default_factory=list)
    #: When each request arrived (time.monotonic()), in the same order.
    times: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False,
                                  compare=False)

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this site."""
        return self.base + (path if path.startswith("/") else "/" + path)

    def hits(self, path: str) -> int:
        """How many requests named exactly ``path`` (with its query, if any)."""
        with self._lock:
            return self.log.count(path)

    def page_text(self, n: int) -> str:
        """A sentence only ``/page/{n}.html``'s article holds."""
        return page_text(n)

    def private_text(self, n: int) -> str:
        """A sentence only ``/private/{n}.html``'s article holds."""
        return page_text(n, "private")

    def _record(self, target: str, agent: str = "") -> None:
        with self._lock:
            self.log.append(target)
            self.agents.append(agent)
            self.times.append(time.monotonic())


class _Server(http.server.ThreadingHTTPServer):
    """The HTTP server, carrying the site's state so its handlers (one per request) can share it."""

    daemon_threads = True

    def __init__(self, *, slow_seconds: float, busy_failures: int, retry_after: int,
                 big_bytes: int, pages: int, address: str = "127.0.0.1") -> None:
        super().__init__((address, 0), _Handler)
        host, port = self.server_address[:2]
        self.site = Site(base=f"http://{host}:{port}", pages=pages)
        self.stop = threading.Event()
        self.slow_seconds, self.retry_after = slow_seconds, retry_after
        self.busy_left, self.busy_lock = busy_failures, threading.Lock()
        self.big = _big_body(big_bytes)

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet about clients that hang up (the crawler does so on purpose); loud otherwise."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


_ARTICLE = re.compile(r"/(page|private)/(0|[1-9][0-9]*)\.html")


class _Handler(http.server.BaseHTTPRequestHandler):
    """Routes one connection's requests; keep-alive, so every ordinary reply has a length."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm holds
    # the body until the client's delayed ACK (40 ms on Linux), every response of a kept-alive
    # connection, which made a loopback crawl 40 times slower than its fetching.
    disable_nagle_algorithm = True
    #: Idle keep-alive connections close after this long rather than holding a thread forever.
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the tests' output is no place for an access log."""

    def do_GET(self) -> None:
        self._route()

    def do_HEAD(self) -> None:
        self._route()

    def _send(self, status: int, content_type: str, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _html(self, text: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, "text/html; charset=utf-8", text.encode(), headers)

    def _small(self, title: str, text: str) -> str:
        return _document(title, self.server.site.url(urllib.parse.urlsplit(self.path).path),
                         [text, _sentence(random.Random(title)), _sentence(random.Random(text))],
                         related=[], date=_START, author=_AUTHORS[1])

    def _route(self) -> None:
        server, site = self.server, self.server.site
        site._record(self.path, self.headers.get("User-Agent", ""))
        path = urllib.parse.urlsplit(self.path).path
        base, pages = site.base, site.pages
        if (match := _ARTICLE.fullmatch(path)) and int(match[2]) < pages:
            self._html(_article(base, pages, int(match[2]), match[1]))
        elif path == "/robots.txt":
            robots = f"User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n"
            self._send(200, "text/plain; charset=utf-8", robots.encode())
        elif path == "/sitemap.xml":
            self._send(200, "application/xml", _sitemap_index(base))
        elif path == "/sitemap-pages.xml.gz":
            locs = [f"{base}/page/{n}.html" for n in range(pages)]
            locs += [f"{base}/page/0.html", f"{base}/files/report.pdf"]
            self._send(200, "application/x-gzip", gzip.compress(_urlset(locs), mtime=0))
        elif path == "/sitemap-private.xml":
            locs = [f"{base}/private/{n}.html" for n in range(min(5, pages))]
            self._send(200, "application/xml", _urlset(locs))
        elif path == "/feed.xml":
            self._send(200, "application/rss+xml", _rss(base, pages))
        elif path == "/atom.xml":
            self._send(200, "application/atom+xml", _atom(base, pages))
        elif path == "/redirect/1":
            self._html('<a href="/redirect/2">Moved</a>', 301, {"Location": f"{base}/redirect/2"})
        elif path == "/redirect/2":
            self._html('<a href="/page/0.html">Found</a>', 302, {"Location": "/page/0.html"})
        elif path == "/slow.html":
            # Event.wait rather than sleep: the block's exit ends the wait at once.
            if server.stop.wait(server.slow_seconds):
                self.close_connection = True
                return
            self._html(self._small("A slow page", SLOW_TEXT))
        elif path == "/trickle.html":
            self._trickle()
        elif path == "/busy.html":
            with server.busy_lock:
                busy, server.busy_left = server.busy_left > 0, server.busy_left - 1
            if busy:
                self._html("<p>Busy, try later.</p>", 503,
                           {"Retry-After": str(server.retry_after)})
            else:
                self._html(self._small("A busy page", BUSY_TEXT))
        elif path == "/always-busy.html":
            self._html("<p>Busy, try later.</p>", 503, {"Retry-After": "1"})
        elif path == "/wrong-charset.html":
            self._send(200, "text/html; charset=utf-8", _wrong_charset(base))
        elif path in ("/big.html", "/big-declared.html"):
            self._big(declared=path == "/big-declared.html")
        elif path == "/not-html.json":
            body = json.dumps({"pages": pages, "note": "not a web page"}).encode()
            self._send(200, "application/json", body)
        else:
            self._html(f"<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>"
                       f"<h1>Not found</h1><p>Nothing at {escape(path)}.</p></body></html>\n", 404)

    def _trickle(self) -> None:
        """A page that never ends, one byte at a time: only a deadline on the whole download
        stops a client, since no read waits long."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        try:
            self.wfile.write(b"<html><body><p>")
            while not self.server.stop.wait(0.2):
                self.wfile.write(b"z")
                self.wfile.flush()
        except (ConnectionError, TimeoutError):
            return

    def _big(self, *, declared: bool) -> None:
        """The big page in 64 kB writes; without a length, the connection's end ends the body."""
        body = self.server.big
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if declared:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            for start in range(0, len(body), _CHUNK):
                if self.server.stop.is_set():
                    self.close_connection = True
                    return
                self.wfile.write(body[start:start + _CHUNK])
        except (ConnectionError, TimeoutError):
            self.close_connection = True


@contextlib.contextmanager
def serve_site(pages: int = 20, *, slow_seconds: float = 5.0, busy_failures: int = 1,
               retry_after: int = 1, big_bytes: int = 3_000_000,
               address: str = "127.0.0.1") -> Iterator[Site]:
    """Serve the site on ``address`` (a loopback one: 127.0.0.1, or 127.0.0.2 for a second
    host) and a free port for the ``with`` block; stop it at the block's end, cutting short
    slow and big replies in progress so no test waits on them."""
    if not address.startswith("127."):
        raise ValueError(f"the test site serves on loopback only, not {address}")
    server = _Server(slow_seconds=slow_seconds, busy_failures=busy_failures,
                     retry_after=retry_after, big_bytes=big_bytes, pages=pages,
                     address=address)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="websim", daemon=True)
    thread.start()
    try:
        yield server.site
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
