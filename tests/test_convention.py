"""favor="auto": each page walked in the mode of its kind (a model with a kind model, as the
embedded one), else of its convention (noisecbr.decide.convention)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

import noisecbr
from noisecbr.cleaner import Cleaner
from noisecbr.decide.convention import declares_article, page_mode, prose_share
from noisecbr.decide.walk import Thresholds
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.score.kind import KINDS
from noisecbr.settings import PROSE_MIN_SHARE, PROSE_PIECE_CHARS

#: A model that knows no page kinds (made by hand): its pages walk in their convention's mode.
CONVENTIONAL = FIXTURES / "models" / "keeps-promos.safetensors"

SENTENCE = ("The council voted on Tuesday to keep the old market hall open for another ten "
            "years, after a long debate about its roof and the cost of the repairs. ")


def _page(head: str = "", body: str = "") -> str:
    return f"<html><head><title>T</title>{head}</head><body>{body}</body></html>"


ARTICLE_BODY = f"<nav><a href='/'>Home</a> <a href='/news'>News</a></nav><p>{SENTENCE * 3}</p>"
LISTING_BODY = "<ul>" + "".join(
    f"<li><a href='/b{i}'>Book {i}</a> by Author {i}, 12.99</li>" for i in range(30)) + "</ul>"


@pytest.mark.parametrize("og_type, types, expected", [
    ("article", [], True),
    ("Article:section", [], True),
    ("website", ["NewsArticle"], True),
    (None, ["https://schema.org/BlogPosting"], True),
    (None, ["ReportageNewsArticle", "WebPage"], True),
    (None, ["WebSite", "Organization", "BreadcrumbList"], False),
    ("website", ["Product"], False),
    ("product", ["ArticleSeries"], False),
    (None, [], False),
])
def test_what_declares_an_article(og_type, types, expected):
    assert declares_article(og_type, types) is expected


def test_prose_share_counts_long_pieces_outside_links():
    long_piece = "x" * PROSE_PIECE_CHARS
    table = build_table(tidy(f"<body><p>{long_piece}</p><p>{'y' * 40}</p>"
                             f"<a href='/'>{long_piece}</a></body>"))
    assert prose_share(table) == pytest.approx(PROSE_PIECE_CHARS / (2 * PROSE_PIECE_CHARS + 40))
    assert prose_share(build_table(tidy("<body><img src=a.png></body>"))) == 0.0
    assert prose_share(build_table(tidy(_page(body=ARTICLE_BODY)))) > PROSE_MIN_SHARE
    assert prose_share(build_table(tidy(_page(body=LISTING_BODY)))) < PROSE_MIN_SHARE


def test_page_mode_rules():
    assert page_mode(True, 0.0) == "precision"
    assert page_mode(False, PROSE_MIN_SHARE / 2) == "recall"
    assert page_mode(False, PROSE_MIN_SHARE) == "balanced"


@pytest.mark.parametrize("head, body, mode", [
    ('<meta property="og:type" content="article">', ARTICLE_BODY, "precision"),
    ('<script type="application/ld+json">{"@graph": [{"@type": "WebSite"}, '
     '{"@type": ["NewsArticle"], "headline": "H"}]}</script>', LISTING_BODY, "precision"),
    ('<meta property="og:type" content="website">', ARTICLE_BODY, "balanced"),
    ('<script type="application/ld+json">{not json</script>', LISTING_BODY, "recall"),
    ("", LISTING_BODY, "recall"),
])
def test_the_page_says_which_mode_walks_it(head, body, mode):
    cleaner = Cleaner(CONVENTIONAL)
    page = cleaner.prepare(_page(head, body))
    assert page.mode == mode
    assert cleaner.thresholds_for(page) == Thresholds.of(cleaner.model, mode)
    # A cleaner of one mode walks every page in it.
    assert Cleaner(CONVENTIONAL, favor="recall").thresholds_for(page) == Thresholds.of(
        cleaner.model, "recall")


def test_a_model_that_knows_kinds_walks_each_page_in_its_kinds_mode():
    cleaner = Cleaner()  # the embedded model has a kind model and a mode for every kind
    assert set(cleaner.kind_modes) == set(KINDS)
    for body in (ARTICLE_BODY, LISTING_BODY):
        page = cleaner.prepare(_page(body=body))
        kind = KINDS[int(page.kinds(cleaner.model).argmax())]
        expected = Thresholds.of(cleaner.model, cleaner.kind_modes[kind])
        assert cleaner.thresholds_for(page) == expected
        assert cleaner.clean(_page(body=body)).mode == cleaner.kind_modes[kind]
    given = cleaner.prepare(_page(body=LISTING_BODY), page_type="forum")
    assert cleaner.thresholds_for(given).mode == cleaner.kind_modes["forum"]


def test_auto_is_the_default_and_decides_each_page_as_its_mode_does():
    listing = _page(body=LISTING_BODY)
    article = _page('<meta property="og:type" content="article">', ARTICLE_BODY)
    conventional = Cleaner(CONVENTIONAL)
    assert Cleaner().favor == "auto" and conventional.clean(listing).text == Cleaner(
        CONVENTIONAL, favor="recall").clean(listing).text
    assert conventional.clean(article).text == Cleaner(
        CONVENTIONAL, favor="precision").clean(article).text


def test_thresholds_given_hold_in_every_mode():
    cleaner = Cleaner(noise_threshold=0.42)
    assert {t.noise for t in cleaner.modes.values()} == {0.42}


def test_an_unknown_favor_is_refused():
    with pytest.raises(ValueError, match="favor must be one of auto, balanced"):
        Cleaner(favor="bold")
    with pytest.raises(ValueError, match="a threshold set is one of"):
        Thresholds.of(Cleaner().model, "auto")


def test_declarations_written_in_the_body_are_read_and_their_tails_kept():
    html = _page(body='<div>Before <script type="Application/LD+JSON">{"@type": "NewsArticle", '
                      '"headline": "The declared headline"}</script>after the script. <meta '
                      'property="og:type" content="article">After the meta.</div>'
                      '<meta itemprop="datePublished" content="2001-01-01">' + LISTING_BODY)
    cleaner = Cleaner()
    page = cleaner.prepare(html)
    assert page.mode == "precision" and page.metadata.title == "The declared headline"
    assert page.metadata.date is None  # a microdata meta describes its box, not the page
    text = " ".join(page.body.itertext())
    assert "Before after the script. After the meta." in " ".join(text.split())
    assert "NewsArticle" not in text


def test_the_result_says_which_mode_walked_the_page():
    import json

    article = _page('<meta property="og:type" content="article">', ARTICLE_BODY)
    result = noisecbr.clean(article, model=CONVENTIONAL)
    assert result.mode == "precision" and json.loads(result.to_json())["mode"] == "precision"
    assert noisecbr.clean(_page(body=LISTING_BODY), model=CONVENTIONAL).mode == "recall"
    assert Cleaner(favor="balanced").clean(article).mode == "balanced"
    # Thresholds made by hand name no mode.
    cleaner = Cleaner()
    page = cleaner.prepare(article)
    from noisecbr.pipeline import decide

    by_hand = decide(page, cleaner.score(page), Thresholds(0.5, 0.9, 0.5))
    assert cleaner.render(page, by_hand).mode is None
