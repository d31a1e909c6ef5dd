"""What the site-level methods read off an element: its presentation style (tag and display
attributes, :func:`element_key`), its element children, and its content features (words and
image sources) with their entropy across a site's pages (:func:`feature_entropies`). Shared by
the site style tree (:mod:`.sst`) and the compressed structure tree (:mod:`.cst`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from lxml import etree

__all__ = ["DISPLAY_ATTRIBUTES", "content_features", "element_children", "element_key",
           "feature_entropies", "words_of"]

#: Attributes that define an element's presentation (the paper's "display attributes").
DISPLAY_ATTRIBUTES = ("id", "class", "role", "align", "valign", "bgcolor", "background",
                      "width", "height", "border", "cellpadding", "cellspacing", "color",
                      "face", "size", "style")


_DIGITS = re.compile(r"\d+")


_SPACES = re.compile(r"\s+")


_WORD = re.compile(r"\w+")


def element_key(element: etree._Element) -> str:
    """Tag plus normalised display attributes: what makes two elements "look the same"."""
    parts = [str(element.tag)]
    attrib = element.attrib
    for name in DISPLAY_ATTRIBUTES:
        value = attrib.get(name)
        if value is not None:
            value = _DIGITS.sub("#", _SPACES.sub(" ", value.strip().lower()))
            parts.append(f"[{name}={value}]")
    return "".join(parts)


def element_children(element: etree._Element) -> list[etree._Element]:
    """Element children only (tidy removes comments, but a caller's tree may still hold some)."""
    return [child for child in element if isinstance(child.tag, str)]


def words_of(text: str) -> list[str]:
    """The lower-cased words of a text."""
    return _WORD.findall(text.lower())


def content_features(element: etree._Element, *, images: bool = True) -> Counter[str]:
    """Words (lower-cased) of the element's text and, with ``images``, its image sources."""
    features: Counter[str] = Counter()
    for text in element.itertext():
        features.update(words_of(text))
    if not images:
        return features
    for image in element.iter("img"):
        source = image.get("src")
        if source:
            features["img:" + source.strip()] += 1
    return features


def feature_entropies(instances: Sequence[Counter[str]]) -> dict[str, float]:
    """H(a) = -Σ_j p_aj log_m p_aj, with p_aj the share of feature a's occurrences in instance j.

    0 when a feature occurs in one instance only, 1 when it is spread evenly over all ``m``;
    all 0 when ``m`` is 1 (a feature seen once is as informative as it gets).
    """
    m = len(instances)
    if m <= 1:
        return {feature: 0.0 for instance in instances for feature in instance}
    index: dict[str, int] = {}
    ids: list[int] = []
    counts: list[int] = []
    for instance in instances:
        for feature, count in instance.items():
            ids.append(index.setdefault(feature, len(index)))
            counts.append(count)
    if not index:
        return {}
    feature_ids = np.asarray(ids, dtype=np.int64)
    occurrences = np.asarray(counts, dtype=np.float64)
    totals = np.bincount(feature_ids, weights=occurrences, minlength=len(index))
    shares = occurrences / totals[feature_ids]
    entropy = np.bincount(feature_ids, weights=-shares * np.log(shares), minlength=len(index))
    entropy /= math.log(m)
    return dict(zip(index, np.clip(entropy, 0.0, 1.0).tolist(), strict=True))
