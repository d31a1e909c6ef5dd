"""The phrases of page furniture's widgets, in the web's main languages: a feedback question
and its answers, an edit link, a last-updated line, previous / next labels
(:mod:`noisecbr.decide.widgets` finds the widgets; here only text is read, lower case with its
whitespace collapsed).

A text is furniture when it is these phrases and nothing else (:func:`is_furniture_text`):
"was this page helpful? yes no", "edit this page on github last updated on march 14, 2025 by
jdoe"; never prose that holds their words ("was this helpful to you? we think so", "it is often
helpful to…", eBay's "last updated on feb 25, 2026 05:32:07 pst view all revisions", whose last
words are no date).
"""

from __future__ import annotations

import re

from ..features.furniture import FURNITURE
from ..prepare.subtrees import WORD

__all__ = ["ANSWERS", "BY_WORDS", "DATE_WORDS", "EDIT", "FEEDBACK", "FEEDBACK_HEADING",
           "PREV_NEXT", "TRIGGER", "UPDATED", "is_answers", "is_furniture_text", "is_labels",
           "starts_with_label"]

#: What a page's documents are called in the phrases ("was this *page* helpful").
_THING = (r"(?:page|article|doc|docs|document|documentation|guide|tutorial|topic|section|post|"
          r"entry|content|information|info|answer|reply|help article|lesson|chapter|product "
          r"information|product|section|site)")

#: A feedback question, optionally after a "Feedback" heading: English, German, French,
#: Spanish, Portuguese, Italian, Dutch, Russian, Japanese, Chinese (lower case).
FEEDBACK = re.compile(
    r"(?:(?:page |content |article |doc |docs |documentation )?feedback[^\w]*)?(?:"
    rf"(?:was|is|were|are) (?:this|these|the)(?: {_THING})? (?:helpful|useful)"
    r"(?: (?:to|for) you)?"
    rf"|did (?:this|the)(?: {_THING})? (?:help(?: you)?|answer your question|solve your problem)"
    rf"|did you find (?:this|it|the {_THING}|this {_THING}) (?:helpful|useful)"
    rf"|how (?:helpful|useful) (?:was|is) (?:this|the) {_THING}"
    rf"|(?:please )?rate (?:this|the) {_THING}"
    r"|(?:war|ist) (?:diese seite|dieser artikel|dieses dokument|das|dies) hilfreich"
    r"|(?:cette page|cet article|ce document|cette réponse) (?:vous )?(?:a-t-elle|a-t-il|est-elle"
    r"|est-il) (?:été )?utile"
    r"|(?:¿)?(?:te |le )?(?:ha resultado|ha sido|fue|es|resultó) útil(?: (?:esta página|este "
    r"artículo|este contenido|esta información))?"
    r"|(?:esta página|este artigo|este conteúdo) (?:foi|é) útil"
    r"|(?:questa pagina|questo articolo) (?:ti )?(?:è stata|è stato|è) utile"
    r"|(?:was|is) (?:deze pagina|dit artikel) (?:nuttig|behulpzaam)"
    r"|(?:была ли )?(?:эта )?(?:статья|страница|информация) (?:была )?полезн\w*"
    r"|(?:この)?(?:ページ|記事|情報)は(?:お)?役に立ちましたか"
    r"|(?:这|此|本)(?:篇文章|个页面|页面|页|文档|内容)?(?:对您|对你)?(?:有帮助|有用)吗"
    r")")
#: The answers a feedback question offers ("Yes (12)", "👍", "Not sure").
ANSWERS = re.compile(
    r"(?:yes|no|not sure|not really|somewhat|kind of|yes, it was|thanks|thank you|ja|nein|oui|non"
    r"|sí|si|não|sim|nee|да|нет|はい|いいえ|是|否)(?: ?\(\d+\))?")
