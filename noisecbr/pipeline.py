"""The cleaning pipeline, stage by stage, over values:

    page = prepare(html)                              # tidy → body → element table
    proba = score(page, model)                        # features → network → class scores
    decisions = decide(page, proba, thresholds)       # the walk, the fallback, the rules
    result = render(page, decisions)                  # text, Markdown, HTML, comments, metadata

:class:`~noisecbr.cleaner.Cleaner` composes them with one model and its settings (its ``clean``
fuses the middle two: :func:`score_and_decide` scores only the subtrees the walk reaches, with
the same decisions); a caller that needs a stage alone (the thresholds' search of
:mod:`training.modes` walks one page's scores under many thresholds, the review page explains
the decisions it renders) calls that stage.

After the walk (:mod:`noisecbr.decide.walk`): when it kept almost nothing of a page that has text,
:mod:`noisecbr.decide.fallback` keeps the subtree with the most data mass instead, and the result
says so (``CleanResult.fallback``); otherwise a furniture heading goes with the box the walk removed
(:mod:`noisecbr.decide.orphans`) and a dateline leaves the text (:mod:`noisecbr.decide.datelines`).
In the result, the page's headline (declared in its metadata, :mod:`noisecbr.prepare.metadata`) is
taken out of the text into ``CleanResult.title`` and a byline into ``author``
(:mod:`noisecbr.render.byline`).
"""

from __future__ import annotations

from .decide.decisions import Decisions, NoiseEvidence, decide, score_and_decide
from .prepare.page import Page, prepare
from .render.page import render
from .score.rows import RowScores, score

__all__ = ["Decisions", "NoiseEvidence", "Page", "RowScores", "decide", "prepare", "render",
           "score", "score_and_decide"]
