"""WARC in, one row per cleaned page out: the crawl side of ``noisecbr clean`` and the Spark job.

Records are read with FastWARC (the ``[warc]`` extra), one at a time: a crawl is never held in
memory. A page is a ``response`` record with a 2xx HTTP status and an HTML content type
(``text/html``, ``application/xhtml+xml``; a response without a Content-Type is sniffed). Chunked
and gzip/deflate/brotli transfer and content encodings are undone by FastWARC. The charset the
HTTP ``Content-Type`` declares is honoured, as a browser honours it over ``<meta charset>``: the
payload is decoded with it (WHATWG labels, so ``iso-8859-1`` reads as windows-1252) and handed to
the cleaner as text; a charset Python does not know, or one the bytes do not decode in, hands the
bytes over instead and the cleaner detects the encoding as it does for a file.

A record that is not a page (request, metadata, a PDF, a redirect) or a bad one (truncated,
over the size limit, undecodable) is counted by reason in :class:`CrawlStats`, never fatal. A
damaged part of an archive is reported with where it is and why, and reading goes on at the next
record that reads (:mod:`noisecbr_apps.crawl.archive`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from noisecbr.decide.walk import AUTO
from noisecbr.prepare.decode import http_decoded
from noisecbr.prepare.tidy import DEFAULT_MAX_BYTES, InputError
from noisecbr.result import LABELS

from .archive import Damage, records

__all__ = ["HTML_TYPES", "WarcPage", "CrawlStats", "is_warc", "iter_pages", "page_row",
           "result_row", "memory_for", "clean_pages", "columns", "RowWriter", "output_format",
           "warc_stem", "cached_cleaner", "response_record"]

#: Content types of the HTTP responses that are cleaned.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

#: Skip reasons, as counted and reported.
NOT_HTML = "not HTML"
HTTP_STATUS = "HTTP status not 2xx"
TRUNCATED = "truncated"
TOO_LARGE = "over the size limit"
UNREADABLE = "unreadable page"
FAILED = "cleaning failed"
BAD_RESPONSE = "unreadable HTTP response"
DAMAGED = "damaged archive part"

#: How many bytes of a response without a Content-Type are sniffed for HTML markup: a page's
#: doctype or <html> comes first, after at most a comment or whitespace.
SNIFF_BYTES = 1024
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body")
_WARC_SUFFIXES = (".warc", ".warc.gz")
#: Characters no output column carries: C0 and C1 controls, DEL.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)
_MAGIC = b"WARC/1."

#: Output formats of a crawl, by the suffix of the output file.
FORMATS = {"jsonl": ".jsonl", "parquet": ".parquet"}
#: Rows per Parquet row group: 1 000 pages' text is a few MB, small enough to keep the writer's
#: memory flat and large enough for Parquet's column compression to work.
ROW_GROUP = 1000


def _missing(error: ImportError) -> ImportError:
    return ImportError(f"WARC input needs {error.name}: pip install 'noisecbr[warc]'")


@dataclass(frozen=True)
class WarcPage:
    """One HTML response of a WARC: its identity and its payload (text when the HTTP charset
    decoded it, else bytes for the cleaner to decode)."""

    url: str
    record_id: str
    date: str
    payload: str | bytes


@dataclass
class CrawlStats:
    """Counts of one run over WARC files: records read, pages cleaned and skips by reason."""

    records: int = 0
    cleaned: int = 0
    skipped: Counter = field(default_factory=Counter)
    #: The damaged parts of the archives read, with the file each is in (None: a stream).
    damages: list[tuple[str | None, Damage]] = field(default_factory=list)

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` records skipped for ``reason``."""
        self.skipped[reason] += n

    def add(self, other: CrawlStats) -> None:
        """Add another part's counts to these (a worker's chunk, another WARC)."""
        self.records += other.records
        self.cleaned += other.cleaned
        self.skipped.update(other.skipped)
        self.damages += other.damages

    @property
    def damaged(self) -> bool:
        """Whether an archive was damaged, so that records in its damaged parts were lost."""
        return DAMAGED in self.skipped

    def summary(self) -> str:
        """One line for stderr: ``N records read, M pages cleaned; skipped: reason n, …``."""
        line = f"{self.records} records read, {self.cleaned} pages cleaned"
        if self.skipped:
            line += "; skipped: " + ", ".join(f"{reason} {n}" for reason, n
                                              in sorted(self.skipped.items()))
        return line


