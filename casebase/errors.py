"""The case base's errors: problems with the data or the database, not programming errors."""

from __future__ import annotations

from noisecbr.errors import NoisecbrError

__all__ = ["CaseBaseError", "InvalidInputError", "InvalidPathError", "InvalidRecordError",
           "NotFoundError", "UnknownPathsError"]


class CaseBaseError(NoisecbrError):
    """A problem with the case base that is not a programming error (shown as one line)."""


class NotFoundError(CaseBaseError, LookupError):
    """A case, page or site that does not exist."""


class UnknownPathsError(NotFoundError):
    """Labels whose paths select no element of their page: ``paths`` are those paths."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)


class InvalidInputError(CaseBaseError, ValueError):
    """Input the caller gave that the case base refuses before it writes anything: a usage
    error (exit 2, HTTP 422), not a problem of the database."""


class InvalidPathError(InvalidInputError):
    """A path that cannot name elements: a label's XPath that computes a number, a string or a
    truth value (``count(//*)``), or a case's path that is not an element path. ``path`` is it."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class InvalidRecordError(InvalidInputError):
    """A record of an import file that cannot be stored as it is (its line and field named)."""
