"""Site evidence (noisecbr.site.evidence): what recurs across unlabelled pages of a site is removed
from each; the CLI's --by-site and WARC input group pages by site."""

from __future__ import annotations

import gzip
import json

import numpy as np
from click.testing import CliRunner

from noisecbr.cleaner import Cleaner
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.settings import EVIDENCE_MAX_PAGES as MAX_PAGES
from noisecbr.site.evidence import SiteEvidence, text_fingerprints
from noisecbr_apps.cli import main
from noisecbr_apps.crawl.warc import CrawlStats, WarcPage, clean_pages

STORIES = [
    "The harbour council voted to rebuild the old sea wall before the winter storms arrive.",
    "A fishing crew rescued two kayakers who drifted past the lighthouse on Sunday evening.",
    "Tide pools on the north beach hold more anemones this year than divers have ever counted.",
    "The ferry timetable changes in March, when the new terminal opens beside the fish market.",
    "Local bakers sold out of rye bread after the festival drew twice the expected crowd.",
    "Students planted four hundred oak saplings along the river path in a single afternoon.",
    "The museum reopened its maritime hall with a restored nineteenth century lifeboat.",
]
TEMPLATE_WORDS = ["Sign up for the Harbour Gazette morning briefing",
                  "Most read: Storm warning for the coast this weekend",
                  "Copyright Harbour Gazette, all rights reserved"]


def site_page(n: int, host: str = "gazette.test", template: bool = True) -> str:
    """Page ``n`` of a site: its own story (three paragraphs), and the site's template boxes."""
    story = STORIES[n % len(STORIES)]
    body = "".join(f"<p>{story} Paragraph {k} of story {n} adds its own words.</p>"
                   for k in range(3))
    boxes = ("<div class='promo'><p>{}</p></div><div class='rail'><p>{}</p></div>"
             "<div class='legal'><p>{}</p></div>".format(*TEMPLATE_WORDS)) if template else ""
    return (f"<html><head><link rel='canonical' href='https://{host}/story/{n}'></head><body>"
            f"<main><article>{body}</article>{boxes}</main></body></html>")


def table_of(html: str):
    return build_table(tidy(html))


def test_fingerprints_follow_text_not_markup():
    table = table_of("<body><div><p>Share this story</p></div><section><h3>  Share this\n"
                     " STORY</h3></section><ul><li><a href=/x>Share this story</a>"
                     "</li></ul><p> </p></body>")
    fingerprints = text_fingerprints(table)
    div, section, li = (table.tags.index(tag) for tag in ("div", "section", "li"))
    assert fingerprints[div] == fingerprints[section]  # whitespace, case and tags aside
    assert fingerprints[li] != fingerprints[div]  # the same words, all link text
    assert fingerprints[table.tags.index("p", div + 2)] == 0  # no words, no fingerprint


def test_seventh_page_loses_the_template_without_labels(flawed_model):
    cleaner = Cleaner(flawed_model)  # keeps every box that is not a <nav> or <footer>
    evidence = cleaner.site_evidence(site_page(n) for n in range(6))
    assert len(evidence) == 6
    plain = cleaner.clean(site_page(6))
    cleaned = cleaner.clean(site_page(6), site=evidence)
    for words in TEMPLATE_WORDS:
        assert words in plain.text and words not in cleaned.text
    assert cleaned.text.count("story 6") == 3  # the story whole
    by_site = [d for d in cleaned.decisions if d.source == "site"]
    assert {d.label for d in by_site} == {"noise"} and len(by_site) >= 3


def test_clean_site_cleans_each_page_with_the_others(flawed_model):
    cleaner = Cleaner(flawed_model)
    pages = [site_page(n) for n in range(4)] + [(site_page(4), "https://gazette.test/4")]
    results = list(cleaner.clean_site(pages))
    assert len(results) == 5 and results[4].url == "https://gazette.test/4"
    for n, result in enumerate(results):
        assert result.text.count(f"story {n}") == 3
        assert not any(words in result.text for words in TEMPLATE_WORDS)


def test_a_copy_of_the_page_is_no_evidence(flawed_model):
    cleaner = Cleaner(flawed_model)
    # The same story under another address (a print view): its paragraphs recur, but the page
    # is a copy, not the site's template.
    copy = site_page(2).replace("/story/2", "/print/2").replace(TEMPLATE_WORDS[0], "Print")
    evidence = cleaner.site_evidence([copy])
    assert cleaner.clean(site_page(2), site=evidence).text.count("story 2") == 3
    # The page itself among the evidence (clean_site) is not evidence for itself either.
    alone = cleaner.site_evidence([site_page(2)])
    assert cleaner.clean(site_page(2), site=alone).text == cleaner.clean(site_page(2)).text