# -- reading ------------------------------------------------------------------------------------
def warc_stem(name: str) -> str:
    """The name of a WARC file without ``.warc``/``.warc.gz`` (or ``.gz``)."""
    name = name.rsplit("/", 1)[-1]
    for suffix in (".warc.gz", ".warc", ".gz"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_warc(path: str | Path) -> bool:
    """Whether ``path`` names a WARC file: by its name, else by the ``WARC/1.`` magic at the
    start of its (gunzipped) content."""
    name = str(path).lower()
    if name.endswith(_WARC_SUFFIXES):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:2] == b"\x1f\x8b":
                handle.seek(0)
                with gzip.GzipFile(fileobj=handle) as unzipped:
                    head = unzipped.read(len(_MAGIC))
    except (OSError, EOFError):
        return False
    return head.startswith(_MAGIC)


def _looks_html(payload: bytes) -> bool:
    head = payload[:SNIFF_BYTES].lstrip().lower()
    return any(marker in head for marker in _HTML_MARKERS)


def _read_page(record: Any, limit: int, stats: CrawlStats) -> WarcPage | None:
    """The page of one response record, or None (the reason counted in ``stats``)."""
    headers = record.headers
    declared = int(headers.get("Content-Length") or 0)
    if declared > limit:
        stats.skip(TOO_LARGE)
        return None
    if headers.get("WARC-Truncated"):
        stats.skip(TRUNCATED)
        return None
    # The block is read whole first, to tell a record cut short (a partial download) from a
    # complete one: FastWARC hands back what there is without complaint.
    record.freeze()
    reader = record.reader
    if len(reader.read()) < declared:
        stats.skip(TRUNCATED)
        return None
    reader.seek(0)
    # The HTTP response is parsed and decoded in a copy of the record: when decoding fails on
    # the iterator's own record (a corrupt gzip body), FastWARC 2.0 loses its place in the file.
    buffer = io.BytesIO()
    record.write(buffer)
    response = type(record).from_bytes(buffer.getvalue())
    response.parse_http(auto_decode="all")
    http = response.http_headers
    if http is None or not 200 <= (http.status_code or 0) < 300:
        stats.skip(HTTP_STATUS if http is not None else NOT_HTML)
        return None
    payload = response.reader.read(limit + 1)
    if not _html_within(payload, response.http_content_type, limit, stats):
        return None
    return _page(record, http_decoded(payload, response.http_charset))


def _html_within(payload: bytes, content_type: str | None, limit: int, stats: CrawlStats
                 ) -> bool:
    """Whether a payload is an HTML page (by its content type, else by its first bytes) within
    the size limit; the reason counted in ``stats`` when not."""
    if content_type not in HTML_TYPES and (content_type or not _looks_html(payload)):
        stats.skip(NOT_HTML)
        return False
    if len(payload) > limit:
        stats.skip(TOO_LARGE)
        return False
    return True


def _type_name(record: Any) -> str:
    """A record's WARC-Type as its header says it (``request``, ``metadata``, …)."""
    return _clean_field(record.headers.get("WARC-Type") or "untyped")[:40] or "untyped"


def _clean_field(value: str | None) -> str:
    """A header value as an output column holds it: without control characters (a URI with a
    NUL or an escape sequence is still the record's URI, minus what no column should carry)."""
    return _CONTROL.sub("", value or "")


def _read_resource(record: Any, limit: int, stats: CrawlStats) -> WarcPage | None:
    """The page of a ``resource`` record (a document stored as it is, without HTTP headers):
    its block when the record's Content-Type is HTML (or, without one, the block looks it)."""
    headers = record.headers
    if int(headers.get("Content-Length") or 0) > limit:
        stats.skip(TOO_LARGE)
        return None
    content_type, _, parameters = (headers.get("Content-Type") or "").partition(";")
    content_type = content_type.strip().lower()
    payload = record.reader.read(limit + 1)
    if not _html_within(payload, content_type, limit, stats):
        return None
    charset = _CHARSET.search(parameters)
    return _page(record, http_decoded(payload, charset.group(1) if charset else None))


