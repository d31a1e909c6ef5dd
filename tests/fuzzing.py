"""Generators of hostile inputs, shared by the property tests (tests/test_fuzz.py, driven by
hypothesis) and the seeded corpus run (benchmarks/fuzz.py). Each family is a function of a
``random.Random`` that returns one input (bytes or str), small enough that thousands run in
seconds.

What an input must give: :func:`clean_everything` reads every attribute of the library's
result; :func:`every_output` (issue 54) every output of the command line, each ``-f`` format of
``noisecbr clean`` and the row of a WARC record (tests/test_fuzz_outputs.py). Only the input
errors (:class:`noisecbr.prepare.tidy.InputError` and its subclasses) may refuse an input."""

from __future__ import annotations

import functools
import gzip
import io
import json
import math
import random
import re
from pathlib import Path

import noisecbr
from noisecbr.prepare.limits import DEFAULT_MAX_BYTES, MAX_ELEMENTS
from noisecbr.prepare.tidy import InputError
from noisecbr_apps import cli
from noisecbr_apps.crawl import warc as crawl
from noisecbr_apps.crawl.pool import CleanSettings

__all__ = ["FAMILIES", "OUTPUT_FAMILIES", "RowFiles", "check_result", "clean_everything",
           "cli_outputs", "every_output", "generate", "hostile_attributes", "output_input",
           "warc_rows"]

_ROOT = Path(__file__).resolve().parents[1]
#: Largest input a family makes (bytes): big enough for real structure, small enough for speed.
MAX_INPUT = 6_000

#: Text and the odd character, the body of the bad-charset family.
TEXT_TOKENS = ("\ufffe", "word ", "some text. ", "é", "日本", "<p a=1 a=2 b>", "<", ">", "&", "\"")
#: Pieces of markup that have broken parsers and tree repairs: stray structure tags, hidden
#: elements, comments and CDATA cut open, character references to control characters.
TOKENS = (
    "<html>", "</html>", "<head>", "</head>", "<body>", "</body>", "<meta>", "<d>", "<div>",
    "</div>", "<p>", "</p>", "<span hidden>", "</span>", "<a href=x>", "</a>", "<table>",
    "<tr>", "<td>", "</table>", "<ul><li>", "<li>", "<br/>", "<img src=x>", "<!--", "-->",
    "<![CDATA[", "]]>", "<script>", "</script>", "<style>", "</style>", "<noscript>",
    "</noscript>", "<template>", "<?xml version='1.0' encoding='utf-16'?>", "<svg>", "<math>",
    "<select><option>", "<frameset>", "<title>", "<p style='display:none'>", "<b aria-hidden=true>",
    "<div id='S:1' hidden>", "&#1;", "&#12;", "&#0;", "&#xD800;", "&amp", "\x0c", "\x00", "\x01",
    "\x1b", *TEXT_TOKENS,
    # What the page-metadata reader and the comment finder look at (CleanResult.title, .author,
    # .date, .lang, .comments), with control characters and lone surrogates in JSON escapes.
    "<h1>", "</h1>", "<html lang='e&#1;n'>", "<meta property=og:title content='t&#1;'>",
    "<meta name=author content='\x01'>", "<time datetime='\x0c'>", "<a rel=author>",
    ('<script type="application/ld+json">{"headline": "h\\u0001\\ud800", '
     '"author": {"name": "\\u0000"}, "datePublished": ["\\udfff"]}</script>'),
    '<script type="application/ld+json">[{"@graph": 5}, 3, "x"]</script>',
    "<section id=comments>", "<div class='comment'>", "</section>",
)
CHARSETS = ("undefined", "rot13", "zlib", "utf-16", "utf-32", "utf-7", "x-user-defined",
            "iso-8859-1", "shift_jis", "euc-jp", "gb18030", "big5", "koi8-r", "cp1251",
            "utf-8", "ascii", "hex", "base64", "unicode_escape", "idna", "punycode", "mbcs",
            "", "\x00", "é", "latin-1\x01", "a" * 200)