def test_pages_that_are_not_html_are_no_evidence(flawed_model):
    cleaner = Cleaner(flawed_model)
    evidence = cleaner.site_evidence([b"%PDF-1.4 not a page", site_page(0), site_page(0)])
    assert len(evidence) == 1  # the binary skipped, the second copy one page


def test_evidence_keeps_at_most_max_pages():
    evidence = SiteEvidence(table_of(site_page(n).replace("story", f"s{n} story"))
                            for n in range(MAX_PAGES + 3))
    assert len(evidence) == MAX_PAGES
    assert len(evidence.merged(SiteEvidence([table_of(site_page(99))]))) == MAX_PAGES


def test_templates_of_a_very_deep_page():
    depth = 50_000
    page = "<body>" + "<div>" * depth + "<p>Sign up today</p>" + "</div>" * depth + "</body>"
    table = table_of(page)
    other = table_of("<body><aside><p>Sign up today</p></aside><p>Other story</p></body>")
    templates = SiteEvidence([other]).templates(table)
    # Every div holds nothing but the recurring words: all of them recur.
    assert templates.sum() == len(table) - 1 and not templates[0]
    assert isinstance(templates, np.ndarray)


def _write_site(folder, host, count):
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"{n}.html").write_text(site_page(n, host), encoding="utf-8")


def test_cli_by_site_cleans_two_sites_apart(tmp_path, flawed_model):
    _write_site(tmp_path / "in" / "a", "gazette.test", 4)
    # The second site's pages declare no address: their folder is their site. They share no
    # template with the first site.
    other = tmp_path / "in" / "b"
    other.mkdir()
    for n in range(3):
        page = site_page(n, template=False).replace("<link rel='canonical' href='https://"
                                                    f"gazette.test/story/{n}'>", "")
        page = page.replace("</main>", "<div class='x'><p>Blog roll of the other site</p>"
                            "</div></main>")
        (other / f"{n}.html.gz").write_bytes(gzip.compress(page.encode()))
    runner = CliRunner()
    result = runner.invoke(main, ["clean", str(tmp_path / "in"), "-o", str(tmp_path / "out"),
                                  "--by-site", "--model", flawed_model, "-q"])
    assert result.exit_code == 0, result.output
    for n in range(4):
        text = (tmp_path / "out" / "a" / f"{n}.txt").read_text()
        assert text.count(f"story {n}") == 3
        assert not any(words in text for words in TEMPLATE_WORDS)
    for n in range(3):
        text = (tmp_path / "out" / "b" / f"{n}.txt").read_text()
        assert "Blog roll" not in text and text.count(f"story {n}") == 3
    plain = runner.invoke(main, ["clean", str(tmp_path / "in" / "a" / "0.html"),
                                 "--model", flawed_model])
    assert TEMPLATE_WORDS[0] in plain.output
    refused = runner.invoke(main, ["clean", "-", "--by-site"], input=site_page(0))
    assert refused.exit_code == 2 and "--by-site" in refused.output


def test_warc_pages_are_grouped_by_host(flawed_model):
    cleaner = Cleaner(flawed_model)
    pages = []
    for n in range(3):  # two hosts interleaved, as a crawl writes them
        pages.append(WarcPage(f"https://gazette.test/story/{n}", f"<a{n}>", "", site_page(n)))
        pages.append(WarcPage(f"https://other.test/{n}", f"<b{n}>", "",
                              site_page(n + 3, "other.test", template=False)))
    pages.append(WarcPage("https://lonely.test/", "<c>", "", site_page(6, "lonely.test")))
    stats = CrawlStats()
    rows = list(clean_pages(cleaner, pages, stats, by_site=True))
    assert [row["warc_record_id"] for row in rows] == [page.record_id for page in pages]
    for row in rows[0:6:2]:
        assert not any(words in row["text"] for words in TEMPLATE_WORDS)
    # A host seen once has no other pages to compare with: the model alone decides.
    assert TEMPLATE_WORDS[0] in rows[6]["text"]
    plain = list(clean_pages(cleaner, pages, CrawlStats()))
    assert TEMPLATE_WORDS[0] in plain[0]["text"]
    assert json.dumps(rows)  # rows stay JSON-ready
