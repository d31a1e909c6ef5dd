"""The typed errors of input that is not a page the cleaner can read (re-exported by
:mod:`noisecbr.prepare.tidy` and :mod:`noisecbr`). Each carries a one-line reason."""

from __future__ import annotations

__all__ = [
    "InputError",
    "EmptyInputError",
    "BinaryInputError",
    "NotHTMLError",
    "WARCInputError",
    "InputTooLargeError",
]


class InputError(ValueError):
    """The input cannot be read as an HTML page."""


class EmptyInputError(InputError):
    """The input is empty or holds only whitespace."""


class BinaryInputError(InputError):
    """The input is binary data (an image, an archive…), not HTML."""


class NotHTMLError(BinaryInputError):
    """The input is a document of a known non-HTML format (PDF, image, archive…); the message
    names the format."""


class WARCInputError(NotHTMLError):
    """The input is a WARC file (a web archive of many records), not one page."""


class InputTooLargeError(InputError):
    """The input is larger than a configured limit (bytes, elements)."""
