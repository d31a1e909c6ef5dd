"""Issue 14: reader comments as their own kind, headline and metadata out of the body text,
never an empty result for a page with content, favor modes."""

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from lxml import html as lxml_html

from casebase.labelling import label_table, oracle
from noisecbr.cleaner import Cleaner
from noisecbr.decide.walk import Thresholds
from noisecbr.eval.datasets import split_truth
from noisecbr.features import FEATURE_NAMES
from noisecbr.prepare.metadata import page_metadata
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.render.text import render_text
from noisecbr.result import COMMENT, DATA, LABELS, NOISE
from noisecbr.score.model import Model
from noisecbr_apps.cli import main as noisecbr_cli

MARKER = "!@#$%^&*()  COMMENTS"
ARTICLE = ("The council voted on Tuesday to rebuild the old harbour wall before the winter "
           "storms arrive, after engineers found the stones loose along forty metres.")
COMMENT_1 = "Great news for the town, my grandfather helped build that wall in the fifties."
COMMENT_2 = "About time too, the council ignored the warnings for years and years now."
PAGE = f"""<html lang="en-GB"><head><title>Wall to be rebuilt | Harbour News</title>
<meta property="og:title" content="Wall to be rebuilt">
<meta name="author" content="Ann Reporter">
<script type="application/ld+json">{{"@type": "NewsArticle",
 "datePublished": "2026-11-02T09:00:00Z"}}</script></head>
<body><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<main><article><h1>Wall to be rebuilt</h1><p class="byline">By Ann Reporter</p>
<p>{ARTICLE}</p></article>
<section class="comments"><h2>Comments</h2><div class="c"><p>{COMMENT_1}</p></div>
<div class="c"><p>{COMMENT_2}</p></div></section></main>
<footer>Copyright Harbour News, all rights reserved.</footer></body></html>"""


def _table(page: str = PAGE):
    return build_table(tidy(page))


def test_split_truth_at_the_marker():
    article, comments = split_truth(f"{ARTICLE}\n{MARKER}\n{COMMENT_1}")
    assert (article.strip(), comments.strip()) == (ARTICLE, COMMENT_1)
    assert split_truth(ARTICLE) == (ARTICLE, "")


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
@pytest.mark.parametrize("marker", [MARKER, "!@#$%^&*() COMMENTS", "!@ $%^&*()  COMMENTS",
                                    "#$%^&*()  COMMENTS", "!@#$%^&*()  \tCOMMENTS"])
def test_split_truth_at_the_marker_as_dragnet_spells_it(marker, line_end):
    # dragnet's 421 markers: typos of the punctuation (a space for '#' in 4 truths), and the
    # Windows line ends of the 5 truths stored as UTF-16. A missed marker scores the thread as
    # article and labels its comments data.
    truth = line_end.join([ARTICLE, "", marker, "", COMMENT_1])
    article, comments = split_truth(truth)
    assert (article.strip(), comments.strip()) == (ARTICLE, COMMENT_1)


def test_split_truth_leaves_a_sentence_that_names_comments():
    truth = f"{ARTICLE}\nWe read all of them !!! COMMENTS\n{COMMENT_1}"
    assert split_truth(truth) == (truth, "")


def test_labels_from_a_truth_with_comments_mark_the_thread_as_comment():
    table = _table()
    paths = table.paths()
    labels = label_table(table, f"{ARTICLE}\n{MARKER}\n{COMMENT_1}\n{COMMENT_2}").labels
    by_path = dict(zip(paths, labels.tolist()))
    section = next(p for p in paths if p.endswith("/section"))
    article = next(p for p in paths if p.endswith("/article"))
    assert by_path[section] == COMMENT
    assert by_path[next(p for p in paths if p.endswith("/nav"))] == NOISE
    assert by_path[article + "/p[2]"] == DATA
    # Without the marker the same page labels the thread as content (a forum's posts).
    whole = label_table(table, f"{ARTICLE}\n{COMMENT_1}\n{COMMENT_2}").labels
    assert COMMENT not in whole.tolist()
    assert dict(zip(paths, whole.tolist()))[article + "/p[2]"] == DATA


def test_oracle_keeps_comments_only_when_asked():
    body = tidy(PAGE)
    table = build_table(body)
    labels = label_table(table, f"{ARTICLE}\n{MARKER}\n{COMMENT_1}\n{COMMENT_2}")

    def text(comments: bool) -> str:
        removed, dropped = oracle(table, labels, comments=comments)
        return render_text(body, {table.elements[i] for i in removed},
                           {table.elements[i] for i in dropped})

    without, with_comments = text(False), text(True)
    assert ARTICLE[:40] in without and COMMENT_1[:40] not in without
    assert COMMENT_1[:40] in with_comments


