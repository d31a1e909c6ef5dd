"""The page's language, read off its words, and the stop words of that language.

The ``text`` group's stop-word share tells running text from menus and link lists in any
language only with that language's stop words. They come from jusText's stoplists, the lists
jusText's own boilerplate removal reads stop-word density with (``noisecbr/data/
stoplists.json``, written by ``tools/make_stoplists.py``; BSD 2-Clause, its notice is in the
file), for the :data:`LANGUAGES` of most web pages.

Every token's code carries a bit per language whose list holds it (:data:`LANGUAGE_SHIFT`);
the page's language is the one whose stop words are most of its tokens (:func:`page_language`:
jusText's own way of guessing a language), and its bit becomes the code's stop-word bit
(:func:`for_language`). The language is read off the words, not the page's ``lang``: a stored
page keeps its body only, and ``lang="en"`` sits on many a page in another language. A page
without enough stop words of any language (Japanese, Chinese, a page of names and numbers) has
none, and no stop words.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

from ..native.backend import BACKEND
from ..settings import MIN_STOP_SHARE, MIN_STOP_TOKENS

__all__ = ["LANGUAGES", "LANGUAGE_SHIFT", "LANGUAGE_MASK", "MIN_STOP_TOKENS", "stop_masks",
           "page_language", "for_language"]

#: The languages of the stoplists, in the order of their bits (ISO 639-1 codes).
LANGUAGES: tuple[str, ...] = (
    "en", "de", "es", "fr", "it", "pt", "nl", "ru", "pl", "tr", "sv", "cs", "da", "nb", "fi",
    "hu", "ro", "el", "bg", "uk", "ar", "fa", "he", "id", "vi", "hi", "sk", "hr", "ca", "sr")
#: Where a token code's language bits start (the bits below hold its case, digits, stop-word
#: bit and vocabulary: :mod:`noisecbr.features.tokens`).
LANGUAGE_SHIFT = 32
LANGUAGE_MASK = ((1 << len(LANGUAGES)) - 1) << LANGUAGE_SHIFT
#: Longer entries of a stoplist are left out: no stop word is that long, and the compiled
#: kernel's table of ASCII words holds words of up to 23 bytes.
MAX_STOP_WORD = 20


@functools.cache
def stop_masks() -> dict[str, int]:
    """Per stop word (lower case), the bits of the languages whose list holds it (bit k:
    LANGUAGES[k]), read once from the package's stoplists."""
    path = resources.files("noisecbr") / "data" / "stoplists.json"
    lists = json.loads(path.read_text(encoding="utf-8"))["languages"]
    masks: dict[str, int] = {}
    for bit, code in enumerate(LANGUAGES):
        for word in lists[code].split():
            if len(word.encode("utf-8")) <= MAX_STOP_WORD:
                masks[word] = masks.get(word, 0) | 1 << bit
    return masks


def _language_counts_pure(codes: np.ndarray) -> np.ndarray:
    """How many of the tokens each language's stop words hold (``codes``: their codes)."""
    bits = (np.asarray(codes, dtype=np.int64) >> LANGUAGE_SHIFT).astype("<u4")
    return np.unpackbits(bits.view(np.uint8).reshape(-1, 4), axis=1,
                         bitorder="little")[:, :len(LANGUAGES)].sum(axis=0, dtype=np.int64)


def _language_counts_compiled(codes: np.ndarray) -> np.ndarray:
    # A C loop over the set bits only.
    return BACKEND.kernel.bit_counts(np.ascontiguousarray(codes, dtype=np.int64),
                                     LANGUAGE_SHIFT, len(LANGUAGES))


_language_counts = BACKEND.dispatch(_language_counts_pure, _language_counts_compiled)


def page_language(codes: np.ndarray) -> int | None:
    """The index in LANGUAGES of the language whose stop words are most of the page's tokens
    (``codes``: the tokens' codes with their language bits), None when none is clear."""
    if not len(codes):
        return None
    counts = _language_counts(codes)
    best = int(np.argmax(counts))
    if counts[best] < max(MIN_STOP_TOKENS, MIN_STOP_SHARE * len(codes)):
        return None
    return best


def for_language(codes: np.ndarray, language: int | None, stop_bit: int) -> np.ndarray:
    """The codes with the stop-word bit of ``language`` (none for None) and no language bits."""
    codes = np.asarray(codes, dtype=np.int64)
    out = codes & ~(LANGUAGE_MASK | stop_bit)
    if language is not None:
        out |= ((codes >> (LANGUAGE_SHIFT + language)) & 1) * stop_bit
    return out
