"""The correction queue (noisecbr_apps.corrections): which boxes of a decided page a reviewer sees
first."""

from __future__ import annotations

import numpy as np

from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.result import DATA, MIXTURE, NOISE
from noisecbr_apps.corrections import Recurrence, rank_boxes, settled_boxes

#: One page of a small site: a menu (3 words) the site repeats, a one-off promo (7 words in a
#: <p> inside its own wrapper), the story, and a footer the site repeats.
PAGE = ("<body><nav class=menu><a>Home</a> <a>News</a> <a>Sport</a></nav>"
        "<div class=promo><p>Win a trip to the sea today</p></div>"
        "<main><p>The story of the harbour wall and its repairs.</p>"
        "<p>More words of the same story here.</p></main>"
        "<footer class=foot>Contact us about this page</footer></body>")
# body, nav, a, a, a, div.promo, p, main, p, p, footer
UNSURE = [0.5, 0.45, 0.05, 0.0]  # noise / data / mixture / comment
PROBA = np.array([[0.0, 0.0, 1.0, 0.0], UNSURE, UNSURE, UNSURE, UNSURE,
                  [0.05, 0.05, 0.9, 0.0], UNSURE, [0.01, 0.98, 0.01, 0.0],
                  [0.01, 0.98, 0.01, 0.0], [0.01, 0.98, 0.01, 0.0],
                  [0.99, 0.005, 0.005, 0.0]])
# The walk: the menu removed, the promo's wrapper descended into and its <p> kept, the story
# kept whole, the footer removed.
DECISION = np.array([MIXTURE, NOISE, -1, -1, -1, MIXTURE, DATA, DATA, -1, -1, NOISE])


def _site(pages: int = 3) -> Recurrence:
    """The site's other pages: each with the menu and the footer, none with the promo."""
    other = ("<body><nav class=menu><a>Home</a></nav><main><p>Another story {k}.</p></main>"
             "<footer class=foot>Contact</footer></body>")
    return Recurrence(build_table(tidy(other.format(k=k))) for k in range(pages))


def test_a_recurring_unsure_box_outranks_a_one_off_and_a_confident_one_ranks_low():
    table = build_table(tidy(PAGE))
    queue = rank_boxes(table, PROBA, DECISION, _site())
    paths = [entry.path for entry in queue]
    # The menu holds 3 words on 4 pages, the promo 7 on this one: one click on the menu
    # changes more of the site. Both are unsure (0.45 that a person keeps what was removed,
    # 0.5 that they remove what was kept); the footer and the story are confident.
    assert paths[:2] == ["/html/body/nav", "/html/body/div/p"]
    menu, promo = queue[0], queue[1]
    assert (menu.words, menu.recurrence, menu.decision) == (3, 4, "noise")
    assert (promo.words, promo.recurrence, promo.decision) == (7, 1, "data")
    assert menu.uncertainty == 0.45 and promo.uncertainty == 0.5
    assert menu.score > promo.score > max(entry.score for entry in queue[2:])
    assert set(paths[2:]) == {"/html/body/main", "/html/body/footer"}
    # Alone (no other page of the site known), the promo's 7 words come first.
    assert [e.path for e in rank_boxes(table, PROBA, DECISION)][:2] == [
        "/html/body/div/p", "/html/body/nav"]


def test_a_box_and_its_wrapper_are_listed_once_and_only_decided_boxes_with_words():
    table = build_table(tidy(PAGE))
    paths = [entry.path for entry in rank_boxes(table, PROBA, DECISION, _site())]
    # The promo's wrapper holds the same 7 words as its <p>: one entry, the better one (the
    # <p>, unsure; the wrapper is sure it is mixture).
    assert "/html/body/div" not in paths and paths.count("/html/body/div/p") == 1
    # Not the body, nor the links inside the removed menu (the walk never reaches them).
    assert "/html/body" not in paths and not any("/a" in path for path in paths)
    assert len(paths) == len(set(paths)) == 4


def test_one_label_for_twins_of_one_markup_that_need_two_ranks_last():
    # Two untitled tables: a menu the network is unsure of, and the article it keeps. A label
    # on the menu decides the article's table too (same markup): that click ranks last.
    html = ("<body><table><tr><td>Home News Sport Weather</td></tr></table>"
            "<table><tr><td>" + "The long story of the town. " * 5 + "</td></tr></table>"
            "<div class=ad>Buy our shoes now</div></body>")
    table = build_table(tidy(html))
    paths = table.paths()
    first, second = paths.index("/html/body/table[1]"), paths.index("/html/body/table[2]")
    ad = paths.index("/html/body/div")
    proba = np.tile([0.0, 0.0, 1.0, 0.0], (len(table), 1))
    proba[first] = [0.45, 0.5, 0.05, 0.0]
    proba[second] = [0.01, 0.98, 0.01, 0.0]
    proba[ad] = [0.7, 0.2, 0.1, 0.0]
    decision = np.full(len(table), -1)
    decision[[0, first, second, ad]] = [MIXTURE, DATA, DATA, NOISE]
    queue = rank_boxes(table, proba, decision)
    assert [entry.path for entry in queue] == ["/html/body/div", "/html/body/table[2]",
                                               "/html/body/table[1]"]
    assert queue[-1].same_markup == 1 and queue[-1].score < 0 < queue[0].score
    # Its own words alone would have ranked it first (0.45 × 4 > 0.2 × 4).
    assert queue[-1].uncertainty * queue[-1].words > queue[0].uncertainty * queue[0].words


def test_settled_boxes_and_the_limit():
    table = build_table(tidy(PAGE))
    recalled = np.full(len(table), -1)
    recalled[1] = NOISE  # the site's labels already remove the menu
    settled = settled_boxes(len(table), recalled, [()] * len(table))
    paths = [e.path for e in rank_boxes(table, PROBA, DECISION, _site(), settled=settled)]
    assert "/html/body/nav" not in paths and paths[0] == "/html/body/div/p"
    stored = [()] * len(table)
    stored[10] = (7,)  # a stored case carries the footer's markup
    assert settled_boxes(len(table), None, stored).tolist() == [False] * 10 + [True]
    assert len(rank_boxes(table, PROBA, DECISION, _site(), limit=2)) == 2
    assert rank_boxes(table, PROBA, DECISION, limit=0) == []


def test_recurrence_counts_pages_not_elements_and_leaves_the_reviewed_page_out():
    pages = [build_table(tidy("<ul class=list><li>a</li><li>b</li><li>c</li></ul>")),
             build_table(tidy("<ul class=list><li>d</li></ul><p>e</p>"))]
    site = Recurrence(pages)
    assert site.pages == 2
    # body, ul, li, li, li: each on both pages (one page, however many items).
    assert site.of(pages[0]).tolist() == [3, 3, 3, 3, 3]
    alone = site.without(pages[0])
    assert alone.pages == 1 and alone.of(pages[0]).tolist() == [2, 2, 2, 2, 2]
    # The second page, under review, against the first: its <p> is on no other page.
    assert site.without(pages[1]).of(pages[1]).tolist() == [2, 2, 2, 1]
    entry = rank_boxes(pages[1], np.tile(UNSURE, (4, 1)),
                       np.array([MIXTURE, NOISE, -1, DATA]))[0]
    assert set(entry.to_dict()) == {"index", "path", "decision", "probabilities", "words",
                                    "uncertainty", "same_markup", "recurrence", "score"}
