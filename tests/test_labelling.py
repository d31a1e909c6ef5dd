import numpy as np

from casebase.labelling import DATA, MIXTURE, NOISE, label_table, oracle
from noisecbr.eval.metric import score_page
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.render.text import render_text

TRUTH = """Tide pools of the northern coast

When the tide goes out along the northern coast, it leaves behind hundreds of small rock pools
that teem with life. Anemones open like flowers, hermit crabs shuffle between shells, and tiny
fish dart into the shadows whenever a cloud passes overhead.

The best time to visit is an hour before low tide, when the pools are still connected to the sea
and the animals are active. Bring shoes with a good grip, because the rocks are covered in
slippery algae, and never turn a stone over without putting it back exactly as you found it.

What you will find

Beadlet anemones in deep red and green
Common shore crabs hiding under weed
Blennies resting on the bottom of shallow pools

Rangers run free guided walks every weekend from April to September. They explain how the pools
change with the seasons and why some species only appear after storms have stirred up the water.
"""


def labelled(article_html):
    body = tidy(article_html)
    table = build_table(body)
    return body, table, label_table(table, TRUTH)


def by_class(table, labels, cls):
    return {table.elements[i].get("class") for i in np.flatnonzero(labels.labels == cls)}


def test_fixture_page_labels(article_html):
    _, table, labels = labelled(article_html)
    assert set(np.unique(labels.labels)) == {NOISE, DATA, MIXTURE}
    noise = by_class(table, labels, NOISE)
    assert {"cookie-consent", "site-header", "main-nav", "related-posts", "site-footer"} <= noise
    # the body and <main> hold the article among furniture: mixture, never noise
    assert labels.labels[0] == MIXTURE
    assert "post" in by_class(table, labels, MIXTURE) | by_class(table, labels, DATA)
    paragraphs = [i for i, t in enumerate(table.tags) if t == "p" and labels.words[i] > 20]
    assert all(labels.labels[i] == DATA for i in paragraphs)


def test_wordless_subtrees_follow_their_parent():
    body = tidy("<body><nav><a>Home</a><img src=x></nav><article><p>" + TRUTH + "<img src=y>"
                "</p></article></body>")
    table = build_table(body)
    labels = label_table(table, TRUTH)
    images = [i for i, t in enumerate(table.tags) if t == "img"]
    assert [labels.labels[i] for i in images] == [NOISE, DATA]


def test_oracle_reproduces_the_ground_truth(article_html):
    body, table, labels = labelled(article_html)
    removed, dropped = oracle(table, labels)
    text = render_text(body, {table.elements[i] for i in removed},
                       {table.elements[i] for i in dropped})
    score = score_page(text, TRUTH)
    assert score.recall == 1.0 and score.precision > 0.95


def test_repeated_passage_is_content_once():
    passage = "the quick brown fox jumps over the lazy dog near the river bank today"
    body = tidy(f"<body><div class='teaser'><p>{passage}</p></div>"
                f"<div class='story'><p>{passage} and then it rested</p></div></body>")
    table = build_table(body)
    labels = label_table(table, passage + " and then it rested")
    teaser, story = 1, 3
    assert labels.labels[story] == DATA and labels.labels[teaser] == NOISE


NEWS = """<html><body><article>
<h1>Harbour wall to be rebuilt after the storm</h1>
<p class="byline">By Ann Reporter</p><time>2 March 2025</time>
<figure><img src="wall.jpg"><figcaption>The broken wall at low tide. Photo: Bo Li</figcaption>
</figure>
<div class="article-body"><p>The council will rebuild the harbour wall that the winter storm
broke in two places, and the work should be done before the summer season begins.</p>
<p>Fishermen say the gap has let the swell into the inner basin for three months now.</p></div>
<aside id="related-stories"><a href="/a">Storm closes the coast road for a week</a></aside>
</article></body></html>"""
#: An inclusive truth: the headline, byline, date, caption and related link with the body.
NEWS_TRUTH = """Harbour wall to be rebuilt after the storm
By Ann Reporter 2 March 2025
The broken wall at low tide. Photo: Bo Li
The council will rebuild the harbour wall that the winter storm broke in two places, and the
work should be done before the summer season begins.
Fishermen say the gap has let the swell into the inner basin for three months now.
Storm closes the coast road for a week"""


def test_article_furniture_is_named_by_the_pages_own_markup():
    from casebase.labelling import article_furniture

    table = build_table(tidy(NEWS))
    marked = {(table.tags[i], table.elements[i].get("class") or table.elements[i].get("id"))
              for i in np.flatnonzero(article_furniture(table))}
    assert marked == {("h1", None), ("p", "byline"), ("time", None), ("figcaption", None),
                      ("aside", "related-stories")}


def test_an_inclusive_truth_relabelled_to_the_article_body_convention():
    from casebase.labelling import article_furniture

    table = build_table(tidy(NEWS))
    as_given = label_table(table, NEWS_TRUTH)
    relabelled = label_table(table, NEWS_TRUTH, exclude=article_furniture(table))
    by_tag = {tag: i for i, tag in enumerate(table.tags)}
    caption, aside, body = by_tag["figcaption"], by_tag["aside"], by_tag["article"]
    assert as_given.labels[caption] == DATA and as_given.labels[aside] == DATA
    assert relabelled.labels[caption] == NOISE and relabelled.labels[aside] == NOISE
    assert relabelled.labels[by_tag["h1"]] == NOISE and relabelled.labels[by_tag["time"]] == NOISE
    # The article body stays data; the article around it, furniture inside, is mixture.
    article_body = next(i for i, e in enumerate(table.elements) if e.get("class") == "article-body")
    assert relabelled.labels[article_body] == DATA and relabelled.labels[body] == MIXTURE
    # Nothing is relabelled where the markup names no furniture.
    plain = build_table(tidy("<body><div><p>one two three four five six</p></div></body>"))
    assert not article_furniture(plain).any()
    assert np.array_equal(label_table(plain, "one two three four five six").labels,
                          label_table(plain, "one two three four five six",
                                      exclude=article_furniture(plain)).labels)


def test_furniture_words_count_as_words_of_their_own_and_never_the_articles_container():
    from casebase.labelling import article_furniture

    page = """<html><body class="has_header_social"><div class="post category-social-media
      tag-credit-cards" id="post-12"><p>The council will rebuild the harbour wall that the winter
      storm broke, and the work should be done before the summer season begins again.</p>
      <div class="relatedArticles"><a href="/a">Storm closes the coast road</a></div>
      <p class="captionless">Fishermen say the gap has let the swell into the inner basin.</p>
      </div></body></html>"""
    table = build_table(tidy(page))
    marked = {table.elements[i].get("class") for i in np.flatnonzero(article_furniture(table))}
    # camelCase splits; taxonomy classes and words inside other words do not mark a box; the
    # body is never furniture.
    assert marked == {"relatedArticles"}
    truth = ("The council will rebuild the harbour wall that the winter storm broke, and the "
             "work should be done before the summer season begins again. Storm closes the coast "
             "road. Fishermen say the gap has let the swell into the inner basin.")
    # A box that holds most of the page's content is its container, whatever its class says.
    container = np.zeros(len(table), dtype=bool)
    container[[i for i, e in enumerate(table.elements) if e.get("id") == "post-12"]] = True
    kept = label_table(table, truth, exclude=container)
    assert kept.labels[[i for i, e in enumerate(table.elements) if e.tag == "p"]].tolist() == [
        DATA, DATA]