CONTROLS = "".join(map(chr, range(32))) + "\x7f\x85\u2028\u2029\ud800\udfff\ufeff\ufffe\uffff"


@functools.lru_cache(maxsize=1)
def fixture_pages() -> tuple[bytes, ...]:
    """The small real pages of the repository (its test fixtures and the README's example)."""
    pages = [path.read_bytes() for path in [_ROOT / "examples" / "tide-pools.html"]
             if path.is_file()]
    html = _ROOT / "tests" / "fixtures" / "casebase" / "html"
    pages += [gzip.decompress(path.read_bytes()) for path in sorted(html.glob("*.html.gz"))]
    return tuple(pages)


def random_bytes(rng: random.Random) -> bytes:
    return rng.randbytes(rng.randrange(MAX_INPUT))


def mutated_page(rng: random.Random) -> bytes:
    """A real page, cut to a window, with a few slices flipped, deleted, repeated or spliced."""
    page = bytearray(rng.choice(fixture_pages()))
    start = rng.randrange(len(page))
    page = page[start:start + MAX_INPUT] if rng.random() < 0.7 else page[:MAX_INPUT]
    for _ in range(rng.randrange(1, 8)):
        if not page:
            break
        at = rng.randrange(len(page))
        span = rng.randrange(1, 40)
        action = rng.randrange(4)
        if action == 0:
            page[at:at + span] = rng.randbytes(min(span, len(page) - at))
        elif action == 1:
            del page[at:at + span]
        elif action == 2:
            page[at:at] = page[at:at + span] * rng.randrange(2, 5)
        else:
            page[at:at] = rng.choice(TOKENS).encode("utf-8", "surrogatepass")
    return bytes(page)


#: What the names of a damaged tag's attributes are made of (issue 54): a leading "{", which
#: lxml reads as a namespace (``{a}`` has an empty name, ``{a`` an unclosed one), control
#: characters and references to them, markup and quotes that cut the tag open, and letters.
NAME_PIECES = ("{", "}", "{x}", "<", ">", "\"", "'", "=", "/", "`", "&#0;", "&#1;", "&#x7b;",
               "\x00", "\x01", "\x1b", "\x7f", "\x85", "\ufffe", "\ud800", "é", ":", "-", "a",
               "b", "on", "href", "style")
#: The tags of :func:`hostile_attributes`'s synthetic pages.
_SYNTHETIC_TAGS = ("p", "div", "span", "a", "b", "em", "li", "td", "h2", "article", "img")
_TAG_NAME = re.compile(rb"<[A-Za-z][^\s/>]*")


def _synthetic_page(rng: random.Random) -> bytes:
    """A small page of nested tags with words in them, built from ``rng``."""
    words = ("tide", "pools", "harbour", "sand", "lighthouse", "notes", "dry", "hour", "é", "日本")
    parts = ["<html><head><title>t</title></head><body>"]
    for _ in range(rng.randrange(1, 30)):
        tag = rng.choice(_SYNTHETIC_TAGS)
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 20)))
        parts.append(f"<{tag} class=c{rng.randrange(9)} href=/x>{text}</{tag}>")
    return "".join(parts + ["</body></html>"]).encode()


def hostile_attributes(rng: random.Random) -> bytes | str:
    """A real page or a small synthetic one whose tags hold attributes with malformed names
    (issue 54: the HTML's sanitiser could neither keep nor remove some of them). Not one of
    :data:`FAMILIES`, whose order numbers benchmarks/fuzz.py's inputs: tests/
    test_hostile_attributes.py runs it."""
    page = rng.choice(fixture_pages())[:MAX_INPUT] if rng.random() < 0.5 else _synthetic_page(rng)
    starts = [match.end() for match in _TAG_NAME.finditer(page)]
    for at in sorted(rng.sample(starts, min(len(starts), rng.randrange(1, 8))), reverse=True):
        name = "".join(rng.choice(NAME_PIECES) for _ in range(rng.randrange(1, 5)))
        value = rng.choice(("", "=1", "='x'", '="{y}"', "=" + rng.choice(NAME_PIECES)))
        attribute = f" {name}{value}".encode("utf-8", "surrogatepass")
        page = page[:at] + attribute + page[at:]
    return page if rng.random() < 0.7 else page.decode("utf-8", "surrogatepass")


