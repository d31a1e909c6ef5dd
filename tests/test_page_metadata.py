"""A result's metadata: the title as the page shows it, dates in ISO 8601 and found by htmldate
where none is declared, authors from the markup, the site's name and description."""

import json

import pytest

import noisecbr
from noisecbr.prepare.metadata import iso_date

PARAGRAPH = ("The harbour wall was rebuilt over the winter, stone by stone, by the same crew "
             "that built the lighthouse road. ") * 6


def _page(head: str = "", body: str = "", url: str | None = None):
    html = (f"<html><head>{head}</head><body><nav><a href='/'>Home</a> <a href='/news'>News"
            f"</a></nav>{body}<article><p>{PARAGRAPH}</p><p>{PARAGRAPH}</p></article>"
            "<footer>© Harbour Gazette</footer></body></html>")
    return noisecbr.clean(html, url=url, page_type="article")


def test_the_title_is_the_headline_the_page_shows():
    result = _page("<title>Wall rebuilt | Harbour Gazette</title>"
                   "<meta property='og:title' content='Wall rebuilt - Harbour Gazette'>",
                   "<h1>The harbour wall is rebuilt</h1>")
    assert result.title == "The harbour wall is rebuilt"


def test_a_logo_heading_in_the_navigation_or_naming_the_site_is_not_the_title():
    result = _page("<meta property='og:site_name' content='Harbour Gazette'>"
                   "<title>Wall rebuilt | Harbour Gazette</title>",
                   "<h1>Harbour Gazette</h1><nav><h1>Menu</h1></nav><h1>Wall rebuilt</h1>")
    assert result.title == "Wall rebuilt"


def test_without_a_heading_the_declared_title_loses_the_site_name_only():
    named = _page("<meta property='og:site_name' content='Harbour Gazette'>"
                  "<meta property='og:title' content='Wall rebuilt | Harbour Gazette'>")
    assert named.title == "Wall rebuilt" and named.site_name == "Harbour Gazette"
    # A title's second part that does not name the site stays: it may be the title's own.
    other = _page("<meta property='og:site_name' content='Harbour Gazette'>"
                  "<meta property='og:title' content='Before and after - a photo essay'>")
    assert other.title == "Before and after - a photo essay"


def test_a_declared_date_is_iso_8601():
    assert _page("<meta property='article:published_time' content='2025-07-17T08:00:00Z'>"
                 ).date == "2025-07-17T08:00:00Z"
    assert _page("<meta name='date' content='Jun 12, 2025'>").date == "2025-06-12"
    assert iso_date("sometime last spring") == "sometime last spring"  # kept as the page's


def test_htmldate_finds_the_date_of_an_article_that_declares_none():
    result = _page(body="<p class='dateline'>Published on March 3, 2021</p>",
                   url="https://harbour.example/news/wall")
    assert result.date == "2021-03-03"
    from_url = _page(url="https://harbour.example/2024/05/19/wall-rebuilt")
    assert from_url.date == "2024-05-19"
    # In no place the fast search reads: htmldate's extensive search over the text finds it.
    in_text = _page(body="<div class='x'>Posted on 5 March 2024 by Ann</div>")
    assert in_text.date == "2024-03-05"


def test_a_copyright_year_is_not_a_publication_day():
    # htmldate's extensive search returns the footer's "© 2025" as 2025-01-01: a year, no day.
    html = ("<html><body><article><h1>Boats</h1><p>" + PARAGRAPH + "</p></article>"
            "<footer>© 2025 Harbour Co</footer></body></html>")
    assert noisecbr.clean(html, page_type="article").date is None


def test_a_product_page_gets_no_date_found_for_it():
    html = ("<html><body><h1>Tide table poster</h1><p>Printed 2019-04-02.</p><p>"
            f"{PARAGRAPH}</p></body></html>")
    assert noisecbr.clean(html, page_type="product").date is None
    assert noisecbr.clean(html, page_type="article").date == "2019-04-02"


def test_an_author_element_names_the_author_when_nothing_declares_one():
    result = _page(body="<div class='post-meta'><span class='author-name'>Mara Quinn</span>"
                        "<span class='author-avatar'>MQ</span></div>")
    assert result.author == "Mara Quinn"
    declared = _page("<meta name='author' content='Ann Li'>",
                     "<span class='author-name'>Mara Quinn</span>")
    assert declared.author == "Ann Li"


def test_site_name_and_description_reach_the_json():
    result = _page("<meta property='og:site_name' content='Harbour Gazette'>"
                   "<meta name='description' content='The wall, rebuilt.'>")
    data = json.loads(result.to_json())
    assert data["site_name"] == "Harbour Gazette" and data["description"] == "The wall, rebuilt."


def test_decisions_are_a_sized_sequence_of_the_decided_subtrees():
    cleaner = noisecbr.Cleaner()
    page = cleaner.prepare(f"<html><body><nav><a href='/'>Home</a></nav><p>{PARAGRAPH}</p>"
                           "<footer>© 2026</footer></body></html>")
    decisions = cleaner.decide(page)
    result = cleaner.render(page, decisions)
    assert len(decisions) == len(result.decisions) > 0
    assert [label for _, label in decisions] == [d.label for d in result.decisions]
    index, _ = decisions[-1]
    assert page.table.tags[index] == result.decisions[-1].tag and decisions[:1] == [decisions[0]]
    with pytest.raises(IndexError):
        decisions[len(decisions)]
