"""Reading datasets in the article-extraction layout: ``html/<id>.html.gz`` + ``ground-truth.json``.

Pages are yielded one at a time (the HTML is read when the page is reached), so a dataset of any
size is read in bounded memory. A page's *site* is the ``site`` its ground truth names, where a
set gives one (fundus's publisher; utomo-big9's nine publishers, whose archived pages have no URL
and whose links point to the archive), else the host of its ``url``; a page without either takes
the site its HTML names (:func:`site_in_html`), else it is its own site.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from ..errors import InputError
from ..prepare.limits import DEFAULT_MAX_BYTES, read_file_limited, reading_problem

__all__ = ["COMMENTS_MARKER", "LabelledPage", "site_host", "site_of", "split_truth", "read_dataset",
           "dataset_size", "repair_truth", "site_in_html"]

#: The line before a reader-comment thread in a ground truth (dragnet: ``!@#$%^&*()  COMMENTS``
#: in 398 truths, with typos of the punctuation in 23 more: a character missing, doubled or
#: swapped, ``!@ $%^&*()`` with a space for ``#`` in 4; one truth ends at its marker). The
#: line may end in ``\r``: the 5 truths stored as UTF-16 (:func:`repair_truth`) have Windows
#: line ends, and ``$`` matches only before ``\n``, so before this allowed ``\r`` their
#: threads were scored as article text.
COMMENTS_MARKER = re.compile(
    r"^[ \t]*[!@#$%^&*()][!@#$%^&*() ]{4,}[!@#$%^&*()][ \t]*COMMENTS[ \t\r]*$", re.MULTILINE)

#: A UTF-16 byte-order mark read as Latin-1 (little- and big-endian): how a ground truth that
#: was stored as UTF-16 bytes but decoded one byte per character begins (5 of dragnet's pages).
_UTF16_AS_LATIN1 = ("\xff\xfe", "\xfe\xff")


def split_truth(truth: str) -> tuple[str, str]:
    """(article, comments): a ground truth split at its comments marker line ("" when none).

    >>> split_truth("Title\\n\\nBody.\\n\\n!@#$%^&*()  COMMENTS\\n\\nNice post!")
    ('Title\\n\\nBody.\\n\\n', '\\n\\nNice post!')
    >>> split_truth("No comments here.")
    ('No comments here.', '')
    """
    found = COMMENTS_MARKER.search(truth)
    if found is None:
        return truth, ""
    return truth[:found.start()], truth[found.end():]


@dataclass(frozen=True)
class LabelledPage:
    """A page of a dataset in the article-extraction layout, with its ground-truth main content."""

    id: str
    url: str
    site: str
    html: bytes
    truth: str  # articleBody: the main content as text
    dataset: str
    page_type: str = ""  # the ground truth's page_type (article, forum, product…), if it has one
    lang: str = ""  # the page's language, when a reader asked for it (noisecbr_apps.bench)


def site_of(url: str | None, fallback: str) -> str:
    """The host of ``url`` without ``www.``; ``fallback`` (unique per page) when there is none."""
    host = urlsplit(url).hostname if url else None
    if not host:
        return f"page:{fallback}"
    return host[4:] if host.startswith("www.") else host


def site_host(url_or_host: str) -> str:
    """A site's name: the host of a URL (or a bare host), lower case, without ``www.``; ValueError
    when it names no host.

    >>> site_host("https://www.Harbour-Gazette.test/x"), site_host("example.org")
    ('harbour-gazette.test', 'example.org')
    """
    text = url_or_host.strip()
    if "://" not in text:
        text = "http://" + text
    host = site_of(text, "")
    if host.startswith("page:"):
        raise ValueError(f"{url_or_host!r} names no site")
    return host.lower()


def site_in_html(html: bytes | str) -> str | None:
    """The site a page without a URL names in its HTML: the host of its canonical link or
    ``og:url``, else the host most of its absolute links point to (a blog links its own posts
    and archive); None when it names none.

    In dragnet, 373 of 1 381 pages have no URL; they come from about 145 sites (20 pages of
    one blog, 15 of another). As sites of their own, a blog's pages fell on both sides of a
    site-grouped split and its template was learnt from the very site being tested.

    >>> site_in_html(b'<link rel="canonical" href="https://www.blog.example/p/1"><a href="/x">')
    'blog.example'
    >>> site_in_html(b'<a href="http://a.test/1">1</a><a href="http://a.test/2">2</a>'
    ...              b'<a href="https://twitter.com/a">t</a>')
    'a.test'
    """
    try:
        root = lxml.html.fromstring(html)
    except (etree.ParserError, ValueError):  # empty or not a document
        return None
    named = [element.get("href") if element.tag == "link" else element.get("content")
             for element in root.iter("link", "meta")
             if (element.get("rel") or "").strip().lower() == "canonical"
             or (element.get("property") or "").strip().lower() == "og:url"]
    linked = [href for href in root.xpath("//a/@href")
              if href.lstrip()[:8].lower().startswith(("http://", "https://"))]
    declared = _hosts(named)
    if declared:
        return declared[0]
    hosts = _hosts(linked)
    return Counter(hosts).most_common(1)[0][0] if hosts else None


def _hosts(urls: list[str | None]) -> list[str]:
    """The site names (:func:`site_host`) of the absolute URLs that name a host, in order."""
    out = []
    for url in urls:
        if "://" not in (url or ""):  # a relative link names no site
            continue
        try:
            out.append(site_host(url))
        except ValueError:  # no host, or a malformed URL (an unclosed IPv6 bracket…)
            continue
    return out


def repair_truth(text: str) -> str:
    """The ground truth as it was written: a UTF-16 text whose bytes were decoded as Latin-1
    (a BOM read as ``ÿþ``, then a NUL beside every ASCII letter) is decoded again as UTF-16;
    any other text is returned as it is. Such a truth shares no word with any extractor's
    output, so it scored every extractor 0 on the page and labelled all its subtrees noise.

    >>> repair_truth("\\xff\\xfeH\\x00i\\x00")
    'Hi'
    >>> repair_truth("Plain text")
    'Plain text'
    """
    if not text.startswith(_UTF16_AS_LATIN1) or "\x00" not in text:
        return text
    try:
        return text.encode("latin-1").decode("utf-16")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text  # not UTF-16 read as Latin-1 after all: left as written


def _ground_truth(directory: Path) -> dict:
    path = directory / "ground-truth.json"
    if not path.is_file():
        raise FileNotFoundError(f"{directory} has no ground-truth.json: not a dataset directory")
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def dataset_size(directory: str | Path) -> int:
    """How many pages the dataset in ``directory`` holds (its ground truth's entries)."""
    return len(_ground_truth(Path(directory)))


def read_dataset(directory: str | Path, ids: set[str] | None = None, *,
                 on_unreadable: Callable[[str, str], None] | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[LabelledPage]:
    """Yield the dataset's pages in id order (only ``ids`` if given). A page file that cannot
    be read (damaged gzip, over ``max_bytes``: :func:`noisecbr.prepare.limits.read_file_limited`) is
    skipped and told to ``on_unreadable(page id, problem)``, by default as a warning."""
    directory = Path(directory)
    truth = _ground_truth(directory)
    for page_id in sorted(truth):
        if ids is not None and page_id not in ids:
            continue
        record = truth[page_id]
        html_path = directory / "html" / f"{page_id}.html.gz"
        if not html_path.is_file():
            html_path = directory / "html" / f"{page_id}.html"
            if not html_path.is_file():
                warnings.warn(f"{directory.name}/{page_id}: ground truth without html file, "
                              "page skipped", stacklevel=2)
                continue
        try:
            data = read_file_limited(html_path, max_bytes)
        except (InputError, OSError) as error:
            problem = reading_problem(error)
            if on_unreadable is None:
                warnings.warn(f"{directory.name}/{page_id}: {problem}, page skipped",
                              stacklevel=2)
            else:
                on_unreadable(page_id, problem)
            continue
        url = record.get("url") or ""
        # A host names its site whatever its case (wcxb-dev: "forums.FreeBSD.org").
        site = str(record.get("site") or "").lower() or site_of(url, f"{directory.name}/{page_id}")
        if site.startswith("page:"):
            site = site_in_html(data) or site
        yield LabelledPage(
            id=page_id,
            url=url,
            site=site,
            html=data,
            truth=repair_truth(record.get("articleBody") or ""),
            dataset=directory.name,
            page_type=str(record.get("page_type") or ""),
        )
