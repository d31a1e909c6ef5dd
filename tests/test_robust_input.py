"""Hostile input: every page gives a CleanResult whose every attribute works, or an InputError
with a one-line reason; in a batch a bad page is reported and skipped (issue 17)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import dataset_with_page

import noisecbr
from noisecbr.prepare.strings import drop_elements, xml_safe
from noisecbr.prepare.tidy import InputError, tidy
from noisecbr.render.text import render_text

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"

#: The three inputs of issue 17 that raised something other than an InputError.
ISSUE_EXAMPLES = [
    # a control character in the tail of a dropped (hidden) element
    b"<p>a<span hidden>x</span>\x0cb</p>",
    "<p>a<span hidden>x</span>\x0cb</p>",
    b"<p>a<span hidden>x</span>&#12;b&#1;c</p>",
    # a body nested in a stray element of the head: "cannot append parent to itself"
    b"<meta><d><body>",
    b"<meta><d><p>before</p><body><p>inside</p>",
    # a declared charset Python knows but cannot decode with: UnicodeError
    b'<meta charset="undefined"><p>hello</p>',
    b'<meta charset="rot13"><p>hello</p>',
    b'<meta charset="utf-16"><p>hello</p>',
    # a lone surrogate in str input
    "<p>a\ud800b</p>",
]


def every_attribute(result: noisecbr.CleanResult) -> None:
    """Read everything a caller can read of a result."""
    assert isinstance(result.text, str)
    assert isinstance(result.html, str)
    assert isinstance(result.decisions, list)
    json.loads(result.to_json())


@pytest.mark.parametrize("page", ISSUE_EXAMPLES)
def test_issue_examples_give_a_result_with_working_attributes(page):
    every_attribute(noisecbr.clean(page))


def test_a_control_character_in_a_dropped_tail_keeps_the_text(flawed_model):
    # A model that keeps the paragraph (whether the embedded one keeps a page of two words is
    # its judgement): the subject is the text around the dropped element.
    result = noisecbr.clean(b"<p>alpha<span hidden>x</span>\x0cbeta</p>", model=flawed_model)
    assert result.text == "alpha beta"
    assert "beta" in result.html and "x" not in result.text


def test_a_body_inside_the_head_keeps_the_content_around_it():
    # What tidying keeps; whether the model keeps a page of two words is its judgement (models
    # since 2026-11-24 score them noise), but it cleans the page and shows nothing else.
    page = b"<meta><d><p>before</p><body><p>inside</p>"
    assert render_text(tidy(page)).split() == ["before", "inside"]
    assert set(noisecbr.clean(page).text.split()) <= {"before", "inside"}


def test_an_undecodable_declared_charset_falls_back():
    assert noisecbr.clean('<meta charset="undefined"><p>caf\u00e9</p>'.encode()).text == "caf\u00e9"


WORDS = b"<p>" + b"word " * 60 + b"</p>"


@pytest.mark.parametrize("head, title", [
    # <title> text reaches the cleaned HTML: lxml refuses control characters there
    (b"<title>a&#1;b \x0c c</title>", "ab c"),
    # JSON-LD escapes can spell any code point, lone surrogates too (not UTF-8 encodable)
    (b'<script type="application/ld+json">{"headline": "x\\u0001y\\ud800"}</script>', "xy"),
])
def test_control_characters_in_the_page_metadata_are_dropped(head, title):
    result = noisecbr.clean(b"<html><head>" + head + b"</head><body>" + WORDS + b"</body></html>")
    assert result.title == title
    result.html.encode()
    json.loads(result.to_json().encode())


#: Every C0 control but tab and newline, DEL and every C1 control: no output may hold one.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_no_output_holds_a_control_character():
    """Raw bytes and character references put C0, DEL and C1 controls in the text, the title,
    the attributes and JSON-LD: the text, the HTML, the comments and the JSON hold none."""
    controls = "".join(map(chr, [*range(1, 9), 11, 14, 31, 127, 133, 150, 159]))
    raw = controls.encode("utf-8")
    page = (b"<html><head><title>T" + raw + b"itle &#127;&#133;&#x9f;</title>"
            b'<script type="application/ld+json">{"author": "A\\u007fB\\u0085C"}</script>'
            b"</head><body><article><p class=\"c\x05\x06\" title=\"t\x7f\xc2\x85\">"
            + raw + b" " + b"word " * 1000 + b"&#127; &#133; &#x85; &#x9f;\r\n</p></article>"
            b"<div class=comments><p>reader " + raw + b" says</p></div></body></html>")
    result = noisecbr.clean(page, comments=True)
    for name, value in (("text", result.text), ("title", result.title or ""),
                        ("author", result.author or ""), ("html", result.html),
                        ("comments", result.comments), ("json", result.to_json())):
        assert not _CONTROLS.search(value), (name, _CONTROLS.findall(value))
    assert "word word" in result.text and result.title.startswith("T")
    json.loads(result.to_json())


def test_drop_elements_with_a_control_character_in_the_parents_text():
    body = tidy(b"<div><b>x</b>\x01tail</div>")
    div = body[0]
    drop_elements([div[0]])
    assert div.text == "tail"
    assert xml_safe("a\x0cb\x01c\ufffe") == "a bc"


def test_the_html_of_a_result_is_rendered_once_and_stays_valid():
    result = noisecbr.clean(b"<div><p>a<span hidden>x</span>\x0cb</p><nav>menu</nav></div>")
    assert result.html == result.html


def test_input_errors_are_one_line():
    for page in (b"", b"   ", bytes(range(256)) * 20):
        with pytest.raises(InputError) as caught:
            noisecbr.clean(page)
        assert "\n" not in str(caught.value) and str(caught.value)


def test_clean_dir_reports_a_failing_page_and_writes_the_others(tmp_path, monkeypatch):
    from noisecbr_apps import cli

    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "a.html").write_bytes(b"<p>first page of text</p>")
    (pages / "b.html").write_bytes(b"<p>a<span hidden>x</span>\x0cb</p>")
    (pages / "c.html").write_bytes(bytes(range(256)) * 20)
    (pages / "d.html").write_bytes(b"<p>the page the cleaner trips on</p>")
    original = cli._init_worker

    def tripping_worker(*args, **kwargs):
        original(*args, **kwargs)
        clean = cli._worker_cleaner.clean

        def maybe_trip(data, **kw):
            if b"trips" in data:
                raise RuntimeError("an unforeseen failure")
            return clean(data, **kw)

        cli._worker_cleaner.clean = maybe_trip

    monkeypatch.setattr(cli, "_init_worker", tripping_worker)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli.main, ["clean", str(pages), "-o", str(out), "-q"])
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    assert "c.html: input looks like binary data" in result.stderr
    assert "d.html: RuntimeError: an unforeseen failure" in result.stderr


def test_import_skips_a_page_that_fails_unexpectedly(tmp_path, monkeypatch):
    from casebase import pages
    from casebase.cli import cli as casebase_cli

    dataset = dataset_with_page(tmp_path / "dataset", "zz-odd",
                                b"<p>a<span hidden>x</span>\x0cb</p><p>trips the importer</p>")
    prepare = pages.prepare_page  # every page -> cases path prepares its page here

    def maybe_trip(raw, *args, **kwargs):
        if b"trips the importer" in raw:
            raise RuntimeError("an unforeseen failure")
        return prepare(raw, *args, **kwargs)

    monkeypatch.setattr(pages, "prepare_page", maybe_trip)
    db = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    result = CliRunner().invoke(casebase_cli, ["--db", db, "import", str(dataset), "--quiet",
                                               "--no-oracle", "-j", "0"])
    assert result.exit_code == 1, result.output
    assert "zz-odd: unexpected RuntimeError: an unforeseen failure" in result.stderr
    stats = CliRunner().invoke(casebase_cli, ["--db", db, "stats", "--json"])
    assert json.loads(stats.stdout)["pages"] == 4
