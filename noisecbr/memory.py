"""Site memory: reuse what the labelled pages of a site say about the same markup on its other
pages (the *reuse* step of the case-based cycle).

A site's pages share their templates: the navigation, the footer, the "related" box and the
article body sit under the same chain of tags, classes and ids on every page. Once a user has
corrected one page of a site (or the case base holds any labelled page of it), a subtree of
another page of that site whose *signature* — that chain, from the body down — matches stored
subtrees that all carry one label is decided by that label: noise is removed, data kept whole.
Everything else (mixture, conflicting or unseen signatures) is left to the network.

A signature is a 64-bit BLAKE2b digest of the parent's signature and the element's own step
(its tag, its sorted class tokens and its id, with digit runs written as ``0``: ``post-1234`` on
one page is ``post-5678`` on the next). Digests, not the steps joined into strings, so that a page
nested 100 000 levels deep costs one digest per element, and stable across processes (Python's
``hash`` of a str is salted per process), so a memory built once can be reused anywhere.

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

from .result import LABELS
from .subtrees import ElementTable

__all__ = ["SiteMemory", "signatures"]

NOISE, DATA, MIXTURE = range(3)
_DIGITS = re.compile(r"\d+")
_GET = etree._Element.get


def _step(tag: str, classes: str | None, element_id: str | None) -> bytes:
    tokens = ".".join(sorted(set(classes.split()))) if classes else ""
    step = f"{tag}.{tokens}#{element_id or ''}"
    return _DIGITS.sub("0", step).encode("utf-8", "surrogatepass")


def _label_index(label: int | str) -> int:
    index = LABELS.index(label) if label in LABELS else label
    if isinstance(index, str) or not 0 <= int(index) < len(LABELS):
        raise ValueError(f"label {label!r} is not one of {LABELS} (or their indices)")
    return int(index)


def signatures(table: ElementTable) -> list[bytes]:
    """The signature of every element of the page (document order; see the module docstring)."""
    elements = table.elements
    classes = map(_GET, elements, itertools.repeat("class"))
    ids = map(_GET, elements, itertools.repeat("id"))
    steps = list(map(_step, table.tags, classes, ids))
    parent = table.parent.tolist()
    out: list[bytes] = [b""] * len(steps)
    blake = hashlib.blake2b
    for i, step in enumerate(steps):
        # Parents come before their children in the table: the parent's digest is ready.
        above = out[parent[i]] if parent[i] >= 0 else b""
        out[i] = blake(above + b"/" + step, digest_size=8).digest()
    return out


class SiteMemory:
    """Label counts by subtree signature, from the labelled pages of one site.

    >>> memory = SiteMemory()
    >>> memory.add(table, labels)           # a corrected page: LABELS indices per element
    >>> recalled = memory.recall(other)     # per element: -1, or the label all stored cases share
    """

    def __init__(self, counts: Mapping[bytes, Iterable[int]] | None = None) -> None:
        self._counts: dict[bytes, list[int]] = {}
        for signature, row in (counts or {}).items():
            self._counts[signature] = list(row)
        self.pages = 0

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, table: ElementTable, labels: Iterable[int | str | None]) -> None:
        """Remember a labelled page: one label per element of ``table`` (a LABELS index or
        name; None where the element has no stored case)."""
        labels = list(labels)
        if len(labels) != len(table):
            raise ValueError(f"{len(labels)} labels for a page of {len(table)} elements")
        indices = [None if label is None else _label_index(label) for label in labels]
        # Every label is checked before the first is counted: a bad one changes nothing.
        for signature, index in zip(signatures(table), indices):
            if index is not None:
                self._counts.setdefault(signature, [0, 0, 0])[index] += 1
        self.pages += 1

    def recall(self, table: ElementTable) -> np.ndarray:
        """Per element of ``table``: the label (NOISE or DATA) every stored subtree of the same
        signature carries, or −1 (unseen, mixture, or stored with different labels). The body
        is never recalled: the cleaner does not remove or keep a whole page by memory."""
        out = np.full(len(table), -1, dtype=np.int8)
        counts = self._counts
        if not counts:
            return out
        for i, signature in enumerate(signatures(table)):
            row = counts.get(signature)
            if row is None or i == 0:
                continue
            noise, data, mixture = row
            if noise and not data and not mixture:
                out[i] = NOISE
            elif data and not noise and not mixture:
                out[i] = DATA
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (hex signatures), read back by :meth:`from_dict`."""
        return {"pages": self.pages,
                "counts": {s.hex(): row for s, row in self._counts.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SiteMemory:
        memory = cls({bytes.fromhex(s): row for s, row in data["counts"].items()})
        memory.pages = int(data.get("pages", 0))
        return memory
