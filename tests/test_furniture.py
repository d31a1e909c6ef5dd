"""Page furniture — a feedback widget, an edit link, a last-updated line, previous / next links —
is removed on every kind of page and in every walk mode, the content kept whole (issue 54: a
documentation page, walked in the recall mode, kept "Was this page helpful? Yes No").

The fixture pages were written for these tests (tests/fixtures/furniture/), from no site of the
development data.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import FIXTURES

from noisecbr import Cleaner, Settings
from noisecbr.decide.walk import MODES
from noisecbr.decide.widgets import furniture_widgets, is_furniture_text
from noisecbr.pipeline import prepare
from noisecbr.result import DATA, MIXTURE
from noisecbr.score.kind import KINDS

PAGES = FIXTURES / "furniture"

#: Per fixture: the furniture's strings (none may be in the text or the Markdown), and the
#: content's key sentences (every one must be).
FIXTURE_PAGES = {
    "documentation": {
        "furniture": ["Was this page helpful?", "Edit this page on GitHub", "Last updated on",
                      "jdoe", "Previous: Installation", "Next: Configuration"],
        "content": [
            "A handler decides where a log record goes once a logger has accepted it.",
            "which is why a handler set on the root logger sees the records of every module.",
            "Adding a handler",
            'handler = RotatingFileHandler("shipping.log", max_bytes=5_000_000, backups=3)',
            "log.add_handler(handler)",
            "keeps three old files before deleting the oldest.",
            "Choosing a level per handler",
            "Setting the logger to",
            "Thread safety",
            "so records from different threads are never interleaved inside one line.",
            # Prose that says "helpful" and "previous" is not the widget.
            "it is often helpful to print the handlers of every logger on its path: the previous "
            "handler in the chain may have a higher level than you expect",
        ],
    },
    "article": {
        "furniture": ["Was this article helpful?", "👍", "Last updated on 12 February 2025",
                      "Suggest an edit", "Previous post", "Next post",
                      "The signal boxes that still use levers",
                      "Counting passengers with a clicker"],
        "content": [
            "Every December the overnight service between the northern coast and the capital",
            "The short answer is ice on the overhead wire.",
            "The previous timetable, written before the line was electrified, never allowed for "
            "this",
            "A de-icing train now runs ahead of the first freight service on the coldest nights",
            "Readers who found the old delays helpful to plan a later breakfast in the capital",
        ],
    },
    "product": {
        "furniture": ["Was this information helpful?", "Last updated: 3 March 2025",
                      "Previous product", "Next product", "Trail Table", "Ridge Chair"],
        "content": [
            "€39.00",
            "A three-legged stool with an oiled beech frame and a waxed canvas seat",
            "The legs are joined by a single brass pivot that can be tightened with a coin",
            "Oiled beech, brass pivot",
        ],
    },
    "listing": {
        "furniture": ["Was this section helpful?", "Last updated 2 days ago", "Previous page",
                      "Next page"],
        "content": [
            "How do I update the card I pay with?",
            "Change the payment card on your account before your next invoice is issued.",
            "Where can I download my invoices?",
            "Adding a VAT number to your invoices",
            "Refunds reach your card within five to ten working days of being approved.",
            # A title that starts with a label's word is a title ("Next-day", not "Next:").
            "Next-day refunds for annual plans",
            "Annual plans cancelled within two weeks are refunded the next working day.",
            "Switching plans keeps your data and credits the unused part of your current month.",
        ],
    },
}

#: The rule off: no element is small enough to be a widget.
NO_WIDGET_RULE = Settings(widget_words=0)
#: A feedback widget's answers, as words of their own.
ANSWER_WORDS = re.compile(r"\b(?:Yes|No)\b")


@pytest.fixture(scope="module")
def cleaner() -> Cleaner:
    return Cleaner()


def _page(name: str) -> bytes:
    return (PAGES / f"{name}.html").read_bytes()


def _assert_clean(result, name: str) -> None:
    expected = FIXTURE_PAGES[name]
    for output in (result.text, result.markdown):
        for furniture in expected["furniture"]:
            assert furniture not in output, (name, result.mode, furniture)
        assert not ANSWER_WORDS.search(output), (name, result.mode, ANSWER_WORDS.findall(output))
    for sentence in expected["content"]:
        assert sentence in result.text, (name, result.mode, sentence)


@pytest.mark.parametrize("name", sorted(FIXTURE_PAGES))
def test_furniture_is_gone_and_the_content_whole_on_each_kinds_page(cleaner, name):
    _assert_clean(cleaner.clean(_page(name)), name)


def test_the_documentation_page_is_read_as_documentation_and_walked_in_recall(cleaner):
    # The page: documentation, whose mode (recall) kept the feedback widget.
    result = cleaner.clean(_page("documentation"))
    assert result.page_type == "documentation" and result.mode == "recall"
    _assert_clean(result, "documentation")


@pytest.mark.parametrize("name", sorted(FIXTURE_PAGES))
@pytest.mark.parametrize("kind", KINDS)
def test_furniture_is_gone_whatever_kind_the_page_is_taken_for(cleaner, name, kind):
    result = cleaner.clean(_page(name), page_type=kind)
    assert result.mode == cleaner.kind_modes[kind]
    for output in (result.text, result.markdown):
        for furniture in FIXTURE_PAGES[name]["furniture"]:
            assert furniture not in output, (name, kind, furniture)
        assert not ANSWER_WORDS.search(output), (name, kind)


@pytest.mark.parametrize("name", sorted(FIXTURE_PAGES))
@pytest.mark.parametrize("favor", MODES)
def test_furniture_is_gone_in_every_walk_mode_and_no_content_with_it(name, favor):
    result = Cleaner(favor=favor).clean(_page(name))
    assert result.mode == favor
    for output in (result.text, result.markdown):
        for furniture in FIXTURE_PAGES[name]["furniture"]:
            assert furniture not in output, (name, favor, furniture)
        assert not ANSWER_WORDS.search(output), (name, favor)
    # What the walk keeps of the content in this mode (a mode may drop a line the network
    # doubts), the rule keeps too.
    walked = Cleaner(favor=favor, settings=NO_WIDGET_RULE).clean(_page(name)).text
    for sentence in FIXTURE_PAGES[name]["content"]:
        assert (sentence in result.text) == (sentence in walked), (name, favor, sentence)


# -- the rule itself, whatever the network scores ------------------------------------------------

#: A docs page whose body holds prose that names the furniture's words, and the furniture.
PROSE_AND_FURNITURE = """<html><head><title>Retries — Marlin docs</title></head><body>
<div class="docs-body">
<h1>Retries</h1>
<p>Was this helpful to you? We think so: most readers who asked for retries wanted them only on
timeouts, and the default policy retries nothing else.</p>
<p>The previous release retried every error, which made a failing request ten times slower
before it finally gave up. If you still need it, <a href="/docs/legacy">edit this page</a>'s
example and set <code>retry_on="any"</code>.</p>
<h2>Next steps</h2>
<ul><li><a href="/docs/backoff">Previous versions of the backoff policy</a></li>
<li><a href="/docs/next-gen">Next-generation retry budgets</a></li></ul>
<p>Last updated on Feb 25, 2026 05:32:07 PST View all revisions</p>
<section class="page-end">
<h2>Feedback</h2>
<p>Was this page helpful?</p>
<button type="button">Yes</button> <button type="button">No</button>
</section>
<div class="meta"><a href="https://github.test/marlin/edit/retries.md">Edit this page on GitHub</a>
<span>Last updated on March 14, 2025 by jdoe</span></div>
<nav><a href="/docs/timeouts">← Previous: Timeouts</a>
<a href="/docs/backoff">Next: Backoff →</a></nav>
</div></body></html>"""

PROSE_KEPT = [
    "Was this helpful to you? We think so: most readers who asked for retries",
    "The previous release retried every error",
    "edit this page's example",
    "Next steps",
    "Previous versions of the backoff policy",
    "Next-generation retry budgets",
    # eBay's revision line is a product page's content, not a line of dates.
    "Last updated on Feb 25, 2026 05:32:07 PST View all revisions",
]
FURNITURE_GONE = ["Feedback", "Was this page helpful?", "Edit this page on GitHub",
                  "March 14, 2025", "Previous: Timeouts", "Next: Backoff"]


class _KeepsEverything(Cleaner):
    """A cleaner whose network is sure every subtree is data: the walk keeps the page whole, so
    whatever goes is the rules' doing."""

    def score(self, page):
        proba = np.zeros((len(page.table), 4), dtype=np.float32)
        proba[:, DATA] = 1.0
        return proba


