"""Ground truth → noise / data / mixture labels for every subtree of a page.

The page's words are read in document order (the order :mod:`noisecbr.render` outputs them). A
word *matches* when one of the 4-word shingles that contain it is a shingle of the ground-truth
text, so matching follows the metric the cleaner is scored by. A subtree's *share* is its matched
words over its words:

    share ≤ t_noise and coverage ≤ max_coverage         → noise     (defaults 0.2, 0.1)
    share ≥ t_data and no noise subtree inside          → data      (default 0.8)
    otherwise                                           → mixture

where *coverage* is the subtree's share of all the page's matched words: a page container that
holds the whole article among much furniture has a low share, but removing it would remove the
article, so it is mixture, not noise. Data is *pure*: a body that is 96 % article around a
navigation bar is mixture, because keeping it whole keeps the navigation too.

A subtree without words takes its parent's label when the parent is data (an image in the
article) and is noise otherwise (an icon, a spacer, an empty ad slot): it holds nothing a reader
came for. The body without words is noise.

The defaults were chosen on the oracle ceiling of modernweb-dev (keep data, descend mixture,
drop noise): with 0.8 / 0.2 the oracle keeps the ground truth almost whole while mixture stays a
small class of the containers where content and furniture meet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from noisecbr.metric import SHINGLE, shingles, tokens
from noisecbr.result import LABELS
from noisecbr.subtrees import ElementTable

__all__ = ["T_DATA", "T_NOISE", "NOISE", "DATA", "MIXTURE", "SubtreeLabels", "label_table",
           "oracle_removed"]

T_DATA = 0.8
T_NOISE = 0.2
MAX_COVERAGE = 0.1
NOISE, DATA, MIXTURE = (LABELS.index(name) for name in ("noise", "data", "mixture"))


@dataclass
class SubtreeLabels:
    labels: np.ndarray  # int8 per element, indices into LABELS
    share: np.ndarray  # matched words / words (0 where there are no words)
    words: np.ndarray  # words per subtree


def _matched_words(table: ElementTable, truth: str) -> np.ndarray:
    """Matched-word count of every text piece.

    Windows are matched greedily in document order and each ground-truth shingle only as often
    as it occurs there: pages repeat their content (mobile and desktop variants, teasers), and
    the metric counts shingles as a multiset, so only one copy of a repeated passage is content.
    """
    available = shingles(tokens(truth))
    page_words = [w for piece in table.piece_tokens for w in piece]
    n = len(page_words)
    matched = np.zeros(n, dtype=bool)
    if available and n:
        if n < SHINGLE:
            matched[:] = tuple(page_words) in available
        else:
            hits = np.zeros(n - SHINGLE + 1, dtype=bool)
            for i in range(n - SHINGLE + 1):
                window = tuple(page_words[i:i + SHINGLE])
                if available.get(window, 0) > 0:
                    available[window] -= 1
                    hits[i] = True
            # A word is matched when any window covering it is: dilate hits by SHINGLE − 1.
            for offset in range(SHINGLE):
                matched[offset:offset + len(hits)] |= hits
    lengths = np.fromiter((len(p) for p in table.piece_tokens), dtype=np.int64,
                          count=len(table.piece_tokens))
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    cumulative = np.concatenate([[0], np.cumsum(matched)])
    return cumulative[bounds[1:]] - cumulative[bounds[:-1]]


def label_table(
    table: ElementTable,
    truth: str,
    *,
    t_data: float = T_DATA,
    t_noise: float = T_NOISE,
    max_coverage: float = MAX_COVERAGE,
) -> SubtreeLabels:
    if not 0.0 <= t_noise < t_data <= 1.0:
        raise ValueError(f"need 0 ≤ t_noise < t_data ≤ 1, got {t_noise} and {t_data}")
    matched = table.subtree(_matched_words(table, truth))
    words = table.subtree(table.piece_words)
    share = np.divide(matched, words, out=np.zeros_like(matched), where=words > 0)
    labels = np.full(len(table), MIXTURE, dtype=np.int8)
    page_matched = max(float(matched[0]), 1.0) if len(matched) else 1.0
    noise = (share <= t_noise) & (matched <= max_coverage * page_matched) & (words > 0)
    # Data is pure: no noise subtree with words inside it (subtree of i = [i, end[i])).
    noise_inside = np.concatenate([[0], np.cumsum(noise)])
    index = np.arange(len(table))
    pure = noise_inside[table.end] - noise_inside[index + 1] == 0
    labels[(share >= t_data) & pure] = DATA
    labels[noise] = NOISE
    # Wordless subtrees: in document order a parent is labelled before its children.
    parent = table.parent
    for i in np.flatnonzero(words == 0):
        labels[i] = DATA if parent[i] >= 0 and labels[parent[i]] == DATA else NOISE
    return SubtreeLabels(labels=labels, share=share, words=words)


def oracle_removed(table: ElementTable, labels: SubtreeLabels) -> list[int]:
    """Top-down walk with known labels: drop noise, keep data whole, descend mixture; a mixture
    subtree without element children is kept when most of its words are content.

    Returns the indices of the maximal removed subtrees.
    """
    removed: list[int] = []
    i, n = 0, len(table)
    label, share = labels.labels, labels.share
    while i < n:
        if label[i] == NOISE or (table.n_children[i] == 0 and share[i] < 0.5):
            removed.append(i)
            i = int(table.end[i])  # skip the subtree
        elif label[i] == DATA:
            i = int(table.end[i])
        else:
            i += 1
    return removed
