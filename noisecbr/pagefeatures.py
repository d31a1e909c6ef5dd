"""Features of a subtree relative to its page, and the boilerplate vocabulary of its text.

Two groups of the full vector (:mod:`noisecbr.vectors`), added at schema 3 because the network
confused long article blocks with long furniture blocks (related stories, comments, product
grids): both have many words, few links and ordinary tags. What tells them apart is mostly
*where* and *how often*:

``page``        where the subtree's text lies in the page's text (share before and after it,
                and relative to the first ``<h1>``), how often its tag + class signature repeats
                on the page and among its siblings (templated teasers, menu items, comments),
                its share of the page's sentence-like text pieces and of its links, its link
                density against the page's, how much of its text its biggest child holds, and
                the size and link density of its previous and next siblings (jusText's lesson:
                a block is judged by its neighbours).
``vocabulary``  how much of its text is Title Case or digits, words per text piece, and the
                share of words from nine boilerplate vocabularies ("related", "share",
                "comments", "subscribe", legal, navigation, ads, shop, "read more"), over the
                whole subtree and among its first words (a heading such as "Related stories"
                names the block it opens).

On 5 site-grouped folds of modernweb-dev (unseen sites), adding both groups raised the walk's
F1 from 0.801 to 0.808 and the per-class correct rate of data from 66 to 72 %. Everything is
one pass over the table's arrays, a few C-level maps over tokens and attributes, and numpy.
"""

from __future__ import annotations

import itertools

import numpy as np

from .subtrees import COMPILED, ElementTable

__all__ = ["PAGE_FEATURES", "VOCABULARY_FEATURES", "VOCABULARIES", "STOP_WORDS", "page_features",
           "repeats", "token_codes", "vocabulary_features"]

#: A text piece that reads as a sentence: at least this many words, punctuation, not a link.
SENTENCE_WORDS = 8
#: How many of a subtree's first words are read as its heading.
HEAD_WORDS = 6

#: Boilerplate vocabularies (lower-case whole tokens): the words that label page furniture on
#: English pages, written down by hand (not fitted to any page or fold).
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "related": tuple("related recommended popular trending more also latest recent top".split()),
    "social": tuple("share facebook twitter linkedin pinterest whatsapp email print follow "
                    "instagram youtube tiktok reddit".split()),
    "comment": tuple("comment comments reply replies replied ago likes like".split()),
    "subscribe": tuple("subscribe newsletter sign signup login log register account join "
                       "download app".split()),
    "legal": tuple("copyright rights reserved privacy policy terms cookies cookie consent accept "
                   "conditions".split()),
    "nav": tuple("home menu search skip contact about help faq sitemap careers".split()),
    "ad": tuple("advertisement sponsored ad ads promoted partner".split()),
    "shop": tuple("cart price add buy shop shipping checkout sale reviews rating stars".split()),
    "readmore": tuple("read continue next previous prev page back".split()),
}
_VOCABULARY_OF = {word: k for k, words in enumerate(VOCABULARIES.values()) for word in words}

#: Stop words of the ``text`` group's stop_share (:mod:`noisecbr.vectors`), lower-case. They live
#: here because a token's stop-word bit is part of its code (see :func:`token_codes`).
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also may might must shall one two new like get got said says le la les des et est un une
    der die das und ist nicht el los las y que en del""".split()
)

#: Bits of a token's code: Title Case, digits, stop word; the vocabulary index + 1 sits above
#: them.
TITLE, DIGIT, STOP, VOCABULARY_SHIFT = 1, 2, 4, 3
#: Codes of the tokens seen so far: one C-level dict lookup per token instead of five string
#: methods (tokens repeat within and across pages). Cleared when it grows past this size.
_CODE_CACHE_SIZE = 200_000
_codes: dict[str, int] = {}

#: The STOP and vocabulary bits of every listed word (what ``_code`` adds for a token whose
#: lower case it is), for the compiled kernel's coding of ASCII tokens without the cache.
_WORD_BITS = {word: (STOP if word in STOP_WORDS else 0)
              | (_VOCABULARY_OF.get(word, -1) + 1) << VOCABULARY_SHIFT
              for word in STOP_WORDS | _VOCABULARY_OF.keys()}
_ASCII_WORDS = COMPILED.AsciiWords(_WORD_BITS) if COMPILED is not None else None

PAGE_FEATURES: tuple[str, ...] = (
    "text_before", "text_after", "log_signature_count", "log_signature_siblings",
    "signature_sibling_share", "sentence_share", "log_sentences", "link_piece_share",
    "relative_link_density", "page_link_density", "after_h1", "contains_h1", "from_h1",
    "biggest_child_share", "prev_log_words", "prev_link_density", "has_prev",
    "next_log_words", "next_link_density", "has_next", "page_log_words",
)
VOCABULARY_FEATURES: tuple[str, ...] = (
    ("title_case_share", "digit_share", "log_words_per_piece")
    + tuple(f"voc:{name}" for name in VOCABULARIES)
    + tuple(f"head_voc:{name}" for name in VOCABULARIES)
)


def _cumulative(values: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Cumulative sums with a leading zero (rows summed for 2-D input). Counts may be summed in
    int32: whole numbers, so the same sums as in float64, in half the memory."""
    values = np.asarray(values, dtype=dtype)
    out = np.zeros((len(values) + 1,) + values.shape[1:], dtype=dtype)
    np.cumsum(values, axis=0, out=out[1:])
    return out


