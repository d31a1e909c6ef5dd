"""The case base's errors: problems with the data or the database, not programming errors."""

from __future__ import annotations

__all__ = ["CaseBaseError", "NotFoundError", "UnknownPathsError"]


class CaseBaseError(Exception):
    """A problem with the case base that is not a programming error (shown as one line)."""


class NotFoundError(CaseBaseError, LookupError):
    """A case, page or site that does not exist."""


class UnknownPathsError(NotFoundError):
    """Labels whose paths select no element of their page: ``paths`` are those paths."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)
