"""Input that is not an HTML page is refused with a reason that names it; a Western charset
that the bytes contradict is corrected (issue 17)."""

from __future__ import annotations

import gzip
import io
import random
import sqlite3
import tarfile
import zipfile

import pytest
from click.testing import CliRunner

import noisecbr
from noisecbr.prepare.tidy import BinaryInputError, NotHTMLError, WARCInputError
from noisecbr_apps.cli import main


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("page.html")
        info.size = 12
        archive.addfile(info, io.BytesIO(b"<p>hello</p>"))
    return buffer.getvalue()


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("page.html", "<p>hello</p>")
    return buffer.getvalue()


def _sqlite(tmp_path) -> bytes:
    path = tmp_path / "x.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("create table t (x)")
    return path.read_bytes()


PDF = (b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
       b"2 0 obj\n<< /Length 44 >>\nstream\nx\x9c" + bytes(range(256)) + b"\nendstream\n")

FORMATS = {
    "a PDF document": PDF,
    "a PNG image": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 40,
    "a JPEG image": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40,
    "a GIF image": b"GIF89a\x01\x00\x01\x00" + b"\x00" * 20,
    "a WebP image": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20,
    "a zip archive": _zip(),
    "gzip-compressed data": gzip.compress(b"<p>hello</p>"),
    "a 7z archive": b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 30,
    "a RAR archive": b"Rar!\x1a\x07\x01\x00" + b"\x00" * 30,
    "a tar archive": _tar(),
    "an ELF executable": b"\x7fELF\x02\x01\x01" + b"\x00" * 60,
    "xz-compressed data": b"\xfd7zXZ\x00\x00\x04" + b"\x00" * 30,
}


@pytest.mark.parametrize("what", FORMATS)
def test_known_formats_are_refused_by_name(what):
    with pytest.raises(NotHTMLError, match=f"input is {what}"):
        noisecbr.clean(FORMATS[what])


def test_a_database_file_is_refused(tmp_path):
    with pytest.raises(NotHTMLError, match="an SQLite database"):
        noisecbr.clean(_sqlite(tmp_path))


def test_a_pdf_decoded_to_str_is_refused_too():
    with pytest.raises(NotHTMLError, match="PDF"):
        noisecbr.clean(PDF.decode("latin-1"))


def test_random_bytes_never_pass():
    rng = random.Random(17)
    for _ in range(500):
        with pytest.raises(BinaryInputError):
            noisecbr.clean(rng.randbytes(100_000))


def test_text_with_a_few_control_characters_is_still_a_page():
    assert noisecbr.clean(b"<p>one\x01 two\x02 three</p>").text == "one two three"
    assert noisecbr.clean(b"just some plain words").text == "just some plain words"


WARC = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.com/\r\n"
        b"Content-Length: 60\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
        b"<p>hello</p>\r\n\r\n")


@pytest.mark.parametrize("data", [WARC, gzip.compress(WARC)])
def test_a_warc_file_is_sent_to_the_warc_reader(data):
    with pytest.raises(WARCInputError, match="WARC file, not a page: give it to the WARC reader"):
        noisecbr.clean(data)


def test_cli_names_the_pdf_and_reads_a_warc_with_the_warc_reader(tmp_path):
    (tmp_path / "crawl.warc.gz").write_bytes(gzip.compress(WARC))
    (tmp_path / "paper.pdf").write_bytes(PDF)
    (tmp_path / "page.html").write_bytes(b"<p>a page</p>")
    result = CliRunner().invoke(main, ["clean", str(tmp_path / "paper.pdf"),
                                       str(tmp_path / "page.html"), "-q"])
    assert result.exit_code == 1
    assert "paper.pdf: input is a PDF document, not HTML" in result.stderr
    warc = CliRunner().invoke(main, ["clean", str(tmp_path / "crawl.warc.gz"), "-q"])
    assert warc.exit_code == 0, warc.stderr  # given alone, the WARC reader takes it
    assert "input is a WARC file" not in warc.stderr


RUSSIAN = ("Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России, "
           "крупнейший по численности населения город страны. ")
JAPANESE = "日本語のテキストです。これは東京の天気についての記事です。今日は晴れで、明日は雨です。"
FRENCH = "Le cœur a ses raisons que la raison ne connaît point. Où est la bibliothèque ? "


def page(text: str, declared: str, encoding: str) -> bytes:
    return (f'<html><head><meta charset="{declared}"></head><body><article><h1>Title</h1>'
            f"<p>{text * 4}</p><p>{text * 4}</p></article></body></html>"
            ).encode(encoding, "replace")


@pytest.mark.parametrize("text,encoding", [(RUSSIAN, "cp1251"), (RUSSIAN, "koi8-r"),
                                           (JAPANESE, "shift_jis"), (RUSSIAN, "utf-8"),
                                           (FRENCH, "utf-8")])
def test_a_western_label_the_bytes_contradict_is_corrected(text, encoding):
    cleaned = noisecbr.clean(page(text, "iso-8859-1", encoding)).text
    assert text.split()[0] in cleaned and text.split()[-1] in cleaned


def test_a_true_western_label_stands():
    # windows-1252's œ is byte 0x9c: read by the HTML standard's rule for iso-8859-1
    cleaned = noisecbr.clean(page(FRENCH, "iso-8859-1", "cp1252")).text
    assert "cœur" in cleaned and "bibliothèque" in cleaned
    short = "<meta charset=iso-8859-1><p>café \x81 naïve</p>".encode("latin-1")
    # byte 0x81 is no character in windows-1252: a C1 control, which no output holds
    assert noisecbr.clean(short).text.split() == ["café", "naïve"]
