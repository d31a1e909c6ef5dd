"""Site evidence: what repeats across the unlabelled pages of one site.

A crawl brings many pages of each site, without labels. Their articles differ; their menus,
footers, rails, "most read" lists and share bars repeat, word for word, from page to page —
the observation behind the site style tree and SiteLevel templates (:mod:`noisecbr.seeds`).
:class:`SiteEvidence` keeps, for a few pages of a site, the *text fingerprint* of every
subtree; a subtree of another page of the site whose text recurs on at least
:data:`TEMPLATE_MIN_SHARE` of them is a **template** subtree, and the walk removes it
(:func:`noisecbr.decide.walk.walk`): no label is needed, and the network still decides
everything that does not repeat.

A fingerprint is the sum, modulo 2⁶⁴, of a 64-bit hash of each of the subtree's text pieces
(whitespace collapsed, lower case), over the subtree's contiguous piece range of the element
table: one cumulative sum gives every subtree's fingerprint, whatever the depth. Tags and
attributes are left out on purpose: a box that moves to another container on another page of
the site is still the same box. One whose words are all link text has a fingerprint of its
own: an article's headline recurs on the site's other pages, as the link to it.

Two guards keep an article from being taken for a template:

* a page that holds most of the target page's paragraphs (the same article under a second URL,
  a print view) is not evidence for it (:data:`EVIDENCE_COPY_SHARE`);
* a subtree counts as recurring only on a share of the evidence pages, so a teaser of the
  article on one listing page removes nothing once there are several pages.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..prepare.subtrees import ElementTable
from ..settings import (
    EVIDENCE_COPY_SHARE,
    EVIDENCE_MAX_PAGES,
    TEMPLATE_MAX_DATA,
    TEMPLATE_MIN_SHARE,
    active,
)

__all__ = ["EVIDENCE_COPY_SHARE", "EVIDENCE_MAX_PAGES", "TEMPLATE_MIN_SHARE", "TEMPLATE_MAX_DATA",
           "SiteEvidence", "text_fingerprints"]


_LINKED = np.uint64(0x9E3779B97F4A7C15)


def _piece_hash(text: str) -> int:
    # BLAKE2b, not Python's salted hash: evidence read in one process (a Spark executor, a
    # worker of clean --jobs) must match pages read in another.
    normal = " ".join(text.lower().split()).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(normal, digest_size=8).digest(), "little")


def _piece_hashes(table: ElementTable) -> np.ndarray:
    # Kept with the table: a page read as evidence and then cleaned is hashed once.
    return table.memo("piece_hashes", _hashed_pieces)


def _hashed_pieces(table: ElementTable) -> np.ndarray:
    hashes = np.fromiter(map(_piece_hash, table.piece_text), dtype=np.uint64,
                         count=len(table.piece_text))
    hashes[table.piece_words == 0] = 0
    return hashes


def text_fingerprints(table: ElementTable, pieces: np.ndarray | None = None) -> np.ndarray:
    """Per element (document order), the 64-bit fingerprint of its subtree's text (uint64; 0
    for a subtree without words). Two subtrees with the same text pieces, in any containers, have
    the same fingerprint, in every process, unless the words of one are all link text and of
    the other not."""
    if pieces is None:
        pieces = _piece_hashes(table)
    summed = np.zeros(len(pieces) + 1, dtype=np.uint64)
    np.cumsum(pieces, dtype=np.uint64, out=summed[1:])
    fingerprints = summed[table.piece_end] - summed[table.piece_start]
    words = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(table.piece_words, out=words[1:])
    linked = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(table.piece_words * table.piece_in_link, out=linked[1:])
    count = words[table.piece_end] - words[table.piece_start]
    # A headline is not the link to it on the site's other pages ("recent posts"): a subtree
    # all of whose words are link text has another fingerprint.
    all_linked = (linked[table.piece_end] - linked[table.piece_start]) == count
    fingerprints[all_linked] ^= _LINKED
    fingerprints[count == 0] = 0
    return fingerprints


@dataclass(frozen=True)
class _Page:
    fingerprints: np.ndarray  # sorted distinct non-zero element fingerprints
    paragraphs: np.ndarray  # sorted distinct hashes of its paragraph pieces
    body: int  # the whole page's fingerprint: identical pages are one page


def _read(table: ElementTable) -> _Page:
    """The page as evidence."""
    pieces = _piece_hashes(table)
    fingerprints = text_fingerprints(table, pieces)
    paragraphs = pieces[table.piece_words >= active().evidence_paragraph_words]
    return _Page(np.unique(fingerprints[fingerprints != 0]), np.unique(paragraphs),
                 int(fingerprints[0]) if len(fingerprints) else 0)


class SiteEvidence:
    """The text fingerprints of up to :data:`EVIDENCE_MAX_PAGES` unlabelled pages of one site.

    >>> from noisecbr.prepare.subtrees import build_table
    >>> from noisecbr.prepare.tidy import tidy
    >>> def page(story):
    ...     return build_table(tidy(f"<body><nav>Home News Sport</nav><p>{story}</p>"
    ...                             "<div>Most read: the weather</div></body>"))
    >>> evidence = SiteEvidence([page("A first story."), page("A second one.")])
    >>> evidence.templates(page("Today's story.")).tolist()
    [False, True, False, True]

    The menu and the "most read" box of the third page recur on the site's other pages; its
    story does not, and the body never counts.
    """

    def __init__(self, tables: Iterable[ElementTable] = ()) -> None:
        self._pages: list[_Page] = []
        for table in tables:
            self.add(table)

    def __len__(self) -> int:
        """The number of distinct pages kept as evidence."""
        return len(self._pages)

    def add(self, table: ElementTable) -> bool:
        """Keep one page of the site as evidence; False (nothing kept) for a copy of a page
        already kept, or once :data:`EVIDENCE_MAX_PAGES` are."""
        if len(self._pages) >= active().evidence_max_pages:
            return False
        page = _read(table)
        if page.body == 0 or any(kept.body == page.body for kept in self._pages):
            return False
        self._pages.append(page)
        return True

    def merged(self, other: SiteEvidence) -> SiteEvidence:
        """A new evidence holding this one's pages, then ``other``'s (copies and pages past
        :data:`EVIDENCE_MAX_PAGES` left out, as :meth:`add` leaves them)."""
        out, most = SiteEvidence(), active().evidence_max_pages
        for page in self._pages + other._pages:
            if (len(out._pages) < most
                    and all(p.body != page.body for p in out._pages)):
                out._pages.append(page)
        return out

    def templates(self, table: ElementTable) -> np.ndarray:
        """Per element of ``table``: whether its text recurs on at least
        :data:`~noisecbr.settings.TEMPLATE_MIN_SHARE` of the evidence pages that are not copies
        of this page (a bool array; the body, subtrees without words and subtrees inside their
        parent's running text are never templates)."""
        out = np.zeros(len(table), dtype=bool)
        if not len(table) or not self._pages:
            return out
        pieces = _piece_hashes(table)
        fingerprints = text_fingerprints(table, pieces)
        rules = active()
        paragraph = table.piece_words >= rules.evidence_paragraph_words
        words, paragraphs = table.piece_words[paragraph], pieces[paragraph]
        evidence = [page for page in self._pages if page.body != int(fingerprints[0])
                    and not _copies(page, paragraphs, words)]
        if not evidence:
            return out
        recurs = np.zeros(len(table), dtype=np.int32)
        for page in evidence:
            recurs += np.isin(fingerprints, page.fingerprints, assume_unique=False)
        least = max(1, math.ceil(rules.template_min_share * len(evidence)))
        out[:] = (recurs >= least) & (fingerprints != 0)
        out[0] = False
        # A recurring name or phrase inside running text (a <strong> author, a linked term)
        # is part of that text: only what stands apart from its parent's words is a template.
        owned = np.zeros(len(table), dtype=np.int64)
        np.add.at(owned, table.piece_owner, table.piece_words)
        parents = table.parent[1:]
        out[1:] &= owned[parents] == 0
        return out


def _copies(page: _Page, paragraphs: np.ndarray, words: np.ndarray) -> bool:
    """Whether ``page`` holds :data:`EVIDENCE_COPY_SHARE` of the words of a page's ``paragraphs``
    (their piece hashes, and each one's words)."""
    total = int(words.sum())
    if not total:
        return False
    share = active().evidence_copy_share
    return int(words[np.isin(paragraphs, page.paragraphs)].sum()) >= share * total