#: An edit link.
EDIT = re.compile(
    rf"(?:edit|improve|edit the source of|view or edit|suggest (?:an )?edits? (?:to|for|on)"
    rf"|suggest changes to|propose changes to) (?:this|the) {_THING}"
    r"(?: (?:on|in|at) (?:github|gitlab|bitbucket|codeberg))?"
    r"|edit (?:on|in) (?:github|gitlab|bitbucket|codeberg)|suggest an? (?:edit|change)"
    r"|(?:diese )?seite bearbeiten|modifier cette page|editar esta página|modifica questa pagina"
    r"|bewerk deze pagina|редактировать (?:эту )?страницу|このページを編集|编辑(?:此|本)页")
#: What opens a last-updated line; dates follow (:data:`DATE_WORDS`), then perhaps "by" and a
#: name of at most :data:`BY_WORDS` words.
UPDATED = re.compile(
    rf"(?:(?:this )?{_THING} (?:(?:was|has been|is) )?)?"
    r"last (?:updated|modified|edited|reviewed|changed|revised)(?: (?:on|at))?"
    rf"|{_THING} (?:updated|modified|reviewed|revised)(?: (?:on|at))?"
    r"|zuletzt (?:aktualisiert|geändert|bearbeitet)(?: am)?|letzte (?:aktualisierung|änderung)"
    r"|dernière (?:mise à jour|modification)(?: le)?|mis à jour le"
    r"|última (?:actualización|modificación|atualização)|actualizado por última vez(?: el)?"
    r"|ultimo aggiornamento|ultima modifica|laatst bijgewerkt(?: op)?"
    r"|последнее обновление|最終更新(?:日)?|最后更新(?:于|时间)?")
#: The words of a date beside digits: the dateline vocabulary's months, units and time zones
#: in every language (:mod:`noisecbr.features.furniture`), weekdays, and the small words
#: between them.
DATE_WORDS = frozenset(
    {w for text in FURNITURE["dateline"].values() for w in text.split()}
    | set("monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thurs "
          "fri sat sun am pm a m p second seconds sec secs minute hour day days week weeks "
          "month months year years at on of the a an about over almost ago just now today "
          "yesterday um am de del el à às le alle il op om z utc cet cest est cst mst pdt cdt "
          "mdt ist jst aest".split()))
#: A last-updated line names at most this many words after "by" ("by MDN contributors").
BY_WORDS = 4
#: Previous / next labels, perhaps followed by what they lead to ("Next page", "Older posts");
#: a label stands alone or before a separator (:data:`_AFTER_LABEL`).
PREV_NEXT = re.compile(
    r"(?:previous|prev|next|newer|older|vorherige|vorheriger|nächste|nächster|zurück|weiter"
    r"|précédent|précédente|suivant|suivante|anterior|siguiente|próximo|próxima|precedente"
    r"|successivo|successiva|vorige|volgende|предыдущая|следующая|前へ|次へ|上一页|下一页|上一篇"
    r"|下一篇)(?: (?:page|post|posts|article|articles|entry|entries|chapter|lesson|section|step"
    r"|topic|tutorial|product|story|stories|item|guide|doc|seite|beitrag|artikel|página|pagina"
    r"|article|entrada))?")
#: What may follow a label: its end, a colon, a bar or an arrow, or a dash or slash between
#: spaces, then the title ("Next-day refunds" is a title, not a label).
_AFTER_LABEL = re.compile(r"(?:$|\s*[:|→»›>←«‹<]|\s+[-–—/])")
#: A heading a feedback widget may open with.
FEEDBACK_HEADING = re.compile(r"(?:page |content |article |doc |docs )?feedback")
#: The words every furniture phrase holds: only the texts that hold one are read (a page's
#: other texts cost one search, 0.5 ms a page). Written lower case, at a word's start; the
#: Japanese and Chinese ones anywhere (no spaces between words).
TRIGGER = re.compile(
    r"(?<!\w)(?:helpful|useful|help|feedback|rate|edit|improve|suggest|propose|updated|modified"
    r"|reviewed|changed|revised|previous|prev|next|newer|older|hilfreich|utile|útil|nuttig"
    r"|behulpzaam|полезн|bearbeit|modifi|editar|bewerk|редакт|aktualisier|geändert|letzte"
    r"|dernière|mis à jour|actualiz|última|atualiza|ultim|laatst|последнее|vorherig|nächst"
    r"|zurück|weiter|précédent|suivant|anterior|siguiente|próxim|precedente|successiv|vorige"
    r"|volgende|предыдущ|следующ|была|статья|страниц|эта|информац)"
    r"|役に立|有帮助|有用|編集|编辑|最終更新|最后更新|前へ|次へ|上一|下一")
