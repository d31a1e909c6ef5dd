"""Ground truth → noise / data / mixture / comment labels for every subtree of a page.

The page's words are read in document order (the order :mod:`noisecbr.render.text` outputs them). A
word *matches* when one of the 4-word shingles that contain it is a shingle of the ground-truth
text, so matching follows the metric the cleaner is scored by. A subtree's *share* is its matched
words over its words:

    share ≤ t_noise, coverage ≤ max_coverage and
      no mostly-content text piece of ≥ 4 words inside  → noise     (defaults 0.2, 0.1)
    share ≥ t_data and no noise subtree inside          → data      (default 0.8)
    otherwise                                           → mixture

where *coverage* is the subtree's share of all the page's matched words: a page container that
holds the whole article among much furniture has a low share, but removing it would remove the
article, so it is mixture, not noise. Data is *pure*: a body that is 96 % article around a
navigation bar is mixture, because keeping it whole keeps the navigation too.

A subtree without words takes its parent's label when the parent is data (an image in the
article) and is noise otherwise (an icon, a spacer, an empty ad slot): it holds nothing a reader
came for. The body without words is noise.

**Reader comments.** A ground truth that holds a comment thread after a marker line
(dragnet's ``!@#$%^&*()  COMMENTS``, :data:`noisecbr.eval.datasets.COMMENTS_MARKER`) is split there:
the text before it is the article, the text after it the comments, and words are matched
against each separately. A subtree that is not noise, whose words are mostly comment text
(share ≥ ``t_comment``, default 0.5: a thread's names, dates and reply links are not in the
ground truth) and that holds no article text piece is **comment**. Data must then hold no
comment subtree either. Without the marker nothing is labelled comment, so a forum thread that
*is* the page's content stays data.

**The article-body convention on an inclusive truth.** dragnet's hand-corrected truths keep a
news article's headline, byline, dateline, captions and credits; the article-body sets
(fundus, the utomo sets, chinese-wce) keep none of them, and a model learning both learns that
the same box is content on one site and furniture on the next. ``exclude`` (per element: its
subtree's words never count as content) relabels such a truth: :func:`article_furniture`
marks the boxes the page's own markup names as furniture (``<figcaption>``, ``<h1>``,
``<time>``, a class or id with the word ``caption``, ``credit``, ``byline``, ``related``,
``share``…), which are then noise or, around the article, mixture; never the body, nor a box
that holds most of the page's content (then it is the article's container).

The defaults were chosen on the oracle ceiling of modernweb-dev (keep data, descend mixture,
drop noise): with 0.8 / 0.2 the oracle keeps the ground truth almost whole while mixture stays a
small class of the containers where content and furniture meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from noisecbr.eval.datasets import split_truth
from noisecbr.eval.metric import SHINGLE, shingles, tokens
from noisecbr.prepare.subtrees import ElementTable
from noisecbr.result import COMMENT, DATA, MIXTURE, NOISE

__all__ = ["T_DATA", "T_NOISE", "T_COMMENT", "NOISE", "DATA", "MIXTURE", "COMMENT",
           "SubtreeLabels", "article_furniture", "label_table", "oracle"]

T_DATA = 0.8
T_NOISE = 0.2
MAX_COVERAGE = 0.1
#: A subtree whose words are at least this share comment text is a comment (when it holds no
#: article piece and is not noise). Half: in dragnet's threads the ground truth keeps the comment
#: bodies but not the commenters' names, dates and "Reply" links around them.
T_COMMENT = 0.5
#: The class and id words that name an article's furniture (:func:`article_furniture`), and
#: the tags that are furniture in the article-body convention: the headline (the result's
#: ``title``), a ``<time>`` and a ``<figcaption>``. Relabelling dragnet's truths by them raised
#: the article-body sets' F1 on the embedded recipe's site-grouped folds, in two runs of other
#: folds and seeds (fundus +0.006 / +0.003, utomo-chaos2017 +0.001 / +0.004, utomo-big9 +0.001
#: / +0.003), dragnet's own moving by −0.001 / +0.003 (docs/experiments.md, 2026-11-26), when
#: they were matched anywhere in a class (53 dragnet pages then lost most of their article to a
#: ``category-social-media`` container: 4 now). Adding ``author``, ``meta``, ``tags`` and
#: ``breadcrumb`` moved dragnet by −0.004 (its truths keep the author's name in running text):
#: left out.
FURNITURE_WORDS = frozenset({
    "caption", "captions", "credit", "credits", "byline", "bylines", "dateline", "related",
    "share", "sharing", "social", "newsletter", "subscribe", "subscription", "promo", "teaser",
    "teasers"})
FURNITURE_TAGS = frozenset({"figcaption", "h1", "time"})
#: Class names that file the page under a topic, not describe a box: WordPress's
#: ``category-social-media`` or ``tag-credit-cards`` on the post's container are no furniture.
TAXONOMY_PREFIXES = ("category-", "tag-", "tags-", "topic-", "topics-", "section-", "cat-")
#: A box whose subtree holds this share of the page's content words is the article's own
#: container, whatever its class says (a theme's ``has_header_social`` on the body).
FURNITURE_MAX_CONTENT_SHARE = 0.5
#: Words of a class or id value: lower-case runs, camelCase split (``relatedArticles``).
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


@dataclass
class SubtreeLabels:
    """The labels of a page's subtrees from its ground truth, with the shares and word counts behind
    them.
    """

    labels: np.ndarray  # int8 per element, indices into LABELS
    share: np.ndarray  # matched words / words (0 where there are no words)
    words: np.ndarray  # words per subtree
    own_share: np.ndarray  # the same over the element's own text (text + children's tails)


def _matched_words(table: ElementTable, truth: str) -> np.ndarray:
    """Matched-word count of every text piece.

    Each ground-truth shingle matches only as often as it occurs there: pages repeat their
    content (mobile and desktop variants, teasers, a title in the breadcrumb), and the metric
    counts shingles as a multiset, so only one copy of a repeated passage is content. Copies are
    assigned to the longest runs of matching windows first (the article, not the breadcrumb),
    ties in document order.
    """
    available = shingles(tokens(truth))
    page_words = [w for piece in table.piece_tokens for w in piece]
    n = len(page_words)
    matched = np.zeros(n, dtype=bool)
    if available and n:
        if n < SHINGLE:
            matched[:] = tuple(page_words) in available
        else:
            windows = [tuple(page_words[i:i + SHINGLE]) for i in range(n - SHINGLE + 1)]
            candidate = np.fromiter((w in available for w in windows), dtype=bool,
                                    count=len(windows))
            # Length of the run of consecutive matching windows each window belongs to: the
            # article is the long run, a title repeated in a breadcrumb a short one.
            starts = np.flatnonzero(np.diff(np.concatenate([[0], candidate.astype(np.int8)])) == 1)
            ends = np.flatnonzero(np.diff(np.concatenate([candidate.astype(np.int8), [0]])) == -1)
            run = np.zeros(len(windows), dtype=np.int64)
            for start, end in zip(starts, ends):
                run[start:end + 1] = end - start + 1
            hits = np.zeros(len(windows), dtype=bool)
            for i in np.lexsort((np.arange(len(windows)), -run)):
                if not candidate[i]:
                    break
                window = windows[i]
                if available[window] > 0:
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
    t_comment: float = T_COMMENT,
    exclude: np.ndarray | None = None,
) -> SubtreeLabels:
    """Label every subtree of ``table`` from the ground truth (see the module docstring);
    ``exclude``: per element, whether its subtree's words never count as content (the
    article-body convention on an inclusive truth, :func:`article_furniture`)."""
    if not 0.0 <= t_noise < t_data <= 1.0:
        raise ValueError(f"need 0 ≤ t_noise < t_data ≤ 1, got {t_noise} and {t_data}")
    article, comments = split_truth(truth)
    piece_article = _matched_words(table, article)
    piece_comment = _matched_words(table, comments) if comments else np.zeros_like(piece_article)
    if exclude is not None and exclude.any():
        piece_article = _without_furniture(table, piece_article, exclude)
    # A word quoted in both parts counts once.
    piece_matched = np.minimum(piece_article + piece_comment, table.piece_words)
    words = table.subtree(table.piece_words)
    matched = table.subtree(piece_matched)
    share = _share(matched, words)
    own_words = table.own(table.piece_words)
    own_share = _share(table.own(piece_matched), own_words)
    labels = np.full(len(table), MIXTURE, dtype=np.int8)
    page_matched = max(float(matched[0]), 1.0) if len(matched) else 1.0
    # Noise is pure too: no text piece of SHINGLE words or more that is mostly content inside.
    noise = ((share <= t_noise) & (matched <= max_coverage * page_matched) & (words > 0)
             & ~_holds_content(table, piece_matched))
    article_share = _share(table.subtree(piece_article), words)
    comment_share = _share(table.subtree(piece_comment), words)
    comment = (~noise & (comment_share >= t_comment) & (words > 0)
               & ~_holds_content(table, piece_article))
    # Data is pure: no noise or comment subtree with words inside it.
    pure = _none_inside(table, noise | comment)
    labels[(article_share >= t_data) & pure] = DATA
    labels[comment] = COMMENT
    labels[noise] = NOISE
    # Wordless subtrees: in document order a parent is labelled before its children.
    parent = table.parent
    for i in np.flatnonzero(words == 0):
        inherited = labels[parent[i]] if parent[i] >= 0 else NOISE
        labels[i] = inherited if inherited in (DATA, COMMENT) else NOISE
    return SubtreeLabels(labels=labels, share=share, words=words, own_share=own_share)


def article_furniture(table: ElementTable) -> np.ndarray:
    """Per element: whether the page's own markup names it an article's furniture under the
    article-body convention: a tag of :data:`FURNITURE_TAGS`, or a word of
    :data:`FURNITURE_WORDS` in its class or id (taxonomy classes such as ``category-social``
    aside). The body is never furniture."""
    classes, ids = table.keyword_values[0], table.keyword_values[1]
    marked = np.fromiter(
        (tag in FURNITURE_TAGS or _names_furniture(named_class) or _names_furniture(named_id)
         for tag, named_class, named_id in zip(table.tags, classes, ids)),
        dtype=bool, count=len(table))
    if len(marked):
        marked[0] = False
    return marked


def _names_furniture(value: str | None) -> bool:
    """Whether a class or id value holds a word of :data:`FURNITURE_WORDS` as a word of its
    own (``wp-caption``, ``relatedArticles``; not ``category-social-media``)."""
    if not value:
        return False
    return any(not item.lower().startswith(TAXONOMY_PREFIXES)
               and any(word.lower() in FURNITURE_WORDS for word in _NAME_WORD.findall(item))
               for item in value.split())


def _without_furniture(table: ElementTable, piece_article: np.ndarray, furniture: np.ndarray
                       ) -> np.ndarray:
    """The pieces' content words with those inside ``furniture`` subtrees set to 0, but for
    a subtree that holds :data:`FURNITURE_MAX_CONTENT_SHARE` of the page's content words or
    more: that is the article's container."""
    held = table.subtree(piece_article)
    total = float(piece_article.sum())
    furniture = furniture & (held < FURNITURE_MAX_CONTENT_SHARE * max(total, 1.0))
    return np.where(table.pieces_within(np.flatnonzero(furniture)), 0, piece_article)


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    return np.divide(part, whole, out=np.zeros_like(whole, dtype=np.float64), where=whole > 0)


