"""Damaged archives: every record that can be read is read, every damaged part reported."""

import gzip
import io
import re

import pytest
from click.testing import CliRunner
from warchelpers import DAMAGED_RECORDS, damaged_archive

from noisecbr_apps.cli import main
from noisecbr_apps.crawl.archive import Damage
from noisecbr_apps.crawl.warc import DAMAGED, CrawlStats, iter_pages, response_record

BASE = "http://damage.example/"
RECORDS = 11


def _plain(i: int) -> bytes:
    body = f"<html><body><h1>Page {i}</h1><p>Page {i} has a paragraph of its own.</p></body></html>"
    return response_record(f"{BASE}{i}", body.encode(), compress=False)


#: The archive's records, made once (each record has its own id and date).
PLAIN = [_plain(i) for i in range(RECORDS)]
FIRST_MEMBER = len(gzip.compress(PLAIN[0], mtime=0))


def _length(record: bytes, by: int) -> bytes:
    return re.sub(rb"Content-Length: (\d+)", lambda m: b"Content-Length: %d" % (int(m[1]) + by),
                  record, count=1)


#: Ways the second record can be damaged, on the plain record (before any compression).
PLAIN_DAMAGE = {
    "length 40 bytes over": lambda r: _length(r, 40),
    "length 40 bytes short": lambda r: _length(r, -40),
    "a 2 MB header": lambda r: r.replace(b"\r\n", b"\r\nX-Big: " + b"a" * 2_000_000 + b"\r\n", 1),
    "garbage before it": lambda r: b"garbage\r\n" * 50 + r,
}
#: Ways the second record's gzip member can be damaged.
MEMBER_DAMAGE = {
    "corrupt deflate data": lambda m: m[:20] + b"\x00" * 30 + m[50:],
    "cut short": lambda m: m[: len(m) // 2],
    "a bad CRC": lambda m: m[:-8] + bytes([m[-8] ^ 0xFF]) + m[-7:],
}


def _archive(plain=None, member=None, compress: bool = True) -> bytes:
    records = list(PLAIN)
    if plain is not None:
        records[1] = plain(records[1])
    if compress:
        records = [gzip.compress(record, mtime=0) for record in records]
        if member is not None:
            records[1] = member(records[1])
    return b"".join(records)


def _read(data: bytes) -> tuple[list[str], CrawlStats]:
    stats = CrawlStats()
    return [page.url for page in iter_pages(io.BytesIO(data), stats)], stats


@pytest.mark.parametrize("damage", sorted(MEMBER_DAMAGE))
def test_a_damaged_gzip_member_loses_its_record_only(damage):
    urls, stats = _read(_archive(member=MEMBER_DAMAGE[damage]))
    assert urls == [f"{BASE}{i}" for i in range(RECORDS) if i != 1]
    assert stats.skipped[DAMAGED] == 1 and len(stats.damages) == 1
    _, found = stats.damages[0]
    first = FIRST_MEMBER
    assert found.offset == first and found.resumed > first and found.reason


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "plain"])
@pytest.mark.parametrize("damage", sorted(PLAIN_DAMAGE))
def test_reading_goes_on_after_a_damaged_record(damage, compress):
    urls, stats = _read(_archive(plain=PLAIN_DAMAGE[damage], compress=compress))
    # Every other record is read; the damaged one may be lost, or read as far as it goes.
    assert set(urls) >= {f"{BASE}{i}" for i in range(RECORDS) if i != 1}
    assert len(urls) == len(set(urls))
    assert stats.skipped[DAMAGED] == len(stats.damages) == 1
    assert stats.damages[0][1].resumed is not None


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "plain"])
def test_an_undamaged_archive_reports_nothing(compress):
    urls, stats = _read(_archive(compress=compress) + b"\r\n")
    assert len(urls) == RECORDS and not stats.damages and not stats.damaged


def test_a_cut_archive_reports_its_last_record():
    data = _archive()
    urls, stats = _read(data[: len(data) - 30])
    assert urls == [f"{BASE}{i}" for i in range(RECORDS - 1)]
    assert stats.skipped["truncated"] + len(stats.damages) == 1


def test_garbage_after_the_last_record_is_the_rest_unread():
    urls, stats = _read(_archive() + b"\x1f\x8b\x08 not a member")
    assert len(urls) == RECORDS
    assert [damage.resumed for _, damage in stats.damages] == [None]
    assert "the rest of the file unread" in stats.damages[0][1].describe()


def test_clean_reports_the_damage_and_cleans_every_other_record(tmp_path):
    warc = tmp_path / "eleven.warc.gz"
    offset = damaged_archive(warc)
    out = tmp_path / "rows.jsonl"
    result = CliRunner().invoke(main, ["clean", str(warc), "-o", str(out), "-q"])
    assert result.exit_code == 1, result.output
    assert len(out.read_text().splitlines()) == DAMAGED_RECORDS - 1
    assert (f"{DAMAGED_RECORDS - 1} records read, {DAMAGED_RECORDS - 1} pages cleaned"
            in result.output)
    assert f"{warc}: damaged at byte {offset} (" in result.output
    assert "reading went on at byte" in result.output


def test_other_records_are_counted_by_type_and_html_resources_cleaned():
    from fastwarc.warc import WarcRecord, WarcRecordType

    def record(kind, body: bytes, content_type: str, uri: str) -> bytes:
        made = WarcRecord()
        made.init_headers(record_type=kind, record_urn=b"urn:uuid:1")
        made.headers["WARC-Target-URI"] = uri
        made.headers["Content-Type"] = content_type
        made.set_bytes_content(body)
        buffer = io.BytesIO()
        made.write(buffer)
        return buffer.getvalue()

    page = b"<html><body><p>A page stored as a resource record.</p></body></html>"
    data = (record(WarcRecordType.request, b"GET / HTTP/1.1\r\n\r\n", "application/http",
                   BASE)
            + record(WarcRecordType.resource, page, "text/html; charset=utf-8",
                     BASE + "stored\x00\x1b[31m")
            + record(WarcRecordType.resource, b"%PDF-1.4", "application/pdf", BASE + "pdf")
            + record(WarcRecordType.metadata, b"fetchTimeMs: 12", "application/warc-fields",
                     BASE))
    stats = CrawlStats()
    pages = list(iter_pages(io.BytesIO(data), stats))
    # The control characters of the record's URI reach no output.
    assert [p.url for p in pages] == [BASE + "stored[31m"]
    assert "stored as a resource" in pages[0].payload
    assert stats.skipped == {"request record": 1, "metadata record": 1, "not HTML": 1}


def test_a_damage_says_where_and_why():
    assert Damage(10, 99, "bad CRC").describe() == (
        "damaged at byte 10 (bad CRC): reading went on at byte 99")
