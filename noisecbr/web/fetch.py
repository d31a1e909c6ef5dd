"""One page from the web, politely: what ``noisecbr.fetch_and_clean`` and ``noisecbr clean URL``
download, and what a crawl (:mod:`noisecbr_apps.web`) fetches each page with.

A :class:`Fetcher` is an HTTP client (httpx) with what a crawler owes a site and itself:

- robots.txt obeyed (protego), read once per host, as RFC 9309 says: a 4xx robots.txt allows
  everything; a 5xx (or 429) after the retries, or an unreachable one, forbids everything for
  the run, and the host's pages fail saying so; a Crawl-delay over a minute fails them too;
- one request at a time per host, ``delay`` seconds apart (or the host's Crawl-delay, if longer);
- redirects followed one hop at a time (each hop's robots.txt asked) and recorded;
- the size cap enforced while the body arrives (a declared Content-Length over it is refused
  before any of the body is read; a body that grows over it is cut off and refused);
- a timeout per read and one for the whole download (a server that trickles bytes forever);
- 429 and 5xx retried with exponential back-off, their Retry-After honoured up to a bound;
- the charset of the Content-Type honoured over the page's own ``<meta charset>``, as a browser
  does (:func:`noisecbr.prepare.decode.http_decoded`).

httpx and protego are imported when a Fetcher is made: cleaning files never loads them.
"""

from __future__ import annotations

import email.utils
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from ..errors import InputTooLargeError, NoisecbrError, NotHTMLError
from ..prepare.decode import http_decoded
from ..prepare.limits import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from ..result import CleanResult

__all__ = ["Fetched", "Fetcher", "FetchError", "RobotsDeniedError", "FetchTimeoutError",
           "DEFAULT_USER_AGENT", "HTML_TYPES", "fetch_and_clean"]

DEFAULT_USER_AGENT = "noisecbr/0.1 (+https://pypi.org/project/noisecbr/)"
#: Content types that are pages (a response without one is let through, and sniffed when
#: cleaned).
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Seconds to wait for a connection or for the next bytes of a response.
DEFAULT_TIMEOUT = 10.0
#: The whole download may take this many read timeouts: a server that sends a byte every few
#: seconds never trips the read timeout, and is cut off here.
DOWNLOAD_TIMEOUTS = 3
#: Seconds between two requests to one host: trafilatura's and wget's polite crawls wait
#: seconds between pages; one second keeps a crawl of a small site in minutes.
DEFAULT_DELAY = 1.0
#: Attempts after the first on 429 and 5xx, and their back-off (seconds, doubled each time).
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 1.0
#: A Retry-After longer than this is not waited for: the page fails, and the crawl goes on.
MAX_RETRY_AFTER = 120.0
#: A robots.txt Crawl-delay longer than this is not waited for: the host's pages fail, named,
#: rather than hold a crawl for hours (``Crawl-delay: 86400`` is seen in the wild).
MAX_CRAWL_DELAY = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_REDIRECTS = 10
#: Google reads the first 500 KiB of a robots.txt; a longer one is cut there (RFC 9309 2.5).
ROBOTS_MAX_BYTES = 500 * 1024
_DIGITS = re.compile(r"[0-9]+")  # str.isdigit() takes "²" too


class FetchError(NoisecbrError):
    """A page could not be fetched: a network failure, an HTTP error status, a timeout, or
    robots.txt forbids it. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RobotsDeniedError(FetchError):
    """The site's robots.txt forbids the URL to this user agent (it was not requested)."""


class FetchTimeoutError(FetchError):
    """The server did not answer, or not all of the page, in time."""


@dataclass(frozen=True)
class Fetched:
    """A downloaded page: the URL asked for, the one the body came from after redirects (each
    hop in ``redirects``), the status, content type and charset of the response, and its body."""

    url: str
    final_url: str
    status: int
    content_type: str | None
    charset: str | None
    body: bytes
    redirects: tuple[str, ...] = ()

    @property
    def payload(self) -> str | bytes:
        """What to clean: the body decoded with the response's charset, or the bytes (for the
        cleaner to decode by the page's own declaration) when it names none or a wrong one."""
        return http_decoded(self.body, self.charset)


