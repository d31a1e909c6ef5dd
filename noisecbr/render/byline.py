"""The byline: "By Ann Reporter, 2 March 2025" is metadata, not body text.

A page shows its author near the top of the article, in a short block of its own. The network
keeps such a block on many pages (255 of dragnet's 1 381 with the embedded model of
2026-11-23), so the cleaner looks for it among the first blocks of the text it kept (and, for
the author's name, among the few blocks the walk removed between them): the largest element
around one of those text pieces that has at most :data:`BYLINE_MAX_WORDS` words and reads as a
byline, that is, it starts with "By" and a capitalised word (or "Von", "Por", "Par", "Di"…
and a name of two capitalised words), or it holds every word of the author the page declares.
It leaves the text like the headline, and when the page declares no author, the name it gives
becomes ``CleanResult.author``: the element of the block that holds the name when it has one
of its own (a link), else the words after "By" up to a comma, a date or a title.

Measured with the embedded model (``noisecbr bench``, 2026-11-23). The ground truths disagree
on bylines. modernweb-dev's leaves them out: 33 of its pages hold one, none in the truth, and
its F1 stays 0.808. dragnet's keeps them (221 of its 255): F1 0.899 → 0.898 (recall 0.935 →
0.930, article-only truth). Readability's pages: 0.930 → 0.931; cleaneval-dev: 0.873, unchanged.
"""

from __future__ import annotations

import re

import numpy as np

from ..features.language import LANGUAGES
from ..features.tokens import table_language
from ..prepare.subtrees import WORD, ElementTable
from ..settings import BYLINE_MAX_WORDS, BYLINE_REMOVED_PIECES, BYLINE_WITHIN_PIECES, active

__all__ = ["BYLINE_MAX_WORDS", "BYLINE_REMOVED_PIECES", "BYLINE_WITHIN_PIECES", "author_of",
           "classed_author", "find_byline"]


#: "By" and its kin, then a name: its first letter is checked to be a capital (the pattern is
#: case-insensitive for the prefix only: "by the way" is not a byline).
_BY = re.compile(r"^\W*(?i:by|posted by|written by|words by|story by|text by|reported by)"
                 r"\s+([^\W\d_])")
#: The same in other languages, each read only on a page in its language (English headings
#: open with "Door Hardware…", "Von Miller Signs…"): German "Von", Spanish and Portuguese
#: "Por", French "Par", Italian "Di", Dutch "Door", Scandinavian "Av"/"Af", "Autor:"… These
#: open ordinary sentences too ("Von Berlin aus…", "Di recente…"), so a name must follow: two
#: words that both start with a capital.
BY_IN_LANGUAGE = {
    "de": "von|autor|autorin", "es": "por|autor|autora", "pt": "por|autor|autora",
    "fr": "par|auteur", "it": "di|autore", "nl": "door", "sv": "av", "nb": "av", "da": "af",
    "pl": "autor|autorka", "cs": "autor|autorka", "tr": "yazar", "ru": "автор", "uk": "автор",
}
_BY_ELSEWHERE = {language: re.compile(rf"^\W*(?i:{prefixes})\s*:?\s+([^\W\d_])[\w'’.-]*\s+"
                                      r"([^\W\d_])")
                 for language, prefixes in BY_IN_LANGUAGE.items()}
#: Where the name in a byline ends: a comma, a separator, " on <date>", a digit, a new line.
_NAME_END = re.compile(r"\s*(?:[,|•·/\n»«]|\s[-–—]\s|\son\s|\d)")
#: Words that end a name run on into what follows it in the byline's text ("Sara Brown Apr",
#: "Patrick J. Kiger POSTED Oct"): a month's or a day's name, a word in capitals, a title. A
#: name keeps its first two words whatever they are ("Theresa May").
_NOT_NAME = re.compile(
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tues?(?:day)?|"
    r"wed(?:nesday)?|thu(?:rs?)?(?:day)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\.?|"
    r"senior|staff|chief|editor|reporter|writer|correspondent|contributor|columnist|"
    r"verified|updated|published|posted", re.I)


def find_byline(table: ElementTable, kept: np.ndarray,
                author: str | None) -> tuple[int, str | None] | None:
    """The table index of the page's byline element and the name it gives (:func:`author_of`),
    or None. ``kept``: per text piece, whether the text shows it (the decisions and the
    headline applied). The page's language (read off its words) says which words besides "By"
    open a byline.

    The byline is looked for among the first :data:`BYLINE_WITHIN_PIECES` kept pieces; when
    the page declares no ``author``, also among the first :data:`BYLINE_REMOVED_PIECES` pieces
    the walk removed between those and the :data:`BYLINE_WITHIN_PIECES` removed just before them
    (the network removes many bylines as furniture: their name is still the page's author)."""
    language = table_language(table)
    language = LANGUAGES[language] if language is not None else None
    words = table.subtree_words()
    kept_total = int(table.piece_words[kept].sum())
    author_words = set(WORD.findall(author.lower())) if author else set()
    rules = active()
    first = np.flatnonzero(kept)[:rules.byline_within_pieces].tolist()
    candidates = first
    if author is None and first:
        # A byline stands by the article's first paragraphs: the removed pieces among them,
        # in document order, then the few just before them, nearest first.
        removed = np.flatnonzero(~kept[:first[-1]])
        among = removed[removed > first[0]][:rules.byline_removed_pieces]
        before = removed[removed < first[0]][::-1][:rules.byline_within_pieces]
        candidates = first + among.tolist() + before.tolist()
    for piece in candidates:
        block = _short_block(table, words, int(table.piece_owner[piece]))
        if block is None:
            continue
        start, end = table.piece_start[block], table.piece_end[block]
        if int(table.piece_words[start:end][kept[start:end]].sum()) >= kept_total:
            return None  # the whole text: a page that says only who wrote it keeps that
        text = " ".join(table.piece_text[start:end])
        if _by_name(text, language) or (
                author_words and author_words <= set(WORD.findall(text.lower()))):
            return block, _author_in_block(table, block, language)
    return None


