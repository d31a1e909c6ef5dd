"""The HTML a result carries is safe to open: a page crafted to run scripts and load from
elsewhere (tests/fixtures/unsafe/crafted.html) keeps its article and its safe links, and none of
its scripts, handlers, frames, forms, styles or <base> (issue 43)."""

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

#: What may run or load from the page's own markup, written as it would survive.
UNSAFE = [r"\bon[a-z]+\s*=", r"javascript:", r"srcdoc", r"<iframe", r"<object", r"<embed",
          r"<form", r"formaction", r"<base", r"http-equiv", r"<style", r"\bstyle\s*=",
          r"url\(", r"image-set", r"evil\.test", r"<script", r"autofocus", r"<input"]


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
    assert 'src="https://harbour-notes.test/img/bay.jpg"' in document  # the content's image
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


def test_sanitising_an_empty_or_odd_body_gives_a_body():
    assert sanitised_body("") == "<body></body>"
    assert "<p>x</p>" in sanitised_body("<body><p onclick='y()'>x</p></body>")
