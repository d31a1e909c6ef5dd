"""What a page declares about itself: headline, author, date and language.

Read from the page's ``<head>`` and markup, never guessed from the body text, in the order a
publisher's own declarations are most reliable (trafilatura's metadata does the same):

``title``   ``og:title``, ``twitter:title``, JSON-LD ``headline``, then ``<title>`` without a
            trailing `` | Site name`` part, then the first ``<h1>``
``author``  ``<meta name=author>``, ``article:author`` (when not a URL), JSON-LD ``author``,
            then the text of a ``rel=author`` link
``date``    ``article:published_time`` and its kin, JSON-LD ``datePublished``, then the first
            ``<time datetime>``
``lang``    the ``lang`` attribute of ``<html>``

:func:`headline_element` finds the element of the body that shows the headline, so that the
cleaner can keep it out of the body text (it is in ``CleanResult.title``).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
from lxml import etree

from ..settings import HEADLINE_OVERLAP, MAX_HEADLINE_WORDS, MAX_JSON_LD_CHARS
from .names import LD_JSON_TYPE
from .subtrees import looked_up

__all__ = ["MAX_HEADLINE_WORDS", "PageMetadata", "declared_types", "headline_element",
           "found_date", "iso_date", "json_ld", "page_elements", "page_metadata",
           "shown_title"]

_WORD = re.compile(r"\w+")
#: `` | Site``, `` - Site``, `` — Site``, `` :: Site`` at the end of a ``<title>``.
_SITE_SUFFIX = re.compile(r"\s+(?:\||-|–|—|::|»|·)\s+[^|–—»·]{1,60}$")
_META_TITLE = ("og:title", "twitter:title")
_META_AUTHOR = ("author", "article:author", "byl", "dc.creator", "parsely-author",
                "sailthru.author")
_META_DESCRIPTION = ("description", "og:description", "twitter:description", "dc.description")
_META_DATE = ("article:published_time", "og:published_time", "datepublished", "pubdate",
              "publishdate", "date", "dc.date", "dc.date.issued", "sailthru.date",
              "parsely-pub-date")


@dataclass(frozen=True)
class PageMetadata:
    """The page's declared headline, author, publication date and language (None if absent)."""

    title: str | None = None
    author: str | None = None
    date: str | None = None
    lang: str | None = None
    #: the ``<title>`` element's text, as the page wrote it (kept by ``--format html``)
    document_title: str | None = None
    #: the site's name (``og:site_name``, ``application-name``, JSON-LD ``publisher``)
    site_name: str | None = None
    #: the page's summary (``<meta name="description">``, ``og:description``)
    description: str | None = None


#: The ``<meta>`` keys that name the site.
_META_SITE = ("og:site_name", "application-name")
#: The ``<meta>`` names and properties read (lower case).
_META_KEYS = frozenset(_META_TITLE + _META_AUTHOR + _META_DATE + _META_SITE + _META_DESCRIPTION)


def _clean(text: str | None) -> str | None:
    # str.split's whitespace is regex \s's (both str.isspace): one C call, no regex.
    return (" ".join(text.split()) or None) if text else None


#: The tags read anywhere in the document, and those read in the body only.
_DOCUMENT_TAGS = ("meta", "script", "title")
_BODY_TAGS = ("h1", "h2", "time", "a")


def page_elements(body: etree._Element, body_elements: Sequence[etree._Element] | None = None,
                  body_tags: Sequence[object] | None = None
                  ) -> dict[str, list[etree._Element]]:
    """The elements of each tag metadata reads, in document order: ``meta``, ``script`` and
    ``title`` of the whole document, ``h1``, ``h2``, ``time`` and ``a`` of the body.

    One walk of the page: each walk of a dragnet page (700 elements) costs about 0.1 ms,
    whatever the tags it looks for, and metadata reads seven. ``body_elements`` and
    ``body_tags``: the body's elements and their tags in document order, when a table of
    them is at hand (:class:`noisecbr.prepare.subtrees.ElementTable`); then only the head is
    walked."""
    root = body.getroottree().getroot()
    found: dict[str, list[etree._Element]] = {tag: [] for tag in _DOCUMENT_TAGS + _BODY_TAGS}
    if body is root:
        parts = [(body, _DOCUMENT_TAGS + _BODY_TAGS)]
    elif body.getparent() is root:  # the body's siblings (the head) in their document order
        parts = [(child, _DOCUMENT_TAGS + _BODY_TAGS if child is body else _DOCUMENT_TAGS)
                 for child in root]
    else:
        parts = [(root, _DOCUMENT_TAGS), (body, _BODY_TAGS)]
    for part, tags in parts:
        if part is body and body_elements is not None:
            # Its elements are listed (the body itself first): pick those of the tags read.
            for k in _positions(list(body_tags)):
                if body_tags[k] in tags:
                    found[body_tags[k]].append(body_elements[k])
            continue
        for element in part.iter(*tags):
            found[element.tag].append(element)
    return found


