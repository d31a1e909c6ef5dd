"""What kind of page this is: the page's own evidence, and the kind model's numpy forward pass.

The web's pages follow different conventions of what their main content is (wcxb-dev/README.md):
an article's body, a forum thread's posts, a product's name, description, specifications and
price, a listing's or a collection's items, a documentation page's text and code, a service
page's offer. The cleaner reads which kind a page is from some ninety numbers about the whole
page (:func:`page_evidence`): what it declares (``og:type``, the JSON-LD types and the objects
nested in them, a publication date, an author), its URL's words, how many of fifty tags it has
(forms, inputs, buttons, code, tables, lists, articles, headings…), how its text is laid out
(prose, links, pieces, depth, headings per paragraph) and the words of seven cue families (a
shop's, a forum's, documentation's, a listing's, a service's, news', months). A small network
over them (:class:`KindModel`, trained in :mod:`training.kinds`, stored in the model file)
gives each kind's probability.

Every number is a count made scale-free (a log, or a share of the page's words, elements or
links), so that pages of every size and language compare. Evidence that did not tell the kinds
apart better on the recipe's site-grouped folds was left out for its cost (docs/experiments.md,
2026-11-27): the pages' repeated records, prices, dated records, buttons and the share of text
in each of nineteen tags moved the kind model's accuracy by less than its noise (±0.01) and
cost 0.6 ms a page; microdata types (``itemtype``) +0.006 for 0.1–0.6 ms a page (a scan of
the source, or of the tree).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
from lxml import etree

from ..features.hashing import BUCKET_MASK, bucket
from ..features.tokens import BUCKET_SHIFT, word_codes
from ..prepare.subtrees import ElementTable, looked_up
from ..result import KINDS

__all__ = [
    "EVIDENCE_NAMES",
    "KINDS",
    "KindModel",
    "declared_url",
    "nested_types",
    "one_hot",
    "page_evidence",
    "url_words",
]


#: schema.org types by the kind they suggest (JSON-LD ``@type``).
_DECLARED = {
    "article": ("Article", "NewsArticle", "BlogPosting", "LiveBlogPosting", "Report",
                "ReportageNewsArticle", "AnalysisNewsArticle", "OpinionNewsArticle",
                "Review", "Recipe"),
    "documentation": ("TechArticle", "APIReference", "SoftwareSourceCode", "HowTo"),
    # Not Organization: most articles name their publisher as one.
    "service": ("Service", "LocalBusiness", "ProfessionalService", "ContactPage", "AboutPage",
                "Event", "Course", "JobPosting", "MedicalBusiness", "FinancialService", "Store",
                "SoftwareApplication", "WebApplication", "Offer"),
    "forum": ("DiscussionForumPosting", "SocialMediaPosting", "QAPage", "Question", "Answer",
              "Comment"),
    "product": ("Product", "AggregateOffer", "ProductGroup", "IndividualProduct", "Vehicle",
                "Book", "AggregateRating"),
    "collection": ("CollectionPage", "OfferCatalog", "ProductCollection"),
    "listing": ("ItemList", "SearchResultsPage", "Blog", "ListItem"),
}
_DECLARED_KIND = {name.lower(): kind for kind, names in _DECLARED.items() for name in names}
#: ``og:type`` values by the kind they suggest.
_OG = {"article": "article", "blog": "article", "product": "product", "product.item": "product",
       "profile": "service", "business.business": "service", "website": "website",
       "video.other": "article", "book": "product"}
_OG_GROUPS = ("article", "product", "service", "website", "other")

#: Words of the URL's path by the kind they suggest.
_URL_WORDS = {
    "article": ("news", "article", "articles", "blog", "blogs", "post", "posts", "story",
                "stories", "opinion", "politics", "sport", "sports", "world", "business"),
    "documentation": ("docs", "doc", "documentation", "api", "reference", "guide", "guides",
                      "manual", "learn", "tutorial", "tutorials", "developer", "developers",
                      "kb", "wiki", "help", "reference", "sdk", "cli", "library"),
    "service": ("services", "service", "solutions", "about", "contact", "pricing", "plans",
                "company", "features", "industries", "careers", "consulting", "agency",
                "support", "team", "partners", "platform", "enterprise"),
    "forum": ("forum", "forums", "thread", "threads", "topic", "topics", "community",
              "discussion", "discussions", "questions", "viewtopic", "showthread", "t", "r",
              "comments", "discuss", "board", "boards"),
    "product": ("product", "products", "p", "item", "dp", "buy", "sku", "pd", "shop",
                "store", "gp"),
    "collection": ("collections", "collection", "category", "categories", "c", "catalog",
                   "browse", "departments", "brands", "shop", "store"),
    "listing": ("list", "lists", "search", "archive", "archives", "tag", "tags", "page",
                "results", "index", "directory", "events", "jobs", "best", "top"),
}

#: Words of the page's text by the kind they suggest (English and the main European
#: languages); their shares of the page's words are evidence.
_CUE_WORDS = {
    "shop": ("cart", "basket", "checkout", "buy", "price", "sku", "stock", "shipping",
             "warenkorb", "kaufen", "panier", "acheter", "carrito", "comprar", "carrello",
             "quantity", "qty", "wishlist", "delivery", "returns", "reviews", "rating",
             "sale", "add", "bag", "preis", "prix", "precio", "prezzo", "versand", "livraison"),
    "forum": ("reply", "replies", "posts", "joined", "thread", "threads", "quote",
              "member", "members", "registered", "views", "topic", "forum", "posted",
              "moderator", "likes", "said", "wrote", "messages", "reputation", "answers",
              "answered", "asked", "votes", "upvote", "reactions", "points", "beiträge",
              "antworten", "réponses", "respuestas"),
    "docs": ("api", "parameters", "parameter", "returns", "example", "examples", "install",
             "installation", "function", "method", "methods", "class", "syntax", "arguments",
             "default", "usage", "documentation", "reference", "tutorial", "config",
             "configuration", "command", "deprecated", "module", "npm", "pip", "import",
             "string", "boolean", "null", "true", "false", "const", "return", "type"),
    "listing": ("results", "showing", "sort", "filter", "filters", "next", "previous",
                "prev", "page", "items", "view", "load", "newest", "oldest", "popular",
                "category", "categories", "tags", "more", "all", "found", "per"),
    "service": ("services", "solutions", "contact", "consultation", "team", "clients",
                "pricing", "plans", "book", "appointment", "call", "experience",
                "professional", "expert", "experts", "industries", "company", "our", "we",
                "us", "get", "started", "free", "trial", "demo", "customers", "trusted",
                "help", "offer", "quality"),
    "article": ("by", "published", "updated", "read", "min", "share", "comments", "author",
                "editor", "reporter", "news", "minutes", "ago", "said", "says", "told",
                "according", "reported", "yesterday", "today"),
    "date": ("january", "february", "march", "april", "may", "june", "july", "august",
             "september", "october", "november", "december", "jan", "feb", "mar", "apr",
             "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
}
_CUE_OF = {word: k for k, words in enumerate(_CUE_WORDS.values()) for word in words}

#: Tags whose counts are evidence.
_TAGS = ("p", "li", "a", "table", "tr", "form", "input", "button", "select", "textarea",
         "pre", "code", "h1", "h2", "h3", "h4", "img", "article", "section", "nav", "aside",
         "time", "blockquote", "dl", "figure", "iframe", "video", "svg", "label", "main",
         "ul", "ol", "span", "div", "strong", "em", "br", "hr", "header", "footer", "kbd",
         "dt", "dd", "th", "td", "picture", "source", "small", "cite", "details")
_TAG_INDEX = {tag: k for k, tag in enumerate(_TAGS)}

#: A URL path's words: runs of letters (digits and punctuation separate them).
_URL_WORD = re.compile(r"[^\W\d_]+")
#: Pieces of text of at least this many characters, not in a link, count as prose.
_PROSE_CHARS = 120


def _names() -> tuple[str, ...]:
    names = [f"declared:{kind}" for kind in KINDS]
    names += [f"og:{group}" for group in _OG_GROUPS]
    names += [f"url:{kind}" for kind in _URL_WORDS]
    names += ["url:depth", "url:digits", "url:query", "url:html", "url:root", "url:words"]
    names += [f"tag:{tag}" for tag in _TAGS]
    names += [f"cue:{family}" for family in _CUE_WORDS]
    names += ["page:log_words", "page:log_elements", "page:prose_share", "page:link_share",
              "page:log_pieces", "page:words_per_piece", "page:max_depth", "page:title_words",
              "page:h1_words", "meta:date", "meta:author", "page:headings_per_paragraph"]
    return tuple(names)


#: The evidence's names, in the order of :func:`page_evidence`'s numbers.
EVIDENCE_NAMES: tuple[str, ...] = _names()


def url_words(url: str | None) -> list[str]:
    """The lower-cased words of a URL's path (none for no URL).

    >>> url_words("https://shop.example/products/red-shoe-42?ref=x")
    ['products', 'red', 'shoe']
    """
    if not url:
        return []
    try:
        path = urlsplit(url).path
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket…)
        return []
    return [word.lower() for word in _URL_WORD.findall(path)]


#: Each kind's URL words as a set.
_URL_SETS = tuple(frozenset(words) for words in _URL_WORDS.values())
#: Three digits in a row: an id or a date in the path.
_DIGITS = re.compile(r"\d{3}")


def _url_evidence(url: str | None) -> list[float]:
    """The URL's words by kind, its depth, digits, query, ``.html`` ending, whether it is a
    site's root, and how many words its path has (all 0 without a URL: no evidence, not "no
    URL", since the development pages kept without one are all articles)."""
    try:
        parts = urlsplit(url) if url else None
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket…)
        parts = None
    if parts is None:
        return [0.0] * (len(_URL_SETS) + 6)
    path = parts.path
    words = {word.lower() for word in _URL_WORD.findall(path)}
    segments = [s for s in path.split("/") if s]
    return [float(not words.isdisjoint(listed)) for listed in _URL_SETS] + [
        math.log1p(len(segments)) / 2, float(_DIGITS.search(path) is not None),
        float(bool(parts.query)), float(path.endswith((".html", ".htm", ".php", ".aspx"))),
        float(not segments), math.log1p(len(_URL_WORD.findall(path))) / 3]