class _KeepsNothing(Cleaner):
    """A cleaner whose network calls every subtree noise: the fallback decides the page."""

    def score(self, page):
        proba = np.zeros((len(page.table), 4), dtype=np.float32)
        proba[:, 0] = 0.9
        proba[:, DATA] = 0.1
        return proba


@pytest.mark.parametrize("cleaner_type", [_KeepsEverything, _KeepsNothing])
def test_prose_that_names_furniture_stays_and_the_widgets_go(cleaner_type):
    result = cleaner_type().clean(PROSE_AND_FURNITURE)
    assert result.fallback == (cleaner_type is _KeepsNothing)
    text = " ".join(result.text.split())
    for kept in PROSE_KEPT:
        assert kept in text, kept
    for gone in FURNITURE_GONE:
        assert gone not in text and gone not in result.markdown, gone
    assert not ANSWER_WORDS.search(text)


def test_a_widget_inside_a_subtree_kept_whole_leaves_a_walks_decisions():
    # The walk kept the page whole; the widgets are carved out under mixtures, every other
    # child along the way kept as data: each element is decided once, as a walk decides.
    cleaner = _KeepsEverything()
    page = cleaner.prepare(PROSE_AND_FURNITURE)
    decision = cleaner.decide(page).decision
    table = page.table
    assert decision[0] == MIXTURE
    undecided_inside = np.zeros(len(table), dtype=bool)
    for i in range(len(table)):
        if undecided_inside[i]:
            assert decision[i] == -1
        elif decision[i] == MIXTURE:
            child = i + 1
            while child < table.end[i]:
                assert decision[child] >= 0, table.paths()[child]
                child = int(table.end[child])
        else:
            assert decision[i] >= 0, table.paths()[i]
            undecided_inside[i + 1:table.end[i]] = True


