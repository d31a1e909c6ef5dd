"""Names the operating system hands over (command-line arguments, file names) whose bytes may
not be UTF-8 (issue 43, item 8).

POSIX gives a program its arguments and file names as bytes, and Python decodes the bytes that
are not UTF-8 to lone surrogates (``b"\\xff"`` becomes ``"\\udcff"``, :func:`os.fsdecode`): such
a string opens the file it names, but cannot be encoded to UTF-8 to be printed, stored or sent.
:func:`shown` is the text to print or store in its place. The command lines refuse a text
argument that is not UTF-8 (:mod:`casebase.arguments`).
"""

from __future__ import annotations

__all__ = ["is_undecodable", "shown"]


def is_undecodable(text: str) -> bool:
    """Whether ``text`` holds a byte that was not UTF-8 (a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown(text: str) -> str:
    """``text`` as it can be printed and stored: its bytes that are not UTF-8 as ``\\xNN``
    (``"\\udcff.html"`` shows as ``\\xff.html``), other text unchanged.

    >>> shown("caf\\u00e9 \\udcff.html")
    'café \\\\xff.html'
    """
    if not is_undecodable(text):
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decodes to: not from the operating system
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
