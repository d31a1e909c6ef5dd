"""The page's tokens, coded once: Title Case, digits, stop words and boilerplate vocabularies.

A token's code (:func:`token_codes`) serves two groups: the ``text`` group's stop-word share (in
the page's language, :mod:`.language`), and the ``vocabulary`` group (added at schema 3, in the
web's main languages at schema 4): how much of the subtree's text is Title Case or digits,
words per text piece, and the share of words from eleven furniture vocabularies ("related",
"share", "comments", "subscribe", legal, navigation, ads, shop, "read more", datelines,
captions and credits: :mod:`.furniture`), over the whole subtree and among its first words (a
heading such as "Related stories" names the block it opens).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ..native.backend import BACKEND
from ..prepare.subtrees import ElementTable, cumulative
from ..settings import HEAD_WORDS
from .furniture import UNSPACED_SCRIPT, UNSPACED_VOCABULARIES, VOCABULARIES
from .hashing import BUCKET_BITS, bucket
from .language import LANGUAGE_SHIFT, for_language, page_language, stop_masks

__all__ = ["HEAD_WORDS", "VOCABULARIES", "TITLE", "DIGIT", "STOP", "VOCABULARY_SHIFT",
           "VOCABULARY_BITS", "BUCKET_SHIFT", "VECTOR_BITS", "token_codes", "token_buckets",
           "word_codes", "table_language", "element_word_codes", "vocabularies_of",
           "vocabulary_quantities"]


_VOCABULARY_OF = {word: k for k, words in enumerate(VOCABULARIES.values()) for word in words}

#: Bits of a token's code: Title Case, digits, stop word (of the page's language, see
#: :mod:`.language`); the vocabulary index + 1 sits above them (VOCABULARY_BITS bits), then the
#: token's lexical bucket (:func:`noisecbr.features.lexical.bucket`, from BUCKET_SHIFT), and
#: the bits of the languages whose stop words hold it from LANGUAGE_SHIFT on (until the page's
#: language is known).
TITLE, DIGIT, STOP, VOCABULARY_SHIFT = 1, 2, 4, 3
VOCABULARY_BITS = 5
BUCKET_SHIFT = VOCABULARY_SHIFT + VOCABULARY_BITS
#: The bits the vector groups read (the rest is the lexical fields' and the language's).
VECTOR_BITS = (1 << BUCKET_SHIFT) - 1
#: Codes of the tokens seen so far: one C-level dict lookup per token instead of five string
#: methods (tokens repeat within and across pages). Cleared when it grows past this size.
_CODE_CACHE_SIZE = 200_000
_codes: dict[str, int] = {}


def _vocabulary_of(lower: str) -> int:
    """The index of the vocabulary a lower-cased token belongs to, −1 for none (a word of a
    script without spaces is looked for inside the token)."""
    found = _VOCABULARY_OF.get(lower, -1)
    if found < 0 and not lower.isascii() and UNSPACED_SCRIPT.search(lower):
        for k, words in enumerate(UNSPACED_VOCABULARIES.values()):
            if any(word in lower for word in words):
                return k
    return found


def _word_bits(lower: str) -> int:
    """The code bits a token gets for its lower case: vocabulary and languages."""
    return ((_vocabulary_of(lower) + 1) << VOCABULARY_SHIFT
            | stop_masks().get(lower, 0) << LANGUAGE_SHIFT)


def _code(token: str) -> int:
    if len(_codes) >= _CODE_CACHE_SIZE:
        _codes.clear()
    lower = token.lower()
    code = _codes[token] = ((TITLE if token.istitle() else 0) | (DIGIT if token.isdigit() else 0)
                            | _word_bits(lower) | bucket(lower) << BUCKET_SHIFT)
    return code


@functools.cache
def _ascii_words():
    """The code bits of every listed ASCII word (stop words of every language, vocabularies),
    for the compiled kernel's coding of ASCII tokens without the cache."""
    words = {w for w in (*stop_masks(), *_VOCABULARY_OF) if w.isascii()}
    return BACKEND.kernel.AsciiWords({word: _word_bits(word) for word in words}, BUCKET_SHIFT,
                                     BUCKET_BITS)


def token_codes(table: ElementTable) -> np.ndarray:
    """The code of every token of the page, in document order (the pieces' tokens one after
    the other), as the vector groups read it: its :data:`TITLE`, :data:`DIGIT` and
    :data:`STOP` bits (a stop word of the page's language,
    :func:`noisecbr.features.language.page_language`) and its vocabulary."""
    return for_language(word_codes(table), table_language(table), STOP) & VECTOR_BITS


def table_language(table: ElementTable) -> int | None:
    """:func:`~noisecbr.features.language.page_language` of the page's tokens, found once per
    page and kept with the table (the vectors' stop words and the byline read it)."""
    return table.memo("language", lambda t: page_language(word_codes(t)))


def token_buckets(table: ElementTable) -> np.ndarray:
    """The lexical bucket of every token of the page (:func:`~noisecbr.features.lexical.bucket`
    of its lower case), in document order."""
    return (word_codes(table) >> BUCKET_SHIFT) & ((1 << BUCKET_BITS) - 1)


def word_codes(table: ElementTable) -> np.ndarray:
    """The tokens' full codes (with their buckets and the bits of every language whose stop
    words hold them), computed once per page and kept with the table: the vector groups and
    the lexical fields read them. One cached dict lookup per token (in the compiled kernel,
    ASCII tokens are coded in C from the pieces' texts, with no str made for them, and the
    others looked up in a C loop)."""
    return table.memo("word_codes", _coded)


def _coded_pure(table: ElementTable) -> np.ndarray:
    """The tokens' codes, by dict lookups (the reference of the kernel's)."""
    tokens = list(itertools.chain.from_iterable(table.piece_tokens))
    codes = np.fromiter(map(_codes.get, tokens, itertools.repeat(-1)), dtype=np.int64,
                        count=len(tokens))
    for k in np.flatnonzero(codes < 0).tolist():  # tokens not seen before
        codes[k] = _code(tokens[k])
    return codes


def _coded_compiled(table: ElementTable) -> np.ndarray:
    return BACKEND.kernel.text_codes(table.piece_text, table.piece_words, _codes, _code,
                                     _ascii_words(), TITLE, DIGIT)


_coded = BACKEND.dispatch(_coded_pure, _coded_compiled)


def element_word_codes(table: ElementTable, elements: np.ndarray, head: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The :func:`word_codes` of each of ``elements``' words (of its first ``head`` only, when
    given), one run after the other, with where each run starts and its length: what a rule
    reads of a few candidates' words without a pass over the page's (every element given must
    have words)."""
    offsets = cumulative(table.piece_words, np.int64)
    start = offsets[table.piece_start[elements]]
    end = offsets[table.piece_end[elements]]
    lengths = (end if head is None else np.minimum(start + head, end)) - start
    first = np.cumsum(lengths) - lengths
    codes = word_codes(table)[np.repeat(start - first, lengths) + np.arange(lengths.sum())]
    return codes, first, lengths


def vocabularies_of(codes: np.ndarray) -> np.ndarray:
    """Each full token code's furniture vocabulary: an index into VOCABULARIES, −1 for none."""
    return ((codes >> VOCABULARY_SHIFT) & ((1 << VOCABULARY_BITS) - 1)) - 1


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
