"""The choice between the compiled kernel and the pure Python path of the element table.

``pip install`` builds :mod:`noisecbr._kernel` (Cython over lxml's C API). It is used unless

* ``NOISECBR_PURE_PYTHON=1`` is set (to compare the two, or to rule the kernel out),
* it cannot be imported (no compiler at install time, or an lxml whose ``_Element`` layout
  differs from the one it was compiled against: Cython refuses such a type at import), or
* on a small page made at import time its table differs from the pure Python reference's
  (whatever else in the lxml or libxml2 at run time makes it read the nodes differently):
  then a warning says so and the pure path is used, slower but right.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
from lxml import etree

__all__ = ["PURE_PYTHON_ENV", "differences", "load"]

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
    except (ImportError, ValueError):  # not built, or built against an incompatible lxml
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
