"""The pages a sitemap or a feed lists, filtered and de-duplicated (needs ``noisecbr[web]``).

Sitemaps are read by ultimate-sitemap-parser (sitemap indexes, gzip sitemaps, text sitemaps),
feeds by feedparser (RSS, Atom); both fetch through a :class:`noisecbr.web.fetch.Fetcher`,
so robots.txt, the per-host delay and the size cap hold for them too. URLs are normalised and
filtered by courlan (its file-extension filter: PDFs, images and archives are not pages).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from noisecbr.prepare.tidy import InputError

from .fetch import Fetched, Fetcher, FetchError

__all__ = ["DiscoveryError", "discover_urls", "is_url", "listed_urls", "page_links",
           "sitemap_urls", "feed_urls", "page_urls", "url_key"]

#: A sitemap may hold 50 MB of XML (sitemaps.org); gzipped ones are read up to this too.
SITEMAP_MAX_BYTES = 50 * 1024 * 1024


class DiscoveryError(FetchError):
    """A sitemap or feed could not be read (fetched, or parsed as one)."""


def is_url(item: str) -> bool:
    """Whether a command-line input is a URL (http or https), not a file."""
    return item[:8].lower().startswith(("http://", "https://"))


def listed_urls(lines: Iterable[str]) -> list[str]:
    """The URLs of a URL list (one per line; blank lines and ``#`` comments skipped)."""
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _missing(error: ImportError) -> ImportError:
    return ImportError(f"reading sitemaps and feeds needs {error.name}: "
                       "pip install 'noisecbr[web]'")


#: What a sitemap's page entries look like, counted (roughly) to stop reading an index's
#: sub-sitemaps once a crawl has pages enough: ``<url>`` of a urlset, RSS ``<item>``, Atom
#: ``<entry>`` (any namespace prefix), or a text sitemap's lines.
_ENTRY = re.compile(rb"<(?:[\w.-]+:)?(?:url|item|entry)[\s>]")
_TEXT_LINE = re.compile(rb"^\s*https?://", re.MULTILINE)


def _entries(body: bytes) -> int:
    """About how many pages a fetched sitemap lists (its body gunzipped, as the parser will)."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError):
            return 0
    return len(_ENTRY.findall(body)) if b"<" in body[:1024] else len(_TEXT_LINE.findall(body))


def _client(fetcher: Fetcher, listed: list[int] | None = None):
    """An ultimate-sitemap-parser web client that fetches with ``fetcher`` (``listed[0]``
    adds up the pages the sitemaps fetched list, when given)."""
    from usp.web_client.abstract_client import (
        AbstractWebClient,
        AbstractWebClientSuccessResponse,
        WebClientErrorResponse,
    )

    class Response(AbstractWebClientSuccessResponse):
        def __init__(self, url: str, status: int, body: bytes, content_type: str | None):
            self._url, self._status, self._body, self._type = url, status, body, content_type

        def status_code(self) -> int:
            return self._status

        def status_message(self) -> str:
            return "OK"

        def header(self, case_insensitive_name: str) -> str | None:
            return self._type if case_insensitive_name.lower() == "content-type" else None

        def raw_data(self) -> bytes:
            return self._body

        def url(self) -> str:
            return self._url

    class Client(AbstractWebClient):
        def set_max_response_data_length(self, max_response_data_length: int | None) -> None:
            pass  # the fetcher's own cap holds

        def get(self, url: str):
            try:
                fetched = fetcher.fetch(url, html_only=False,
                                        max_bytes=max(fetcher.max_bytes, SITEMAP_MAX_BYTES))
            except (FetchError, InputError) as error:
                # Already retried by the fetcher: the parser must not retry again.
                return WebClientErrorResponse(str(error), retryable=False)
            if listed is not None:
                listed[0] += _entries(fetched.body)
            return Response(fetched.final_url, fetched.status, fetched.body,
                            fetched.content_type)

    return Client()


def sitemap_urls(fetcher: Fetcher, url: str,
                 failures: list[tuple[str, str]] | None = None,
                 enough: int | None = None) -> list[str]:
    """The page URLs of the sitemap (or sitemap index, or robots.txt with Sitemap: lines) at
    ``url``, every sub-sitemap followed, or (``enough``) sub-sitemaps until about that many
    pages are listed: an index of thousands of sitemaps is not read whole, a request per
    ``delay``, for the first hundred pages. :class:`DiscoveryError` when the top one cannot be
    read; a sub-sitemap that cannot be read is appended to ``failures`` (its URL, why)."""
    try:
        from usp.exceptions import SitemapException
        from usp.fetch_parse import SitemapFetcher
        from usp.objects.sitemap import InvalidSitemap
    except ImportError as error:
        raise _missing(error) from error
    import logging

    logging.getLogger("usp").setLevel(logging.CRITICAL)  # its failures are reported here
    listed = [0] if enough is not None else None  # counted only to stop at ``enough``

    def more(sub_sitemap: str, level: int, parents: set[str]) -> bool:
        return listed is None or listed[0] < enough

    try:
        tree = SitemapFetcher(url, 0, _client(fetcher, listed), recurse_callback=more).sitemap()
    except SitemapException as error:  # a URL it refuses before fetching
        raise DiscoveryError(f"sitemap {url}: {error}") from None
    if isinstance(tree, InvalidSitemap):
        raise DiscoveryError(f"sitemap {url}: {tree.reason}")
    if failures is not None:
        failures += [(sitemap.url, f"sitemap: {sitemap.reason}")
                     for sitemap in tree.all_sitemaps() if isinstance(sitemap, InvalidSitemap)]
    return [page.url for page in tree.all_pages()]


def feed_urls(fetcher: Fetcher, url: str) -> list[str]:
    """The entries' links of the RSS or Atom feed at ``url``."""
    try:
        import feedparser
    except ImportError as error:
        raise _missing(error) from error
    fetched = fetcher.fetch(url, html_only=False)
    feed = feedparser.parse(fetched.body, response_headers={
        "content-location": fetched.final_url,
        **({"content-type": fetched.content_type} if fetched.content_type else {})})
    if not feed.entries and feed.bozo:
        raise DiscoveryError(f"feed {url}: not an RSS or Atom feed "
                             f"({type(feed.bozo_exception).__name__})")
    links = []
    for entry in feed.entries:
        link = entry.get("link") or next((item.get("href") for item in entry.get("links", [])
                                          if item.get("href")), None)
        if link:
            links.append(link)
    return links


def page_links(fetched: Fetched) -> list[str]:
    """The links a fetched page's ``<a href>`` make to http(s) pages, absolute (against its
    ``<base href>``, else the URL it came from), without fragments, in page order; none when
    the page asks robots not to follow its links (``<meta name="robots" content="nofollow">``),
    and none of those marked ``rel="nofollow"``."""
    from urllib.parse import urldefrag, urljoin, urlsplit

    from lxml import etree, html

    try:
        page = html.document_fromstring(fetched.payload)
    except (etree.ParserError, ValueError):  # nothing to parse, or a str declaring an encoding
        try:
            page = html.document_fromstring(fetched.body)
        except (etree.ParserError, ValueError):
            return []
    for meta in page.iter("meta"):
        if ((meta.get("name") or "").strip().lower() in ("robots", "googlebot")
                and "nofollow" in (meta.get("content") or "").lower()):
            return []
    base = fetched.final_url
    for element in page.iter("base"):
        if element.get("href"):
            try:
                base = urljoin(base, element.get("href").strip())
            except ValueError:  # a malformed <base>: the page's own URL stands
                pass
            break
    links = []
    for anchor in page.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or "nofollow" in (anchor.get("rel") or "").lower():
            continue
        try:
            link = urldefrag(urljoin(base, href))[0]
            scheme = urlsplit(link).scheme.lower()
        except ValueError:  # a malformed URL (an IPv6 host cut short): not a link
            continue
        if scheme in ("http", "https"):
            links.append(link)
    return links


def url_key(url: str) -> str:
    """A URL as it is compared for duplicates: normalised by courlan (lower-case host, default
    port dropped, query parameters sorted, fragment dropped)."""
    from urllib.parse import urldefrag

    try:
        from courlan import normalize_url
    except ImportError as error:
        raise _missing(error) from error

    bare = urldefrag(url.strip())[0]
    try:
        return normalize_url(bare, strict=False)
    except ValueError:
        return bare


def page_urls(urls: Iterable[str], *, seen: set[str] | None = None,
              max_pages: int | None = None, filter_files: bool = True) -> Iterator[str]:
    """``urls`` without duplicates (by :func:`url_key`; those in ``seen`` too, and each one
    yielded is added to it), without links to files that are not pages (courlan's extension
    filter, with ``filter_files``), at most ``max_pages`` of them."""
    try:
        from courlan.filters import extension_filter
    except ImportError as error:
        raise _missing(error) from error

    seen = set() if seen is None else seen
    count = 0
    for url in urls:
        if max_pages is not None and count >= max_pages:
            return
        key = url_key(url)
        if key in seen or (filter_files and not extension_filter(key)):
            continue
        seen.add(key)
        count += 1
        yield url.strip()


def discover_urls(fetcher: Fetcher, given: Sequence[str] = (), *, sitemaps: Sequence[str] = (),
                  feeds: Sequence[str] = (), max_pages: int | None = None,
                  failures: list[tuple[str, str]] | None = None,
                  say: Callable[[str], None] | None = None) -> list[str]:
    """Every URL to fetch, in order, without duplicates: ``given`` as they are, then the pages
    of each sitemap and feed (links to files that are not pages dropped); at most
    ``max_pages``. A sitemap or feed that cannot be read is appended to ``failures`` (source,
    why) when it is given, else raised; ``say`` hears how many URLs each one listed."""
    found: list[str] = []
    def sitemap(fetcher: Fetcher, url: str) -> list[str]:
        return sitemap_urls(fetcher, url, failures, max_pages)

    for kind, sources, read in (("sitemap", sitemaps, sitemap), ("feed", feeds, feed_urls)):
        for source in sources:
            try:
                listed = read(fetcher, source)
            except (FetchError, InputError) as error:
                if failures is None:
                    raise
                failures.append((source, str(error)))
                continue
            if say is not None:
                say(f"{kind} {source}: {len(listed)} URLs")
            found += listed
    urls = list(page_urls(given, filter_files=False))
    seen = {url_key(url) for url in urls}
    urls += page_urls(found, seen=seen)
    return urls[:max_pages] if max_pages is not None else urls