def tag_soup(rng: random.Random) -> str:
    return "".join(rng.choice(TOKENS) for _ in range(rng.randrange(1, 300)))


def control_text(rng: random.Random) -> str | bytes:
    """Markup whose text and attribute values are full of control and odd characters."""
    def noise(n: int) -> str:
        return "".join(rng.choice(CONTROLS + "ab <>&") for _ in range(n))

    text = "".join(f"<p title='{noise(3)}'>{noise(20)}<span hidden>{noise(5)}</span>{noise(10)}</p>"
                   for _ in range(rng.randrange(1, 30)))
    return text if rng.random() < 0.5 else text.encode("utf-8", "surrogatepass")


def bad_charset(rng: random.Random) -> bytes:
    """A page declaring a charset (often absurd) over bytes in another encoding."""
    declared = rng.choice(CHARSETS)
    body = "".join(rng.choice(TEXT_TOKENS) for _ in range(rng.randrange(1, 200)))
    encoding = rng.choice(("utf-8", "cp1251", "shift_jis", "latin-1", "utf-16-le"))
    raw = body.encode(encoding, "replace") if encoding != "utf-8" else body.encode(
        "utf-8", "surrogatepass")
    tag = rng.choice(('<meta charset="{}">',
                      "<meta http-equiv=content-type content='text/html; charset={}'>"))
    return tag.format(declared).encode("utf-8", "surrogatepass") + raw


def deep_nesting(rng: random.Random) -> str:
    """Thousands of unclosed or nested elements (libxml2 stops at 2 048 open ones)."""
    depth = rng.randrange(1, 4_000)
    tag = rng.choice(("div", "span", "b", "table", "li", "a", "p", "font"))
    closing = f"</{tag}>" * depth if rng.random() < 0.5 else ""
    return f"<{tag}>x" * depth + "text" + closing


FAMILIES = {
    "random-bytes": random_bytes,
    "mutated-page": mutated_page,
    "tag-soup": tag_soup,
    "control-characters": control_text,
    "bad-charset": bad_charset,
    "deep-nesting": deep_nesting,
}


#: The families of :func:`every_output`'s runs, in turn: :data:`FAMILIES` and the pages with
#: hostile attribute names.
OUTPUT_FAMILIES = {**FAMILIES, "hostile-attributes": hostile_attributes}


def generate(rng: random.Random, family: str) -> bytes | str:
    """One input of ``family`` (of :data:`OUTPUT_FAMILIES`)."""
    return OUTPUT_FAMILIES[family](rng)


def clean_everything(page: bytes | str) -> str | None:
    """Clean ``page`` and read every attribute of the result: None when it worked, the name of
    the :class:`InputError` subclass when the page was refused. Anything else propagates."""
    try:
        result = noisecbr.clean(page)
    except InputError as error:
        _check_reason(str(error))
        return type(error).__name__
    check_result(result)
    return None


def _check_reason(reason: str) -> None:
    """A refusal's reason: one line (the CLI lists each failed input on one line of stderr)."""
    assert reason and "\n" not in reason, f"not a one-line reason: {reason!r}"


def check_result(result: noisecbr.CleanResult) -> None:
    """Read every attribute of ``result`` and check what each must be."""
    assert isinstance(result.text, str) and isinstance(result.html, str)
    _check_fields(result)
    # What the CLI writes: UTF-8 encodable (no lone surrogates), the JSON parseable, and no
    # control character but tab and newline anywhere (noisecbr.prepare.strings.printable).
    result.text.encode()
    result.html.encode()
    as_json = result.to_json()  # once: it lists every decision, thousands on a deep page
    json.loads(as_json.encode())
    # The Markdown with its links and images: it reads the kept elements' href and src.
    linked = result.to_markdown(links=True, images=True)
    for name, value in (("text", result.text), ("html", result.html),
                        ("markdown", result.markdown), ("linked markdown", linked),
                        ("json", as_json)):
        _check_printable(name, value)


