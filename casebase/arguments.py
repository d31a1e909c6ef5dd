"""Command-line arguments that are not UTF-8, for every command line of the project (``noisecbr``,
``casebase``, ``training``): one place, not a check per option (issue 43, item 8).

POSIX hands a program its arguments as bytes, and Python decodes the bytes that are not UTF-8
to lone surrogates (:mod:`noisecbr.fsnames`). A file name may be any bytes, so a path argument
keeps them: the file is read and written under its own name, which is printed and stored as
:func:`~noisecbr.fsnames.shown` gives it. Any other argument is text (a URL, a query, a note, a
database URL) that is stored, compared or printed as UTF-8: one that is not is a usage error
naming it (exit 2), checked on every parameter click reads as a string (a ``click.Path`` is not
one) of every command below a :class:`CheckedGroup` (``casebase``, ``python -m training.cli``;
``noisecbr``'s group does the same with :func:`check_text_parameters` and :func:`checked`):
commands defined elsewhere and loaded when invoked (``serve``, ``spark``, ``runs``, plugins)
as well.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import click

from noisecbr.fsnames import is_undecodable, shown

__all__ = ["CheckedGroup", "check_text_parameters", "checked"]


def _text_values(value: Any) -> list[str]:
    """The strings of a parameter's value (one, or those of ``nargs``/``multiple``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list)):
        return [item for item in value if isinstance(item, str)]
    return []


def check_text_parameters(ctx: click.Context) -> None:
    """Refuse (exit 2, naming it) a text parameter of ``ctx``'s command whose value is not
    UTF-8. Only the parameters click reads as plain strings are text: a path, a choice, a
    number converts (or refuses) its value itself."""
    for param in ctx.command.params:
        if not isinstance(param.type, click.types.StringParamType):
            continue
        for value in _text_values(ctx.params.get(param.name)):
            if is_undecodable(value):
                raise click.BadParameter(
                    f"'{shown(value)}' is not UTF-8 text (each \\xNN is a byte that is not)",
                    ctx=ctx, param=param)


class _Checks(click.Command):
    """Checks its text parameters once click has read them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        check_text_parameters(ctx)
        return rest


class _GroupChecks(_Checks, click.Group):
    """Checks its own text parameters and hands out its subcommands checked."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        return name, None if command is None else checked(command), rest


@functools.cache
def _checked_class(base: type[click.Command]) -> type[click.Command]:
    """``base`` with the checks (made once per class)."""
    mixin = _GroupChecks if issubclass(base, click.Group) else _Checks
    return type(f"Checked{base.__name__}", (mixin, base), {})


def checked(command: click.Command) -> click.Command:
    """``command`` as a copy whose text parameters, and its subcommands', must be UTF-8: the
    same for a command defined elsewhere (loaded lazily, a plugin) as for one of ours, without
    a change where it is defined."""
    if isinstance(command, _Checks):
        return command
    copied = copy.copy(command)
    copied.__class__ = _checked_class(type(command))
    return copied


class CheckedGroup(_GroupChecks):
    """A group whose own text parameters, and those of every command and group below it
    (however they are defined), must be UTF-8."""
