"""Bounded work per page (issue 17): byte, element and attribute limits, linear hidden-element
removal, streamed decompression with a limit. Speed itself is measured by benchmarks/sizes.py."""

from __future__ import annotations

import gzip
import io

import pytest
from click.testing import CliRunner
from lxml import etree

import noisecbr
from noisecbr.prepare import limits
from noisecbr.prepare.strings import drop_elements
from noisecbr.prepare.tidy import InputError, InputTooLargeError, tidy
from noisecbr_apps.cli import main


def test_max_bytes_on_clean():
    page = b"<p>" + b"word " * 100 + b"</p>"
    assert noisecbr.clean(page, max_bytes=len(page)).text
    with pytest.raises(InputTooLargeError, match="over the limit of 100"):
        noisecbr.clean(page, max_bytes=100)
    with pytest.raises(InputTooLargeError):
        noisecbr.clean(page.decode(), max_bytes=100)


def test_the_default_limit_refuses_a_page_over_it():
    page = b"<p>x</p>" + b" " * limits.DEFAULT_MAX_BYTES
    with pytest.raises(InputTooLargeError, match="max_bytes"):
        noisecbr.clean(page)


def test_too_many_elements_is_refused(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ELEMENTS", 50)
    assert tidy(b"<div>" + b"<p>a</p>" * 40 + b"</div>") is not None
    with pytest.raises(InputTooLargeError, match="page has .* elements, over the limit of 50"):
        tidy(b"<div>" + b"<p>a</p>" * 60 + b"</div>")


def test_attributes_beyond_the_limit_are_dropped():
    names = [f"a{i}" for i in range(limits.MAX_ATTRIBUTES + 500)]
    page = ("<div " + " ".join(f'{n}="1"' for n in names) + ">kept text</div>"
            "<p class=x id=y>after</p>")
    body = tidy(page.encode())
    div, p = body[0], body[1]
    assert len(div.attrib) == limits.MAX_ATTRIBUTES
    assert list(div.attrib) == names[:limits.MAX_ATTRIBUTES]
    assert div.text == "kept text" and dict(p.attrib) == {"class": "x", "id": "y"}


@pytest.mark.parametrize("tag", [
    "<div " + "x=a/b " * 600 + ">",  # long, but under the limit: left alone
    "<div " + "a" * 5000 + ">",  # one very long attribute name
    '<div data-x="' + "v" * 5000 + '">',  # one very long value
])
def test_long_tags_under_the_attribute_limit_are_untouched(tag):
    assert limits.limit_attributes(tag + "text</div>") == tag + "text</div>"


def test_attributes_without_separators_count():
    tag = "<div " + "".join(f'a{i}="1"' for i in range(limits.MAX_ATTRIBUTES + 10)) + ">"
    assert limits.limit_attributes(tag).count('="1"') == limits.MAX_ATTRIBUTES


@pytest.mark.parametrize("text", [
    "<div " + " ".join(f'\u00e9{i}="\u65e5"' for i in range(1200)) + ">x</div>",  # wide chars
    "<p>" + "\u65e5" * 3000 + "</p><div " + "a=1 " * 1100 + ">x</div>",  # long text, then a tag
    "<p>" + "\u65e5" * 3000 + "</p>",  # long text alone: no tag to cut
    "<div " + "\u00e9" * 1500 + ">x</div>",  # 3 000 bytes but 1 500 characters
])
def test_the_byte_scan_agrees_with_the_text_scan(text, monkeypatch):
    # With the page's UTF-8 bytes, the compiled scan passes the page on the bytes alone when
    # they hold no long tag; the result is the same as scanning the text (pure Python path).
    scanned_with_bytes = limits.limit_attributes(text, text.encode("utf-8"))
    monkeypatch.setattr(limits.BACKEND, "kernel", None)
    assert scanned_with_bytes == limits.limit_attributes(text)


def test_many_hidden_elements_keep_their_tails_in_order():
    page = b"<p>" + b"".join(b"<span hidden>x</span>%d " % i for i in range(3000)) + b"</p>"
    text = noisecbr.clean(page).text
    assert text.split() == [str(i) for i in range(3000)]


def test_drop_elements_in_any_order_keeps_document_order():
    body = tidy(b"<p>a<b>1</b>b<b>2</b>c<i>k</i>d<b>3</b>e</p>")
    p = body[0]
    drop_elements(reversed(p.findall("b")))
    assert etree.tostring(p, encoding="unicode") == "<p>abc<i>k</i>de</p>"


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data)


def test_read_limited_stops_a_gzip_bomb():
    bomb = gzipped(b" " * 5_000_000)
    with pytest.raises(InputTooLargeError, match="decompresses to more than 100,000 bytes"):
        limits.read_limited(io.BufferedReader(io.BytesIO(bomb)), 100_000)
    page = b"<p>hello</p>"
    assert limits.read_limited(io.BufferedReader(io.BytesIO(gzipped(page))), 100) == page
    assert limits.read_limited(io.BytesIO(page), 100) == page
    with pytest.raises(InputTooLargeError, match="input is more than 5 bytes"):
        limits.read_limited(io.BytesIO(page), 5)


@pytest.mark.parametrize("damaged", [gzipped(b"<p>hello</p>" * 100)[:-30],
                                     b"\x1f\x8b" + b"garbage" * 10])
def test_a_damaged_gzip_is_an_input_error(damaged):
    with pytest.raises(InputError, match="cannot decompress"):
        limits.read_limited(io.BytesIO(damaged), 10_000)


def test_cli_max_bytes(tmp_path):
    small = tmp_path / "small.html"
    small.write_bytes(b"<p>a small page of text</p>")
    bomb = tmp_path / "bomb.html.gz"
    bomb.write_bytes(gzipped(b"<p>x</p>" + b" " * 2_000_000))
    result = CliRunner().invoke(main, ["clean", str(small), str(bomb), "--max-bytes", "1000",
                                       "-q"])
    assert result.exit_code == 1
    assert "a small page of text" in result.stdout
    assert "bomb.html.gz: input decompresses to more than 1,000 bytes" in result.stderr
    piped = CliRunner().invoke(main, ["clean", "-", "--max-bytes", "10"],
                               input=b"<p>too long for the limit</p>")
    assert piped.exit_code == 1 and "more than 10 bytes" in piped.stderr