def _check_fields(result: noisecbr.CleanResult) -> None:
    """The attributes of ``result`` that are no rendering: its decisions, comments and
    metadata."""
    assert isinstance(result.decisions, list) and isinstance(result.comments, str)
    for value in (result.title, result.author, result.date, result.lang):
        assert value is None or isinstance(value, str)
    for name in ("comments", "title", "author", "date", "lang"):
        _check_printable(name, getattr(result, name) or "")


def _check_printable(name: str, value: str) -> None:
    found = _CONTROLS.search(value)
    assert found is None, f"control character {found.group()!r} in the {name}"


# -- every output: the CLI's formats and the WARC rows (issue 54) ------------------------------
#: The ``-f`` formats of ``noisecbr clean`` for HTML input, as :func:`noisecbr_apps.cli.
#: _clean_one` takes them (``markdown+links``: ``-f markdown --links``).
CLI_FORMATS = ("text", "html", "json", "markdown", "markdown+links", "markdown+images",
               "markdown+links+images")
#: The ``noisecbr clean`` options an input is cleaned with, one set per input in turn (as
#: :func:`noisecbr_apps.cli._init_worker` takes them; the WARC rows take those it knows).
CLI_OPTIONS = (
    {},
    {"comments": True, "keep_media": True, "title": True},
    {"unsafe_html": True, "favor": "precision", "title": False, "page_type": "forum"},
    {"favor": "recall", "smooth": 1.0, "page_type": "listing"},
)
#: The HTTP headers of an input's WARC record, one set per input in turn: the charset the
#: payload is decoded with (:func:`noisecbr.prepare.decode.http_decoded`), none (the
#: cleaner detects it), one the bytes are not in or Python does not know, and no Content-Type
#: at all (the payload is sniffed).
HTTP_HEADERS = (
    (("Content-Type", "text/html; charset=utf-8"),),
    (("Content-Type", "text/html"),),
    (("Content-Type", "application/xhtml+xml; charset=ISO-8859-1"),),
    (),
    (("Content-Type", "text/html; charset=utf-16"),),
    (("Content-Type", "text/html; charset=shift_jis"),),
    (("Content-Type", "text/html; charset=x-no-such-charset"),),
)
#: The skips of a WARC record that only a fault of the code makes (of a well-formed record
#: around any body): a page whose cleaning raised what is not an InputError, an HTTP response
#: that does not parse, a damaged archive.
_FAULTS = frozenset({crawl.FAILED, crawl.BAD_RESPONSE, crawl.DAMAGED})


def output_input(seed: object, family: str, number: int) -> bytes | str:
    """Input ``number`` of ``family`` in a run seeded ``seed`` (as benchmarks/fuzz.py numbers
    them)."""
    return generate(random.Random(f"{seed}:{family}:{number}"), family)


class _Recorded:
    """A cleaner that cleans one input once: the first call cleans, the others hand back the
    same result (or raise the same error), so that the CLI renders every format from one
    cleaning; ``outcome`` is the result or the exception."""

    def __init__(self, cleaner) -> None:
        self.cleaner = cleaner
        self.max_bytes = cleaner.max_bytes
        self.outcome: noisecbr.CleanResult | Exception | None = None

    def clean(self, data: bytes | str, **options) -> noisecbr.CleanResult:
        if self.outcome is None:
            try:
                self.outcome = self.cleaner.clean(data, **options)
            except Exception as error:  # noqa: BLE001 - kept, raised again to every caller
                self.outcome = error
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    def site_evidence(self, pages):
        return self.cleaner.site_evidence(pages)