def _declared_evidence(og_type: str | None, types: Iterable[str]) -> list[float]:
    """Which kinds the page's declared types suggest (bits), and its ``og:type``'s group."""
    kinds = {_DECLARED_KIND.get(str(name).rsplit("/", 1)[-1].lower()) for name in types}
    out = [float(kind in kinds) for kind in KINDS]
    og = (og_type or "").strip().lower()
    group = _OG.get(og, _OG.get(og.split(":", 1)[0], "other")) if og else None
    return out + [float(group == name) for name in _OG_GROUPS]


def page_evidence(table: ElementTable, url: str | None, og_type: str | None,
                  declared: Sequence[str], title: str | None = None, dated: bool = False,
                  authored: bool = False) -> np.ndarray:
    """The page's evidence of its kind (float64, :data:`EVIDENCE_NAMES` in order): ``table``
    the page's element table, ``url`` its address (or its canonical link), ``og_type`` and
    ``declared`` what it declares (its JSON-LD types), ``title`` its headline,
    ``dated`` and ``authored`` whether its metadata names a publication date and an author."""
    n = len(table)
    out = _declared_evidence(og_type, declared) + _url_evidence(url)
    tag_of = looked_up(table.tags, _TAG_INDEX, -1)
    counts = np.bincount(tag_of[tag_of >= 0], minlength=len(_TAGS))
    out += [math.log1p(count) / 5 for count in counts.tolist()]
    words = table.subtree_words() if n else np.zeros(1)
    total = max(float(words[0]), 1.0)
    out += _cues(table, total)
    pieces = max(len(table.piece_words), 1)
    chars = np.asarray(table.piece_chars, dtype=np.int64)
    in_link = np.asarray(table.piece_in_link, dtype=bool)
    all_chars = max(int(chars.sum()), 1)
    h1 = tag_of == _TAG_INDEX["h1"]
    headings = sum(int(counts[_TAG_INDEX[tag]]) for tag in ("h2", "h3", "h4"))
    out += [math.log1p(total) / 10, math.log1p(n) / 10,
            float(chars[(chars >= _PROSE_CHARS) & ~in_link].sum()) / all_chars,
            float(chars[in_link].sum()) / all_chars, math.log1p(pieces) / 10,
            math.log1p(total / pieces) / 4, float(table.depth.max(initial=0)) / 40,
            math.log1p(len((title or "").split())) / 4,
            math.log1p(words[np.argmax(h1)] if h1.any() else 0) / 4,
            float(dated), float(authored),
            math.log1p(headings / max(int(counts[_TAG_INDEX["p"]]), 1)) / 2]
    # Counts give finite numbers; a number that is not would make every kind's probability NaN.
    return np.nan_to_num(np.asarray(out, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)


@functools.cache
def _family_of_bucket() -> np.ndarray:
    """Each lexical bucket's cue family (:data:`_CUE_WORDS`' order), −1 for none: a token's
    family is one lookup of its bucket (1 MB, made once)."""
    table = np.full(BUCKET_MASK + 1, -1, dtype=np.int8)
    for k, words in enumerate(_CUE_WORDS.values()):
        for word in words:
            table[bucket(word)] = k
    return table


def _cues(table: ElementTable, total: float) -> list[float]:
    """Each cue family's share of the page's words (×20, at most 1), read off the page's
    token codes (the buckets of their lower case)."""
    codes = word_codes(table)
    family = _family_of_bucket()[(codes >> BUCKET_SHIFT) & BUCKET_MASK]
    found = np.bincount(family[family >= 0], minlength=len(_CUE_WORDS))
    return [min(float(count) / total * 20, 1.0) for count in found.tolist()]


@dataclass
class KindModel:
    """The kind model: a small MLP over the page's evidence, its inputs normalised; weights in
    (out, in) layout as torch writes them. :meth:`predict_proba` gives each kind's
    probability (:data:`KINDS` order)."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    mean: np.ndarray
    scale: np.ndarray

    def __post_init__(self) -> None:
        # (in, out) and contiguous, as the product reads them: a page is one row, and a
        # transposed view made every product half again as slow.
        self._layers = [(np.ascontiguousarray(np.asarray(w, dtype=np.float64).T),
                         np.asarray(b, dtype=np.float64))
                        for w, b in zip(self.weights, self.biases)]

    def predict_proba(self, evidence: np.ndarray) -> np.ndarray:
        """The kinds' probabilities of each row of evidence (one row per page; a single page's
        1-D evidence gives a 1-D row)."""
        x = np.atleast_2d(np.asarray(evidence, dtype=np.float64))
        x = (x - self.mean) / self.scale
        last = len(self._layers) - 1
        for k, (weight, bias) in enumerate(self._layers):
            x = x @ weight
            x += bias
            if k < last:
                np.maximum(x, 0.0, out=x)
        x = np.exp(x - x.max(axis=1, keepdims=True))
        x /= x.sum(axis=1, keepdims=True)
        return x[0] if np.ndim(evidence) == 1 else x


def one_hot(kind: str) -> np.ndarray:
    """The kind probabilities of a page whose kind is known (ValueError for another kind)."""
    if kind not in KINDS:
        raise ValueError(f"a page's kind is one of {', '.join(KINDS)}, not {kind!r}")
    out = np.zeros(len(KINDS))
    out[KINDS.index(kind)] = 1.0
    return out


def declared_url(root: etree._Element) -> str | None:
    """The address a page gives itself in its head: its canonical link, else its ``og:url``."""
    head = root.find("head")
    if head is None:
        return None
    found = {}
    for element in head:
        if element.tag == "link" and "canonical" in (element.get("rel") or "").lower().split():
            found.setdefault("canonical", element.get("href"))
        elif element.tag == "meta" and (element.get("property") or "").lower() == "og:url":
            found.setdefault("og", element.get("content"))
    url = found.get("canonical") or found.get("og")
    return url.strip() if url and "://" in url else None


#: How deep into a JSON-LD object its nested objects' types are read, and how many at most.
_LD_DEPTH, _LD_TYPES = 4, 200


def nested_types(objects: Iterable[dict]) -> list[str]:
    """The ``@type`` of JSON-LD objects and of the objects nested in them (a ``QAPage``'s
    ``mainEntity`` is a ``Question``, a ``Product``'s ``offers`` an ``Offer``), at most
    :data:`_LD_TYPES` of them, :data:`_LD_DEPTH` levels deep."""
    found: list[str] = []
    stack = [(item, 0) for item in objects]
    while stack and len(found) < _LD_TYPES:
        item, depth = stack.pop()
        if isinstance(item, list):
            stack.extend((part, depth) for part in item[:50])
            continue
        if not isinstance(item, dict):
            continue
        value = item.get("@type")
        found.extend(v for v in (value if isinstance(value, list) else [value])
                     if isinstance(v, str))
        if depth < _LD_DEPTH:
            stack.extend((part, depth + 1) for key, part in item.items()
                         if key != "@type" and isinstance(part, (dict, list)))
    return found
