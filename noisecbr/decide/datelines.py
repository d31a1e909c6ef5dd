"""A dateline is metadata, not body text.

"Updated 0339 GMT (1139 HKT) November 19, 2019", "PUBLISHED: November 19, 2019 at 8:59 pm",
"Publicado: 19 de noviembre de 2025, 08:59", "vor 3 Stunden": a short block of dates, times and
the words that announce them. The network keeps many such blocks (they sit inside the article
box, beside the text); the article-body truths never hold them. A block the walk kept of at most
:data:`DATELINE_WORDS` words is a dateline when at least :data:`DATELINE_SHARE` of its words
are digits or dateline words (the ``dateline`` vocabulary of
:mod:`noisecbr.features.furniture`, in 15 languages) and one of them announces a publication
(:data:`ANNOUNCING`): a line of dates alone may be a schedule a reader came for. It leaves
the text as the byline does.
"""

from __future__ import annotations

import numpy as np

from ..features.tokens import DIGIT, VOCABULARIES, element_word_codes, vocabularies_of
from ..prepare.subtrees import WORD, ElementTable
from ..result import DATA
from ..settings import DATELINE_SHARE, DATELINE_WORDS, active

__all__ = ["DATELINE_WORDS", "DATELINE_SHARE", "ANNOUNCING", "datelines"]

#: The words that announce a publication date (the rest of the dateline vocabulary is months,
#: units of time and time zones).
ANNOUNCING = frozenset(
    "published updated posted publicado actualizado veröffentlicht aktualisiert publié "
    "pubblicato aggiornato atualizado gepubliceerd bijgewerkt опубликовано обновлено "
    "opublikowano aktualizacja yayınlanma güncelleme publicerad uppdaterad publikováno "
    "aktualizováno".split())
_DATELINE = list(VOCABULARIES).index("dateline")


def datelines(table: ElementTable, decision: np.ndarray,
              recalled: np.ndarray | None = None) -> np.ndarray:
    """The kept elements that are datelines (see the module docstring); never one a site
    memory decided (``recalled`` ≥ 0)."""
    words = table.subtree_words()
    free = recalled < 0 if recalled is not None else True
    rules = active()
    candidates = np.flatnonzero((decision == DATA) & (words > 0)
                                & (words <= rules.dateline_words) & free)
    if not len(candidates):
        return candidates
    codes, first, lengths = element_word_codes(table, candidates)
    dated = ((codes & DIGIT) > 0) | (vocabularies_of(codes) == _DATELINE)
    share = np.add.reduceat(dated.astype(np.int64), first) / lengths
    likely = np.flatnonzero(share >= rules.dateline_share)
    if not len(likely):
        return likely
    out = []
    for k in likely.tolist():  # only where a dateline is likely are its words read
        i = int(candidates[k])
        text = " ".join(table.piece_text[int(table.piece_start[i]):int(table.piece_end[i])])
        if any(token.lower() in ANNOUNCING for token in WORD.findall(text)):
            out.append(i)
    return np.asarray(out, dtype=np.int64)