#: Separators between phrases: anything but word characters.
_SEPARATORS = re.compile(r"[\W_]*")


def is_furniture_text(text: str) -> bool:
    """Whether ``text`` (lower case, whitespace collapsed) is feedback questions and their
    answers, edit links and last-updated lines, and nothing else."""
    at, end, phrases = 0, len(text), 0
    while True:
        at = _SEPARATORS.match(text, at).end()
        if at == end:
            return phrases > 0
        moved = _phrase_end(text, at)
        if moved is None:
            return False
        at, phrases = moved, phrases + 1


def starts_with_label(text: str) -> bool:
    """Whether ``text`` starts with a previous / next label that stands alone or before a
    separator ("← previous: installation", "next page →"; not "next steps", "next-day")."""
    label = PREV_NEXT.match(text, _SEPARATORS.match(text).end())
    return label is not None and _AFTER_LABEL.match(text, label.end()) is not None


def _phrase_end(text: str, at: int) -> int | None:
    """Where the furniture phrase that starts at ``at`` ends (its answers or its dates
    included), None when none starts there."""
    feedback = FEEDBACK.match(text, at)
    if feedback is not None and _ends_word(text, feedback.end()):
        at = feedback.end()
        while True:  # the answers it offers
            gap = _SEPARATORS.match(text, at).end()
            answer = ANSWERS.match(text, gap)
            if answer is None or not _ends_word(text, answer.end()):
                return at
            at = answer.end()
    edit = EDIT.match(text, at)
    if edit is not None and _ends_word(text, edit.end()):
        return edit.end()
    updated = UPDATED.match(text, at)
    if updated is not None and _ends_word(text, updated.end()):
        return _dates_end(text, updated.end())
    return None


def _dates_end(text: str, at: int) -> int | None:
    """The end of the dates after a last-updated opening (and of "by" and a name), None when
    no date follows (eBay's "Last updated on … View all revisions" is not a line of dates)."""
    dated = False
    position = at
    for token in WORD.finditer(text, at):
        word = token.group()
        if word == "by" and dated and not text[position:token.start()].strip(" ,:"):
            return _name_end(text, token.end())
        if not (any(c.isdigit() for c in word) or word in DATE_WORDS):
            break
        dated = dated or any(c.isdigit() for c in word) or word not in _SMALL_WORDS
        position = token.end()
    return position if dated else None


def _name_end(text: str, at: int) -> int | None:
    """The end of the name after a last-updated line's "by": at most BY_WORDS words, then the
    text's end or another phrase."""
    for k, name in enumerate(WORD.finditer(text, at)):
        if k == BY_WORDS:
            break
        rest = _SEPARATORS.match(text, name.end()).end()
        if rest == len(text) or _phrase_end(text, rest) is not None:
            return name.end()
    return None


#: The date words that are no date on their own.
_SMALL_WORDS = frozenset("at on of the a an about over almost just um am de del el à às le alle "
                         "il op om".split())


def _ends_word(text: str, at: int) -> bool:
    """Whether a match ending at ``at`` ends on a word's end."""
    return at == len(text) or not (text[at].isalnum() or text[at] == "_")


def is_labels(text: str) -> bool:
    """Whether ``text`` is previous / next labels and separators only."""
    at = 0
    while True:
        at = _SEPARATORS.match(text, at).end()
        if at == len(text):
            return True
        label = PREV_NEXT.match(text, at)
        if label is None or not _ends_word(text, label.end()):
            return False
        at = label.end()


def is_answers(text: str) -> bool:
    """Whether ``text`` is a feedback question's answers only ("Yes", "👍 No")."""
    at, answers = 0, 0
    while True:
        at = _SEPARATORS.match(text, at).end()
        if at == len(text):
            return answers > 0
        answer = ANSWERS.match(text, at)
        if answer is None or not _ends_word(text, answer.end()):
            return False
        at, answers = answer.end(), answers + 1
