"""The byline is metadata: out of the body text, its name the author when none is declared."""

from __future__ import annotations

from test_main_content import SCORES, _TagScores

from noisecbr.cleaner import Cleaner

STORY = ("The council voted on Tuesday to rebuild the old harbour wall before the winter "
         "storms arrive, after engineers found the stones loose along forty metres.")


def _page(byline: str, head: str = "") -> str:
    return (f"<html><head><title>Wall to be rebuilt</title>{head}</head><body><article>"
            f"<h1>Wall to be rebuilt</h1>{byline}<p>{STORY}</p><p>{STORY}</p></article>"
            "</body></html>")


def _clean(page: str):
    # Every <p> and <div> scored data: whether the byline goes is up to the byline rule.
    return _TagScores({**SCORES, "div": (0.05, 0.95, 0.0, 0.0)}).clean(page)


def test_a_by_line_leaves_the_text_and_names_the_author():
    result = _clean(_page('<p class="meta">By Mara Quinn, 4 March 2025</p>'))
    assert "Mara Quinn" not in result.text and STORY in result.text
    assert result.author == "Mara Quinn"


def test_a_short_block_with_the_declared_author_leaves_the_text():
    result = _clean(_page('<div><span>Ann Reporter</span> | Science desk</div>',
                          '<meta name="author" content="Ann Reporter">'))
    assert "Ann Reporter" not in result.text and "Science desk" not in result.text
    assert result.author == "Ann Reporter" and STORY in result.text


def test_sentences_and_late_mentions_are_not_bylines():
    for byline in ("<p>By the way, the wall is old.</p>", "<p>By 2030 it must be safe.</p>"):
        assert byline[3:12] in _clean(_page(byline)).text
    # The declared author named in a long paragraph, or after the first blocks: text.
    late = _page("", '<meta name="author" content="Ann Reporter">').replace(
        "</article>", "<p>Ann Reporter</p></article>")
    result = _clean(late.replace(f"<p>{STORY}</p><p>{STORY}</p>",
                                 f"<p>{STORY}</p>" * 4))
    assert result.text.endswith("Ann Reporter")


def test_a_page_that_only_says_who_wrote_it_keeps_that():
    result = Cleaner().clean("<html><body><p>By Mara Quinn</p></body></html>")
    assert result.text == "By Mara Quinn"


def test_the_author_is_the_element_that_names_them_not_what_follows():
    # The name is a link of its own: the date and the title after it are not part of it.
    result = _clean(_page('<p class="meta">By <a href="/a/ann">Ann Reporter</a> Apr 2, 2025 '
                          'Senior Editor</p>'))
    assert result.author == "Ann Reporter"
    plain = _clean(_page('<p class="meta">By Sara Brown Apr 2 Senior Editor</p>'))
    assert plain.author == "Sara Brown"


def test_a_byline_the_walk_removed_still_names_the_author():
    # Every div scored noise: the byline box goes with the walk, its name stays the author.
    removed = _TagScores({**SCORES, "div": (0.95, 0.05, 0.0, 0.0)}).clean(
        _page('<div class="firma">By <a href="/autor/lucia">Lucía Martín</a></div>'))
    assert "Lucía" not in removed.text and STORY in removed.text
    assert removed.author == "Lucía Martín"
