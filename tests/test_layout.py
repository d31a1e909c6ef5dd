"""Reading datasets: a ground truth stored as UTF-16 but read one byte per character."""

from __future__ import annotations

import json

from noisecbr.eval.datasets import read_dataset, repair_truth


def _dataset(tmp_path, truth: str):
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "1.html").write_text("<html><body><p>Hi</p></body></html>")
    (tmp_path / "ground-truth.json").write_text(
        json.dumps({"1": {"url": "https://example.com/a", "articleBody": truth}}))
    return next(read_dataset(tmp_path))


def test_utf16_truth_read_as_latin1_is_decoded_again(tmp_path):
    written = "Forgiving your enemies\r\n\r\n“Then all that’s left now” — Ünïcode."
    garbled = written.encode("utf-16").decode("latin-1")  # ÿþ, then a NUL per ASCII letter
    assert garbled.startswith("\xff\xfe") and "\x00" in garbled
    assert _dataset(tmp_path, garbled).truth == written


def test_other_truths_are_left_as_written(tmp_path):
    assert _dataset(tmp_path, "ÿþ is how the BOM looks").truth == "ÿþ is how the BOM looks"
    assert repair_truth("") == ""
    odd = "\xff\xfeA\x00\u20ac"  # a character beyond Latin-1: not bytes read as Latin-1
    assert repair_truth(odd) == odd


def test_a_page_without_url_takes_the_site_its_html_names(tmp_path):
    pages = {
        "1": '<link rel="Canonical" href="https://www.blog.example/2012/post"><p>A</p>',
        "2": '<a href="http://blog.example/a">a</a><a href="http://blog.example/b">b</a>'
             '<a href="https://twitter.com/share">t</a><a href="/relative">r</a>',
        "3": "<p>No link at all.</p>",
        "4": '<a href="http://[::1">broken</a><meta property="og:url" content="/relative">',
    }
    (tmp_path / "html").mkdir()
    for key, html in pages.items():
        (tmp_path / "html" / f"{key}.html").write_text(f"<html><body>{html}</body></html>")
    truth = {key: {"url": "", "articleBody": "x"} for key in pages}
    truth["5"] = {"url": "https://www.other.example/x", "articleBody": "x"}
    (tmp_path / "html" / "5.html").write_text('<link rel="canonical" href="https://blog.example/">')
    (tmp_path / "ground-truth.json").write_text(json.dumps(truth))
    sites = {page.id: page.site for page in read_dataset(tmp_path)}
    name = tmp_path.name
    assert sites == {"1": "blog.example", "2": "blog.example", "3": f"page:{name}/3",
                     "4": f"page:{name}/4", "5": "other.example"}  # a URL wins over the HTML


def test_a_site_the_ground_truth_names_wins_over_url_and_html(tmp_path):
    # utomo-big9's archived pages have no URL and link to the archive; fundus names publishers.
    archived = ('<a href="http://web.archive.org/web/2009/http://cnn.com/a">a</a>'
                '<a href="http://web.archive.org/web/2009/http://cnn.com/b">b</a>')
    (tmp_path / "html").mkdir()
    for key in ("1", "2", "3"):
        (tmp_path / "html" / f"{key}.html").write_text(f"<html><body>{archived}</body></html>")
    (tmp_path / "ground-truth.json").write_text(json.dumps({
        "1": {"url": "", "site": "cnn.com", "articleBody": "x"},
        "2": {"url": "https://www.diepresse.com/1", "site": "DiePresse", "articleBody": "x"},
        "3": {"url": "", "articleBody": "x"},
    }))
    sites = {page.id: page.site for page in read_dataset(tmp_path)}
    # A named site is read whatever its case (wcxb-dev names a host "forums.FreeBSD.org").
    assert sites == {"1": "cnn.com", "2": "diepresse", "3": "web.archive.org"}