@functools.cache
def _cli_cleaner(variant: int):
    """The Cleaner ``noisecbr clean`` makes with :data:`CLI_OPTIONS` ``[variant]``."""
    options = {"model": None, "parser": "lxml", "smooth": None, "max_bytes": DEFAULT_MAX_BYTES,
               "max_elements": MAX_ELEMENTS, **CLI_OPTIONS[variant]}
    saved = cli._worker_cleaner, cli._worker_memory, cli._worker_page_type
    try:
        cli._init_worker(**options)
        return cli._worker_cleaner
    finally:
        cli._worker_cleaner, cli._worker_memory, cli._worker_page_type = saved


def cli_outputs(data: bytes, variant: int = 0) -> str | None:
    """What ``noisecbr clean PAGE -f FORMAT`` writes of the page file ``data`` in every format
    (:data:`CLI_FORMATS`), with the options :data:`CLI_OPTIONS` ``[variant]``: rendered by the
    CLI's own code (:func:`noisecbr_apps.cli._clean_one`), from one cleaning. None when every
    format was written, the name of the InputError when the page was refused (with a one-line
    reason); an exception of the cleaning that is not an InputError is raised again, a failure
    to render fails an assertion."""
    options = CLI_OPTIONS[variant % len(CLI_OPTIONS)]
    recorded = _Recorded(_cli_cleaner(variant % len(CLI_OPTIONS)))
    saved = cli._worker_cleaner, cli._worker_memory, cli._worker_page_type
    cli._worker_cleaner, cli._worker_memory = recorded, None
    cli._worker_page_type = options.get("page_type")
    try:
        for fmt in CLI_FORMATS:
            item, out, error, unnamed = cli._clean_one("page.html", data, fmt, None)
            outcome = recorded.outcome
            if isinstance(outcome, Exception) and not isinstance(outcome, InputError):
                raise outcome  # _clean_one reported it as a failed input: it is a crash
            if isinstance(outcome, InputError):
                assert out is None and error == str(outcome), (fmt, error)
                _check_reason(error)
                continue
            assert error is None, f"noisecbr clean -f {fmt} failed on a page that cleaned: {error}"
            assert isinstance(out, str) and not unnamed
            out.encode()  # written as UTF-8 (a file, or standard output)
            _check_printable(f"-f {fmt} output", out)
            if fmt == "json":
                assert isinstance(json.loads(out), dict)
    finally:
        cli._worker_cleaner, cli._worker_memory, cli._worker_page_type = saved
    if isinstance(recorded.outcome, InputError):
        return type(recorded.outcome).__name__
    # The formats read the text, HTML, Markdown and JSON: the attributes that are no rendering.
    _check_fields(recorded.outcome)
    return None


@functools.lru_cache(maxsize=2)
def _schema(markdown: bool):
    """The Parquet schema of the rows (made once: pyarrow is slow to load)."""
    return crawl.arrow_schema(markdown)


def warc_rows(data: bytes, variant: int = 0, headers: int | None = None,
              url: str = "http://fuzz.example/page") -> list[dict]:
    """The rows ``noisecbr clean x.warc.gz`` writes of a WARC whose one response record holds
    the page ``data``, with the HTTP headers :data:`HTTP_HEADERS` ``[headers]`` (by default
    ``[variant]``) and the options of :data:`CLI_OPTIONS` ``[variant]`` that a crawl takes:
    the record read by the CLI's reader (:func:`noisecbr_apps.crawl.warc.iter_pages`), the
    page cleaned into its row (:func:`noisecbr_apps.crawl.warc.page_row`, where only an
    InputError may stop it), each row checked as the JSONL and Parquet writers take it. No
    row when the page was refused or is not HTML."""
    options = CLI_OPTIONS[variant % len(CLI_OPTIONS)]
    settings = CleanSettings(**{name: value for name, value in options.items()
                                if name in _CRAWL_OPTIONS}, markdown=True)
    http = HTTP_HEADERS[(variant if headers is None else headers) % len(HTTP_HEADERS)]
    record = crawl.response_record(url, data, http, compress=variant % 2 == 0)
    stats = crawl.CrawlStats()
    rows = []
    for page in crawl.iter_pages(io.BytesIO(record), stats, settings.max_bytes):
        recorded = _Recorded(settings.cleaner())
        try:
            row = crawl.page_row(recorded, page, settings.memories, settings.markdown,
                                 page_type=settings.page_type)
        except InputError as error:
            _check_reason(str(error))
            stats.skip(crawl.UNREADABLE)
            continue
        _check_fields(recorded.outcome)  # the row holds its text and Markdown
        check_row(row)
        rows.append(row)
    faults = _FAULTS & set(stats.skipped)
    assert not faults and stats.records == 1, f"the record was read as {stats.summary()}"
    return rows