#: Each tag read, numbered (for the compiled kernel's lookup).
_TAG_NUMBERS = {tag: k for k, tag in enumerate(_DOCUMENT_TAGS + _BODY_TAGS)}


def _positions(tags: list[object]) -> list[int]:
    """The positions of the tags read among ``tags`` (a C loop in the compiled kernel: the
    body of a dragnet page has 700 elements and a few dozen of them are read)."""
    return np.flatnonzero(looked_up(tags, _TAG_NUMBERS, -1) >= 0).tolist()


def _meta(metas: list[etree._Element], keys: Collection[str] = _META_KEYS) -> dict[str, str]:
    """``<meta>`` contents by lower-cased name or property, for ``keys`` (the first non-empty
    of each wins)."""
    found: dict[str, str] = {}
    for meta in metas:
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        if key in keys and key not in found:
            content = _clean(meta.get("content"))
            if content:
                found[key] = content
    return found


def json_ld(scripts: list[etree._Element]) -> list[dict]:
    """The objects of the page's JSON-LD blocks (``@graph`` members included)."""
    objects: list[dict] = []
    for script in scripts:
        if (script.get("type") or "").lower() != LD_JSON_TYPE or not script.text:
            continue
        if len(script.text) > MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = data if isinstance(data, list) else [data]
        for item in stack:
            if isinstance(item, dict):
                objects.append(item)
                graph = item.get("@graph")
                if isinstance(graph, list):
                    objects.extend(g for g in graph if isinstance(g, dict))
    return objects


def declared_types(elements: dict[str, list[etree._Element]], objects: list[dict]
                   ) -> tuple[str | None, list[str]]:
    """What the page says it is: its ``og:type`` (None if absent) and the ``@type`` of each of
    its JSON-LD ``objects`` (:func:`json_ld`)."""
    og_type = _meta(elements["meta"], ("og:type",)).get("og:type")
    types: list[str] = []
    for item in objects:
        value = item.get("@type")
        types.extend(v for v in (value if isinstance(value, list) else [value])
                     if isinstance(v, str))
    return og_type, types


def _ld_value(objects: list[dict], key: str) -> str | None:
    for item in objects:
        value = item.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, dict):
            value = value.get("name")
        if isinstance(value, str) and _clean(value):
            return _clean(value)
    return None


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v), None)


def _first_found(*finders: Callable[[], str | None]) -> str | None:
    """The first truthy value of ``finders``, called in turn: the later ones (searches of the
    whole body) run only for pages that declare nothing earlier."""
    return next((v for finder in finders if (v := finder())), None)


def _heading_text(h1s: list[etree._Element]) -> str | None:
    return _clean("".join(h1s[0].itertext())) if h1s else None


def page_metadata(body: etree._Element,
                  elements: dict[str, list[etree._Element]] | None = None,
                  objects: list[dict] | None = None) -> PageMetadata:
    """The metadata of the page whose tidied ``<body>`` is ``body`` (its head is still in the
    tree: tidying removes invisible elements from the body only); ``elements``: its
    :func:`page_elements`, and ``objects``: its :func:`json_ld` objects, if already found."""
    root = body.getroottree().getroot()
    if elements is None:
        elements = page_elements(body)
    meta = _meta(elements["meta"])
    if objects is None:
        objects = json_ld(elements["script"])
    titles = elements["title"]
    document_title = _clean(titles[0].text if titles else None)
    title = _first_found(
        lambda: _first(*(meta.get(k) for k in _META_TITLE)),
        lambda: _ld_value(objects, "headline"),
        lambda: _SITE_SUFFIX.sub("", document_title) if document_title else None,
        lambda: _heading_text(elements["h1"]))
    author = _first_found(
        lambda: _first(*(v for k in _META_AUTHOR if (v := meta.get(k)) and "://" not in v)),
        lambda: _ld_value(objects, "author"), lambda: _rel_author(elements["a"]))
    date = _first_found(
        lambda: _first(*(meta.get(k) for k in _META_DATE)),
        lambda: _ld_value(objects, "datePublished"), lambda: _ld_value(objects, "dateCreated"),
        lambda: _time_element(elements["time"]))
    site_name = _first_found(lambda: _first(*(meta.get(k) for k in _META_SITE)),
                             lambda: _ld_value(objects, "publisher"))
    description = _first(*(meta.get(k) for k in _META_DESCRIPTION))
    return PageMetadata(title=title, author=author, date=date, site_name=site_name,
                        description=description,
                        lang=_clean(root.get("lang") or root.get("xml:lang")),
                        document_title=document_title)


def _rel_author(links: list[etree._Element]) -> str | None:
    for link in links:
        if link.get("rel") != "author":
            continue
        text = _clean("".join(link.itertext()))
        if text:
            return text
    return None