def _author_in_block(table: ElementTable, block: int, language: str | None) -> str | None:
    """The name the byline ``block`` gives: where the name is an element of its own ("By
    <a>Ann Reporter</a> Apr 2"), that element's text; else :func:`author_of` of the block's
    text."""
    start, end = int(table.piece_start[block]), int(table.piece_end[block])
    pieces = [" ".join(piece.split()) for piece in table.piece_text[start:end]]
    text = " ".join(piece for piece in pieces if piece)
    match = _by_name(text, language)
    if match is None:
        return author_of(text, language)
    offset = 0
    for k, piece in enumerate(pieces, start):
        if piece and offset <= match.start(1) < offset + len(piece):
            owner = int(table.piece_owner[k])
            if owner != block and text[offset:match.start(1)].strip() == "":
                named = " ".join(table.piece_text[table.piece_start[owner]:
                                                  table.piece_end[owner]])
                return _trimmed(_NAME_END.split(" ".join(named.split()), maxsplit=1)[0])
            break
        offset += len(piece) + 1 if piece else 0
    return author_of(text, language)


def _short_block(table: ElementTable, words: np.ndarray, element: int) -> int | None:
    """The largest element around ``element`` (itself included) of at most
    :data:`BYLINE_MAX_WORDS` words, or None."""
    block, most = None, active().byline_max_words
    while element >= 0 and words[element] <= most:
        block, element = element, int(table.parent[element])
    return block


def _by_name(text: str, language: str | None = None) -> re.Match | None:
    """The match of "By" (or its kin in the page's ``language``) and a name at the start of
    ``text``, if it reads so."""
    match = _BY.match(text)
    if match and match.group(1).isupper():
        return match
    elsewhere = _BY_ELSEWHERE.get(language or "")
    match = elsewhere.match(text) if elsewhere is not None else None
    if match and match.group(1).isupper() and match.group(2).isupper():
        return match
    return None


def author_of(byline: str, language: str | None = None) -> str | None:
    """The name a byline gives ("By Ann Reporter, 2 March 2025" → "Ann Reporter"), None when
    it does not start with "By" (or its kin in ``language``) and a name.

    >>> author_of("By Mara Quinn, 4 March 2025"), author_of("Posted by Ann Li on May 2")
    ('Mara Quinn', 'Ann Li')
    >>> author_of("Von Anna Schmidt | 19.11.2025", "de"), author_of("Por Lucía Martín", "es")
    ('Anna Schmidt', 'Lucía Martín')
    >>> author_of("Von Berlin aus fährt er", "de"), author_of("Door Hardware Buying Guide")
    (None, None)
    >>> author_of("By Sara Brown Apr 2"), author_of("By Patrick J. Kiger POSTED Oct 2")
    ('Sara Brown', 'Patrick J. Kiger')
    >>> author_of("By Theresa May, Prime Minister")
    'Theresa May'
    """
    text = " ".join(byline.split())
    match = _by_name(text, language)
    if match is None:
        return None
    return _trimmed(_NAME_END.split(text[match.start(1):], maxsplit=1)[0])


def _trimmed(name: str) -> str | None:
    """``name`` cut at the first word past its second that ends a name (:data:`_NOT_NAME`)."""
    words = name.split()
    for k in range(2, len(words)):
        if _NOT_NAME.fullmatch(words[k]) or (len(words[k]) > 2 and words[k].isupper()):
            words = words[:k]
            break
    return " ".join(words) or None


#: A class or id that names an author's element ("author", "author-name", "byline__author",
#: "username", "posted-by"), not its picture, biography, links or list of posts.
_AUTHOR_CLASS = re.compile(
    r"(?:^|[\s_-])(?:author(?:[_-]?name)?|byline|user[_-]?name|posted[_-]?by|creator)(?=$|[\s_-])",
    re.IGNORECASE)
_NOT_AUTHOR_CLASS = re.compile(r"avatar|image|img|photo|bio|desc|link|social|list|box|about",
                               re.IGNORECASE)


def classed_author(table: ElementTable, max_words: int | None = None) -> str | None:
    """The author a page names in an element its markup calls the author's (by class or id:
    :data:`_AUTHOR_CLASS`), for a page that declares none and shows no byline: the first such
    element whose text is a short name ("By " and a trailing date cut as in a byline)."""
    classes, ids = table.keyword_values[0], table.keyword_values[1]
    # Class and id values repeat: each distinct one is matched once.
    named = {value for value in {*classes, *ids} - {None}
             if _AUTHOR_CLASS.search(value) and not _NOT_AUTHOR_CLASS.search(value)}
    if not named:
        return None
    words = table.subtree_words()
    most = active().byline_max_words if max_words is None else max_words
    for i in (i for i, (c, d) in enumerate(zip(classes, ids)) if c in named or d in named):
        if not 0 < words[i] <= most + 2:
            continue
        text = " ".join(" ".join(table.piece_text[table.piece_start[i]:table.piece_end[i]]).split())
        name = author_of(text) or _trimmed(_NAME_END.split(text, maxsplit=1)[0])
        if name and not any(ch.isdigit() for ch in name):
            return name
    return None