class _TagScores(Cleaner):
    """A cleaner whose scores come from a table of tag → class probabilities."""

    def __init__(self, scores: dict[str, tuple[float, ...]], **kwargs):
        # The walk's mechanics under one threshold set (auto picks a page's: tested apart).
        kwargs.setdefault("favor", "balanced")
        n = len(FEATURE_NAMES)
        dummy = Model(weights=[np.zeros((len(LABELS), n), np.float32)],
                      biases=[np.zeros(len(LABELS), np.float32)], columns=np.arange(n),
                      mean=np.zeros(n), scale=np.ones(n), output_activation="softmax")
        super().__init__(dummy, **kwargs)
        self.by_tag = scores

    def score(self, page):
        table = page.table
        default = (0.1, 0.1, 0.8, 0.0)
        return np.array([self.by_tag.get(tag, default) for tag in table.tags],
                        dtype=np.float32)


SCORES = {"nav": (0.9, 0.05, 0.05, 0.0), "footer": (0.9, 0.05, 0.05, 0.0),
          "section": (0.2, 0.05, 0.05, 0.7), "p": (0.05, 0.95, 0.0, 0.0),
          "h1": (0.05, 0.95, 0.0, 0.0)}


def test_comments_are_apart_unless_asked_for():
    result = _TagScores(SCORES).clean(PAGE)
    assert ARTICLE[:40] in result.text and COMMENT_1[:40] not in result.text
    assert COMMENT_1[:40] in result.comments and COMMENT_2[:40] in result.comments
    labels = {d.path.rsplit("/", 1)[-1]: d.label for d in result.decisions}
    assert labels["section"] == "comment" and labels["nav"] == "noise"
    payload = json.loads(result.to_json())
    assert payload["comments"] == result.comments
    kept = _TagScores(SCORES, comments=True).clean(PAGE)
    assert kept.text.index(ARTICLE[:40]) < kept.text.index(COMMENT_1[:40])
    assert kept.comments == result.comments


def test_headline_and_metadata_are_not_body_text():
    result = _TagScores(SCORES).clean(PAGE)
    assert result.title == "Wall to be rebuilt"
    assert "Wall to be rebuilt" not in result.text
    assert result.author == "Ann Reporter" and result.date.startswith("2026-11-02")
    assert result.lang == "en-GB"
    document = lxml_html.document_fromstring(result.html)
    assert document.findtext(".//title") == "Wall to be rebuilt | Harbour News"
    assert document.get("lang") == "en-GB"


def test_metadata_from_time_and_h1_when_nothing_is_declared():
    body = tidy("<body><h1>Plain headline</h1><time datetime='2025-01-05'>5 Jan</time>"
                "<p>Text.</p></body>")
    meta = page_metadata(body)
    assert meta.title == "Plain headline" and meta.date == "2025-01-05" and meta.author is None


def test_a_walk_that_keeps_only_the_headline_falls_back_to_the_text():
    # The headline is the result's title, not its text: a walk that keeps only a long
    # headline has kept nothing of the text, and must fall back as an empty walk does.
    title = "Council votes to rebuild the old harbour wall before the winter storms arrive"
    body = " ".join(["The harbour wall will be rebuilt before winter."] * 12)
    page = (PAGE.replace("Wall to be rebuilt", title)
            .replace(f"<p>{ARTICLE}</p>", f"<p>{body}</p>"))
    scores = {**SCORES, "h1": (0.05, 0.95, 0.0, 0.0), "article": (0.1, 0.1, 0.8, 0.0),
              "p": (0.9, 0.05, 0.05, 0.0)}  # everything but the headline: noise
    result = _TagScores(scores).clean(page)
    assert result.title == title and title not in result.text
    assert result.fallback and "harbour wall will be rebuilt" in result.text


def test_a_page_whose_container_is_scored_noise_falls_back_to_its_data():
    scores = {**SCORES, "main": (0.9, 0.05, 0.05, 0.0)}  # the whole main container: noise
    body = " ".join(["The harbour wall will be rebuilt before winter."] * 12)
    page = PAGE.replace(f"<p>{ARTICLE}</p>", f"<p>{body}</p>")
    result = _TagScores(scores).clean(page)
    assert result.fallback and "harbour wall will be rebuilt" in result.text
    assert "Copyright" not in result.text and "Home" not in result.text
    # A page whose text really is tiny is not rescued: it stays as the walk left it.
    tiny = _TagScores({"p": (0.9, 0.05, 0.05, 0.0)}).clean("<body><p>Just a few words.</p>"
                                                           "</body>")
    assert tiny.text == "" and not tiny.fallback


