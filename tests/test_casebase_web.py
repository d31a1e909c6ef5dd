"""Fetched pages into the case base (``casebase import-urls``) and into ``--by-site`` evidence
(issue 55, part 4), against the loopback site of tests/websim.py; no other address is reached."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from websim import serve_site

from casebase.cli import cli
from noisecbr_apps.cli import main


@pytest.fixture(scope="module")
def site():
    with serve_site(pages=8) as served:
        yield served


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.delenv("NOISECBR_DB", raising=False)
    return f"sqlite:///{tmp_path / 'web.sqlite'}"


def _cases(db: str) -> list[dict]:
    listed = CliRunner().invoke(cli, ["--db", db, "list", "--json", "--limit", "5000"])
    assert listed.exit_code == 0, listed.output
    return [json.loads(line) for line in listed.stdout.splitlines()]


def test_a_sitemap_s_pages_become_the_site_s_template_cases(site, db):
    before = len(site.log)
    done = CliRunner().invoke(cli, ["--db", db, "import-urls", "--sitemap",
                                    site.url("/sitemap.xml"), "--delay", "0", "-q"])
    assert done.exit_code == 0, done.output
    assert "8 imported" in done.stdout and "forbidden by robots.txt" in done.stderr
    assert not [path for path in site.log[before:] if path.startswith("/private/")]
    cases = _cases(db)
    assert {(case["label"], case["label_source"], case["site"]) for case in cases} == {
        ("noise", "site_template", "127.0.0.1")}
    texts = " ".join(case["text"] for case in cases)
    assert "Science" in texts and "All rights reserved" in texts  # the menu, the footer
    for n in range(8):  # no article's own text is a template case
        assert site.page_text(n)[:60] not in texts
    again = CliRunner().invoke(cli, ["--db", db, "import-urls", "--sitemap",
                                     site.url("/sitemap.xml"), "--delay", "0", "-q"])
    assert again.exit_code == 0 and "8 already there" in again.stdout
    assert len(_cases(db)) == len(cases)


def test_urls_that_fail_are_named_and_the_rest_imported(site, db):
    done = CliRunner().invoke(cli, ["--db", db, "import-urls", site.url("/page/1.html"),
                                    site.url("/page/2.html"), site.url("/missing.html"),
                                    "--delay", "0", "--timeout", "2", "-q"])
    assert done.exit_code == 1
    assert f"failed {site.url('/missing.html')}: " in done.stderr and "404" in done.stderr
    assert "2 imported" in done.stdout
    assert _cases(db)


def test_import_urls_refuses_what_is_not_a_url(db, tmp_path):
    done = CliRunner().invoke(cli, ["--db", db, "import-urls", str(tmp_path / "page.html")])
    assert done.exit_code == 2 and "not an http(s) URL" in done.output
    assert CliRunner().invoke(cli, ["--db", db, "import-urls"]).exit_code == 2


def test_by_site_uses_the_sitemap_s_other_pages_as_evidence(site, tmp_path, monkeypatch):
    from noisecbr_apps.web import crawl

    given = []
    real = crawl.site_windows

    def recorded(cleaner, pages):
        for page, evidence in real(cleaner, pages):
            given.append((page.url, evidence))
            yield page, evidence

    monkeypatch.setattr(crawl, "site_windows", recorded)
    out = tmp_path / "site.jsonl"
    done = CliRunner().invoke(main, ["clean", "--sitemap", site.url("/sitemap.xml"), "--by-site",
                                     "-j", "1", "--delay", "0", "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8
    assert sorted(url for url, _ in given) == sorted(row["url"] for row in rows)
    assert all(evidence is not None for _, evidence in given)  # each page had its site's
    for row in rows:
        assert "Related articles" not in row["text"] and "All rights reserved" not in row["text"]


def test_fetched_pages_cleaned_with_the_memory_import_urls_filled(site, db, tmp_path):
    imported = CliRunner().invoke(cli, ["--db", db, "import-urls", site.url("/page/1.html"),
                                        site.url("/page/2.html"), site.url("/page/3.html"),
                                        "--delay", "0", "-q"])
    assert imported.exit_code == 0, imported.output
    out = tmp_path / "clean.jsonl"
    done = CliRunner().invoke(main, ["clean", site.url("/page/4.html"), site.url("/page/5.html"),
                                     "--memory", db.removeprefix("sqlite:///"), "--delay", "0",
                                     "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    assert "the host of the URL it was fetched from" in done.stderr
    rows = {row["url"]: row for row in map(json.loads, out.read_text().splitlines())}
    for n in (4, 5):
        text = rows[site.url(f"/page/{n}.html")]["text"]
        assert site.page_text(n) in text and "All rights reserved" not in text


def test_a_page_that_cannot_be_read_is_left_out_of_the_site_s_import(tmp_path):
    from casebase.site_import import SitePage, import_site_pages
    from casebase.store import CaseBase
    from noisecbr.prepare.limits import MAX_ELEMENTS

    def page(n: int) -> bytes:
        return (f"<html><body><nav><a href='/'>Home</a> <a href='/b'>Back issues</a></nav>"
                f"<main><p>Article {n}: the harbour's boats came in at dawn.</p></main>"
                "<footer>All rights reserved</footer></body></html>").encode()

    huge = ("<html><body>" + "<b>x</b>" * (MAX_ELEMENTS + 10) + "</body></html>").encode()
    pages = [SitePage(f"p{n}", page(n)) for n in range(3)] + [SitePage("huge", huge)]
    base = CaseBase.open(f"sqlite:///{tmp_path / 'cb.sqlite'}")
    with base.session() as session:
        report = import_site_pages(session, pages, "harbour.test")
    assert report.imported == 3 and [name for name, _ in report.failed] == ["huge"]
    assert report.cases["noise"] > 0
