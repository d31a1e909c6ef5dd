"""SiteLevel(θ) template detection (Chakrabarti, Kumar & Punera, WWW 2007).

Every DOM subtree of every page of a site gets a hash of its tag structure and normalised text.
A subtree whose hash occurs on at least a share θ of the site's pages (and on at least two) is
a *template*: the same block repeated across the site (header, navigation, footer). An internal
node more than ``share`` (85 %) of whose HTML lies inside template subtrees is a template too,
so a container of templates plus a little glue is marked as a whole. Everything else is not.

Choices left open by the paper:

* The hash ignores attributes (ids and classes often carry page numbers) and covers the tag,
  the element's text, and each child's hash followed by that child's tail text, with
  whitespace normalised: ``<p>a <b>b</b> c</p>`` and ``<p>a<b>b</b>c</p>`` differ, a reflowed
  copy does not.
* A page's "HTML" is counted as an approximate serialised length built bottom-up:
  ``<tag attr="value">`` + ``</tag>`` + text + children + their tails (no re-serialising).
* The 85 % rule runs bottom-up and counts a child marked by the rule itself as fully covered.
* Identical pages (the same body twice in the input) count as one page for θ: two copies of
  one page would otherwise make every one of its subtrees a template.

Each page is read in one iterative post-order pass (no recursion: pages can be 100 000 levels
deep).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from ..prepare.strings import normalize_space
from ..prepare.tidy import Parser, tidy

__all__ = [
    "DEFAULT_SHARE",
    "DEFAULT_THETA",
    "PageHashes",
    "hash_page",
    "label_templates",
    "template_labels",
]

#: θ: share of a site's pages a subtree must occur on to be a template (the paper's SiteLevel
#: setting of 10 %).
DEFAULT_THETA = 0.10

#: An internal node with more than this share of its HTML inside templates is a template (the
#: paper's 85 %).
DEFAULT_SHARE = 0.85

#: A template must be seen on at least this many distinct pages: one page alone repeats nothing.
MIN_PAGES = 2

_DIGEST_SIZE = 16  # 128-bit blake2b: collisions among a site's subtrees are negligible


@dataclass(frozen=True)
class PageHashes:
    """One page's elements in post-order, with their subtree hashes, sizes and children."""

    elements: list[etree._Element]
    digests: list[bytes]
    sizes: list[int]  # approximate serialised length of each subtree
    children: list[list[int]]  # positions (in ``elements``) of each element's children


def _markup_length(element: etree._Element) -> int:
    tag = str(element.tag)
    # <tag> and </tag>, plus ` name="value"` for each attribute.
    return 2 * len(tag) + 5 + sum(len(k) + len(v) + 4 for k, v in element.attrib.items())


def hash_page(body: etree._Element) -> PageHashes:
    """Hash and measure every subtree of a tidied body in one post-order pass."""
    elements: list[etree._Element] = []
    digests: list[bytes] = []
    sizes: list[int] = []
    children: list[list[int]] = []
    # One frame per open element: hash input parts, size so far, child positions.
    frames: list[tuple[list[bytes], list[int], list[int]]] = []
    for event, element in etree.iterwalk(body, events=("start", "end")):
        is_element = isinstance(element.tag, str)
        if event == "start":
            if is_element:
                text = element.text or ""
                parts = [str(element.tag).encode(), b"\x00",
                         normalize_space(text).encode("utf-8", "surrogatepass")]
                frames.append((parts, [_markup_length(element) + len(text)], []))
            continue
        tail = element.tail if element is not body else None
        if not is_element:  # a comment or PI that survived: only its tail is content
            if tail and frames:
                parts, size, _ = frames[-1]
                parts += [b"\x03", normalize_space(tail).encode("utf-8", "surrogatepass")]
                size[0] += len(tail)
            continue
        parts, size, kids = frames.pop()
        position = len(elements)
        elements.append(element)
        digests.append(hashlib.blake2b(b"".join(parts), digest_size=_DIGEST_SIZE).digest())
        sizes.append(size[0])
        children.append(kids)
        if frames:
            parent_parts, parent_size, parent_kids = frames[-1]
            parent_parts += [b"\x01", digests[position], b"\x02",
                             normalize_space(tail or "").encode("utf-8", "surrogatepass")]
            parent_size[0] += size[0] + len(tail or "")
            parent_kids.append(position)
    return PageHashes(elements, digests, sizes, children)


def _check(theta: float, share: float) -> None:
    if not 0.0 < theta <= 1.0:
        raise ValueError(f"theta must be in (0, 1], not {theta}")
    if not 0.0 <= share < 1.0:
        raise ValueError(f"share must be in [0, 1), not {share}")


def label_templates(
    bodies: Sequence[etree._Element],
    theta: float = DEFAULT_THETA,
    share: float = DEFAULT_SHARE,
) -> list[dict[etree._Element, bool]]:
    """For each tidied body of one site: every element → whether it is a template."""
    _check(theta, share)
    pages = [hash_page(body) for body in bodies]
    # Pages whose whole body hashes the same are one page (post-order: the body is last).
    distinct = {page.digests[-1]: page for page in pages if page.digests}
    occurrences: Counter[bytes] = Counter()
    for page in distinct.values():
        occurrences.update(set(page.digests))
    needed = max(MIN_PAGES, math.ceil(theta * len(distinct) - 1e-9))
    labels: list[dict[etree._Element, bool]] = []
    for page in pages:
        covered = [0] * len(page.elements)
        is_template = [False] * len(page.elements)
        for i, digest in enumerate(page.digests):  # post-order: children before parents
            kids = page.children[i]
            template = occurrences[digest] >= needed or (
                bool(kids) and sum(covered[k] for k in kids) > share * page.sizes[i])
            is_template[i] = template
            covered[i] = page.sizes[i] if template else sum(covered[k] for k in kids)
        labels.append(dict(zip(page.elements, is_template, strict=True)))
    return labels


def template_labels(
    pages: Sequence[str | bytes],
    theta: float = DEFAULT_THETA,
    share: float = DEFAULT_SHARE,
    *,
    parser: Parser = "lxml",
) -> list[dict[str, bool]]:
    """For each page of one site: element path (``getroottree().getpath``) → is template."""
    bodies = [tidy(page, parser=parser) for page in pages]
    labels = label_templates(bodies, theta, share)
    result: list[dict[str, bool]] = []
    for body, page_labels in zip(bodies, labels, strict=True):
        tree = body.getroottree()
        result.append({tree.getpath(element): flag for element, flag in page_labels.items()})
    return result
