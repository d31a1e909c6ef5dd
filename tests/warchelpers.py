"""A small crawl made in the test: a WARC of good, bad and non-HTML records, beside the same
pages as HTML files (correctly encoded), for the WARC tests of the CLI and the Spark job."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

from noisecbr_apps.crawl.warc import response_record

FIXTURE_PAGES = Path(__file__).parent / "fixtures" / "casebase" / "html"
EXAMPLE_PAGE = Path(__file__).resolve().parents[1] / "examples" / "tide-pools.html"
BASE = "http://crawl.example/"
#: Words outside ASCII: a page decoded in the wrong charset loses them.
ACCENTED = "Anemones open like flowers — café, naïve, Ærø"


@dataclass
class Crawl:
    """The WARC, the folder of the same pages as HTML files (``<name>.html`` for the record of
    URL ``BASE + name``) and what reading the WARC must count."""

    warc: Path
    pages: Path
    records: int
    cleaned: int


def _page(name: str) -> str:
    path = EXAMPLE_PAGE if name == EXAMPLE_PAGE.name else FIXTURE_PAGES / name
    data = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    return data.decode("utf-8")


def _chunked(body: bytes, size: int = 1000) -> bytes:
    chunks = [body[i:i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"


def make_crawl(folder: Path) -> Crawl:
    """Writes ``folder/crawl.warc.gz`` and ``folder/pages/``."""
    pages = folder / "pages"
    pages.mkdir()
    records: list[bytes] = []
    good = {name.split(".")[0]: _page(name) for name in
            ("blog-1.html.gz", "blog-2.html.gz", "news-1.html.gz", "news-2.html.gz",
             "tide-pools.html")}
    for name in ("blog-1", "blog-2", "news-1", "tide-pools"):
        (pages / f"{name}.html").write_text(good[name], encoding="utf-8")
    for name in ("blog-2", "news-1", "tide-pools"):
        records.append(response_record(BASE + name, good[name].encode()))
    # Chunked transfer encoding over a gzip content encoding: FastWARC undoes both.
    records.append(response_record(
        BASE + "blog-1", _chunked(gzip.compress(good["blog-1"].encode())),
        [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
         ("Transfer-Encoding", "chunked")]))
    # A page in windows-1252 whose server wrongly says UTF-8 (its <meta> is right).
    accented = good["tide-pools"].replace("Anemones open like flowers", ACCENTED)
    (pages / "wrong-charset.html").write_text(accented, encoding="utf-8")
    records.append(response_record(
        BASE + "wrong-charset",
        accented.replace('charset="utf-8"', 'charset="windows-1252"').encode("cp1252")))
    # A page in Latin-1 declared only by HTTP.
    (pages / "latin-1.html").write_text(accented.replace("—", "-"), encoding="utf-8")
    records.append(response_record(
        BASE + "latin-1",
        accented.replace("—", "-").replace('<meta charset="utf-8">', "").encode("latin-1"),
        [("Content-Type", "text/html; charset=ISO-8859-1")]))
    # Not pages: an image, a redirect, a record the crawler truncated.
    records.append(response_record(BASE + "logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200),
                                   [("Content-Type", "image/png")]))
    records.append(response_record(BASE + "moved", b"<html><body>Moved</body></html>",
                                   status="301 Moved Permanently"))
    # A body that says it is gzip and is not: this record is lost, not the rest of the file.
    records.append(response_record(BASE + "corrupt", b"\x1f\x8b\x08\x00 not gzip at all",
                                   [("Content-Type", "text/html"), ("Content-Encoding", "gzip")]))
    records.append(response_record(BASE + "news-2", good["news-2"].encode()[:5000],
                                   warc_headers=[("WARC-Truncated", "length")]))
    # A record cut short: the download of the archive stopped in its middle.
    last = response_record(BASE + "news-2", good["news-2"].encode(), compress=False)
    records.append(gzip.compress(last[: len(last) // 2]))
    warc = folder / "crawl.warc.gz"
    warc.write_bytes(b"".join(records))
    return Crawl(warc=warc, pages=pages, records=len(records), cleaned=6)


#: Pages in :func:`damaged_archive`, and the one whose gzip member is damaged.
DAMAGED_RECORDS, DAMAGED_RECORD = 11, 1


def damaged_archive(path: Path, base: str = "http://damage.example/") -> int:
    """A ``.warc.gz`` of :data:`DAMAGED_RECORDS` small pages whose second gzip member has
    corrupt deflate data; returns the offset of that member."""
    members = [response_record(f"{base}{i}", f"<html><body><h1>Page {i}</h1><p>Page {i} has a "
                                             f"paragraph of its own.</p></body></html>".encode())
               for i in range(DAMAGED_RECORDS)]
    bad = members[DAMAGED_RECORD]
    members[DAMAGED_RECORD] = bad[:20] + b"\x00" * 30 + bad[50:]
    path.write_bytes(b"".join(members))
    return sum(len(member) for member in members[:DAMAGED_RECORD])
