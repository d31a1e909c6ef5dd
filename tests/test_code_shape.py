"""The house rules a reader can check by eye, checked by machine: small functions."""

from __future__ import annotations

import ast
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


def test_no_package_function_is_longer_than_80_lines():
    found = [f"{path.relative_to(ROOT)}: {name} ({lines} lines)"
             for package in ("noisecbr", "casebase", "training")
             for path in sorted((ROOT / package).rglob("*.py"))
             for name, lines in long_functions(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_length_check_can_fail():
    body = "\n".join(f"    x{k} = {k}" for k in range(80))
    assert long_functions(f"def f():\n{body}\n") == [("f", 81)]
    method = "\n".join("    " + line for line in f"def m(self):\n{body}".splitlines())
    assert long_functions(f"class C:\n{method}\n") == [("m", 81)]
    assert long_functions("def g():\n    return 1\n") == []


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
