"""Which convention a page follows, and so which of the walk's modes decides it (``favor="auto"``,
the default).

The truths the model learns from disagree on what is main content: on a news article it is the
article body alone (no headline, byline, captions, related lists), on a listing, a product or a
forum what a reader came for, its lists and boxes included. One network scores both; the walk's
thresholds lean the way of the page's convention, read from the page itself:

1. a page that **declares itself an article** — ``<meta property="og:type" content="article">``
   or a JSON-LD object of an article type (:data:`ARTICLE_TYPES`) — is walked in the
   **precision** mode: where the scores are unsure, it is furniture;
2. a page with **little prose** — under :data:`~noisecbr.settings.PROSE_MIN_SHARE` of its
   characters in text pieces of :data:`~noisecbr.settings.PROSE_PIECE_CHARS` or more, outside
   links — is walked in the **recall** mode: its content is lists, tables and short blocks;
3. any other page in the **balanced** mode.

How much each rule moved each development set is in :mod:`noisecbr.settings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
from lxml import etree

from ..prepare.metadata import declared_types, json_ld, page_elements
from ..prepare.subtrees import ElementTable
from ..settings import PROSE_MIN_SHARE, PROSE_PIECE_CHARS

__all__ = ["ARTICLE_TYPES", "declares_article", "page_declares_article", "page_mode",
           "prose_share"]

#: schema.org types of an article: Article, NewsArticle and its kinds (AnalysisNewsArticle,
#: ReportageNewsArticle…), BlogPosting, LiveBlogPosting, Report.
ARTICLE_TYPES = re.compile(r"(?:\w*NewsArticle|Article|BlogPosting|LiveBlogPosting|Report)")


def declares_article(og_type: str | None, ld_types: Iterable[str]) -> bool:
    """Whether a page's ``og:type`` (``article``, ``article:…``) or one of its JSON-LD types
    (a full schema.org URL or the bare name) says it is an article."""
    if og_type and og_type.strip().lower().startswith("article"):
        return True
    return any(ARTICLE_TYPES.fullmatch(name.rsplit("/", 1)[-1]) for name in ld_types)


def page_declares_article(body: etree._Element) -> bool:
    """Whether the page whose tidied ``body`` this is (its head still in the tree) declares
    itself an article: what a stored page, which keeps its body only, records of its head."""
    elements = page_elements(body)
    return declares_article(*declared_types(elements, json_ld(elements["script"])))


def prose_share(table: ElementTable) -> float:
    """The share of the page's characters in text pieces of at least PROSE_PIECE_CHARS
    characters outside links (0 for a page without text)."""
    chars = np.asarray(table.piece_chars, dtype=np.int64)
    total = int(chars.sum())
    if not total:
        return 0.0
    prose = (chars >= PROSE_PIECE_CHARS) & ~np.asarray(table.piece_in_link, dtype=bool)
    return float(chars[prose].sum()) / total


def page_mode(declared_article: bool, prose: float) -> str:
    """The walk's mode for a page (see the module docstring)."""
    if declared_article:
        return "precision"
    return "recall" if prose < PROSE_MIN_SHARE else "balanced"