@dataclass
class _Host:
    """What the Fetcher knows of one origin (scheme, host, port: what a robots.txt covers)."""

    robots_lock: threading.Lock = field(default_factory=threading.Lock)  # its robots.txt read
    robots: object | None = None  # protego.Protego, ALLOW or _Unreachable below


@dataclass
class _Turn:
    """One server's turn to be asked, and when it is next due: by host name, so that http://a
    and https://a (a redirect from one to the other, a sitemap mixing both) wait for each
    other."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    next_time: float = 0.0


_ALLOW_ALL = "allow"


@dataclass(frozen=True)
class _Unreachable:
    """A robots.txt that could not be read: RFC 9309 2.3.1.4 says to fetch nothing from the
    host; its pages fail with ``why`` (the site may be down), named like any failure."""

    why: str


class Fetcher:
    """A polite HTTP client for pages (see the module's docstring). Thread-safe: threads that
    fetch from one host take turns; threads on different hosts do not wait for each other."""

    def __init__(self, *, user_agent: str = DEFAULT_USER_AGENT,
                 timeout: float = DEFAULT_TIMEOUT, max_bytes: int = DEFAULT_MAX_BYTES,
                 delay: float = DEFAULT_DELAY, retries: int = DEFAULT_RETRIES,
                 backoff: float = DEFAULT_BACKOFF, robots: bool = True,
                 max_retry_after: float = MAX_RETRY_AFTER, transport: object | None = None
                 ) -> None:
        import httpx

        self.user_agent, self.timeout, self.max_bytes = user_agent, timeout, max_bytes
        self.delay, self.retries, self.backoff = delay, retries, backoff
        self.obey_robots, self.max_retry_after = robots, max_retry_after
        self._client = httpx.Client(headers={"User-Agent": user_agent},
                                    timeout=httpx.Timeout(timeout), follow_redirects=False,
                                    transport=transport)
        self._hosts: dict[str, _Host] = {}
        self._turns: dict[str, _Turn] = {}
        self._hosts_lock = threading.Lock()

    # -- the public calls -----------------------------------------------------------------------
    def fetch(self, url: str, *, html_only: bool = True, max_bytes: int | None = None
              ) -> Fetched:
        """Download ``url``, following redirects. Raises :class:`RobotsDeniedError`,
        :class:`FetchTimeoutError`, :class:`FetchError` (an error status after the retries, a
        network failure, a bad URL, too many redirects, a robots.txt that could not be read),
        :class:`NotHTMLError` for a response of another content type (``html_only``),
        :class:`InputTooLargeError` over the cap (the Fetcher's, or ``max_bytes``)."""
        chain: list[str] = []
        current = _checked_url(url)
        for _ in range(MAX_REDIRECTS + 1):
            self._check_robots(current)
            status, headers, body = self._get(current, max_bytes or self.max_bytes, html_only)
            if status in (301, 302, 303, 307, 308) and "location" in headers:
                chain.append(current)
                current = _redirected(current, headers["location"])
                continue
            if not 200 <= status < 300:
                raise FetchError(f"HTTP {status} from {current}", status)
            content_type, charset = _content_type(headers.get("content-type"))
            return Fetched(url, current, status, content_type, charset, body, tuple(chain))
        raise FetchError(f"more than {MAX_REDIRECTS} redirects from {url}")

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets this user agent fetch ``url`` (always, with robots=False;
        never when the host's robots.txt could not be read)."""
        if not self.obey_robots:
            return True
        robots = self._robots(_checked_url(url))
        if robots == _ALLOW_ALL or isinstance(robots, _Unreachable):
            return robots == _ALLOW_ALL
        return robots.can_fetch(url, self.user_agent)

    def close(self) -> None:
        """Close the HTTP client's connections (also on leaving a ``with`` block)."""
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the parts --------------------------------------------------------------------------
    def _check_robots(self, url: str) -> None:
        """Raise unless robots.txt lets this user agent fetch ``url`` now: a
        :class:`RobotsDeniedError` when its rules forbid it, a :class:`FetchError` when it
        could not be read or asks for a delay over :data:`MAX_CRAWL_DELAY`."""
        if not self.obey_robots:
            return
        robots = self._robots(url)
        if isinstance(robots, _Unreachable):
            raise FetchError(f"robots.txt of {_origin(url)} could not be read ({robots.why}): "
                             "nothing is fetched from the host (RFC 9309)")
        if not self.allowed(url):
            raise RobotsDeniedError(f"robots.txt of {_origin(url)} forbids {url}")
        asked = self._declared_delay(robots)
        if asked > MAX_CRAWL_DELAY:
            raise FetchError(f"robots.txt of {_origin(url)} asks {asked:g} s between requests, "
                             f"over the {MAX_CRAWL_DELAY:g} s this crawler waits: not fetched")

    def _robots(self, url: str) -> object:
        """The robots rules of ``url``'s host, read once."""
        host = self._host(url)
        with host.robots_lock:
            if host.robots is None:
                host.robots = self._read_robots(url)
        return host.robots

    def _host(self, url: str) -> _Host:
        key = _origin(url)
        with self._hosts_lock:
            return self._hosts.setdefault(key, _Host())

    def _turn(self, url: str) -> _Turn:
        key = (urlsplit(url).hostname or "").lower()
        with self._hosts_lock:
            return self._turns.setdefault(key, _Turn())

    def _read_robots(self, url: str) -> object:
        """The robots rules of ``url``'s host (RFC 9309 2.3.1: 4xx allows all; 5xx or no answer
        forbids all)."""
        from protego import Protego

        where = _origin(url) + "/robots.txt"
        try:
            for _ in range(5):  # RFC 9309 2.3.1.2: at least five redirects
                # Retried as a page is (a 503 often passes), its Retry-After honoured.
                status, headers, body = self._get(where, ROBOTS_MAX_BYTES, False, truncate=True)
                if status in (301, 302, 303, 307, 308) and "location" in headers:
                    where = _redirected(where, headers["location"])
                    continue
                break
        except FetchError as error:
            return _Unreachable(str(error))
        if 400 <= status < 500 and status != 429:  # 429: too busy to answer, as a 5xx
            return _ALLOW_ALL
        if not 200 <= status < 300:
            return _Unreachable(f"HTTP {status}")
        # utf-8-sig: a byte-order mark would otherwise glue itself to the first rule's name.
        return Protego.parse(body.decode("utf-8-sig", errors="replace"))

    def _declared_delay(self, robots: object) -> float:
        """The Crawl-delay robots.txt asks of this user agent (0 when none)."""
        if robots is None or robots == _ALLOW_ALL or isinstance(robots, _Unreachable):
            return 0.0
        return float(robots.crawl_delay(self.user_agent) or 0.0)

    def _crawl_delay(self, host: _Host) -> float:
        return max(self.delay, min(self._declared_delay(host.robots), MAX_CRAWL_DELAY))

    def _get(self, url: str, limit: int, html_only: bool, truncate: bool = False
             ) -> tuple[int, dict, bytes]:
        """One request with the retries of 429 and 5xx."""
        for attempt in range(self.retries + 1):
            status, headers, body = self._request(url, limit, html_only=html_only,
                                                  truncate=truncate)
            if status not in RETRY_STATUSES or attempt == self.retries:
                return status, headers, body
            wait = _retry_after(headers.get("retry-after"))
            if wait is None:
                wait = self.backoff * 2 ** attempt
            elif wait > self.max_retry_after:
                raise FetchError(f"HTTP {status} from {url}, to retry after {wait:.0f} s "
                                 f"(longer than {self.max_retry_after:.0f} s)", status)
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _request(self, url: str, limit: int, *, html_only: bool = False,
                 truncate: bool = False) -> tuple[int, dict, bytes]:
        """One GET in the host's turn: status, headers (lower-case names) and the body (none for
        a redirect or an error status), the body cut at ``limit`` (``truncate``) or refused."""
        import httpx

        host, turn = self._host(url), self._turn(url)
        with turn.lock:  # one request at a time per host, delay apart
            wait = turn.next_time - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                return self._download(url, limit, html_only, truncate)
            except httpx.TimeoutException as error:
                raise FetchTimeoutError(f"timed out fetching {url} ({self.timeout:g} s "
                                        f"without an answer)") from error
            except (httpx.HTTPError, httpx.InvalidURL) as error:  # InvalidURL: no HTTPError
                raise FetchError(f"cannot fetch {url}: {type(error).__name__}: "
                                 f"{error or 'connection failed'}") from error
            finally:
                turn.next_time = time.monotonic() + self._crawl_delay(host)

    def _download(self, url: str, limit: int, html_only: bool, truncate: bool
                  ) -> tuple[int, dict, bytes]:
        deadline = time.monotonic() + self.timeout * DOWNLOAD_TIMEOUTS
        with self._client.stream("GET", url) as response:
            headers = {name.lower(): value for name, value in response.headers.items()}
            status = response.status_code
            if not 200 <= status < 300:
                return status, headers, b""
            content_type, _ = _content_type(headers.get("content-type"))
            if html_only and content_type is not None and content_type not in HTML_TYPES:
                raise NotHTMLError(f"{url} is {content_type}, not an HTML page")
            declared = headers.get("content-length", "")
            if _DIGITS.fullmatch(declared) and int(declared) > limit and not truncate:
                raise InputTooLargeError(f"{url} is {int(declared)} bytes, over the limit of "
                                         f"{limit} (--max-bytes)")
            parts, size = [], 0
            # Decompressed as it arrives: the cap holds for a gzip bomb too. Each network read's
            # bytes as they come (no chunk size: httpx would wait to fill one), so that the
            # deadline is checked at every read, however few bytes a server trickles.
            for part in response.iter_bytes():
                parts.append(part)
                size += len(part)
                if size > limit:
                    if truncate:
                        break
                    raise InputTooLargeError(f"{url} grew over the limit of {limit} bytes "
                                             "while downloading (--max-bytes)")
                if time.monotonic() > deadline:
                    raise FetchTimeoutError(f"timed out downloading {url} (more than "
                                            f"{self.timeout * DOWNLOAD_TIMEOUTS:g} s)")
            return status, headers, b"".join(parts)[:limit]


def _checked_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL; a :class:`FetchError` that says why if not."""
    try:
        parts = urlsplit(url.strip())
        hostname = parts.hostname
    except ValueError as error:  # "http://[::1/x": a bracket not closed, a bad port
        raise FetchError(f"not a valid URL: {url!r} ({error})") from None
    if parts.scheme.lower() not in ("http", "https") or not hostname:
        raise FetchError(f"not an http(s) URL: {url!r}")
    return url.strip()


def _redirected(url: str, location: str) -> str:
    """Where a redirect from ``url`` leads: its Location made absolute, checked."""
    try:
        return _checked_url(urljoin(url, location))
    except ValueError as error:
        raise FetchError(f"a redirect from {url} to a malformed URL: {location!r}") from error


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _content_type(value: str | None) -> tuple[str | None, str | None]:
    """The media type and the charset parameter of a Content-Type header."""
    if not value:
        return None, None
    media, _, parameters = value.partition(";")
    charset = None
    for parameter in parameters.split(";"):
        name, _, argument = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = argument.strip().strip("\"'") or None
    return media.strip().lower() or None, charset


def _retry_after(value: str | None) -> float | None:
    """The seconds a Retry-After asks for (a number, or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def fetch_and_clean(url: str, *, fetcher: Fetcher | None = None,
                    user_agent: str = DEFAULT_USER_AGENT, timeout: float = DEFAULT_TIMEOUT,
                    robots: bool = True, **options: object) -> CleanResult:
    """Download ``url`` (robots.txt obeyed, redirects followed, the size cap held while it
    downloads: :class:`Fetcher`) and clean it as :func:`noisecbr.clean` does, with the URL the
    page came from after redirects; ``options`` are :func:`noisecbr.clean`'s. ``fetcher``: one
    to reuse (its politeness, robots rules and connections carry over between calls).

    Raises :class:`FetchError` (:class:`RobotsDeniedError`, :class:`FetchTimeoutError`) when the
    page cannot be fetched, and :func:`noisecbr.clean`'s input errors, :class:`NotHTMLError`
    and :class:`InputTooLargeError` included."""
    from ..cleaner import clean

    own = fetcher is None
    if own:
        limit = options.get("max_bytes") or DEFAULT_MAX_BYTES
        fetcher = Fetcher(user_agent=user_agent, timeout=timeout, max_bytes=int(limit),
                          robots=robots, delay=0.0)
    try:
        fetched = fetcher.fetch(url)
    finally:
        if own:
            fetcher.close()
    return clean(fetched.payload, url=fetched.final_url, **options)