def _page(record: Any, payload: str | bytes) -> WarcPage:
    headers = record.headers
    return WarcPage(url=_clean_field(headers.get("WARC-Target-URI")),
                    record_id=_clean_field(record.record_id), date=_clean_field(
                        headers.get("WARC-Date")), payload=payload)


def iter_pages(stream: IO[bytes] | str, stats: CrawlStats,
               max_bytes: int | None = None) -> Iterator[WarcPage]:
    """The HTML pages of a WARC (a path or a binary stream, gzipped or not), one at a time.

    Every record read is counted in ``stats``, every record that is not a page by its reason,
    every damaged part of the archive (a corrupt or cut gzip member, a header that does not
    parse, a wrong length) in ``stats.damages``, reading going on after it where the stream can
    seek (:func:`noisecbr_apps.crawl.archive.records`)."""
    try:
        from fastwarc.warc import WarcRecordType
    except ImportError as error:
        raise _missing(error) from error
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    name = stream if isinstance(stream, str) else getattr(stream, "name", None)
    damages: list[Damage] = []
    with (open(stream, "rb") if isinstance(stream, str) else contextlib.nullcontext(stream)
          ) as source:
        try:
            for record in records(source, damages):
                stats.records += 1
                if record.record_type not in (WarcRecordType.response, WarcRecordType.resource):
                    stats.skip(f"{_type_name(record)} record")
                    continue
                try:
                    page = (_read_page(record, limit, stats)
                            if record.record_type == WarcRecordType.response
                            else _read_resource(record, limit, stats))
                except OSError:  # bad HTTP headers, a corrupt gzip body: this record only
                    stats.skip(BAD_RESPONSE)
                    continue
                if page is not None:
                    yield page
        finally:  # what was found damaged is counted even when the reader stops early
            if damages:
                stats.skip(DAMAGED, len(damages))
            stats.damages += [(name if isinstance(name, str) else None, damage)
                              for damage in damages]


# -- writing a WARC (tests, benchmarks) --------------------------------------------------------
def response_record(url: str, body: bytes, headers: Iterable[tuple[str, str]] = (
        ("Content-Type", "text/html; charset=utf-8"),), status: str = "200 OK",
        compress: bool = True, warc_headers: Iterable[tuple[str, str]] = ()) -> bytes:
    """One WARC ``response`` record of an HTTP response with ``body``, as bytes (a gzip member of
    its own when ``compress``, as in a ``.warc.gz``), with its block digest and any further
    ``warc_headers``."""
    try:
        from fastwarc.warc import WarcRecord, WarcRecordType
    except ImportError as error:
        raise _missing(error) from error
    import uuid

    http = f"HTTP/1.1 {status}\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers)
    record = WarcRecord()
    record.init_headers(record_type=WarcRecordType.response,
                        record_urn=uuid.uuid4().urn[4:].encode())
    record.headers["WARC-Target-URI"] = url
    record.headers["Content-Type"] = "application/http; msgtype=response"
    for name, value in warc_headers:
        record.headers[name] = value
    record.set_bytes_content(http.encode("latin-1") + b"\r\n" + body)
    buffer = io.BytesIO()
    record.write(buffer, checksum_data=True)
    return gzip.compress(buffer.getvalue(), mtime=0) if compress else buffer.getvalue()


# -- cleaning -----------------------------------------------------------------------------------
_cleaners: dict[tuple, Any] = {}


def cached_cleaner(model: str | None = None, parser: str = "lxml", smooth: float | None = None,
                   max_bytes: int | None = None, favor: str = AUTO, comments: bool = False,
                   max_elements: int | None = None, title: bool | None = None):
    """This process's :class:`noisecbr.Cleaner` for these settings: the model is loaded once
    per process (a pool worker, a Spark executor's Python worker), not once per record."""
    key = (model, parser, smooth, max_bytes, favor, comments, max_elements, title)
    if key not in _cleaners:
        from noisecbr.cleaner import Cleaner

        _cleaners[key] = Cleaner(model, parser=parser, smooth=smooth, max_bytes=max_bytes,
                                 favor=favor, comments=comments, max_elements=max_elements,
                                 title=title)
    return _cleaners[key]


