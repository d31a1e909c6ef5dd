"""The page's tokens, coded once: Title Case, digits, stop words and boilerplate vocabularies.

A token's code (:func:`token_codes`) serves two groups: the ``text`` group's stop-word share, and
the ``vocabulary`` group (added at schema 3, see :mod:`noisecbr.features.page`): how much of the
subtree's text is Title Case or digits, words per text piece, and the share of words from nine
boilerplate vocabularies ("related", "share", "comments", "subscribe", legal, navigation, ads,
shop, "read more"), over the whole subtree and among its first words (a heading such as "Related
stories" names the block it opens).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..subtrees import COMPILED, ElementTable, cumulative

__all__ = ["HEAD_WORDS", "VOCABULARIES", "STOP_WORDS", "TITLE", "DIGIT", "STOP",
           "VOCABULARY_SHIFT", "token_codes", "vocabulary_quantities"]

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

#: Stop words of the ``text`` group's stop_share, lower-case. They live here because a token's
#: stop-word bit is part of its code (see :func:`token_codes`).
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


def vocabulary_quantities(table: ElementTable, codes: np.ndarray) -> dict[str, np.ndarray]:
    """The ``vocabulary`` group's quantities (its word counts are the ``text`` group's
    ``words``): per element, its Title Case and digit tokens, its text pieces, and the tokens
    of each vocabulary over the subtree and among its first :data:`HEAD_WORDS` (the families
    ``vocabulary_tokens`` and ``head_vocabulary_tokens``); ``codes``: the page's
    :func:`token_codes`."""
    # Token range of every subtree: its pieces are contiguous, so are their tokens.
    token_offset = np.concatenate([[0], np.cumsum(table.piece_words, dtype=np.int64)])
    start, end = token_offset[table.piece_start], token_offset[table.piece_end]
    head_end = np.minimum(start + HEAD_WORDS, end)
    title, digit = (codes & TITLE) > 0, (codes & DIGIT) > 0
    vocabulary = (codes >> VOCABULARY_SHIFT) - 1
    found = vocabulary >= 0
    one_hot = np.zeros((len(codes), len(VOCABULARIES)), dtype=np.int32)
    one_hot[np.flatnonzero(found), vocabulary[found]] = 1
    titles, digits = cumulative(title, np.int32), cumulative(digit, np.int32)
    vocabulary_sums = cumulative(one_hot, np.int32)
    return {
        "title_tokens": titles[end] - titles[start],
        "digit_tokens": digits[end] - digits[start],
        "pieces": table.piece_end - table.piece_start,
        "vocabulary_tokens": vocabulary_sums[end] - vocabulary_sums[start],
        "head_vocabulary_tokens": vocabulary_sums[head_end] - vocabulary_sums[start],
    }
