"""The mining evaluation end to end on tiny made-up sites (no training: noisecbr is the embedded
default model, injected as the cleaner)."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("sklearn")

from experiments.mining.corpus import Corpus, page_key, publisher, topic_of
from experiments.mining.measures import clustering_f_measure, near_duplicate_share
from experiments.mining.methods import METHODS, documents, method_functions
from experiments.mining.report import KEEP_MARK
from experiments.mining_eval import method_documents, run
from noisecbr.cleaner import Cleaner
from noisecbr.eval.datasets import LabelledPage

TOPICS = {
    "article": ["election", "minister", "parliament", "vote", "campaign", "policy", "senator",
                "debate", "reform", "ballot", "coalition", "budget", "speech", "party",
                "candidate"],
    "product": ["price", "cart", "shipping", "warranty", "stock", "discount", "battery", "inch",
                "screen", "model", "order", "delivery", "colour", "size", "review"],
}
#: Which class each site's pages have: every class on every site, so site-grouped folds
#: always train on both.
SITES = {"alpha.example": ["article", "article", "product"],
         "beta.example": ["article", "product", "product"],
         "gamma.example": ["product", "article", "article"]}


def _words(rng: random.Random, vocabulary: list[str], n: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def _page(site: str, index: int, label: str) -> LabelledPage:
    """A page: long site template (menu, footer) around short class-specific content."""
    template = random.Random(site)  # the same template on every page of the site
    vocabulary = [f"{site[:3]}{i}" for i in range(40)]
    menu = "".join(f"<li><a href='/{w}'>{w} {_words(template, vocabulary, 3)}</a></li>"
                   for w in vocabulary[:20])
    footer = _words(template, vocabulary, 150)
    content = random.Random(f"{site}{index}")
    body = _words(content, TOPICS[label], 60)
    html = (f"<html><head><title>{site} {index}</title></head><body>"
            f"<div class='header'><ul class='menu'>{menu}</ul></div>"
            f"<div class='main'><h1>{label} {index}</h1><p>{body}</p></div>"
            f"<div class='footer'><p>{footer}</p></div></body></html>")
    return LabelledPage(id=f"{site[0]}{index}", url=f"https://{site}/{label}/{index}",
                        site=site, html=html.encode(), truth=body, dataset="tiny",
                        page_type=label)


@pytest.fixture
def corpus() -> Corpus:
    pages = [_page(site, i, label) for site, labels in SITES.items()
             for i, label in enumerate(labels)]
    by_site: dict[str, list[LabelledPage]] = {}
    for page in pages:
        by_site.setdefault(page.site, []).append(page)
    return Corpus(name="tiny", pages=pages, labels=[p.page_type for p in pages],
                  groups=[p.site for p in pages], site_pages=by_site, notes=["made up"])


def test_end_to_end_report(corpus, tmp_path):
    cleaner = Cleaner()
    docs = method_documents(corpus, method_functions(lambda page: cleaner), tmp_path / "cache")
    assert list(docs) == list(METHODS)
    out = tmp_path / "docs"
    out.mkdir()
    stale = f"stale generated part\n{KEEP_MARK}\nhand-written conclusions\n"
    (out / "mining.md").write_text(stale)
    results = run([corpus], {"tiny": docs}, out, "test", tmp_path / "mining.json",
                  folds=3, repeats=2, runs=5)

    text = (out / "mining.md").read_text()
    assert text.startswith("# Does cleaning help web mining?")
    assert "### tiny" in text and "stale generated part" not in text
    assert text.rstrip().endswith("hand-written conclusions")  # the discussion is kept
    for method in METHODS:
        assert f"| {method} |" in text
    assert (out / "mining.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "mining.json").is_file()

    [result] = results
    assert result.pages == 9 and result.multi_page == 9 and result.pairs == 9
    by_name = {m.method: m for m in result.methods}
    for m in result.methods:
        assert len(m.accuracy) == 3 * 2 and len(m.cluster_f) == 5
        assert all(0.0 <= v <= 1.0 for v in m.accuracy + m.macro_f1 + m.cluster_f)
    assert by_name["CST weights"].near_duplicates is None  # weights have no shingles
    raw = by_name["no cleaning"].near_duplicates
    # The template makes every same-site pair a near-duplicate; without it none is.
    assert raw == 1.0
    assert by_name["SiteLevel templates removed"].near_duplicates < raw
    assert by_name["ground truth (reference)"].near_duplicates == 0.0
    # The KDD 2003 mechanism: every site holds both classes, so raw pages cluster by site
    # (template words) and the site-level cleaners' pages by class.
    assert np.mean(by_name["no cleaning"].cluster_f) < 0.8
    for method in ("site style tree", "CST weights", "SiteLevel templates removed"):
        assert np.mean(by_name[method].cluster_f) > 0.95, method
    # Every page's headline names its class; the truth (the paragraph) never does.
    assert by_name["no cleaning"].names_class == 9
    assert by_name["ground truth (reference)"].names_class == 0
    assert by_name["ground truth (reference)"].median_words == 60
    assert "| ground truth (reference) | 60 | 0 / 9 |" in text
    assert result.group_f < 1.0  # every site holds both classes


@pytest.mark.parametrize("method", ["no cleaning", "site style tree"])
def test_documents_come_from_the_cache(corpus, tmp_path, method):
    texts = documents(corpus, method, method_functions(Cleaner)[method], tmp_path)

    def must_not_run(corpus, todo):
        raise AssertionError(f"recomputed {len(todo)} cached pages")
    assert documents(corpus, method, must_not_run, tmp_path) == texts
    changed = corpus.pages[0].__class__(**{**corpus.pages[0].__dict__, "html": b"<p>new</p>"})
    corpus.pages[0] = changed  # a page whose HTML changed is recomputed, the others are not
    recomputed = documents(corpus, method,
                           lambda c, todo: {page_key(p): "fresh" for p in todo}, tmp_path)
    assert recomputed[0] == "fresh" and recomputed[1:] == texts[1:]


def test_clustering_f_measure():
    assert clustering_f_measure(["a", "a", "b", "b"], [0, 0, 1, 1]) == 1.0
    # One cluster of everything: each class's best F is 2·(1/2·1)/(1/2+1) = 2/3.
    assert clustering_f_measure(["a", "a", "b", "b"], [0, 0, 0, 0]) == pytest.approx(2 / 3)


def test_near_duplicate_share_counts_same_site_pairs_only():
    text = " ".join(f"w{i}" for i in range(30))
    share, _, pairs = near_duplicate_share([text, text, text, "other words here entirely"],
                                           ["a", "a", "b", "b"])
    assert pairs == 2 and share == 0.5
    assert np.isnan(near_duplicate_share(["x"], ["a"])[0])


def test_section_topics_and_publishers():
    assert topic_of("http://well.blogs.nytimes.com/2012/11/05/fish/") == "health"
    assert topic_of("http://www.nytimes.com/2012/11/08/technology/personaltech/x.html") \
        == "technology"
    assert topic_of("http://example.com/blog/2012/post") is None
    assert topic_of("") is None
    assert publisher("well.blogs.nytimes.com") == "nytimes.com"
    assert publisher("guardian.co.uk") == "guardian.co.uk"