def columns(markdown: bool = False, web: bool = False) -> list[tuple[str, str]]:
    """The output columns and their types (``string``, ``int``, ``float`` or ``list`` of
    strings): the page's kind and the result's confidence (its expected word F1), one count
    column per label the library knows (``decisions_noise`` …); with ``markdown``, the main
    content as Markdown after the text. Pages fetched from the web (``web``) have the URL asked
    for and the redirects followed from it (``url`` is where the page came from; ``warc_date``
    when it was fetched, ``warc_record_id`` empty)."""
    return [("url", "string"),
            *([("requested_url", "string"), ("redirects", "list")] if web else []),
            ("warc_record_id", "string"), ("warc_date", "string"),
            ("title", "string"), ("author", "string"), ("date", "string"), ("lang", "string"),
            ("site_name", "string"), ("description", "string"), ("page_type", "string"),
            ("confidence", "float"),
            ("text", "string"), *([("markdown", "string")] if markdown else []),
            ("comments", "string"), *((f"decisions_{label}", "int") for label in LABELS)]


def page_row(cleaner: Any, page: WarcPage, memories: Callable | None = None,
             markdown: bool = False, evidence: Any = None,
             page_type: str | None = None) -> dict[str, Any]:
    """Clean one page: its output row (with its Markdown when asked); ``evidence``: its
    site's (:class:`noisecbr.site.evidence.SiteEvidence`); ``page_type``: its kind, in place of the
    kind model's. Raises :class:`noisecbr.prepare.tidy.InputError` for a payload that is not HTML
    after all."""
    memory = memory_for(memories, page.url) if memories is not None else None
    result = cleaner.clean(page.payload, url=page.url or None, memory=memory, site=evidence,
                           page_type=page_type)
    return result_row(result, page, markdown)


def result_row(result: Any, page: WarcPage, markdown: bool = False) -> dict[str, Any]:
    """The output row of ``page`` cleaned into ``result`` (:func:`columns`)."""
    counts = Counter(decision.label for decision in result.decisions)
    row: dict[str, Any] = {
        "url": page.url, "warc_record_id": page.record_id, "warc_date": page.date,
        "title": result.title, "author": result.author, "date": result.date,
        "lang": result.lang, "site_name": result.site_name, "description": result.description,
        "page_type": result.page_type, "confidence": result.confidence,
        "text": result.text, "comments": result.comments,
    }
    if markdown:
        row["markdown"] = result.markdown
    for label in LABELS:
        row[f"decisions_{label}"] = counts.get(label, 0)
    return row


def memory_for(memories: Any, url: str):
    """The site memory of a page: of the memories' fixed site, else of the record URL's host."""
    host = memories.host
    if host is None:
        from noisecbr.eval.datasets import site_host

        try:
            host = site_host(url) if url else None
        except ValueError:
            host = None
    return None if host is None else memories.memory(host)


#: Records grouped by host at once with ``by_site``: a crawl writes a site's pages near each
#: other, and a window, not the whole archive, keeps memory flat and the rows in record order.
SITE_WINDOW = 256


def site_windows(cleaner: Any, pages: Iterable[WarcPage]
                 ) -> Iterator[tuple[WarcPage, Any]]:
    """Each page with the evidence of its host's other pages among the next
    :data:`SITE_WINDOW` records (None for a host seen once), in record order."""
    from noisecbr.eval.datasets import site_of

    pages = iter(pages)
    while window := list(itertools.islice(pages, SITE_WINDOW)):
        hosts = [site_of(page.url, page.record_id) for page in window]
        by_host: dict[str, list[WarcPage]] = {}
        for page, host in zip(window, hosts):
            by_host.setdefault(host, []).append(page)
        evidence = {host: _evidence(cleaner, group) for host, group in by_host.items()
                    if len(group) > 1}
        yield from zip(window, map(evidence.get, hosts))


def _evidence(cleaner: Any, group: list[WarcPage]) -> Any:
    """The evidence of one host's pages; None when reading them fails unexpectedly: the pages
    are then cleaned by the model alone, and a page that fails again is counted when cleaned."""
    try:
        return cleaner.site_evidence(page.payload for page in group)
    except Exception:  # noqa: BLE001 - one host's evidence never stops a crawl
        return None