#: The options of :data:`CLI_OPTIONS` a crawl takes (``noisecbr clean x.warc.gz``): it writes no
#: HTML, so it has no --unsafe-html or --keep-media.
_CRAWL_OPTIONS = frozenset({"comments", "favor", "title", "page_type", "smooth"})


def check_row(row: dict, markdown: bool = True) -> None:
    """A WARC row: the columns :func:`noisecbr_apps.crawl.warc.columns` names (with the
    Markdown column or without), of their types, text without control characters, a line of
    JSONL and a row of the Parquet schema."""
    kinds = dict(crawl.columns(markdown))
    assert sorted(row) == sorted(kinds), f"columns {list(row)}"  # in any order: by name
    types = {"string": str, "int": int, "float": float}
    for name, kind in kinds.items():
        value = row[name]
        if value is None:
            assert kind == "string" and name not in ("url", "text", "markdown", "comments"), name
            continue
        assert isinstance(value, types[kind]), (name, value)
        if kind == "string":
            _check_printable(f"{name} column", value)
        elif kind == "float":
            assert math.isfinite(value), (name, value)
    line = io.StringIO()
    writer = crawl.RowWriter(line, "jsonl", markdown)
    writer.write(row)
    writer.close()
    assert json.loads(line.getvalue().encode()) == row
    import pyarrow as pa

    pa.Table.from_pylist([row], schema=_schema(markdown))


def every_output(page: bytes | str, number: int = 0, rows: RowFiles | None = None
                 ) -> str | None:
    """Every output of ``page`` but the library's own (:func:`clean_everything`): the CLI's
    formats of the page file (its bytes: a text page as UTF-8) and the WARC row of a record
    holding it, input ``number`` taking the options and HTTP headers of its turn (a text page
    reaches the row's cleaner as the same text when its record declares UTF-8); the row also
    written to ``rows``. None when the page was cleaned, the name of the InputError when it
    was refused; anything else raises."""
    data = page if isinstance(page, bytes) else page.encode("utf-8", "surrogatepass")
    refused = cli_outputs(data, number)
    # The headers by round of the families (in turn, as many as the headers): each family's
    # inputs get each set in turn.
    found = warc_rows(data, number, headers=number // len(OUTPUT_FAMILIES))
    if rows is not None:
        rows.write(found)
    return refused


class RowFiles:
    """The rows of a run written as ``noisecbr clean`` writes a crawl, by its writers
    (:class:`noisecbr_apps.crawl.warc.RowWriter`), to ``folder``/rows.jsonl and rows.parquet,
    read back on :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.paths = folder / "rows.jsonl", folder / "rows.parquet"
        self.writers = [crawl.RowWriter(path, path.suffix[1:], markdown=True)
                        for path in self.paths]
        self.count = 0

    def write(self, rows: list[dict]) -> None:
        for row in rows:
            for writer in self.writers:
                writer.write(row)
            self.count += 1

    def close(self) -> int:
        """Close the files and check they hold every row; returns the number of rows."""
        import pyarrow.parquet as pq

        for writer in self.writers:
            writer.close()
        jsonl, parquet = self.paths
        with jsonl.open(encoding="utf-8") as lines:
            assert sum(1 for line in lines if json.loads(line)) == self.count
        assert pq.read_table(parquet).num_rows == self.count
        return self.count


#: The C0 controls but tab and newline, DEL and the C1 controls: no output may hold one.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
