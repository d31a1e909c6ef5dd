"""Site memory: a site's labelled pages decide the same markup on its other pages."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from casebase.cli import cli as casebase_cli
from casebase.labelling import label_table
from casebase.reuse import memory_from_truth, site_host, site_memory
from casebase.store import CaseBase
from noisecbr import Cleaner, clean
from noisecbr.eval.datasets import read_dataset
from noisecbr.eval.metric import aggregate, score_page
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.site.memory import DATA, NOISE, SiteMemory, declared_url, signatures

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TRUTH = json.loads((FIXTURE / "ground-truth.json").read_text())


def _page(name: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes())


def _table(html: str | bytes):
    return build_table(tidy(html))


def test_signatures_follow_tags_classes_and_ids_not_digits():
    a = _table('<div class="b a" id="post-123"><p>x</p><p class="n">y</p></div>')
    b = _table('<div class="a b" id="post-98"><p>other words</p><p class="n">z</p></div>')
    c = _table('<div class="a c" id="post-98"><p>x</p></div>')
    sa, sb, sc = signatures(a), signatures(b), signatures(c)
    assert sa == sb  # class order and digit runs do not matter, text does not either
    assert sa[1] != sc[1] and sa[2] != sc[2]  # another class: another template, down the path
    assert len(set(sa)) == len(sa)  # body, div, p, p.n: each its own signature
    assert all(isinstance(s, int) and 0 <= s < 2**64 for s in sa)


def test_recall_needs_stored_cases_that_agree():
    stored = _table('<nav><a>Home</a></nav><main><p>Story</p></main><ul><li>a</li><li>b</li></ul>')
    # body, nav, a, main, p, ul, li, li
    memory = SiteMemory()
    memory.add(stored, ["mixture", "noise", "noise", "data", "data", "mixture", "noise", "data"])
    assert len(memory) == 7 and memory.pages == 1
    other = _table('<nav><a>Shop</a></nav><main><p>Another story</p></main>'
                   '<ul><li>c</li></ul><aside>new</aside>')
    recalled = memory.recall(other).tolist()
    # body never; nav, a noise; main, p data; ul mixture → model; li noise vs data → model;
    # aside unseen → model.
    assert recalled == [-1, NOISE, NOISE, DATA, DATA, -1, -1, -1]


def test_an_unseen_chain_falls_back_to_its_last_steps():
    stored = _table('<div class="a"><div class="list"><ul class="links"><li>x</li></ul></div>'
                    '</div>')
    memory = SiteMemory()
    memory.add(stored, [None, "mixture", "noise", "noise", "noise"])  # body, div.a, …
    moved = _table('<main><div class="list"><ul class="links"><li>y</li></ul></div></main>')
    # main, div.list: unseen in both forms; ul.links's last three steps start at main (unseen);
    # li's last three (div.list, ul.links, li) are stored: noise.
    assert memory.recall(moved).tolist() == [-1, -1, -1, -1, NOISE]
    assert signatures(moved, 3)[4] == signatures(stored, 3)[4]
    assert signatures(moved)[4] != signatures(stored)[4]
    with pytest.raises(ValueError, match="at least 1"):
        signatures(moved, 0)


@pytest.mark.parametrize("head, url", [
    (b'<link rel="canonical" href="https://www.ex.com/a">', "https://www.ex.com/a"),
    (b"<meta content='https://ex.org/b' property='og:url'><link href=/rel rel=canonical>",
     "https://ex.org/b"),  # a relative canonical is no address; og:url is
    (b'<meta property="og:url" content="https://y.io"><link rel=canonical href=https://x.io/c>',
     "https://x.io/c"),  # canonical first
    (b'<LINK REL="alternate canonical" HREF="http://z.net/d"/>', "http://z.net/d"),
    (b'<link rel="stylesheet" href="https://cdn.example/x.css">', None),
    ("<link rel='canonical' href='https://caf\u00e9.fr/e'>".encode(), "https://caf\u00e9.fr/e"),
])
def test_declared_url(head, url):
    assert declared_url(b"<html><head>" + head + b"</head><body>x</body></html>") == url


def test_add_refuses_labels_that_do_not_fit_the_page():
    table = _table("<p>one</p>")
    with pytest.raises(ValueError, match="for a page of 2 elements"):
        SiteMemory().add(table, ["noise"])
    memory = SiteMemory()
    with pytest.raises(ValueError, match="not one of"):
        memory.add(table, ["noise", "spam"])
    assert len(memory) == 0 and memory.pages == 0  # nothing of the bad page was counted


def test_memory_round_trips_through_json():
    table = _table("<nav><a>x</a></nav><p>y</p>")
    memory = SiteMemory()
    memory.add(table, [None, "noise", "noise", "data"])
    saved = json.loads(json.dumps(memory.to_dict()))
    back = SiteMemory.from_dict(saved)
    assert back.pages == 1 and back.recall(table).tolist() == memory.recall(table).tolist()
    assert back.recall(table).tolist() == [-1, NOISE, NOISE, DATA]
    with pytest.raises(ValueError, match="rebuild it"):
        SiteMemory.from_dict({**saved, "short_steps": 2})


def test_signatures_of_a_very_deep_page():
    from lxml import etree

    # Built directly (tidy would flatten it to libxml2's depth limit of 1 500), 20 000 levels:
    # far past Python's recursion limit (lxml's SubElement costs the depth, so not 100 000).
    body = etree.Element("body")
    node = body
    for _ in range(20_000):
        node = etree.SubElement(node, "div", {"class": "a"})
    node.text = "deep"
    table = build_table(body)
    sigs = signatures(table)
    assert len(sigs) == len(table) == 20_001 and len(set(sigs)) == len(sigs)
    short = signatures(table, 3)
    assert len(set(short[3:])) == 1  # every div below the third has the same last three steps
    memory = SiteMemory()
    memory.add(table, [None] + ["noise"] * 20_000)
    assert (memory.recall(table)[1:] == NOISE).all()


def test_one_labelled_page_of_a_site_cleans_its_next_page(flawed_model):
    truth = TRUTH["news-2"]["articleBody"]
    first = _table(_page("news-1"))
    memory = SiteMemory()
    memory.add(first, label_table(first, TRUTH["news-1"]["articleBody"]).labels.tolist())
    cleaner = Cleaner(flawed_model)
    plain = cleaner.clean(_page("news-2"))
    adapted = cleaner.clean(_page("news-2"), memory=memory)
    by_memory = {d.path: d.label for d in adapted.decisions if d.source == "memory"}
    # The site's furniture is recalled as noise, its article as data.
    assert by_memory["/html/body/header"] == "noise"
    assert by_memory["/html/body/footer"] == "noise"
    assert by_memory["/html/body/main/div/article"] == "data"
    assert all(d.source == "model" for d in plain.decisions)
    # The ground truth starts with the headline, which the cleaner returns apart (.title).
    plain_f1, adapted_f1 = (aggregate([score_page(f"{r.title}\n\n{r.text}", truth)]).f1
                            for r in (plain, adapted))
    assert plain_f1 < 1.0 and adapted_f1 == pytest.approx(1.0)
    assert "source" in json.loads(adapted.to_json())["decisions"][0]


def test_memory_overrides_the_network(flawed_model):
    page = ('<main><article><h1>Title of the story</h1><p>A long paragraph of the story, '
            'with enough words to be read as content by the network.</p></article>'
            '<div class="box"><p>Words the site owner calls noise on every page.</p></div></main>')
    table = _table(page)
    labels = ["mixture"] * len(table)
    box = table.tags.index("div")
    labels[box] = "noise"
    memory = SiteMemory()
    memory.add(table, labels[:box] + ["noise", "noise"] + labels[box + 2:])
    cleaner = Cleaner(flawed_model)  # a model that keeps the box
    assert "calls noise" in cleaner.clean(page).text
    result = cleaner.clean(page, memory=memory)
    assert "calls noise" not in result.text and "long paragraph" in result.text
    assert clean(page, model=flawed_model, memory=memory).text == result.text


def test_site_memory_reads_current_labels_from_the_case_base(tmp_path):
    url = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    result = CliRunner().invoke(casebase_cli, ["--db", url, "import", str(FIXTURE), "--quiet",
                                               "-j", "0", "--no-oracle"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert site_host("https://www.Harbour-Gazette.test/x") == "harbour-gazette.test"
    with CaseBase.open(url) as cb:
        memory = site_memory(cb, "harbour-gazette.test")
        assert memory.pages == 2
        assert len(site_memory(cb, "no-such-site.test")) == 0
        table = _table(_page("news-2"))
        footer = table.tags.index("footer")
        assert memory.recall(table)[footer] == NOISE
        # A human says the footer is data on one page: the two pages now disagree.
        path = table.paths()[footer]
        case = next(c for c in cb.list_cases(limit=10_000) if c.path == path)
        cb.relabel(case.id, "data")
        assert site_memory(cb, "harbour-gazette.test").recall(table)[footer] == -1
        # A stored page that cannot be read back is left out; the other still teaches.
        from sqlalchemy import update

        from casebase.models import Page
        with cb.session() as session:
            session.execute(update(Page).where(Page.id == case.page_id).values(html=b"\x00junk"))
        damaged = site_memory(cb, "harbour-gazette.test")
        assert damaged.pages == 1 and damaged.recall(table)[footer] == NOISE


def test_memory_from_truth_matches_the_labelling():
    pages = [p for p in read_dataset(FIXTURE) if p.id == "blog-1"]
    memory = memory_from_truth(pages)
    table = _table(pages[0].html)
    labels = label_table(table, pages[0].truth).labels
    recalled = memory.recall(table)
    hit = recalled >= 0
    assert hit.any() and (recalled[hit] == labels[hit]).all()


def test_clean_command_with_a_memory(tmp_path):
    from noisecbr_apps.cli import main

    db = tmp_path / "cb.sqlite"
    runner = CliRunner()
    imported = runner.invoke(casebase_cli, ["--db", str(db), "import", str(FIXTURE), "--quiet",
                                            "-j", "0", "--no-oracle"], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    page = tmp_path / "news-2.html"
    page.write_bytes(_page("news-2"))
    result = runner.invoke(main, ["clean", str(page), "--memory", str(db), "-f", "json",
                                  "--url", TRUTH["news-2"]["url"]])
    assert result.exit_code == 0, result.output
    decisions = json.loads(result.stdout)["decisions"]
    assert {"/html/body/header", "/html/body/footer"} <= {
        d["path"] for d in decisions if d["source"] == "memory" and d["label"] == "noise"}
    # Each decision by memory names the stored cases behind it: the header of both pages.
    header = next(d for d in decisions if d["path"] == "/html/body/header")
    with CaseBase.open(str(db)) as cb:
        behind = [cb.get_case(case_id) for case_id in header["cases"]]
    assert len(behind) == 2 and {(c.path, c.label) for c in behind} == {
        ("/html/body/header", "noise")}
    assert all(not d["cases"] for d in decisions if d["source"] == "model")
    # Two inputs, two workers: the memory reaches the workers too.
    out = tmp_path / "out"
    batch = runner.invoke(main, ["clean", str(page), str(FIXTURE / "html" / "news-1.html.gz"),
                                 "-j", "2", "-o", str(out), "-f", "json", "-q",
                                 "--memory", str(db), "--site", "harbour-gazette.test"])
    assert batch.exit_code == 0, batch.output
    for name in ("news-2.json", "news-1.json"):
        decisions = json.loads((out / name).read_text())["decisions"]
        assert any(d["source"] == "memory" for d in decisions)
    # Without a site, each page's site is the URL it declares; a page that declares none is
    # cleaned by the model alone, and the batch says so.
    declared = tmp_path / "declared.html"
    declared.write_bytes(_page("news-2").replace(
        b"<head>", b'<head><link rel="canonical" href="https://harbour-gazette.test/b">', 1))
    assert b"canonical" in declared.read_bytes()
    both = runner.invoke(main, ["clean", str(declared), str(page), "--memory", str(db), "-o",
                                str(tmp_path / "both"), "-f", "json", "-q"])
    assert both.exit_code == 0, both.output
    assert "1 of 2 pages declare no URL" in both.output
    sources = {name: {d["source"] for d in json.loads(
        (tmp_path / "both" / name).read_text())["decisions"]}
        for name in ("declared.json", "news-2.json")}
    assert "memory" in sources["declared.json"] and sources["news-2.json"] == {"model"}
    # A missing case base, or --site alone: clear errors, no new file.
    missing = runner.invoke(main, ["clean", str(page), "--memory", str(tmp_path / "no.sqlite"),
                                   "--site", "a.test"])
    assert missing.exit_code == 5 and "no case base" in missing.output
    assert not (tmp_path / "no.sqlite").exists()
    assert runner.invoke(main, ["clean", str(page), "--site", "a.test"]).exit_code == 2
    # A site the case base does not know: the model alone, and a note saying so.
    unknown = runner.invoke(main, ["clean", str(page), "--memory", str(db), "--site", "b.test"])
    assert unknown.exit_code == 0 and "no labelled page of b.test" in unknown.output


def test_bench_adapt_scores_sites_with_enough_pages(flawed_model):
    from noisecbr_apps.bench import BenchUsageError, bench

    rows = bench(str(FIXTURE), ["noisecbr", "none"], adapt=1, model=flawed_model)
    assert [row.name for row in rows] == [
        "noisecbr", "noisecbr + 1 labelled page of the site", "none"]
    assert all(row.scores.pages == 4 for row in rows)
    # The news site's pages share their template: one page teaches the other.
    assert rows[1].scores.f1 > rows[0].scores.f1
    with pytest.raises(BenchUsageError, match="more than 2 pages"):
        bench(str(FIXTURE), ["noisecbr"], adapt=2)


def test_explain_lists_the_same_markup_behind_a_decision_by_memory(tmp_path):
    from casebase.retrieve import CaseIndex, explain_page
    from noisecbr.cleaner import default_model

    db = tmp_path / "cb.sqlite"
    runner = CliRunner()
    assert runner.invoke(casebase_cli, ["--db", str(db), "import", str(FIXTURE), "--quiet",
                                        "-j", "0", "--no-oracle"]).exit_code == 0
    url = TRUTH["news-2"]["url"]
    with CaseBase.open(str(db)) as cb:
        memory = site_memory(cb, site_host(url))
        index = CaseIndex.build(cb, default_model())
        plain = {e.path: e for e in explain_page(index, cb, _page("news-2"), url=url, k=2)}
        items = {e.path: e for e in explain_page(index, cb, _page("news-2"), url=url, k=2,
                                                 memory=memory)}
    header = items["/html/body/header"]
    assert header.source == "memory" and header.decision == "noise"
    # Both stored pages of the site have that header: two cases of the same markup, both noise,
    # and the page's own stored copy is the same subtree (cosine 1).
    assert len(header.same_markup) == 2
    assert {n.label for n in header.same_markup} == {"noise"}
    assert {n.site for n in header.same_markup} == {"harbour-gazette.test"}
    assert max(n.similarity for n in header.same_markup) == pytest.approx(1.0, abs=1e-4)
    assert all(e.source == "model" and not e.same_markup for e in plain.values())
    shown = runner.invoke(casebase_cli, ["--db", str(db), "explain", "-", "--url", url,
                                         "--memory", "-k", "1"], input=_page("news-2"))
    assert shown.exit_code == 0, shown.output
    assert "/html/body/header  <header>  noise" in shown.output
    assert "by site memory" in shown.output and "same markup  case" in shown.output
    assert runner.invoke(casebase_cli, ["--db", str(db), "explain", "-", "--memory"],
                         input=_page("news-2")).exit_code == 2


def test_a_users_correction_of_one_page_cleans_the_next_page_of_the_site(tmp_path,
                                                                          flawed_model):
    from noisecbr_apps.cli import main

    def page(story: str, promo: str) -> str:
        return (f'<html><body><main><article><h1>{story}</h1><p>The story of {story.lower()}, '
                'told in enough words to be read as the content of the page by the network.'
                f'</p></article><div class="promo-box"><p>{promo}</p></div></main></body></html>')

    first = tmp_path / "a.html"
    first.write_text(page("Harbour wall repairs", "Members save on every subscription "
                                                   "this week only."), encoding="utf-8")
    second = tmp_path / "b.html"
    second.write_text(page("Market hall reopens", "Members get a free tote bag with every "
                                                  "yearly plan."), encoding="utf-8")
    runner = CliRunner()
    before = runner.invoke(main, ["clean", str(second), "--model", flawed_model])
    assert before.exit_code == 0 and "tote bag" in before.stdout  # the network keeps the promo
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"/html/body/main/div": "noise"}))
    db = tmp_path / "cb.sqlite"
    imported = runner.invoke(casebase_cli, ["--db", str(db), "import-page", str(first),
                                            "--url", "https://news.example/a",
                                            "--labels", str(labels)])
    assert imported.exit_code == 0, imported.output
    after = runner.invoke(main, ["clean", str(second), "--memory", str(db), "--model",
                                 flawed_model, "--url", "https://news.example/b"])
    assert after.exit_code == 0, after.output
    assert "tote bag" not in after.stdout and "The story of market hall" in after.stdout


def test_a_box_that_outgrew_the_stored_noise_is_left_to_the_network():
    # The labelled page is a video post: its body box holds a caption, labelled noise. On the
    # next page the same box holds an article: the memory does not remove it.
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import tidy
    from noisecbr.result import NOISE
    from noisecbr.settings import MEMORY_NOISE_GROWTH
    from noisecbr.site.memory import SiteMemory

    def page(words: int) -> str:
        text = " ".join(f"word{k}" for k in range(words))
        return f"<body><div class='nav'>Home News</div><div class='post'><p>{text}</p></div></body>"

    labelled = build_table(tidy(page(6)))
    memory = SiteMemory()
    memory.add(labelled, ["mixture", "noise", "noise", "noise"])
    same = memory.recall(build_table(tidy(page(6 * MEMORY_NOISE_GROWTH))))
    grown = memory.recall(build_table(tidy(page(6 * MEMORY_NOISE_GROWTH + 1))))
    assert same.tolist() == [-1, NOISE, NOISE, NOISE]
    assert grown.tolist() == [-1, NOISE, -1, -1]  # the menu still goes; the article is left
    # The bound travels with a saved memory.
    again = SiteMemory.from_dict(memory.to_dict())
    assert again.recall(build_table(tidy(page(400)))).tolist() == grown.tolist()


def test_a_memory_saved_before_the_words_were_kept_stays_unbounded():
    # Its noise boxes' sizes are unknown: a page added later must not set a bound from its own.
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import tidy
    from noisecbr.result import NOISE
    from noisecbr.site.memory import SiteMemory

    def page(rail_words: int) -> str:
        rail = " ".join(f"link{k}" for k in range(rail_words))
        return f"<body><div class='rail'>{rail}</div><p>A story of its own.</p></body>"

    memory = SiteMemory()
    memory.add(build_table(tidy(page(100))), [None, "noise", "data"])
    saved = memory.to_dict()
    for tally in ("full", "short"):
        saved[tally].pop("removed_words")  # as a memory of an earlier version was saved
    old = SiteMemory.from_dict(saved)
    old.add(build_table(tidy(page(2))), [None, "noise", "data"])
    assert old.recall(build_table(tidy(page(100)))).tolist() == [-1, NOISE, 1]


def _divs_page(words: list[int]) -> str:
    """A page whose menu is a classed div and whose body is a run of plain divs of these
    many words each (the markup of fda.gov's articles in dragnet)."""
    blocks = "".join("<div>" + " ".join(f"w{n}x{k}" for k in range(count)) + "</div>"
                     for n, count in enumerate(words))
    return f"<body><div class='nav'>Home News</div><div class='main'>{blocks}</div></body>"


def test_boxes_that_outgrew_the_stored_noise_together_are_left_to_the_network():
    # The labelled page holds one small plain div of noise in the main box; the next page's
    # article is a run of plain divs, each within the bound alone, far beyond it together.
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import tidy
    from noisecbr.result import NOISE
    from noisecbr.settings import MEMORY_NOISE_GROWTH
    from noisecbr.site.memory import SiteMemory

    memory = SiteMemory()
    memory.add(build_table(tidy(_divs_page([20]))), [None, "noise", "noise", "noise"])
    within = [20 * MEMORY_NOISE_GROWTH // 2] * 2      # together at the bound
    beyond = [20 * MEMORY_NOISE_GROWTH // 2] * 6      # each within it, together beyond
    assert memory.recall(build_table(tidy(_divs_page(within)))).tolist() == [-1, NOISE, NOISE,
                                                                             NOISE, NOISE]
    article = memory.recall(build_table(tidy(_divs_page(beyond))))
    assert article[1] == NOISE  # the menu still goes
    assert article[3:].tolist() == [-1] * 6
    # The totals travel with a saved memory.
    again = SiteMemory.from_dict(memory.to_dict())
    assert again.recall(build_table(tidy(_divs_page(beyond)))).tolist() == article.tolist()


def test_a_memory_saved_before_the_totals_were_kept_keeps_only_the_box_bound():
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import tidy
    from noisecbr.result import NOISE
    from noisecbr.site.memory import SiteMemory

    memory = SiteMemory()
    memory.add(build_table(tidy(_divs_page([20]))), [None, "noise", "noise", "noise"])
    saved = memory.to_dict()
    for tally in ("full", "short"):
        saved[tally].pop("removed_totals")  # as a memory of an earlier version was saved
        saved[tally].pop("untotalled")
    old = SiteMemory.from_dict(saved)
    # A page added later must not set a total from its own boxes alone.
    old.add(build_table(tidy(_divs_page([5]))), [None, "noise", "noise", "noise"])
    recalled = old.recall(build_table(tidy(_divs_page([40] * 6))))
    assert recalled[3:].tolist() == [NOISE] * 6


def test_a_memory_from_a_case_base_of_another_revision_is_refused(tmp_path):
    # issue 43, item 8: `clean --memory` read a newer revision's case base unchecked.
    import sqlite3

    from click.testing import CliRunner

    from casebase.store import CaseBase
    from noisecbr.exits import EXIT_CASEBASE
    from noisecbr_apps.cli import main

    db = tmp_path / "future.sqlite"
    CaseBase.open(str(db)).close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_future'")
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>Some text of a page.</p></body></html>")
    result = CliRunner().invoke(main, ["clean", str(page), "--memory", str(db), "--site",
                                       "example.org"])
    assert result.exit_code == EXIT_CASEBASE and "9999_future" in result.output
    assert "newer version" in result.output