def _ids(values: list, known: dict | None = None) -> np.ndarray:
    """A number per value, the same for equal values (and for the ``known`` keys' values)."""
    index = dict(known or {})
    if COMPILED is not None:
        return COMPILED.ids(values, index)
    return np.fromiter(map(index.setdefault, values, itertools.count(len(index) + 1)),
                       dtype=np.int64, count=len(values))


def _siblings(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Previous and next element sibling of every element (−1 where there is none)."""
    n = len(parent)
    order = np.lexsort((np.arange(n), parent))  # siblings together, in document order
    same = parent[order[1:]] == parent[order[:-1]]
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    nxt[order[:-1][same]] = order[1:][same]
    return prev, nxt


def _signature_counts(signature: np.ndarray, parent: np.ndarray, prev: np.ndarray,
                      nxt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per element, how many elements of the page share its signature and how many of its
    parent's children do (float64; the body is alone among the elements without a parent).
    ``prev`` and ``nxt``: the sibling links (:func:`_siblings`), which the compiled kernel
    follows."""
    if COMPILED is not None:
        return COMPILED.signature_counts(np.ascontiguousarray(signature, np.int64), prev, nxt)
    _, kind, per_kind = np.unique(signature, return_inverse=True, return_counts=True)
    pairs = (parent.astype(np.int64) + 1) * len(per_kind) + kind.ravel()
    _, pair, per_pair = np.unique(pairs, return_inverse=True, return_counts=True)
    return per_kind[kind.ravel()].astype(np.int64), per_pair[pair.ravel()].astype(np.int64)


def repeats(table: ElementTable, classes: list[str | None] | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Repeated structure: per element, how many elements of the page share its tag and class
    and how many of its siblings do (int64), and its previous and next element sibling (−1
    where there is none). ``classes``: the elements' class attributes, if already read."""
    # Tags and classes become ints (an absent class the same as an empty one), then the
    # signatures and the (parent, signature) pairs are counted: no tuple per element.
    if classes is None:
        classes = table.keyword_values[0]
    class_id = _ids(classes, {None: 0, "": 0})
    signature = _ids(table.tags) * (int(class_id.max(initial=0)) + 1) + class_id
    parent = table.parent.astype(np.int64)
    prev, nxt = COMPILED.siblings(table.parent) if COMPILED is not None else _siblings(parent)
    signature_count, sibling_count = _signature_counts(signature, table.parent, prev, nxt)
    return signature_count, sibling_count, prev, nxt


def page_features(table: ElementTable, words: np.ndarray, link_density: np.ndarray,
                  classes: list[str | None] | None = None) -> np.ndarray:
    """The ``page`` group (see the module docstring); ``words`` and ``link_density`` are the
    subtree word counts and link densities the text features already computed, ``classes``
    the elements' class attributes if already read (None where absent). The pure path's
    reference: the compiled kernel computes the same columns in one pass
    (:func:`noisecbr.vectors.vectorize`)."""
    n = len(table)
    index = np.arange(n)
    parent = table.parent.astype(np.int64)
    word_before = _cumulative(table.piece_words)
    total = max(word_before[-1], 1.0)
    before = word_before[table.piece_start] / total
    after = (total - word_before[table.piece_end]) / total

    # Repeated structure: the same tag and class on the page, and among the siblings.
    signature_count, sibling_count, prev, nxt = repeats(table, classes)
    signature_count, sibling_count = (signature_count.astype(np.float64),
                                      sibling_count.astype(np.float64))
    parent_children = np.where(parent >= 0, table.n_children[np.maximum(parent, 0)], 1)

    sentence = ((table.piece_words >= SENTENCE_WORDS) & (table.piece_punct > 0)
                & ~table.piece_in_link)
    sentences = table.subtree(sentence)
    link_pieces = table.subtree(table.piece_in_link)
    page_link_density = float(link_density[0])

    first = table.tags.index("h1") if "h1" in table.tags else -1
    if first >= 0:
        after_h1 = (index >= first).astype(np.float64)
        contains_h1 = ((index <= first) & (table.end > first)).astype(np.float64)
        from_h1 = before - before[first]
    else:
        after_h1 = contains_h1 = from_h1 = np.zeros(n)

    biggest_child = np.zeros(n)
    children = index[1:]
    np.maximum.at(biggest_child, parent[children], words[children])

    log_words = np.log1p(words) / 10.0

    def neighbour(sibling: np.ndarray) -> list[np.ndarray]:
        exists = sibling >= 0
        k = np.maximum(sibling, 0)
        return [np.where(exists, log_words[k], 0.0), np.where(exists, link_density[k], 0.0),
                exists.astype(np.float64)]

    return np.column_stack([
        before, after, np.log1p(signature_count) / 7.0, np.log1p(sibling_count) / 5.0,
        sibling_count / np.maximum(parent_children, 1),
        sentences / max(sentences[0], 1.0), np.log1p(sentences) / 5.0,
        link_pieces / max(link_pieces[0], 1.0),
        link_density - page_link_density, np.full(n, page_link_density),
        after_h1, contains_h1, from_h1,
        biggest_child / np.maximum(words, 1.0),
        *neighbour(prev), *neighbour(nxt),
        np.full(n, np.log1p(total) / 12.0),
    ])


def _code(token: str) -> int:
    if len(_codes) >= _CODE_CACHE_SIZE:
        _codes.clear()
    lower = token.lower()
    code = _codes[token] = (
        (TITLE if token.istitle() else 0) | (DIGIT if token.isdigit() else 0)
        | (STOP if lower in STOP_WORDS else 0)
        | (_VOCABULARY_OF.get(lower, -1) + 1) << VOCABULARY_SHIFT)
    return code


def token_codes(table: ElementTable) -> np.ndarray:
    """The code of every token of the page, in document order (the pieces' tokens one after
    the other): its :data:`TITLE`, :data:`DIGIT` and :data:`STOP` bits and its vocabulary.
    Computed once per page for the ``text`` and ``vocabulary`` groups alike, by one cached
    dict lookup per token (in the compiled kernel, ASCII tokens are coded in C from the
    pieces' texts, with no str made for them, and the others looked up in a C loop)."""
    if COMPILED is not None:
        return COMPILED.text_codes(table.piece_text, table.piece_words, _codes, _code,
                                   _ASCII_WORDS, TITLE, DIGIT)
    tokens = list(itertools.chain.from_iterable(table.piece_tokens))
    codes = np.fromiter(map(_codes.get, tokens, itertools.repeat(-1)), dtype=np.int64,
                        count=len(tokens))
    for k in np.flatnonzero(codes < 0).tolist():  # tokens not seen before
        codes[k] = _code(tokens[k])
    return codes


def vocabulary_features(table: ElementTable, codes: np.ndarray | None = None) -> np.ndarray:
    """The ``vocabulary`` group (see the module docstring); ``codes`` are the page's
    :func:`token_codes` if already computed. The pure path's reference, as
    :func:`page_features` is."""
    n = len(table)
    if codes is None:
        codes = token_codes(table)
    # Token range of every subtree: its pieces are contiguous, so are their tokens.
    token_offset = np.concatenate([[0], np.cumsum(table.piece_words, dtype=np.int64)])
    start, end = token_offset[table.piece_start], token_offset[table.piece_end]
    counts = _vocabulary_counts(codes, start, end, np.minimum(start + HEAD_WORDS, end))
    words = np.maximum(end - start, 1).astype(np.float64)
    pieces = np.maximum(table.piece_end - table.piece_start, 1)
    titles, digits, in_range, in_head = counts
    # ×5, capped at 1: one boilerplate word in five already marks a block as furniture.
    return np.column_stack([
        titles / words,
        digits / words,
        np.log1p((end - start) / pieces) / 5.0,
        np.minimum(in_range / words[:, None] * 5.0, 1.0),
        (in_head > 0).astype(np.float64),
    ]) if n else np.zeros((0, len(VOCABULARY_FEATURES)))


def _vocabulary_counts(codes: np.ndarray, start: np.ndarray, end: np.ndarray,
                       head_end: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per element, over its tokens ``[start, end)``: the Title Case tokens, the digit tokens,
    the tokens of each vocabulary, and those of each vocabulary among ``[start, head_end)``."""
    title, digit = (codes & TITLE) > 0, (codes & DIGIT) > 0
    vocabulary = (codes >> VOCABULARY_SHIFT) - 1
    found = vocabulary >= 0
    one_hot = np.zeros((len(codes), len(VOCABULARIES)), dtype=np.int32)
    one_hot[np.flatnonzero(found), vocabulary[found]] = 1
    titles, digits = _cumulative(title, np.int32), _cumulative(digit, np.int32)
    vocabulary_sums = _cumulative(one_hot, np.int32)
    return (titles[end] - titles[start], digits[end] - digits[start],
            vocabulary_sums[end] - vocabulary_sums[start],
            vocabulary_sums[head_end] - vocabulary_sums[start])
