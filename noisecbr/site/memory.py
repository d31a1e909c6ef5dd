"""Site memory: reuse what the labelled pages of a site say about the same markup on its other
pages (the *reuse* step of the case-based cycle).

A site's pages share their templates: the navigation, the footer, the "related" box and the
article body sit under the same chain of tags, classes and ids on every page. Once a user has
corrected one page of a site (or the case base holds any labelled page of it), a subtree of
another page of that site whose *signature* — that chain, from the body down — matches stored
subtrees that all carry one label is decided by that label: noise is removed, data kept whole.
Everything else (mixture, conflicting or unseen signatures) is left to the network, and so is a
box that holds far more text than any box the site's pages hold as noise under its markup
(:data:`~noisecbr.settings.MEMORY_NOISE_GROWTH`): the markup of a post's body is the same on a
video post of eight words and on an article of four hundred. So are the boxes of a markup that
hold far more text on the page, all together, than any stored page held there as noise: an
article written as a run of plain ``<div>``s, each no larger than the one small plain ``<div>``
of noise on the labelled page. A subtree
whose whole chain is unseen is looked up by its last :data:`SHORT_STEPS` steps instead: the
same box often sits in another container on another page of the site.

A signature is a 64-bit hash of the parent's signature and the element's own step (its tag, its
sorted class tokens and its id, with digit runs written as ``0``: ``post-1234`` on one page is
``post-5678`` on the next; the step is hashed with BLAKE2b). Hashes, not the steps joined into
strings, so that a page nested 100 000 levels deep costs a few multiplies per element; and
stable across processes (Python's ``hash`` of a str is salted per process), so a memory built
once can be reused anywhere.

Measured on the site-grouped 5 folds (``noisecbr bench … --cv 5 --adapt 1``): see the README.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from lxml import etree

from ..errors import MemorySourceError
from ..prepare.subtrees import ElementTable
from ..result import COMMENT, DATA, LABELS, NOISE
from ..settings import CASES_KEPT, DECLARED_URL_BYTES, SHORT_STEPS, active

__all__ = ["MemorySourceError", "SiteMemory", "declared_url", "signatures"]


_DIGITS = re.compile(r"\d+")
_GET = etree._Element.get


#: Step hashes by (tag, class, id) as read from the page: a site's pages repeat their few
#: hundred steps, so each is hashed once per process; emptied when it grows past the bound.
_STEP_CACHE: dict[tuple[str, str | None, str | None], int] = {}
_STEP_CACHE_SIZE = 65536
#: Combines a parent's signature with a child's step hash (an odd 64-bit multiplier, as in
#: FNV-style hashing): deterministic in every process, and one multiply per element.
_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


_LINK_OR_META = re.compile(rb"<(?:link|meta)\b[^>]*>", re.IGNORECASE)
_CANONICAL = re.compile(rb"""\brel\s*=\s*["']?[^"'>]*\bcanonical\b""", re.IGNORECASE)
_OG_URL = re.compile(rb"""\bproperty\s*=\s*["']?og:url\b""", re.IGNORECASE)
_VALUE = re.compile(rb"""\b(href|content)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""",
                    re.IGNORECASE)


def declared_url(page: bytes | str) -> str | None:
    """The absolute http(s) URL a page declares for itself: its ``<link rel="canonical">``,
    else its ``<meta property="og:url">``; None when it declares neither. For pages saved
    without their address (a crawl's files), this names their site."""
    head = page[:DECLARED_URL_BYTES]
    if isinstance(head, str):
        head = head.encode("utf-8", "replace")
    found: dict[str, str] = {}
    for tag in _LINK_OR_META.finditer(head):
        markup = tag.group(0)
        kind = ("canonical" if markup[:5].lower() == b"<link" and _CANONICAL.search(markup)
                else "og" if _OG_URL.search(markup) else None)
        if kind is None or kind in found:
            continue
        wanted = b"href" if kind == "canonical" else b"content"
        for value in _VALUE.finditer(markup):
            if value.group(1).lower() == wanted:
                url = next(v for v in value.groups()[1:] if v is not None)
                url = url.decode("utf-8", "replace").strip()
                if url.lower().startswith(("http://", "https://")):
                    found[kind] = url
                break
    return found.get("canonical") or found.get("og")


def _step_hash(tag: str, classes: str | None, element_id: str | None) -> int:
    tokens = ".".join(sorted(set(classes.split()))) if classes else ""
    step = _DIGITS.sub("0", f"{tag}.{tokens}#{element_id or ''}")
    digest = hashlib.blake2b(step.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _label_index(label: int | str) -> int:
    index = LABELS.index(label) if label in LABELS else label
    if isinstance(index, str) or not 0 <= int(index) < len(LABELS):
        raise ValueError(f"label {label!r} is not one of {LABELS} (or their indices)")
    return int(index)


def _steps(table: ElementTable) -> list[int]:
    elements = table.elements
    keys = list(zip(table.tags, map(_GET, elements, itertools.repeat("class")),
                    map(_GET, elements, itertools.repeat("id"))))
    if len(_STEP_CACHE) > _STEP_CACHE_SIZE:
        _STEP_CACHE.clear()
    for key in set(keys).difference(_STEP_CACHE):
        _STEP_CACHE[key] = _step_hash(*key)
    return list(map(_STEP_CACHE.__getitem__, keys))


def signatures(table: ElementTable, last: int | None = None) -> list[int]:
    """The signature of every element of the page (document order; see the module docstring),
    as an unsigned 64-bit int: of the whole chain of steps from the body, or with ``last`` k,
    of the element's last k steps only (itself, its parent, …)."""
    return _chains(_steps(table), table.parent.tolist(), last)


def _chains(steps: list[int], parent: list[int], last: int | None) -> list[int]:
    out = [0] * len(steps)
    if last is None:
        for i, step in enumerate(steps):
            # Parents come before their children in the table: the parent's signature is
            # ready (the body's parent index, −1, reads the last slot, still 0 then).
            out[i] = ((out[parent[i]] * _MIX) ^ step) & _MASK
        return out
    if last < 1:
        raise ValueError(f"last must be at least 1, got {last}")
    for i, step in enumerate(steps):
        signature, above = step, parent[i]
        for _ in range(last - 1):
            if above < 0:
                break
            signature = ((steps[above] * _MIX) ^ signature) & _MASK
            above = parent[above]
        out[i] = signature
    return out


def _signature_pairs(table: ElementTable) -> tuple[list[int], list[int]]:
    """The full and the short signatures of every element, from one read of its steps."""
    steps, parent = _steps(table), table.parent.tolist()
    return _chains(steps, parent, None), _chains(steps, parent, SHORT_STEPS)


def _beyond(stored: int | None, words: int) -> bool:
    """Whether ``words`` are far more than the ``stored`` words held as noise
    (:data:`~noisecbr.settings.MEMORY_NOISE_GROWTH`); False when none are known."""
    if stored is None:
        return False
    rules = active()
    return words > rules.memory_noise_growth * max(stored, rules.memory_min_words)


class _Tally:
    """Label counts, a few case ids and the words of the largest box stored as noise (or
    comments), by signature."""

    def __init__(self, counts: Mapping[int, Iterable[int]] | None = None,
                 cases: Mapping[int, Iterable[int]] | None = None,
                 removed_words: Mapping[int, int] | None = None,
                 removed_totals: Mapping[int, int] | None = None) -> None:
        self.counts = {s: list(row) for s, row in (counts or {}).items()}
        self.cases = {s: list(ids) for s, ids in (cases or {}).items()}
        self.removed_words = dict(removed_words or {})
        # The most words one stored page held as noise under a signature, all its boxes
        # together; a signature a memory saved before these were kept has none (unknown).
        self.removed_totals = dict(removed_totals or {})
        self.untotalled = (set() if removed_totals is not None else
                           {s for s, row in self.counts.items() if _removes(row)})

    def add(self, signature: int, index: int, case_id: int | None, words: int = 0) -> None:
        row = self.counts.get(signature)
        # A signature a memory saved before the words were kept holds noise of unknown size:
        # its bound stays unknown (a new page's box would understate it).
        unknown = (row is not None and signature not in self.removed_words and _removes(row))
        if index in (NOISE, COMMENT) and not unknown:
            self.removed_words[signature] = max(self.removed_words.get(signature, 0), words)
        row = self.counts.setdefault(signature, [0] * len(LABELS))
        if len(row) < len(LABELS):  # a memory saved before the comment label existed
            row.extend([0] * (len(LABELS) - len(row)))
        row[index] += 1
        if case_id is not None:
            stored = self.cases.setdefault(signature, [])
            if len(stored) < CASES_KEPT:
                stored.append(int(case_id))

    def add_totals(self, totals: Mapping[int, int]) -> None:
        """Note one page's words held as noise under each signature (after its boxes were
        added)."""
        for signature, words in totals.items():
            if signature not in self.untotalled:
                self.removed_totals[signature] = max(self.removed_totals.get(signature, 0),
                                                     words)

    def verdict(self, signature: int) -> int | None:
        """None when unseen; else NOISE, DATA or COMMENT when every stored case agrees, −1
        otherwise (mixture, or a conflict)."""
        row = self.counts.get(signature)
        if row is None:
            return None
        for label in (NOISE, DATA, COMMENT):
            if label < len(row) and row[label] == sum(row):
                return label
        return -1

    def outgrown(self, signature: int, words: int) -> bool:
        """Whether a box of ``words`` words holds far more text than any box stored as noise
        under ``signature`` (:data:`~noisecbr.settings.MEMORY_NOISE_GROWTH`); False when none
        was stored with its words (a memory saved before they were kept)."""
        return _beyond(self.removed_words.get(signature), words)

    def outgrown_in_total(self, signature: int, words: int) -> bool:
        """:meth:`outgrown` for all of a page's boxes under ``signature`` together (their
        ``words``) against the most one stored page held there."""
        return _beyond(self.removed_totals.get(signature), words)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": {f"{s:016x}": row for s, row in self.counts.items()},
                "cases": {f"{s:016x}": ids for s, ids in self.cases.items()},
                "removed_words": {f"{s:016x}": w for s, w in self.removed_words.items()},
                "removed_totals": {f"{s:016x}": w for s, w in self.removed_totals.items()},
                "untotalled": [f"{s:016x}" for s in sorted(self.untotalled)]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> _Tally:
        totals = data.get("removed_totals")
        tally = cls({int(s, 16): row for s, row in data.get("counts", {}).items()},
                    {int(s, 16): ids for s, ids in data.get("cases", {}).items()},
                    {int(s, 16): w for s, w in data.get("removed_words", {}).items()},
                    None if totals is None else {int(s, 16): w for s, w in totals.items()})
        if totals is not None:
            tally.untotalled = {int(s, 16) for s in data.get("untotalled", ())}
        return tally


def _removes(row: list[int]) -> bool:
    """Whether a signature's label counts hold a box stored as noise or comments."""
    return bool(row[NOISE] or (len(row) > COMMENT and row[COMMENT]))


class SiteMemory:
    """Label counts by subtree signature, from the labelled pages of one site.

    >>> from noisecbr.prepare.subtrees import build_table
    >>> from noisecbr.prepare.tidy import tidy
    >>> corrected = build_table(tidy("<body><div class=share>Share</div><p>A story.</p></body>"))
    >>> corrected.paths()
    ['/html/body', '/html/body/div', '/html/body/p']
    >>> memory = SiteMemory()
    >>> memory.add(corrected, [None, "noise", "data"])   # a label (or None) per element
    >>> memory.recall(build_table(tidy("<body><div class=share>Share</div><p>News.</p></body>")))
    array([-1,  0,  1], dtype=int8)

    The next page's share box is recalled as noise (0, :data:`NOISE`), its paragraph as data
    (1); the body is never recalled (−1).

    A subtree is looked up by its full signature; only when that is unseen, by its short one
    (:data:`SHORT_STEPS`). A full signature stored with conflicting labels is not looked up
    again by the short one: the site's own pages disagree there.
    """

    def __init__(self) -> None:
        self._full = _Tally()
        self._short = _Tally()
        self.pages = 0

    def __len__(self) -> int:
        """The number of distinct full signatures remembered."""
        return len(self._full.counts)

    def add(self, table: ElementTable, labels: Iterable[int | str | None],
            case_ids: Iterable[int | None] | None = None) -> None:
        """Remember a labelled page: one label per element of ``table`` (a LABELS index or
        name; None where the element has no stored case), and optionally the id of each
        element's stored case."""
        labels = list(labels)
        ids = list(case_ids) if case_ids is not None else [None] * len(labels)
        if len(labels) != len(table) or len(ids) != len(table):
            raise ValueError(f"{len(labels)} labels and {len(ids)} case ids for a page of "
                             f"{len(table)} elements")
        indices = [None if label is None else _label_index(label) for label in labels]
        words = table.subtree(table.piece_words).tolist()
        # Every label is checked before the first is counted: a bad one changes nothing.
        full_totals: dict[int, int] = {}
        short_totals: dict[int, int] = {}
        for full, short, index, case_id, count in zip(*_signature_pairs(table), indices, ids,
                                                      words):
            if index is not None:
                self._full.add(full, index, case_id, int(count))
                self._short.add(short, index, case_id, int(count))
                if index in (NOISE, COMMENT):
                    full_totals[full] = full_totals.get(full, 0) + int(count)
                    short_totals[short] = short_totals.get(short, 0) + int(count)
        self._full.add_totals(full_totals)
        self._short.add_totals(short_totals)
        self.pages += 1

    def lookup(self, table: ElementTable) -> tuple[np.ndarray, list[tuple[int, ...]]]:
        """:meth:`recall` and :meth:`cases` of ``table`` at once (its signatures computed
        once)."""
        recalled = np.full(len(table), -1, dtype=np.int8)
        if not self._full.counts:
            return recalled, [()] * len(table)
        cases = []
        words = table.subtree(table.piece_words).tolist()
        looked_up = []
        totals: dict[tuple[bool, int], int] = {}
        for i, (full, short) in enumerate(zip(*_signature_pairs(table))):
            # The full chain when it was seen, else the short one.
            tally, key = (self._full, full) if full in self._full.counts else (self._short, short)
            verdict = tally.verdict(key)
            # A box that outgrew every one the site's pages hold as noise there is left to the
            # network: the markup is the same, the text is not.
            if verdict in (NOISE, COMMENT) and tally.outgrown(key, int(words[i])):
                verdict = -1
            pair = (tally is self._full, key)  # a full and a short hash may coincide
            if verdict in (NOISE, COMMENT):
                totals[pair] = totals.get(pair, 0) + int(words[i])
            looked_up.append(pair)
            if verdict is not None and i > 0:
                recalled[i] = verdict
            cases.append(tuple(tally.cases.get(key, ())))
        # So are the boxes of a markup that holds far more text on this page, all together,
        # than on any stored page: an article written as a run of plain <div>s, each of them
        # no larger than the stored page's one small <div> of noise.
        outgrown = {pair for pair, count in totals.items()
                    if (self._full if pair[0] else self._short).outgrown_in_total(pair[1], count)}
        if outgrown:
            for i, pair in enumerate(looked_up):
                if pair in outgrown and recalled[i] in (NOISE, COMMENT):
                    recalled[i] = -1
        return recalled, cases

    def recall(self, table: ElementTable) -> np.ndarray:
        """Per element of ``table``: the label (NOISE, DATA or COMMENT) every stored subtree of the
        same signature carries, or −1 (unseen, mixture, or stored with different labels). The body
        is never recalled: the cleaner does not remove or keep a whole page by memory."""
        return self.lookup(table)[0]

    def cases(self, table: ElementTable) -> list[tuple[int, ...]]:
        """Per element of ``table``: the ids of (up to :data:`CASES_KEPT`) stored cases with
        its signature (its short one when the full one is unseen), whatever their labels."""
        return self.lookup(table)[1]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (hex signatures), read back by :meth:`from_dict`."""
        return {"pages": self.pages, "short_steps": SHORT_STEPS, "full": self._full.to_dict(),
                "short": self._short.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SiteMemory:
        """The memory :meth:`to_dict` saved; ValueError for one of another signature length."""
        if data.get("short_steps", SHORT_STEPS) != SHORT_STEPS:
            raise ValueError(f"a memory of {data['short_steps']}-step short signatures; this "
                             f"version uses {SHORT_STEPS}: rebuild it")
        memory = cls()
        memory._full = _Tally.from_dict(data.get("full", {}))
        memory._short = _Tally.from_dict(data.get("short", {}))
        memory.pages = int(data.get("pages", 0))
        return memory