def _time_element(times: list[etree._Element]) -> str | None:
    for time in times:
        value = _clean(time.get("datetime"))
        if value:
            return value
    return None


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


#: Where a page's ``<h1>`` holds its logo or site name rather than its headline (not
#: ``<header>``: an article's own header holds its headline; skipping it lost 0.024 of
#: wcxb-dev's titles).
_CHROME = frozenset({"nav", "footer", "aside"})


#: A date declared in ISO 8601 (``2025-07-17``, ``2025-07-17T08:00:00Z``): kept as it is.
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def iso_date(declared: str | None) -> str | None:
    """A declared date in ISO 8601: as it is when it already is, else its day (``YYYY-MM-DD``)
    as dateutil reads it (``Jun 12, 2025``), else as declared (a date no parser reads is still
    the page's)."""
    if not declared or _ISO_DATE.match(declared):
        return declared
    from dateutil import parser  # python-dateutil, htmldate's dependency

    try:
        with warnings.catch_warnings():  # a zone name it does not know ("IST"): the day stands
            warnings.simplefilter("ignore")
            return parser.parse(declared).date().isoformat()
    except (ValueError, OverflowError, TypeError):
        return declared


def found_date(root: etree._Element, url: str | None = None) -> str | None:
    """The publication day (``YYYY-MM-DD``) htmldate finds in a page that declares none,
    preferring the original date to the last change: its fast search (the URL, ``<meta>``,
    JSON-LD, ``abbr`` and ``time`` elements, date-like classes, the text's date patterns), then
    where that finds none its extensive search (every element's text), whose finds on the first
    of a month are not taken: htmldate completes a year or a month alone to day 01 (a copyright
    line's "© 2025" is returned as ``2025-01-01``), which cannot be told from a real first (a
    page dated on a first and found only by this search gets no date). None when neither finds
    one, or htmldate fails: a library's failure on one page never fails a clean.

    Calibrated on wcxb-dev's dated truths (``python benchmarks/metadata.py``): the fast search
    alone matched 0.802 of them; the extensive search after it 0.838, but it also dated 63 of
    the 64 undated articles and threads it ran on, 48 of them on a first of the month; without
    those, 0.837, and the undated pages as undated as before (docs/experiments.md). It costs
    23 ms on a page where the fast search found none."""
    from htmldate import find_date

    try:
        # A document of its own (htmldate prunes what it reads; the page's tree stays ours).
        page = etree.tostring(root, encoding="unicode", method="html")
        fast = find_date(page, extensive_search=False, original_date=True, url=url)
        if fast:
            return fast
        found = find_date(page, extensive_search=True, original_date=True, url=url)
    except Exception:  # noqa: BLE001 - see above
        return None
    return None if not found or found.endswith("-01") else found


def shown_title(elements: dict[str, list[etree._Element]], headline: etree._Element | None,
                declared: str | None, site_name: str | None = None) -> str | None:
    """The page's title as a reader sees it: its first ``<h1>`` outside the header, navigation,
    footer and asides that is not the site's name; else the heading that matches the
    ``declared`` title (:func:`headline_element`); else the declared title without a site
    suffix that names the site (``site_name``). On wcxb-dev's 1 157 titles (``python
    benchmarks/metadata.py``) the declared title matched 0.488 of the truths, the matched
    heading 0.578, this 0.737."""
    site = _words(site_name or "")
    for h1 in elements["h1"]:
        text = _clean("".join(h1.itertext()))
        if (not text or len(_WORD.findall(text)) > MAX_HEADLINE_WORDS
                or any(ancestor.tag in _CHROME for ancestor in h1.iterancestors())
                or (site and _words(text) <= site)):
            continue
        return text
    if headline is not None:
        text = _clean("".join(headline.itertext()))
        if text:
            return text
    if declared and site:
        suffix = _SITE_SUFFIX.search(declared)
        if suffix and _words(suffix.group(0)) <= site:
            return declared[: suffix.start()]
    return declared


def headline_element(body: etree._Element, title: str | None,
                     elements: dict[str, list[etree._Element]] | None = None
                     ) -> etree._Element | None:
    """The first ``<h1>`` (else ``<h2>``) of the body whose words are the title's: the headline
    as the page shows it. None when no heading matches. ``elements``: the page's
    :func:`page_elements`, if already found."""
    if not title:
        return None
    wanted = _words(title)
    if not wanted:
        return None
    for tag in ("h1", "h2"):
        for heading in (body.iter(tag) if elements is None else elements[tag]):
            words = _words("".join(heading.itertext()))
            if not words or len(words) > MAX_HEADLINE_WORDS:
                continue
            common = len(words & wanted)
            if (common >= HEADLINE_OVERLAP * len(words)
                    and common >= HEADLINE_OVERLAP * min(len(wanted), len(words) + 3)):
                return heading
    return None
