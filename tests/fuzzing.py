"""Generators of hostile inputs, shared by the property tests (tests/test_fuzz.py, driven by
hypothesis) and the seeded corpus run (benchmarks/fuzz.py). Each family is a function of a
``random.Random`` that returns one input (bytes or str), small enough that thousands run in
seconds."""

from __future__ import annotations

import functools
import gzip
import json
import random
import re
from pathlib import Path

import noisecbr
from noisecbr.prepare.tidy import InputError

__all__ = ["FAMILIES", "clean_everything", "generate", "hostile_attributes"]

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


def generate(rng: random.Random, family: str) -> bytes | str:
    """One input of ``family``."""
    return FAMILIES[family](rng)


def clean_everything(page: bytes | str) -> str | None:
    """Clean ``page`` and read every attribute of the result: None when it worked, the name of
    the :class:`InputError` subclass when the page was refused. Anything else propagates."""
    try:
        result = noisecbr.clean(page)
    except InputError as error:
        assert str(error) and "\n" not in str(error), f"not a one-line reason: {error!r}"
        return type(error).__name__
    assert isinstance(result.text, str) and isinstance(result.html, str)
    assert isinstance(result.decisions, list) and isinstance(result.comments, str)
    for value in (result.title, result.author, result.date, result.lang):
        assert value is None or isinstance(value, str)
    # What the CLI writes: UTF-8 encodable (no lone surrogates), the JSON parseable, and no
    # control character but tab and newline anywhere (noisecbr.prepare.strings.printable).
    result.text.encode()
    result.html.encode()
    json.loads(result.to_json().encode())
    # The Markdown with its links and images: it reads the kept elements' href and src.
    linked = result.to_markdown(links=True, images=True)
    for name, value in (("text", result.text), ("html", result.html),
                        ("markdown", result.markdown), ("linked markdown", linked),
                        ("comments", result.comments), ("json", result.to_json()),
                        *((f, getattr(result, f) or "") for f in ("title", "author", "date",
                                                                    "lang"))):
        found = _CONTROLS.search(value)
        assert found is None, f"control character {found.group()!r} in the {name}"
    return None


#: The C0 controls but tab and newline, DEL and the C1 controls: no output may hold one.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
