"""The one home of the choice between the compiled kernel and the pure Python path.

``pip install`` builds :mod:`noisecbr.native._kernel` (Cython over lxml's C API). It is used unless

* ``NOISECBR_PURE_PYTHON=1`` is set (to compare the two, or to rule the kernel out),
* it cannot be imported (no compiler at install time, or an lxml whose ``_Element`` layout
  differs from the one it was compiled against: Cython refuses such a type at import), or
* on a small page made at import time its table differs from the pure Python reference's
  (whatever else in the lxml or libxml2 at run time makes it read the nodes differently):
  then a warning says so and the pure path is used, slower but right.

The choice is made once, when this module is imported, and held by :data:`BACKEND`. A module
with a compiled variant defines both functions and binds its public name to
``BACKEND.dispatch(pure, compiled)``: the kernel's when it is in use, else the pure one; no
module tests for the kernel itself. Each pair is registered where it is bound
(:attr:`Backend.twins`), and ``with BACKEND.recording():`` keeps the arguments each is called
with, so that tests/test_twins.py calls both functions of every pair on the same pages.
``with BACKEND.pure():`` runs the pure path in-process; ``BACKEND.verified(name, check)`` gives a
kernel function only if it passes a module's own check (the text walk's, on a page of its own).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import os
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
from lxml import etree

from ..prepare.fields import python_fields

__all__ = ["BACKEND", "PURE_PYTHON_ENV", "RECORDED_CALLS", "Backend", "Twin", "differences", "load"]

F = TypeVar("F", bound=Callable[..., Any])

#: Set to 1 to use the pure Python path even where the kernel is built.
PURE_PYTHON_ENV = "NOISECBR_PURE_PYTHON"

#: The import-time check's page: nesting, tails, a link, attributes (one without a value),
#: whitespace-only text (ASCII and NBSP), punctuation, non-ASCII and non-BMP characters, a
#: comment between texts, a namespaced SVG element.
_CHECK_PAGE = """<html><body><div class="nav menu" id="top" role="navigation">
  <a href="/">Home</a> | <a href="/x" aria-label="Next page">Nächste_Seite 2</a></div>
  <p hidden class="">Some text, with punctuation: yes! Über 10 €.<!-- c --> after</p>
  <p>\u00a0</p><p>tail-less <b>bold</b>\u3000words \U0001f600 x_1</p>
  <svg xmlns="http://www.w3.org/2000/svg"><foreignObject>f</foreignObject></svg></body></html>"""


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The names of the fields whose values differ between two tables' field dicts (or two
    ElementTables): arrays by dtype and values, lists by ``==``."""
    if dataclasses.is_dataclass(a):  # the fields (not what properties cached)
        a, b = ({field.name: getattr(table, field.name) for field in dataclasses.fields(table)}
                for table in (a, b))
    out = []
    for name in sorted(a.keys() | b.keys()):
        x, y = a.get(name), b.get(name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            same = (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                    and x.dtype == y.dtype and np.array_equal(x, y))
        else:
            same = x == y
        if not same:
            out.append(name)
    return out


def load(reference: Callable[[list[etree._Element]], dict[str, Any]]) -> ModuleType | None:
    """The compiled kernel module, or None when the pure Python path is to be used; the kernel
    must give the same fields as ``reference`` on a small page."""
    if os.environ.get(PURE_PYTHON_ENV) == "1":
        return None
    try:
        from . import _kernel
    except (ImportError, ValueError) as error:  # not built, or built for another lxml
        # Once per process (the choice is made once): a user who has no compiler, or who
        # imports the package from a checkout's root after `pip install .` (the sources, not
        # the installed build), gets the same output several times slower, and should know.
        warnings.warn(f"noisecbr's compiled kernel is not in use ({error}): the pure Python "
                      f"path gives the same output, several times slower. Install noisecbr "
                      f"where a C compiler is (pip install .), and import it from outside the "
                      f"source checkout; {PURE_PYTHON_ENV}=1 chooses the pure path without "
                      f"this warning.", RuntimeWarning, stacklevel=2)
        return None
    body = etree.HTML(_CHECK_PAGE).find("body")
    elements = list(body.iter(etree.Element, etree.Entity))
    try:
        differ = differences(_kernel.fill_table(elements), reference(elements))
    except Exception as error:  # noqa: BLE001 (any failure of the kernel means: don't use it)
        differ = [f"{type(error).__name__}: {error}"]
    if differ:
        warnings.warn(f"noisecbr's compiled kernel disagrees with the pure Python path under "
                      f"lxml {etree.__version__} ({', '.join(differ)}): using the pure Python "
                      f"path", RuntimeWarning, stacklevel=2)
        return None
    return _kernel


#: Calls of each dispatched function :meth:`Backend.recording` keeps (a page calls most once).
RECORDED_CALLS = 20


@dataclasses.dataclass(frozen=True)
class Twin:
    """A function of the engine in its two versions: the pure Python reference and the
    kernel's (registered where the engine binds them, by :meth:`Backend.dispatch`)."""

    name: str
    pure: Callable[..., Any]
    compiled: Callable[..., Any]


def _copied(value: Any, trees: bool = False) -> Any:
    """``value`` with its arrays and lists copied (what a function may fill in place) and, with
    ``trees``, an element (an argument itself) copied with its subtree (tidying goes on to
    remove what a recorded call found in it); other objects (tables, the elements of a list) as
    they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if trees and isinstance(value, etree._Element):
        return copy.deepcopy(value)
    if type(value) in (list, tuple):  # the elements of a list are the page's, not copied
        return type(value)(_copied(v) for v in value)
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    return value


class Backend:
    """Which implementation the engine runs: the compiled kernel (``kernel``, the module) or
    the pure Python path (``kernel`` None)."""

    def __init__(self, kernel: ModuleType | None) -> None:
        self.kernel = kernel
        self._verified: dict[str, Any] = {}
        #: every pure/compiled pair bound by :meth:`dispatch`, by the pure one's qualified name
        self.twins: dict[str, Twin] = {}
        self._recording: dict[str, list[tuple[tuple, dict]]] | None = None

    @property
    def name(self) -> str:
        """``"compiled"`` or ``"python"``."""
        return "python" if self.kernel is None else "compiled"

    def dispatch(self, pure: F, compiled: Callable[..., Any]) -> F:
        """A function that calls ``compiled`` while the kernel is in use, else ``pure`` (the
        reference: its name and docstring are the function's)."""

        name = f"{pure.__module__}.{pure.__qualname__}"
        self.twins[name] = Twin(name, pure, compiled)

        @functools.wraps(pure)
        def chosen(*args: Any, **kwargs: Any) -> Any:
            if self._recording is not None:
                calls = self._recording.setdefault(name, [])
                if len(calls) < RECORDED_CALLS:
                    calls.append((tuple(_copied(a, trees=True) for a in args),
                                  {k: _copied(v, trees=True) for k, v in kwargs.items()}))
            return (pure if self.kernel is None else compiled)(*args, **kwargs)

        return chosen  # type: ignore[return-value]

    @contextlib.contextmanager
    def recording(self) -> Iterator[dict[str, list[tuple[tuple, dict]]]]:
        """Record, inside the block, the arguments of the first :data:`RECORDED_CALLS` calls of
        every dispatched function (arrays copied), by twin name: what the twin test calls both
        functions of each pair with."""
        outer, self._recording = self._recording, {}
        recorded = self._recording
        try:
            yield recorded
        finally:
            self._recording = outer

    def verified(self, name: str, check: Callable[[Any], bool]) -> Any:
        """The kernel's function ``name`` if the kernel is in use, has it and ``check`` passes
        on it (checked once per process), else None."""
        if self.kernel is None:
            return None
        if name not in self._verified:
            function = getattr(self.kernel, name, None)
            self._verified[name] = function if function is not None and check(function) else None
        return self._verified[name]

    @contextlib.contextmanager
    def pure(self) -> Iterator[None]:
        """Run the pure Python path inside the block (the kernel, if any, afterwards). For
        tests and comparisons: the switch is the whole process's, not one thread's."""
        kernel, self.kernel = self.kernel, None
        try:
            yield
        finally:
            self.kernel = kernel


#: The backend of this process, chosen once.
BACKEND = Backend(load(python_fields))
