"""Builds the compiled kernel, noisecbr.native._kernel (Cython over lxml's C API: the element
table in one C pass); everything else is declared in pyproject.toml.

The extension is optional: where it cannot be compiled (no C compiler or Python headers) the
install goes on with a warning and noisecbr runs its pure Python path, slower but with the same
output. ``noisecbr.native.backend.BACKEND.name`` says which one is in use (CI's tests insist on
"compiled")."""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("noisecbr.native._kernel", ["noisecbr/native/_kernel.pyx"],
               include_dirs=lxml.get_include(), optional=True)],
    compiler_directives={"language_level": 3},
))
