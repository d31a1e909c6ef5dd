"""Subcommands of ``noisecbr`` that other distributions add, found through entry points.

A distribution that registers a click command under the entry-point group ``noisecbr.commands``
(``[project.entry-points."noisecbr.commands"] NAME = "package.module:command"``) adds
``noisecbr NAME``; it is imported only when invoked. The project's own commands need no entry
point: :mod:`noisecbr_apps.cli` imports them.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

__all__ = ["COMMANDS", "command_entry_points"]

#: The entry-point group of ``noisecbr`` subcommands defined in other distributions.
COMMANDS = "noisecbr.commands"


def command_entry_points() -> dict[str, EntryPoint]:
    """The registered subcommands by name (not loaded: loading one may import torch)."""
    return {point.name: point for point in entry_points(group=COMMANDS)}