def clean_pages(cleaner: Any, pages: Iterable[WarcPage], stats: CrawlStats,
                memories: Callable | None = None, markdown: bool = False,
                by_site: bool = False, page_type: str | None = None
                ) -> Iterator[dict[str, Any]]:
    """The rows of the pages that clean; the others counted in ``stats`` by reason. With
    ``by_site``, each page is cleaned with what recurs on its host's pages nearby
    (:func:`site_windows`); ``page_type``: every page's kind, in place of the kind model's."""
    paired = (site_windows(cleaner, pages) if by_site
              else zip(pages, itertools.repeat(None)))
    for page, evidence in paired:
        try:
            row = page_row(cleaner, page, memories, markdown, evidence, page_type)
        except InputError:
            stats.skip(UNREADABLE)
            continue
        except Exception:  # noqa: BLE001 - one page never stops a crawl; counted and reported
            stats.skip(FAILED)
            continue
        stats.cleaned += 1
        yield row


# -- writing ------------------------------------------------------------------------------------
def output_format(path: str | Path | None, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else by the output's suffix, else JSONL."""
    if fmt is not None:
        return fmt
    name = str(path or "").lower()
    return "parquet" if name.endswith(".parquet") else "jsonl"


class RowWriter:
    """Writes rows to a JSONL or Parquet file (or JSONL to a text stream), a batch at a time."""

    def __init__(self, target: str | Path | IO[str], fmt: str, markdown: bool = False, *,
                 web: bool = False, append: bool = False, flush: bool = False) -> None:
        """``web``: the columns of pages fetched from the web; ``append``: JSONL added after the
        rows a file holds (a resumed crawl); ``flush``: each JSONL row handed to the system as
        it is written, so that a killed process loses no row written."""
        self.fmt = fmt
        self.target = target
        self._rows: list[dict[str, Any]] = []
        self._parquet = None
        self._sink: IO[bytes] | None = None  # the Parquet file, opened here (_parquet_writer)
        self._handle: IO[str] | None = None
        self._flush_each = flush
        self._owned = isinstance(target, (str, Path))  # a stream given is the caller's to close
        if fmt == "parquet":
            self._parquet, self._sink = _parquet_writer(target, markdown, web)
        elif isinstance(target, (str, Path)):
            self._handle = open(target, "a" if append else "w",  # noqa: SIM115 - closed in close
                                encoding="utf-8")
        else:
            self._handle = target

    def write(self, row: dict[str, Any]) -> None:
        """Write one page's row (Parquet rows are buffered into row groups)."""
        if self._handle is not None:
            self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            if self._flush_each:
                self._handle.flush()
            return
        self._rows.append(row)
        if len(self._rows) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        writer = self._parquet
        writer.write_table(pa.Table.from_pylist(self._rows, schema=writer.schema))
        self._rows = []

    def close(self) -> None:
        """Write what is buffered and close the file (an empty crawl still gets its schema)."""
        if self._parquet is not None:
            if self._rows:
                self._flush()
            self._parquet.close()
            self._sink.close()
        elif self._handle is not None and self._owned:
            self._handle.close()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def arrow_schema(markdown: bool = False, web: bool = False):
    """The Parquet schema of the rows (:func:`columns`)."""
    import pyarrow as pa

    types = {"string": pa.string(), "int": pa.int32(), "float": pa.float64(),
             "list": pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in columns(markdown, web)])


def _parquet_writer(target: str | Path | IO[str], markdown: bool = False, web: bool = False):
    """A Parquet writer of the rows to the file ``target``, and the file (the caller closes
    both, the writer first)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as error:
        raise _missing(error) from error
    if not isinstance(target, (str, Path)):
        raise ValueError("Parquet is written to a file: give -o out.parquet or a directory")
    # Opened by Python, not by pyarrow: pyarrow encodes a path as UTF-8, and a POSIX file name
    # may hold any bytes (issue 43, item 8).
    sink = open(target, "wb")  # noqa: SIM115 - closed by RowWriter.close
    try:
        return pq.ParquetWriter(sink, arrow_schema(markdown, web), compression="zstd"), sink
    except BaseException:
        sink.close()
        raise