def test_the_names_cache_emptied_still_knows_the_absent_value(monkeypatch):
    # A page after the cache of attribute values filled up (generated class names fill it).
    from noisecbr.decide import widgets

    monkeypatch.setattr(widgets, "_NAMING_SIZE", 0)
    for _ in range(2):
        result = _KeepsEverything().clean(PROSE_AND_FURNITURE)
        assert "Edit this page on GitHub" not in result.text


def test_a_site_memorys_decision_stands():
    page = prepare(PROSE_AND_FURNITURE)
    decision = np.full(len(page.table), -1, dtype=np.int8)
    decision[0] = DATA
    recalled = np.full(len(page.table), -1, dtype=np.int8)
    assert furniture_widgets(page.table, decision)  # the widgets, without a memory
    recalled[:] = DATA
    assert furniture_widgets(page.table, decision, recalled) == []


@pytest.mark.parametrize("text", [
    "was this page helpful? yes no", "feedback was this page helpful to you? yes no",
    "was this article helpful? 👍 yes 👎 no", "edit this page on github",
    "suggest an edit to this article", "last updated on march 14, 2025 by jdoe",
    "last updated 1 year ago", "this page was last modified on jul 8, 2025 by mdn contributors.",
    "edit this page on github last updated on march 14, 2025 by jdoe",
    "war diese seite hilfreich? ja nein", "zuletzt aktualisiert am 3. märz 2025",
    "modifier cette page"])
def test_furniture_phrases_are_furniture(text):
    assert is_furniture_text(text)


@pytest.mark.parametrize("text", [
    "was this helpful to you? we think so.", "it is often helpful to print the handlers",
    "last updated on feb 25, 2026 05:32:07 pst view all revisions", "last updated on",
    "originally published in march 2022. last updated on december 20, 2024.",
    "edit the configuration file", "edit", "help", "next steps", "what's next"])
def test_prose_is_not_furniture(text):
    assert not is_furniture_text(text)
