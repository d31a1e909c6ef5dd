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
