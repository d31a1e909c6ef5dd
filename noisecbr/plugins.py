"""Work that lives above the cleaning engine, found through entry points.

:mod:`noisecbr` never imports :mod:`casebase` or :mod:`training` (dependencies point training →
casebase → noisecbr). What the ``noisecbr`` command and :func:`noisecbr.bench.bench` need from
them is registered by those packages in ``pyproject.toml`` and looked up here by name, when it is
used:

- group ``noisecbr.commands``: subcommands of ``noisecbr`` (``train``, ``runs``, ``serve``);
- group ``noisecbr.hooks``: functions (``fold_models`` trains site-grouped fold models,
  ``memory_from_truth`` builds a site memory from labelled pages, ``page_memories`` opens a case
  base's site memories for ``noisecbr clean --memory``).

Another distribution can register hooks or commands of its own the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

__all__ = ["COMMANDS", "HOOKS", "PluginMissingError", "command_entry_points", "hook"]

#: The entry-point group of ``noisecbr`` subcommands defined outside :mod:`noisecbr`.
COMMANDS = "noisecbr.commands"
#: The entry-point group of the functions :mod:`noisecbr` calls in the packages above it.
HOOKS = "noisecbr.hooks"


class PluginMissingError(LookupError):
    """No installed distribution registers the hook asked for."""


def command_entry_points() -> dict[str, EntryPoint]:
    """The registered subcommands by name (not loaded: loading one may import torch)."""
    return {point.name: point for point in entry_points(group=COMMANDS)}


def hook(name: str) -> Callable[..., Any]:
    """The function registered as ``name`` in :data:`HOOKS`, loaded.

    Raises :class:`PluginMissingError` when nothing registers it (noisecbr installed without
    its case base and training packages, or from a checkout that was never installed), and
    ImportError when it needs a package that is not installed (torch for ``fold_models``).

    >>> hook("no such hook")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    noisecbr.plugins.PluginMissingError: nothing registers the noisecbr hook 'no such hook' ...
    """
    for point in entry_points(group=HOOKS, name=name):
        return point.load()
    raise PluginMissingError(f"nothing registers the noisecbr hook {name!r} (pip install -e . "
                             "registers the project's own)")
