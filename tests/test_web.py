"""The web as input (issue 55): fetching one page politely, and crawling URL lists, sitemaps and
feeds with ``noisecbr clean``, against a loopback site (tests/websim.py); no test reaches any
other address."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from websim import BUSY_TEXT, CAFE, serve_site

import noisecbr
from noisecbr.prepare.tidy import InputTooLargeError, NotHTMLError
from noisecbr.web.discover import feed_urls, page_links, page_urls, sitemap_urls
from noisecbr.web.fetch import (
    Fetched,
    Fetcher,
    FetchError,
    FetchTimeoutError,
    RobotsDeniedError,
)
from noisecbr_apps.cli import main
from noisecbr_apps.web.crawl import already_written, fetch_all

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site():
    with serve_site(pages=20, slow_seconds=5.0, busy_failures=1, retry_after=1) as served:
        yield served


def _fetcher(**options) -> Fetcher:
    return Fetcher(**{"delay": 0.0, "timeout": 2.0, "retries": 2, "backoff": 0.1, **options})


# -- one page ---------------------------------------------------------------------------------
def test_fetch_and_clean_keeps_the_article_and_drops_the_menu(site):
    result = noisecbr.fetch_and_clean(site.url("/page/3.html"))
    assert site.page_text(3) in result.text
    assert "Cookie" not in result.text and "Related articles" not in result.text
    assert result.url == site.url("/page/3.html")


def test_redirects_are_followed_and_recorded(site):
    with _fetcher() as fetcher:
        fetched = fetcher.fetch(site.url("/redirect/1"))
    assert fetched.final_url == site.url("/page/0.html")
    assert fetched.redirects == (site.url("/redirect/1"), site.url("/redirect/2"))
    assert site.page_text(0) in noisecbr.clean(fetched.payload, url=fetched.final_url).text


def test_robots_txt_is_obeyed_and_the_page_never_requested(site):
    with _fetcher() as fetcher, pytest.raises(RobotsDeniedError, match="robots.txt"):
        fetcher.fetch(site.url("/private/2.html"))
    assert site.hits("/private/2.html") == 0
    with _fetcher(robots=False) as fetcher:  # the rule, not the server, refused it
        assert fetcher.fetch(site.url("/private/2.html")).status == 200


def test_a_slow_page_times_out(site):
    with _fetcher(timeout=0.5) as fetcher, pytest.raises(FetchTimeoutError, match="timed out"):
        fetcher.fetch(site.url("/slow.html"))


def test_a_page_that_trickles_forever_is_cut_off_by_the_download_deadline(site):
    # A byte every 0.2 s never trips the 1 s read timeout: the whole download's does (3 s).
    with _fetcher(timeout=1.0) as fetcher, pytest.raises(FetchTimeoutError, match="downloading"):
        fetcher.fetch(site.url("/trickle.html"))


def test_a_503_is_retried_after_its_retry_after():
    with serve_site(pages=2, busy_failures=1, retry_after=1) as local:
        with _fetcher() as fetcher:
            started = time.monotonic()
            fetched = fetcher.fetch(local.url("/busy.html"))
            waited = time.monotonic() - started
        assert BUSY_TEXT in noisecbr.clean(fetched.payload).text
        assert local.hits("/busy.html") == 2
        assert waited >= 0.9  # its Retry-After: 1, not the back-off of 0.1 s


def test_a_server_that_stays_busy_fails_after_the_retries(site):
    before = site.hits("/always-busy.html")
    with _fetcher(retries=1) as fetcher, pytest.raises(FetchError, match="503") as caught:
        fetcher.fetch(site.url("/always-busy.html"))
    assert caught.value.status == 503
    assert site.hits("/always-busy.html") - before == 2
    # A Retry-After longer than the bound is not waited for.
    with _fetcher(max_retry_after=0.5) as fetcher, pytest.raises(FetchError, match="retry after"):
        fetcher.fetch(site.url("/always-busy.html"))


def test_a_wrong_charset_header_does_not_garble_the_page(site):
    # The header says UTF-8; the bytes are windows-1252, as the page's own <meta> says.
    result = noisecbr.fetch_and_clean(site.url("/wrong-charset.html"))
    assert CAFE in result.text and "\ufffd" not in result.text


def test_a_body_over_the_cap_is_refused_while_downloading(site):
    with _fetcher(max_bytes=200_000) as fetcher:
        with pytest.raises(InputTooLargeError, match="while downloading"):
            fetcher.fetch(site.url("/big.html"))
        with pytest.raises(InputTooLargeError, match="3000000 bytes"):
            fetcher.fetch(site.url("/big-declared.html"))


def test_other_content_types_and_bad_urls_are_refused(site):
    with _fetcher() as fetcher:
        with pytest.raises(NotHTMLError, match="application/json"):
            fetcher.fetch(site.url("/not-html.json"))
        with pytest.raises(FetchError, match="404"):
            fetcher.fetch(site.url("/no-such-page.html"))
        with pytest.raises(FetchError, match="not an http"):
            fetcher.fetch("ftp://127.0.0.1/x")


def test_requests_to_one_host_wait_the_delay(site):
    with _fetcher(delay=0.3) as fetcher:
        started = time.monotonic()
        for n in range(3):
            fetcher.fetch(site.url(f"/page/{n}.html"))
        assert time.monotonic() - started >= 0.6  # two gaps of at least the delay


def test_the_user_agent_is_the_users(site):
    with _fetcher(user_agent="my-crawler/2") as fetcher:
        assert fetcher.fetch(site.url("/page/1.html")).status == 200
    assert "my-crawler/2" in site.agents


# -- discovery --------------------------------------------------------------------------------
def test_a_sitemap_index_with_a_gzipped_sitemap_lists_every_page(site):
    with _fetcher() as fetcher:
        listed = sitemap_urls(fetcher, site.url("/sitemap.xml"))
    urls = list(page_urls(listed))
    pages = [site.url(f"/page/{n}.html") for n in range(20)]
    assert set(pages) <= set(urls)
    assert len(urls) == len(set(urls)) == 25  # 20 pages, 5 private; the duplicate gone
    assert not any(url.endswith(".pdf") for url in urls)


def test_feeds_list_their_entries(site):
    with _fetcher() as fetcher:
        assert feed_urls(fetcher, site.url("/feed.xml")) == [
            site.url(f"/page/{n}.html") for n in range(10)]
        assert len(feed_urls(fetcher, site.url("/atom.xml"))) == 5
        with pytest.raises(FetchError):
            feed_urls(fetcher, site.url("/page/1.html"))


def test_page_urls_stops_at_max_pages_and_drops_fragments():
    urls = ["http://a.test/x#one", "http://a.test/x#two", "http://A.test/y", "http://a.test/z"]
    assert list(page_urls(urls, max_pages=2)) == ["http://a.test/x#one", "http://A.test/y"]


# -- the command line -------------------------------------------------------------------------
def test_clean_one_url_prints_its_text(site):
    done = CliRunner().invoke(main, ["clean", site.url("/page/4.html")])
    assert done.exit_code == 0, done.output
    assert site.page_text(4) in done.stdout


def test_clean_a_forbidden_url_fails_naming_robots_txt(site):
    done = CliRunner().invoke(main, ["clean", site.url("/private/3.html")])
    assert done.exit_code == 1
    assert "robots.txt" in done.stderr
    assert site.hits("/private/3.html") == 0


def test_a_sitemap_crawl_writes_every_allowed_page_once(site, tmp_path):
    out = tmp_path / "crawl.jsonl"
    before = len(site.log)
    done = CliRunner().invoke(main, ["clean", "--sitemap", site.url("/sitemap.xml"), "--delay",
                                     "0", "-j", "2", "-o", str(out), "-q"])
    requested = site.log[before:]
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["url"] for row in rows) == sorted(site.url(f"/page/{n}.html")
                                                      for n in range(20))
    for row in rows:
        n = int(row["url"].rsplit("/", 1)[1].split(".")[0])
        assert site.page_text(n) in row["text"]
        assert row["requested_url"] == row["url"] and row["redirects"] == []
    assert not any(path.startswith("/private/") for path in requested)
    assert "/files/report.pdf" not in requested
    assert sorted(requested.count(f"/page/{n}.html") for n in range(20)) == [1] * 20
    assert "5 forbidden by robots.txt" in done.stderr


def test_each_host_waits_its_delay_while_hosts_are_fetched_together(tmp_path):
    # Two sites on two loopback addresses (two hosts), two pages each, a 2 s delay: each host's
    # second page comes at least the delay after its first, and both hosts' first pages come
    # before either one's second (they are fetched together, not one host after the other).
    with serve_site(pages=2) as one, serve_site(pages=2, address="127.0.0.2") as two:
        urls = [site.url(f"/page/{n}.html") for site in (one, two) for n in range(2)]
        done = CliRunner().invoke(main, ["clean", *urls, "--delay", "2", "-j", "1", "-q",
                                         "-o", str(tmp_path / "out.jsonl")])
        assert done.exit_code == 0, done.output
        firsts, seconds = [], []
        for site in (one, two):
            pages = [when for path, when in zip(site.log, site.times) if path.startswith("/page/")]
            assert len(pages) == 2 and pages[1] - pages[0] >= 1.9
            firsts.append(pages[0])
            seconds.append(pages[1])
    assert max(firsts) < min(seconds)


def test_failures_are_named_and_the_exit_code_says_so(site, tmp_path):
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join([site.url("/page/5.html"), "# a comment", "",
                                  site.url("/slow.html"), site.url("/always-busy.html"),
                                  site.url("/missing.html"), site.url("/redirect/1")]) + "\n")
    out = tmp_path / "pages"
    done = CliRunner().invoke(main, ["clean", "--urls", str(listing), "--delay", "0",
                                     "--timeout", "1.5", "--retries", "0", "-o", str(out)])
    assert done.exit_code == 1
    for path, reason in (("/slow.html", "timed out"), ("/always-busy.html", "HTTP 503"),
                         ("/missing.html", "HTTP 404")):
        line = next(line for line in done.stderr.splitlines() if site.url(path) + ":" in line)
        assert reason in line
    written = sorted(path.read_text(encoding="utf-8") for path in out.rglob("*.txt"))
    assert len(written) == 2  # page 5, and page 0 through the redirects
    assert any(site.page_text(5) in text for text in written)
    assert any(site.page_text(0) in text for text in written)
    assert not list(out.rglob("*.part"))


def test_parquet_rows_record_the_redirects(site, tmp_path):
    out = tmp_path / "crawl.parquet"
    done = CliRunner().invoke(main, ["clean", site.url("/redirect/1"), site.url("/page/6.html"),
                                     "--delay", "0", "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    rows = {row["url"]: row for row in pq.read_table(out).to_pylist()}
    assert rows[site.url("/page/0.html")]["redirects"] == [site.url("/redirect/1"),
                                                          site.url("/redirect/2")]
    assert rows[site.url("/page/0.html")]["requested_url"] == site.url("/redirect/1")


def test_resume_skips_what_is_written_and_mends_a_cut_row(site, tmp_path):
    out = tmp_path / "crawl.jsonl"
    first = CliRunner().invoke(main, ["clean", "--feed", site.url("/feed.xml"), "--delay", "0",
                                      "--max-pages", "4", "-o", str(out), "-q"])
    assert first.exit_code == 0, first.output
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"url": "http://127.0.0.1/cut sh')  # a row a killed crawl was writing
    assert len(already_written(out, "jsonl")) >= 4
    before = list(site.log)
    again = CliRunner().invoke(main, ["clean", "--feed", site.url("/feed.xml"), "--delay", "0",
                                      "-o", str(out), "--resume", "-q"])
    assert again.exit_code == 0, again.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["url"] for row in rows) == sorted(site.url(f"/page/{n}.html")
                                                      for n in range(10))
    fetched_again = [path for path in site.log[len(before):] if path.startswith("/page/")]
    assert len(fetched_again) == 6
    assert "4 of 10 URLs are written already" in again.stderr


def test_resume_of_parquet_is_refused_with_a_reason(site, tmp_path):
    done = CliRunner().invoke(main, ["clean", site.url("/page/1.html"), site.url("/page/2.html"),
                                     "-o", str(tmp_path / "x.parquet"), "--resume"])
    assert done.exit_code == 2 and "JSONL" in done.stderr


def test_web_options_that_do_not_fit_are_refused(site, tmp_path):
    page = tmp_path / "a.html"
    page.write_text("<p>x</p>")
    mixed = CliRunner().invoke(main, ["clean", site.url("/page/1.html"), str(page)])
    assert mixed.exit_code == 2 and "URLs alone" in mixed.stderr
    bad = tmp_path / "urls.txt"
    bad.write_text("not a url\n")
    listed = CliRunner().invoke(main, ["clean", "--urls", str(bad)])
    assert listed.exit_code == 2 and "not an http(s) URL" in listed.stderr
    assert CliRunner().invoke(main, ["clean", str(page), "--resume"]).exit_code == 2
    assert CliRunner().invoke(main, ["clean"]).exit_code == 2


def test_a_killed_crawl_resumes_with_no_page_lost_or_written_twice(tmp_path):
    # A real process, killed with SIGKILL mid-crawl, then resumed.
    out = tmp_path / "crawl.jsonl"
    with serve_site(pages=60) as local:
        command = [sys.executable, "-m", "noisecbr_apps.cli", "clean", "--sitemap",
                   local.url("/sitemap.xml"), "--delay", "0.05", "-o", str(out), "-q"]
        crawl = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            while (not out.exists() or out.read_text(encoding="utf-8").count("\n") < 5):
                assert crawl.poll() is None, "the crawl ended before it could be killed"
                time.sleep(0.05)
            os.kill(crawl.pid, signal.SIGKILL)
        finally:
            crawl.wait()
        cut = out.read_text(encoding="utf-8").count("\n")
        assert cut < 60
        resumed = subprocess.run([*command, "--resume"], cwd=ROOT, capture_output=True,
                                 text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert resumed.returncode == 0, resumed.stderr
    urls = [json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(urls) == sorted(local.url(f"/page/{n}.html") for n in range(60))


def test_ctrl_c_ends_a_crawl_with_its_output_whole(tmp_path):
    # SIGINT mid-crawl: exit 130, one line saying so, and the Parquet file closed and readable.
    out = tmp_path / "crawl.parquet"
    with serve_site(pages=60) as local:
        crawl = subprocess.Popen(
            [sys.executable, "-m", "noisecbr_apps.cli", "clean", "--sitemap",
             local.url("/sitemap.xml"), "--delay", "0.05", "-j", "2", "-o", str(out), "-q"],
            cwd=ROOT, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            while sum(path.startswith("/page/") for path in local.log) < 10:
                assert crawl.poll() is None, "the crawl ended before it could be interrupted"
                time.sleep(0.05)
            crawl.send_signal(signal.SIGINT)
            stderr = crawl.communicate(timeout=120)[1]
        finally:
            crawl.kill()
    assert crawl.returncode == 130, stderr
    assert "Traceback" not in stderr
    written = int(stderr.split("interrupted: ")[1].split(" pages")[0])
    rows = pq.read_table(out).to_pylist()
    assert 0 < len(rows) == written < 60
    assert all(local.url("/page/") in row["url"] and row["text"] for row in rows)


# -- following links (--crawl) ----------------------------------------------------------------
def test_a_crawl_follows_its_site_s_links_once_each(tmp_path):
    out = tmp_path / "crawl.jsonl"
    with serve_site(pages=12) as local:
        done = CliRunner().invoke(main, ["clean", "--crawl", local.url("/page/0.html"),
                                         "--delay", "0", "--max-pages", "40", "-o", str(out),
                                         "-q"])
        requested = [path for path in local.log if path != "/robots.txt"]
    # Each page links to the next three: every page is reached, and fetched once.
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["url"] for row in rows) == sorted(local.url(f"/page/{n}.html")
                                                      for n in range(12))
    assert len(requested) == len(set(requested))
    # The menu's and footer's links lead nowhere on the test site: named, and the exit says so.
    assert done.exit_code == 1
    assert f"{local.url('/about.html')}: HTTP 404" in done.stderr
    assert not any(path.startswith("/private/") for path in requested)  # never linked


def test_a_crawl_stops_at_max_pages(tmp_path):
    out = tmp_path / "crawl.jsonl"
    with serve_site(pages=12) as local:
        CliRunner().invoke(main, ["clean", "--crawl", local.url("/page/0.html"), "--delay", "0",
                                  "--max-pages", "5", "-o", str(out), "-q"])
        requested = [path for path in local.log if path != "/robots.txt"]
    assert len(requested) == 5 and requested[0] == "/page/0.html"


def test_links_to_another_host_are_not_followed():
    with serve_site(pages=3) as one, serve_site(pages=3) as two:
        def follow(fetched):
            return [two.url("/page/1.html"), one.url("/page/1.html")]

        with _fetcher() as fetcher:
            got = {url: page is not None
                   for url, page, _ in fetch_all(fetcher, [one.url("/page/0.html")],
                                                 follow=follow, limit=10)}
        assert got == {one.url("/page/0.html"): True, one.url("/page/1.html"): True}
        assert two.log == []


def test_page_links_are_absolute_followable_pages():
    page = ("<html><head><base href='/docs/'><base href='/ignored/'></head><body>"
            "<a href='a.html#part'>a</a> <a href='https://other.test/b'>b</a>"
            "<a href='mailto:x@y.test'>mail</a> <a rel='nofollow ugc' href='c.html'>c</a>"
            "<a href='a.html'>again</a> <a>no href</a> <a href='http://[::1'>broken</a>"
            "</body></html>")
    fetched = Fetched("http://site.test/x", "http://site.test/x", 200, "text/html", "utf-8",
                      page.encode())
    assert page_links(fetched) == ["http://site.test/docs/a.html", "https://other.test/b",
                                   "http://site.test/docs/a.html"]
    meta = page.replace("<head>", "<head><meta name='robots' content='noindex, nofollow'>")
    assert page_links(Fetched("http://site.test/x", "http://site.test/x", 200, "text/html",
                              "utf-8", meta.encode())) == []

    broken_base = page.replace("href='/docs/'", "href='http://[::1'")
    assert page_links(Fetched("http://site.test/x", "http://site.test/x", 200, "text/html",
                              "utf-8", broken_base.encode()))[0] == "http://site.test/a.html"


# -- what a server may answer, without a server (httpx's MockTransport) -------------------------
def _mock(routes: dict[str, tuple[int, dict, bytes]], **options) -> tuple[Fetcher, list[str]]:
    """A Fetcher whose requests are answered from ``routes`` (path → status, headers, body; 404
    otherwise), and the list of paths it asked for."""
    import httpx

    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        status, headers, body = routes.get(request.url.path, (404, {}, b"not here"))
        return httpx.Response(status, headers=headers, content=body)

    return _fetcher(transport=httpx.MockTransport(answer), **options), asked


_PAGE = (200, {"Content-Type": "text/html"}, b"<html><body><p>Hello there.</p></body></html>")


def test_a_robots_txt_that_cannot_be_read_fails_the_host_s_pages_saying_so():
    fetcher, asked = _mock({"/robots.txt": (503, {}, b"down"), "/a.html": _PAGE}, retries=1)
    with fetcher, pytest.raises(FetchError, match="could not be read") as raised:
        fetcher.fetch("http://down.test/a.html")
    assert not isinstance(raised.value, RobotsDeniedError)  # a failure, not a rule
    assert asked == ["/robots.txt", "/robots.txt"]  # retried, and the page never asked for


def test_a_robots_txt_with_a_byte_order_mark_keeps_its_rules():
    rules = "\ufeffUser-agent: *\nDisallow: /private/\n".encode()
    fetcher, asked = _mock({"/robots.txt": (200, {}, rules), "/private/a.html": _PAGE})
    with fetcher, pytest.raises(RobotsDeniedError):
        fetcher.fetch("http://bom.test/private/a.html")
    assert "/private/a.html" not in asked


def test_a_crawl_delay_of_a_day_fails_the_pages_instead_of_waiting():
    rules = b"User-agent: *\nCrawl-delay: 86400\n"
    fetcher, asked = _mock({"/robots.txt": (200, {}, rules), "/a.html": _PAGE})
    with fetcher, pytest.raises(FetchError, match="86400 s between requests"):
        fetcher.fetch("http://slowpoke.test/a.html")
    assert asked == ["/robots.txt"]


def test_malformed_urls_and_headers_are_fetch_errors():
    fetcher, _ = _mock({"/robots.txt": (404, {}, b""),
                        "/moved": (301, {"Location": "http://[::1/x"}, b""),
                        "/odd": (200, {"Content-Type": "text/html", "Content-Length": b"\xb2"},
                                 b"<p>odd</p>")})
    with fetcher:
        for url in ("http://[::1/x", "http://host.test:99999/", "ftp://host.test/"):
            with pytest.raises(FetchError):
                fetcher.fetch(url)
        with pytest.raises(FetchError, match="http://host.test/moved"):
            fetcher.fetch("http://host.test/moved")  # its Location names no URL
        try:  # a length of "²": read as the body comes, or refused as a FetchError
            assert fetcher.fetch("http://host.test/odd").body == b"<p>odd</p>"
        except FetchError:
            pass


def test_a_sub_sitemap_that_fails_is_named():
    index = (b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/'
             b'sitemap/0.9"><sitemap><loc>http://map.test/gone.xml</loc></sitemap><sitemap>'
             b'<loc>http://map.test/pages.xml</loc></sitemap></sitemapindex>')
    pages = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             b'<url><loc>http://map.test/a.html</loc></url></urlset>')
    xml = {"Content-Type": "application/xml"}
    fetcher, _ = _mock({"/robots.txt": (404, {}, b""), "/sitemap.xml": (200, xml, index),
                        "/pages.xml": (200, xml, pages)})
    failures: list[tuple[str, str]] = []
    with fetcher:
        assert sitemap_urls(fetcher, "http://map.test/sitemap.xml", failures) == [
            "http://map.test/a.html"]
    assert [url for url, _ in failures] == ["http://map.test/gone.xml"]


def test_bad_urls_among_good_ones_are_named_and_the_rest_cleaned(site, tmp_path):
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(main, ["clean", "http://[::1/x", site.url("/page/7.html"),
                                     "--delay", "0", "-o", str(out), "-q"])
    assert done.exit_code == 1 and "http://[::1/x: not a valid URL" in done.stderr
    assert [json.loads(line)["url"] for line in out.read_text().splitlines()] == [
        site.url("/page/7.html")]
    parquet = CliRunner().invoke(main, ["clean", site.url("/page/1.html"),
                                        site.url("/page/2.html"), "-f", "parquet"])
    assert parquet.exit_code == 2 and "give -o out.parquet" in parquet.stderr


def test_max_pages_stops_reading_an_index_s_sitemaps_once_it_has_enough(tmp_path):
    with serve_site(pages=10) as local:
        with _fetcher() as fetcher:
            whole = sitemap_urls(fetcher, local.url("/sitemap.xml"))
            assert local.hits("/sitemap-private.xml") == 1
            few = sitemap_urls(fetcher, local.url("/sitemap.xml"), enough=3)
        assert local.hits("/sitemap-private.xml") == 1  # the second time, not read
    # The first sub-sitemap's pages; then all of them, the private sitemap's too.
    assert few == [url for url in whole if "/private/" not in url] and len(few) < len(whole)


def test_one_host_s_turns_are_shared_by_its_ports_and_schemes():
    # Two servers of one host name (two ports): one server's turns, the delay between them.
    with serve_site(pages=2) as one, serve_site(pages=2) as other:
        with _fetcher(delay=1.0) as fetcher:
            fetcher.fetch(one.url("/page/0.html"))
            fetcher.fetch(other.url("/page/0.html"))
        first = one.times[one.log.index("/page/0.html")]
        second = other.times[other.log.index("/page/0.html")]
    assert second - first >= 0.9
