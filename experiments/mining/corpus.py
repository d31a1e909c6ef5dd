"""The two labelled multi-site page sets of the mining evaluation (issue 18).

* **modernweb-dev by page type**: every page with a ``page_type`` of a class with at least
  :data:`MIN_CLASS_PAGES` pages; the classification folds group pages by site (url host).
* **dragnet by URL section**: news and blog pages whose URL names one topic section
  (``/sports/``, ``world.`` …, :data:`SECTION_TOPICS`); topics with at least
  :data:`MIN_CLASS_PAGES` pages on at least :data:`MIN_TOPIC_PUBLISHERS` publishers are kept.
  Folds group by *publisher* (the registrable domain), because a publisher's blogs live on
  several hosts (``well.blogs.nytimes.com``, ``economix.blogs.nytimes.com``) that share one
  template: grouping them by host would let a classifier learn the template of a test site.

Site-level methods and the site memory see every page of a page's host in the whole set
(``site_pages``), not only the labelled ones: on dragnet a host's unlabelled pages still show
its template.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from noisecbr.eval.datasets import LabelledPage, read_dataset

__all__ = ["MIN_CLASS_PAGES", "MIN_TOPIC_PUBLISHERS", "SECTION_TOPICS", "Corpus",
           "dragnet_corpus", "modernweb_corpus", "page_key", "publisher", "topic_of"]

#: A class needs this many pages to be kept: with 5 site-grouped folds a smaller class has
#: at most one or two test pages per fold (modernweb-dev's ``blog`` has 2 pages and is dropped).
MIN_CLASS_PAGES = 10

#: A dragnet topic must come from this many publishers, so that site-grouped folds can train
#: on one publisher's pages of the topic and test on another's.
MIN_TOPIC_PUBLISHERS = 3

#: URL path sections and host labels → topic. Written by reading every section name that occurs
#: in dragnet's urls (segments before the slug and host labels before the domain); only names
#: that say a topic unambiguously are listed (``blog``, ``news``, ``story`` … say none).
SECTION_TOPICS: dict[str, str] = {
    **dict.fromkeys(("world", "worldnews", "europe", "asia", "middleeast", "asia_pacific",
                     "international", "worldviews", "global-filipino"), "world"),
    **dict.fromkeys(("sports", "sport", "football", "nfl", "olympics", "ice"), "sports"),
    **dict.fromkeys(("technology", "tech", "personaltech", "internet", "mobile",
                     "mobile-technology", "gadgetwise", "hardware", "tech-policy", "gadgets",
                     "android-blog"), "technology"),
    **dict.fromkeys(("business", "economix", "bottomline", "marketforceslive", "money"),
                    "business"),
    **dict.fromkeys(("entertainment", "filmdrunk", "new-york-city-theater", "theclicker",
                     "albums", "books", "movies", "music"), "entertainment"),
    **dict.fromkeys(("health", "well", "vitals", "health-aids", "bodyodd"), "health"),
    **dict.fromkeys(("politics", "thecaucus", "firstread", "fivethirtyeight",
                     "national-security"), "politics"),
    **dict.fromkeys(("science", "wiredscience", "badastronomy", "environment"), "science"),
    **dict.fromkeys(("recipes", "everydayfoodblog"), "food"),
}

#: Second-level labels under a country code that are not the registrant's name (co.uk, com.au).
_GENERIC_SLD = frozenset(("co", "com", "org", "net", "ac", "gov", "edu"))


def page_key(page: LabelledPage) -> str:
    """``dataset/id``: unique over sets."""
    return f"{page.dataset}/{page.id}"


def publisher(site: str) -> str:
    """The registrable domain of a host, approximately: ``well.blogs.nytimes.com`` →
    ``nytimes.com``, ``guardian.co.uk`` → ``guardian.co.uk``."""
    labels = site.split(".")
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _GENERIC_SLD:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def topic_of(url: str) -> str | None:
    """The one topic the URL's sections name, or None (no section, or two topics)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    names = [s.lower() for s in parts.path.split("/") if s][:-1] + host.split(".")[:-2]
    topics = {SECTION_TOPICS[name] for name in names if name in SECTION_TOPICS}
    return topics.pop() if len(topics) == 1 else None


