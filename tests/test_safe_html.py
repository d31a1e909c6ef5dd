"""The HTML a result carries is safe to open: a page crafted to run scripts and load from
elsewhere (tests/fixtures/unsafe/crafted.html) keeps its article and its safe links, and none of
its scripts, handlers, frames, forms, styles or <base> (issue 43), nor the sources of its images
and media unless asked for (issue 54; tests/test_media_requests.py opens them in Chromium)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from noisecbr import Cleaner
from noisecbr.render.text import sanitised_body
from noisecbr_apps.cli import main

CRAFTED = FIXTURES / "unsafe" / "crafted.html"
MEDIA = FIXTURES / "unsafe" / "media.html"

#: What may run or load from the page's own markup, written as it would survive.
UNSAFE = [r"\bon[a-z]+\s*=", r"javascript:", r"srcdoc", r"<iframe", r"<object", r"<embed",
          r"<form", r"formaction", r"<base", r"http-equiv", r"<style", r"\bstyle\s*=",
          r"url\(", r"image-set", r"evil\.test", r"<script", r"autofocus", r"<input",
          r"\bsrc\s*=", r"srcset", r"poster", r"<video", r"<audio", r"<source", r"<track"]
#: What keep_media=True brings back: the media's elements and their sources.
MEDIA_KEPT = ["<video", "<audio", "<source", "<track", r"\bsrc\s*=", r"srcset", r"poster"]


@pytest.fixture(scope="module")
def crafted() -> bytes:
    return CRAFTED.read_bytes()


def _unsafe(document: str) -> list[str]:
    return [pattern for pattern in UNSAFE if re.search(pattern, document, re.IGNORECASE)]


def test_the_result_html_keeps_the_article_and_nothing_that_runs_or_loads(crafted):
    document = Cleaner().clean(crafted).html
    assert _unsafe(document) == []
    assert "the sandbars off the lighthouse dry out for an hour" in document
    assert '<a href="https://harbour-notes.test/tides/2025-03">The full table</a>' in document
    assert '<img alt="The bay at low water">' in document  # the content's image, not loaded
    assert document.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in document


def test_the_unsafe_page_stays_unsafe_only_when_asked(crafted):
    document = Cleaner(unsafe_html=True).clean(crafted).html
    assert "onclick" in document and "javascript:" in document
    assert Cleaner().clean(crafted).text == Cleaner(unsafe_html=True).clean(crafted).text


def test_the_json_and_the_html_format_of_the_command_line_are_safe(crafted, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(crafted)
    for args in (["-f", "html"], ["-f", "json"]):
        result = CliRunner().invoke(main, ["clean", str(page), *args])
        assert result.exit_code == 0, result.output
        document = result.output if args[1] == "html" else json.loads(result.output)["html"]
        assert _unsafe(document) == [], args
    unsafe = CliRunner().invoke(main, ["clean", str(page), "-f", "html", "--unsafe-html"])
    assert "onclick" in unsafe.output


def test_keep_media_keeps_the_images_and_media_and_nothing_else(crafted):
    document = Cleaner(keep_media=True).clean(crafted).html
    assert 'src="https://harbour-notes.test/img/bay.jpg"' in document  # the content's image
    assert set(_unsafe(document)) <= {*MEDIA_KEPT, r"evil\.test"}  # a medium's source only
    assert Cleaner(keep_media=True).clean(crafted).text == Cleaner().clean(crafted).text
    # The sanitiser alone on a page of every medium: each kept, its scripts and handlers not.
    media = MEDIA.read_text(encoding="utf-8")
    kept = sanitised_body(media, keep_media=True)
    assert [p for p in MEDIA_KEPT if not re.search(p, kept)] == []
    assert "video.mp4" in kept and "srcset.jpg 1x" in kept and "poster.png" in kept
    assert re.search(r"<script|\bon[a-z]+\s*=|url\(|<iframe|<object|<embed|<link", kept) is None


def test_the_media_go_but_their_text_stays():
    document = sanitised_body(MEDIA.read_text(encoding="utf-8"))
    assert [p for p in MEDIA_KEPT if re.search(p, document)] == []
    assert "href=" not in document.split("<svg", 1)[1].split("</svg>", 1)[0]
    for text in ("The ferry leaving on the morning ebb.", "The foghorn on the pier.",
                 "<figcaption>The ferry at the pier in March.</figcaption>",
                 'alt="The lighthouse at low water"', 'href="https://harbour-notes.test/films"'):
        assert text in document, text


def test_the_command_line_keeps_media_only_when_asked(crafted, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(crafted)
    kept = CliRunner().invoke(main, ["clean", str(page), "-f", "html", "--keep-media"])
    assert kept.exit_code == 0, kept.output
    assert 'src="https://harbour-notes.test/img/bay.jpg"' in kept.output
    assert "onerror" not in kept.output and "<script" not in kept.output


def test_sanitising_an_empty_or_odd_body_gives_a_body():
    assert sanitised_body("") == "<body></body>"
    assert "<p>x</p>" in sanitised_body("<body><p onclick='y()'>x</p></body>")
