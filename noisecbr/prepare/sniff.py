"""Is it a page at all? File signatures and byte statistics of input that is not HTML.

:func:`refuse_non_html` raises a typed :class:`~noisecbr.errors.InputError` that names what the
input is (a PDF, a PNG image, a zip archive, a WARC file…) or says that it is binary data, so
that a user who hands the cleaner the wrong file learns which file it was. It looks at the first
few kilobytes only: its cost does not grow with the page.
"""

from __future__ import annotations

import codecs
import zlib

from ..errors import BinaryInputError, NotHTMLError, WARCInputError
from ..settings import BINARY_CONTROL_SHARE, SNIFF_BYTES

__all__ = ["BINARY_CONTROL_SHARE", "SNIFF_BYTES", "refuse_non_html", "looks_binary",
           "signature_of", "contradicted_charset"]


#: ... and more than this many: a short text with a stray control character or two is text.
_MIN_CONTROLS = 4

#: Control bytes that count towards binary input (tab, newlines, form feed and escape do not;
#: DEL does).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"

#: (offset, magic bytes, what the input is) of common formats that are not HTML.
_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (0, b"%PDF-", "a PDF document"),
    (0, b"%!PS", "a PostScript document"),
    (0, b"{\\rtf", "an RTF document"),
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"GIF87a", "a GIF image"),
    (0, b"GIF89a", "a GIF image"),
    (0, b"II*\x00", "a TIFF image"),
    (0, b"MM\x00*", "a TIFF image"),
    (0, b"\x00\x00\x01\x00", "an icon"),
    (0, b"PK\x03\x04", "a zip archive (or an Office document, EPUB or JAR)"),
    (0, b"PK\x05\x06", "an empty zip archive"),
    (0, b"\x1f\x8b", "gzip-compressed data (decompress it first)"),
    (0, b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (0, b"Rar!\x1a\x07", "a RAR archive"),
    (0, b"\xfd7zXZ\x00", "xz-compressed data"),
    (0, b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (0, b"BZh", "bzip2-compressed data"),
    (257, b"ustar", "a tar archive"),
    (0, b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document"),
    (0, b"SQLite format 3\x00", "an SQLite database"),
    (0, b"\x7fELF", "an ELF executable"),
    (0, b"\xca\xfe\xba\xbe", "a Java class file or Mach-O binary"),
    (0, b"\x00asm", "a WebAssembly module"),
    (0, b"OggS", "an Ogg audio or video file"),
    (0, b"fLaC", "a FLAC audio file"),
    (0, b"ID3\x02", "an MP3 audio file"),
    (0, b"ID3\x03", "an MP3 audio file"),
    (0, b"ID3\x04", "an MP3 audio file"),
    (0, b"\x1a\x45\xdf\xa3", "a Matroska/WebM video"),
    (4, b"ftyp", "an MP4/QuickTime video or HEIC image"),
)
_RIFF = {b"WEBP": "a WebP image", b"WAVE": "a WAV audio file", b"AVI ": "an AVI video"}

_WARC = b"WARC/"
_WARC_HINT = ("give it to the WARC reader instead (noisecbr clean crawl.warc.gz reads every "
              "page record of a WARC file)")


def signature_of(data: bytes) -> str | None:
    """What a known non-HTML format's signature says the input is, or None."""
    for offset, magic, what in _SIGNATURES:
        if data.startswith(magic, offset):
            if magic == b"BZh" and not data[3:4].isdigit():
                continue  # "BZh" alone could start a text
            return what
    if data.startswith(b"RIFF") and data[8:12] in _RIFF:
        return _RIFF[data[8:12]]
    return None


def _gunzipped_head(data: bytes) -> bytes:
    """The first bytes of gzip-compressed ``data`` (decompressed no further than needed)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data[:65_536], 64)
    except zlib.error:
        return b""


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of an input hold more control bytes than any text has."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    # The control bytes are what translate deletes: counted in C, not byte by byte in Python.
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > max(BINARY_CONTROL_SHARE * len(head), _MIN_CONTROLS)


def refuse_non_html(data: bytes) -> None:
    """Raise :class:`WARCInputError`, :class:`NotHTMLError` or :class:`BinaryInputError`
    when ``data`` is a WARC file, a known non-HTML format or binary; return otherwise."""
    head = data[:SNIFF_BYTES].lstrip()
    if head.startswith(_WARC) or (head.startswith(b"\x1f\x8b")
                                  and _gunzipped_head(head).startswith(_WARC)):
        raise WARCInputError(f"input is a WARC file, not a page: {_WARC_HINT}")
    what = signature_of(data[:SNIFF_BYTES])
    if what is not None:
        raise NotHTMLError(f"input is {what}, not HTML")
    if looks_binary(data[:SNIFF_BYTES]):
        raise BinaryInputError("input looks like binary data, not HTML")


#: Western single-byte charsets (Python's names): any byte sequence decodes in them, so a page
#: that declares one but is written in another charset decodes without error into mojibake.
_WESTERN = frozenset(("iso8859-1", "cp1252", "iso8859-15", "latin-1"))
_HIGH_BYTES = bytes(range(128, 256))
_ASCII_LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Share of non-ASCII bytes among the letters of a Western page above which the declaration is
#: doubted and the bytes are given to the detector. Accented letters are a few per cent of
#: French or German text, fewer still with the markup counted; in Cyrillic, Greek or CJK text
#: almost every letter is non-ASCII.
_DOUBTFUL_HIGH_SHARE = 0.10
#: ... and at least this many non-ASCII bytes: on less text the detector guesses wildly (three
#: accented letters of a short French page read as Arabic).
_DOUBTFUL_HIGH_BYTES = 64
#: Bytes given to the detector (charset-normalizer): enough text, bounded time.
_DETECT_BYTES = 200_000


def contradicted_charset(data: bytes, declared: str) -> str | None:
    """The charset the bytes of a page are really in, when its ``<meta>`` declares a Western
    single-byte charset (``declared``, a Python codec name) that they contradict: valid UTF-8
    with non-ASCII characters, or text the detector reads as Cyrillic, Greek, Japanese… (a
    Shift_JIS or windows-1251 page labelled iso-8859-1). None when the declaration stands."""
    if declared not in _WESTERN or data.isascii():
        return None
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    sample = data[:_DETECT_BYTES]
    high = len(sample) - len(sample.translate(None, _HIGH_BYTES))
    letters = len(sample) - len(sample.translate(None, _ASCII_LETTERS))
    if high < _DOUBTFUL_HIGH_BYTES or high <= _DOUBTFUL_HIGH_SHARE * (high + letters):
        return None
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    if best is None:
        return None
    name = codecs.lookup(best.encoding).name
    return None if name in _WESTERN or name in ("ascii", "utf-8") else name