@dataclass
class Corpus:
    """Labelled pages of one set, with what the methods need to know about their sites."""

    name: str
    pages: list[LabelledPage]  # the labelled pages, in set order
    labels: list[str]  # class of each page
    groups: list[str]  # fold group of each page (site or publisher)
    site_pages: dict[str, list[LabelledPage]]  # host → every page of the host in the set
    extra: list[LabelledPage] = field(default_factory=list)  # unlabelled pages (training only)
    notes: list[str] = field(default_factory=list)  # how the set was built, for the report

    @property
    def classes(self) -> list[str]:
        """Class names, sorted."""
        return sorted(set(self.labels))

    def multi_page(self, min_pages: int = 2) -> list[bool]:
        """Whether each page's host has at least ``min_pages`` pages in the set."""
        return [len(self.site_pages[p.site]) >= min_pages for p in self.pages]


def _by_site(pages: Iterable[LabelledPage]) -> dict[str, list[LabelledPage]]:
    sites: dict[str, list[LabelledPage]] = defaultdict(list)
    for page in pages:
        sites[page.site].append(page)
    return dict(sites)


def _keep_classes(labelled: Sequence[tuple[LabelledPage, str]], min_pages: int,
                  min_groups: int, group_of) -> tuple[list[tuple[LabelledPage, str]], Counter]:
    counts = Counter(label for _, label in labelled)
    groups: dict[str, set[str]] = defaultdict(set)
    for page, label in labelled:
        groups[label].add(group_of(page))
    kept = {c for c, n in counts.items() if n >= min_pages and len(groups[c]) >= min_groups}
    return [(p, c) for p, c in labelled if c in kept], counts


def modernweb_corpus(directory: str | Path, min_pages: int = MIN_CLASS_PAGES) -> Corpus:
    """modernweb-dev, classes = ``page_type``, groups = sites."""
    pages = list(read_dataset(directory))
    labelled = [(p, p.page_type) for p in pages if p.page_type]
    kept, counts = _keep_classes(labelled, min_pages, 2, lambda p: p.site)
    dropped = {c: n for c, n in counts.items() if c not in {label for _, label in kept}}
    return Corpus(
        name=Path(directory).name, pages=[p for p, _ in kept], labels=[c for _, c in kept],
        groups=[p.site for p, _ in kept], site_pages=_by_site(pages),
        notes=[(f"{len(pages)} pages; classes with fewer than {min_pages} pages dropped: "
               f"{dropped or 'none'}")])


def dragnet_corpus(directory: str | Path, min_pages: int = MIN_CLASS_PAGES,
                   min_publishers: int = MIN_TOPIC_PUBLISHERS) -> Corpus:
    """dragnet, classes = URL section topics, groups = publishers."""
    pages = list(read_dataset(directory))
    labelled = [(p, t) for p in pages if (t := topic_of(p.url)) is not None]
    kept, counts = _keep_classes(labelled, min_pages, min_publishers,
                                 lambda p: publisher(p.site))
    chosen = {id(p) for p, _ in kept}
    kept_classes = {c for _, c in kept}
    return Corpus(
        name=Path(directory).name, pages=[p for p, _ in kept], labels=[c for _, c in kept],
        groups=[publisher(p.site) for p, _ in kept], site_pages=_by_site(pages),
        extra=[p for p in pages if id(p) not in chosen],
        notes=[(f"{len(pages)} pages; {len(labelled)} name one topic section; topics kept "
               f"(≥ {min_pages} pages from ≥ {min_publishers} publishers): "
               f"{ {c: counts[c] for c in sorted(kept_classes)} }; dropped: "
               f"{ {c: n for c, n in sorted(counts.items()) if c not in kept_classes} }")])