def _holds_content(table: ElementTable, piece_matched: np.ndarray) -> np.ndarray:
    """Per subtree: does it hold a text piece of SHINGLE words or more, mostly matched?"""
    content_piece = (table.piece_words >= SHINGLE) & (2 * piece_matched >= table.piece_words)
    return table.subtree(content_piece) > 0


def _none_inside(table: ElementTable, flagged: np.ndarray) -> np.ndarray:
    """Per subtree: no flagged element strictly inside it (subtree of i = [i, end[i]))."""
    inside = np.concatenate([[0], np.cumsum(flagged)])
    return inside[table.end] - inside[np.arange(len(table)) + 1] == 0


def oracle(table: ElementTable, labels: SubtreeLabels, comments: bool = False
           ) -> tuple[list[int], list[int]]:
    """The oracle walk: (maximal removed subtrees, mixture elements whose own text is dropped).
    Comment subtrees are removed too, unless ``comments``.

    A mixture element's own text (its text and its children's tails, e.g. the "|" between menu
    links or a "Posted in" label around the article) is dropped when most of it is not content.
    """
    removed: list[int] = []
    dropped_text: list[int] = []
    i, n = 0, len(table)
    label, share, own_share = labels.labels, labels.share, labels.own_share
    while i < n:
        if (label[i] == NOISE or (label[i] == COMMENT and not comments)
                or (table.n_children[i] == 0 and share[i] < 0.5)):
            removed.append(i)
            i = int(table.end[i])  # skip the subtree
        elif label[i] in (DATA, COMMENT):
            i = int(table.end[i])
        else:
            if own_share[i] < 0.5:
                dropped_text.append(i)
            i += 1
    return removed, dropped_text
