"""One error root: every exception class the packages define publicly derives from
noisecbr.NoisecbrError, so that a caller can tell the user's problem (bad input, a bad model
file, an unusable case base, a refused job) from a programming error in one ``except``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import noisecbr

PACKAGES = ("noisecbr", "casebase", "training", "noisecbr_apps")


def _modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    return [package] + [info.name for info in pkgutil.walk_packages(root.__path__, f"{package}.")
                        if ".migrations" not in info.name]


def public_errors(package: str) -> list[type]:
    """The exception classes defined (not imported) by the package's modules, without a leading
    underscore."""
    found = []
    for name in _modules(package):
        try:
            module = importlib.import_module(name)
        except ImportError as error:  # an extra that is not installed: its module is not here
            pytest.skip(f"{name} cannot be imported here ({error})")
        found += [cls for cls_name, cls in vars(module).items()
                  if inspect.isclass(cls) and issubclass(cls, BaseException)
                  and cls.__module__ == name and not cls_name.startswith("_")]
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_error_derives_from_the_root(package):
    errors = public_errors(package)
    assert [cls.__qualname__ for cls in errors if not issubclass(cls, noisecbr.NoisecbrError)] \
        == []


def test_the_engine_has_errors_to_check():
    assert {cls.__name__ for cls in public_errors("noisecbr")} >= {
        "NoisecbrError", "InputError", "ModelError", "SchemaMismatchError", "MemorySourceError"}


def test_input_and_model_errors_stay_value_errors():
    # Callers that caught ValueError before the root existed still catch them.
    assert issubclass(noisecbr.InputError, ValueError)
    assert issubclass(noisecbr.ModelError, ValueError)
