"""A page's bytes → text: its BOM, then the charset it declares (unless its bytes contradict
it), then a detector; surrogates and undecodable bytes replaced, never refused.
"""

from __future__ import annotations

import codecs
import re

from .sniff import contradicted_charset

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.I)


_SURROGATE = re.compile("[\ud800-\udfff]")


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode(data: bytes | str) -> str:
    """Decode page bytes: BOM first, then a ``<meta charset>``/http-equiv, then detection.

    A declared charset that fails to decode the bytes (a mis-declared page) falls through to
    UTF-8, then to UTF-8 with its few broken bytes replaced (see :func:`_mostly_utf8`), and
    then to charset-normalizer's guess, so a wrong declaration never loses the page.
    """
    return text_and_charset(data)[0]


def text_and_charset(data: bytes | str) -> tuple[str, str | None]:
    """The text and, when the bytes can be handed to the parser as they are, their encoding."""
    if isinstance(data, str):
        # A lone surrogate (from text decoded with surrogateescape, or a bad \\u escape) cannot
        # be encoded for libxml2, which would stop the page there.
        if not data.isascii() and _SURROGATE.search(data):
            data = _SURROGATE.sub("\ufffd", data)
        return data, None
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace"), None
    for encoding in [*_declared_candidates(data), "utf-8"]:
        try:
            return data.decode(encoding), encoding
        except UnicodeError:  # UnicodeDecodeError, and the bare one of codecs such as "undefined"
            continue
    text = _mostly_utf8(data)
    if text is not None:
        return text, None
    from charset_normalizer import from_bytes

    best = from_bytes(data[:200_000]).best()
    encoding = best.encoding if best is not None else "cp1252"
    return data.decode(encoding, errors="replace"), None


#: Codecs Python knows but a page's bytes are never in, whatever its meta tag says: the HTML
#: standard reads a declared UTF-16/32 as UTF-8 (an ASCII-compatible tag could not be read
#: otherwise), and the rest are Python's transformations, not charsets of the web.
_NOT_PAGE_CHARSETS = ("utf-16", "utf-32", "utf-7", "undefined", "unicode-escape",
                      "raw-unicode-escape", "punycode", "idna", "mbcs", "oem")


def _declared_candidates(data: bytes) -> list[str]:
    """The charsets to try first by what the page declares: the declared one, or the one the
    bytes show instead (:func:`noisecbr.prepare.sniff.contradicted_charset`); a windows-1252 page
    with one of its five undefined bytes is then read as ISO-8859-1, as it always was."""
    declared = _declared_charset(data)
    if declared is None:
        return []
    corrected = contradicted_charset(data, declared)
    if corrected is not None:
        return [corrected]
    return [declared, "iso8859-1"] if declared == "cp1252" else [declared]


def _declared_charset(data: bytes) -> str | None:
    """The Python codec name of the charset a ``<meta>`` tag of the page declares, or None
    when there is none or it names no charset a page can be in."""
    declared = _META_CHARSET.search(data[:8192])
    if not declared:
        return None
    try:
        codec = codecs.lookup(declared.group(1).decode("ascii", "ignore"))
    except LookupError:
        return None
    # Not a text encoding: rot13, zlib, base64, hex…
    if not getattr(codec, "_is_text_encoding", True):
        return None
    if codec.name.replace("_", "-").startswith(_NOT_PAGE_CHARSETS):
        return None
    # The HTML standard reads the label iso-8859-1 as windows-1252, as browsers do: pages so
    # labelled use its curly quotes and œ (bytes 0x80-0x9f, C1 controls in ISO-8859-1).
    return "cp1252" if codec.name in ("iso8859-1", "latin-1") else codec.name


def _mostly_utf8(data: bytes) -> str | None:
    """The page as UTF-8 with its broken bytes replaced, when it is UTF-8 with a few broken
    bytes (a truncated character, a pasted fragment in another encoding): more well-formed
    multi-byte characters than malformed bytes. Otherwise None.

    A detector would read such a page in a legacy encoding and garble every accented letter of
    it ("café" → "cafÃ©"). Text really in a legacy single-byte encoding almost never forms a
    well-formed UTF-8 sequence (a lead byte followed by the right number of continuation bytes
    is mojibake, not prose), so its well-formed count stays near zero.
    """
    text = data.decode("utf-8", errors="replace")
    # U+FFFD written in the page itself is not a broken byte.
    broken = text.count("\ufffd") - data.count("\ufffd".encode())
    well_formed = len(text) - len(text.encode("ascii", "ignore")) - text.count("\ufffd")
    return text if well_formed > broken else None


def http_decoded(payload: bytes, label: str | None) -> str | bytes:
    """A response's body decoded with the charset its HTTP Content-Type names, as a browser
    honours it over the page's ``<meta charset>``; the bytes themselves (for :func:`decode`) when
    it names none, a BOM overrides it (as in browsers), or the label is unknown or does not decode
    the bytes (a mis-declared response: the page's own declaration, then detection, decide)."""
    if not label or payload.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return payload
    import webencodings  # html5lib's dependency: the WHATWG encoding labels

    encoding = webencodings.lookup(label)
    if encoding is None:
        return payload
    try:
        return payload.decode(encoding.codec_info.name)
    except (UnicodeDecodeError, LookupError):
        return payload
