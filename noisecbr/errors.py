"""Every error noisecbr raises on purpose derives from :class:`NoisecbrError` (and the case
base's, :class:`casebase.errors.CaseBaseError`, too): ``except noisecbr.NoisecbrError`` catches
bad input, a bad model file and an unusable case base, and lets programming errors through.
Each carries a one-line reason. The input errors are re-exported by :mod:`noisecbr.prepare.tidy`
and :mod:`noisecbr`."""

from __future__ import annotations

__all__ = [
    "NoisecbrError",
    "InputError",
    "EmptyInputError",
    "BinaryInputError",
    "NotHTMLError",
    "WARCInputError",
    "InputTooLargeError",
]


class NoisecbrError(Exception):
    """The root of noisecbr's errors: a problem with the data, a file or a store the user gave,
    not a programming error."""


class InputError(NoisecbrError, ValueError):
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


class ModelError(NoisecbrError, ValueError):
    """The file is not a usable noisecbr model."""


class SchemaMismatchError(ModelError):
    """The model was trained on vectors of another schema version than this code computes."""


class MemorySourceError(NoisecbrError):
    """The store that site memories are read from (a case base) cannot be opened or read."""