def test_favor_modes_come_from_the_model_and_lean_as_named():
    cleaner = Cleaner()
    modes = {favor: Thresholds.of(cleaner.model, favor)
             for favor in ("precision", "balanced", "recall")}
    assert modes["precision"].noise <= modes["balanced"].noise <= modes["recall"].noise
    assert cleaner.thresholds == modes["balanced"]
    with pytest.raises(ValueError, match="favor"):
        Cleaner(favor="speed")
    # A model carrying its own modes: the cleaner takes them.
    model = cleaner.model
    own = Model(weights=model.raw_weights(), biases=model.biases, columns=model.columns,
                mean=model.mean, scale=model.scale, lexicon=model.lexicon,
                kind_inputs=model.kind_inputs, kind_model=model.kind_model,
                metadata={**model.metadata, "modes": {"precision": {"noise": 0.11}}})
    assert Cleaner(own, favor="precision").thresholds.noise == 0.11
    # Thresholds are a value: a cleaner's cannot be changed behind its back.
    with pytest.raises(dataclasses.FrozenInstanceError):
        Cleaner(own).thresholds.noise = 0.5


def test_cli_comments_and_favor(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    runner = CliRunner()
    out = runner.invoke(noisecbr_cli, ["clean", str(page), "-f", "json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert {"comments", "title", "author", "date", "fallback"} <= set(payload)
    for favor in ("precision", "recall"):
        assert runner.invoke(noisecbr_cli, ["clean", str(page), "--favor", favor]).exit_code == 0
    bad = runner.invoke(noisecbr_cli, ["clean", str(page), "--favor", "speed"])
    assert bad.exit_code == 2
    with_comments = runner.invoke(noisecbr_cli, ["clean", str(page), "--comments"])
    assert with_comments.exit_code == 0



def test_the_fallback_never_settles_on_a_subtree_too_small_to_be_a_result():
    # A lone heading leans data, the long list of the page leans noise: the heading's data
    # mass is the highest, but four words are as near-empty as the walk's result.
    items = "".join(f"<li>Book number {i} by an author</li>" for i in range(20))
    page = f"<body><div><h2>Best sellers in books</h2><ul>{items}</ul></div></body>"
    scores = {"h2": (0.05, 0.95, 0.0, 0.0), "div": (0.6, 0.3, 0.1, 0.0),
              "ul": (0.6, 0.3, 0.1, 0.0), "li": (0.6, 0.3, 0.1, 0.0)}
    result = _TagScores(scores).clean(page)
    assert result.fallback and len(result.text.split()) >= 10 and "Book number 7" in result.text


def _elements_by_separate_walks(body) -> dict[str, list]:
    """What page_elements finds, found as metadata used to: a walk per tag, the document's
    tags from the root and the headline's, time's and link's from the body."""
    root = body.getroottree().getroot()
    return {**{tag: list(root.iter(tag)) for tag in ("meta", "script", "title")},
            **{tag: list(body.iter(tag)) for tag in ("h1", "h2", "time", "a")}}


ODD_PAGES = [
    PAGE,
    # meta, script and title in the body too; an SVG title; headings in nested markup
    """<html><head><title>T</title><meta name="author" content="A"></head><body>
    <svg><title>icon</title></svg><meta name="date" content="2020"><h2>x</h2><div><h1>H</h1>
    <a rel="author" href="/a">Bo</a><time datetime="2020-01-01">then</time></div>
    <script>var a;</script></body></html>""",
    # no head at all; a body that is all there is
    "<p>Only a paragraph <a href='/x'>with a link</a></p>",
    # namespaced (XHTML) elements are not the plain tags read
    """<html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>
    <body><h1>X</h1></body></html>""",
]


@pytest.mark.parametrize("page", ODD_PAGES)
@pytest.mark.parametrize("parser", ["lxml", "html5lib"])
def test_metadata_finds_its_elements_in_one_walk(page, parser):
    from noisecbr.prepare.metadata import page_elements

    body = tidy(page, parser=parser)
    table = build_table(body)
    expected = _elements_by_separate_walks(body)
    assert page_elements(body) == expected
    assert page_elements(body, table.elements, table.tags) == expected
    # a body that is not the root's child: the head is still read
    html = lxml_html.fromstring("<html><head><title>Deep</title></head><body><div>"
                                "<section><meta name='x' content='in'><h1>Deep</h1>"
                                "</section></div></body></html>")
    section = html.find(".//section")
    assert page_elements(section) == _elements_by_separate_walks(section)
    nested = build_table(section)
    assert (page_elements(section, nested.elements, nested.tags)
            == _elements_by_separate_walks(section))
