"""The house rules a reader can check by eye, checked by machine: small functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The longest function the style allows, counted from its ``def`` line to its last line
#: (a click command's option decorators are declarations, not body, and are not counted).
MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method of ``source`` longer than ``limit`` lines."""
    return [(node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > limit]


#: A Cython function's first line: ``def``, ``cdef`` or ``cpdef``, a return type, a name and
#: its opening parenthesis (not a ``cdef class``, ``enum``, ``extern`` block or a variable).
_CYTHON_DEF = re.compile(r"^(\s*)c?p?def\s+(?!class\b|enum\b|extern\b|struct\b)[^=(#]*\(")


def long_cython_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(first line, lines) of every function of the Cython ``source`` longer than ``limit``
    lines: from its ``def`` line to its last line indented deeper (blank and comment lines
    after it are not counted)."""
    lines = source.splitlines()
    found = []
    for start, line in enumerate(lines):
        match = _CYTHON_DEF.match(line)
        if match is None:
            continue
        indent, last = len(match.group(1)), start
        for k in range(start + 1, len(lines)):
            text = lines[k]
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            if len(text) - len(text.lstrip()) <= indent:
                break
            last = k
        if last - start + 1 > limit:
            found.append((line.strip(), last - start + 1))
    return found


def _cython_files() -> list[Path]:
    """The kernel's Cython sources: its module and the topic files it includes."""
    return sorted(p for pattern in ("*.pyx", "*.pxi") for p in (ROOT / "noisecbr").rglob(pattern))


#: The engine's shape (issue 40): a module of the engine, a Cython file of its kernel, the
#: modules at the top of the package (the public API, the pipeline, settings, errors).
MAX_MODULE_LINES = 450
MAX_CYTHON_LINES = 800
MAX_TOP_MODULES = 10


def test_the_engine_is_small_modules_in_stage_folders():
    engine = ROOT / "noisecbr"
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in sorted(engine.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    long += [f"{p.relative_to(ROOT)} ({n} lines)" for p in _cython_files()
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_CYTHON_LINES]
    assert long == []
    top = sorted(p.name for p in engine.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_the_libraries_above_the_engine_are_small_modules_too():
    # The case base and the training are libraries like the engine; their ``cli`` modules are
    # command-line applications (a click group of commands) and stand with noisecbr_apps.
    long = [f"{p.relative_to(ROOT)} ({n} lines)"
            for package in ("casebase", "training") for p in sorted((ROOT / package).rglob("*.py"))
            if p.name != "cli.py"
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert long == []


def test_no_package_function_is_longer_than_80_lines():
    found = [f"{path.relative_to(ROOT)}: {name} ({lines} lines)"
             for package in ("noisecbr", "casebase", "training", "noisecbr_apps")
             for path in sorted((ROOT / package).rglob("*.py"))
             for name, lines in long_functions(path.read_text(encoding="utf-8"))]
    found += [f"{path.relative_to(ROOT)}: {name} ({lines} lines)"
              for path in _cython_files()
              for name, lines in long_cython_functions(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_length_check_can_fail():
    body = "\n".join(f"    x{k} = {k}" for k in range(80))
    assert long_functions(f"def f():\n{body}\n") == [("f", 81)]
    method = "\n".join("    " + line for line in f"def m(self):\n{body}".splitlines())
    assert long_functions(f"class C:\n{method}\n") == [("m", 81)]
    assert long_functions("def g():\n    return 1\n") == []
    cython = f"cdef long long[:, ::1] f(int x):\n{body}\n    # a comment\n\ncdef int y = 0\n"
    assert long_cython_functions(cython) == [("cdef long long[:, ::1] f(int x):", 81)]
    assert long_cython_functions("cdef class C:\n" + body + "\n") == []


def undocumented(source: str) -> list[str]:
    """The public functions, classes and methods (of public classes) of ``source`` that have
    no docstring."""
    missing: list[str] = []

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and not node.name.startswith("_")):
                if ast.get_docstring(node) is None:
                    missing.append(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return missing


def test_every_public_definition_has_a_docstring():
    # Migrations are Alembic's upgrade/downgrade pairs, described by their module docstring.
    found = [f"{path.relative_to(ROOT)}: {name}"
             for package in ("noisecbr", "casebase", "training")
             for path in sorted((ROOT / package).rglob("*.py"))
             if "versions" not in path.parts
             for name in undocumented(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_docstring_check_can_fail():
    source = 'def f():\n    """Doc."""\n\ndef g():\n    pass\n\nclass C:\n    def m(self):\n' \
             '        pass\n    def _private(self):\n        pass\n'
    assert undocumented(source) == ["g", "C", "C.m"]
