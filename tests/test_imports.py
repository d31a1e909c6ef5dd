"""The dependency rule, read off the source: experiments → noisecbr_apps → training → casebase →
noisecbr, never upward; no import cycle between the project's modules; the engine (noisecbr)
imports no application library.

Every import statement counts, also one inside a function (a lazy import is still a dependency),
and so does ``importlib.import_module`` of a constant name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Each package's layer: a module may import its own layer and those below it.
LAYERS = {"noisecbr": 0, "casebase": 1, "training": 2, "noisecbr_apps": 3, "experiments": 4}
#: What the engine may import besides the standard library: lxml, numpy, safetensors, the
#: parsing helpers (html5lib, charset-normalizer), threadpoolctl (numpy's BLAS threads) and
#: lxml_html_clean (the output HTML's sanitiser), htmldate and dateutil (a page's date);
#: webencodings (html5lib's: the WHATWG names of an HTTP charset), httpx and protego (the
#: public API's fetch_and_clean: noisecbr.web.fetch, imported only when a URL is fetched); usp,
#: feedparser and courlan (noisecbr.web.discover's sitemaps, feeds and URL keys: the extra "web").
ENGINE_LIBRARIES = {"lxml", "numpy", "safetensors", "html5lib", "charset_normalizer",
                    "threadpoolctl", "lxml_html_clean", "htmldate", "dateutil", "webencodings",
                    "httpx", "protego", "usp", "feedparser", "courlan"}
#: Application libraries: the engine must import none of them.
APPLICATION_LIBRARIES = {"click", "tqdm", "fastapi", "uvicorn", "starlette", "pebble", "pyspark",
                         "fastwarc", "pyarrow", "datatrove", "sqlalchemy", "alembic", "torch",
                         "matplotlib", "sklearn", "trafilatura", "readability", "justext",
                         "resiliparse", "boilerpy3", "platformdirs"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    # Cython modules (the compiled kernel, noisecbr/native/_kernel.pyx) are modules of the project
    # too.
    return {_module_name(path): path for package in LAYERS for pattern in ("*.py", "*.pyx")
            for path in sorted((ROOT / package).rglob(pattern))}


def _source(path: Path) -> str:
    """The module's Python source; of a Cython module, its one-line Python-level imports (the
    rest is not Python, and a cimport reads C declarations, not a module)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".pyx":
        return text
    # The topic files it includes are its text too.
    text += "".join("\n" + (path.parent / name).read_text(encoding="utf-8")
                    for name in re.findall(r'^include "([^"]+)"', text, re.M))
    return "\n".join(line for line in text.splitlines()
                     if line.startswith(("import ", "from ")) and " cimport " not in line)


def _imported(name: str, path: Path, node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The project modules one import node names (a name imported from a package counts as
    its submodule when there is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            base = ".".join(package[:len(package) - node.level + 1]
                            + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        subs = [f"{base}.{alias.name}" for alias in node.names]
        return [sub for sub in subs if sub in known] or [base]
    if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant)):
        return [str(node.args[0].value)]
    return []


def _graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(_source(path))):
            for target in _imported(name, path, node, known):
                # "import a.b.c" names a module inside the project or outside it.
                while target and target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    edges.add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules in order, the first repeated at the end), or None;
    an iterative depth-first search, so that no recursion limit matters."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(step) == 1:
                return path[path.index(step):] + [step]
            elif step not in state:
                state[step] = 1
                path.append(step)
                stack.append(iter(sorted(graph[step])))
    return None


def test_no_module_imports_a_higher_package():
    upward = sorted(f"{name} imports {target}" for name, targets in _graph().items()
                    for target in targets
                    if LAYERS[target.split(".")[0]] > LAYERS[name.split(".")[0]])
    assert upward == []


def test_no_import_cycle():
    assert _cycle(_graph()) is None


def test_the_checks_can_fail():
    # The walk sees a lazy upward import, and the search finds a cycle.
    tree = ast.parse("def f():\n    from casebase.store import CaseBase\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    known = _modules()
    assert _imported("noisecbr.cleaner", ROOT / "noisecbr" / "cleaner.py", node, known) == [
        "casebase.store"]
    relative = ast.parse("from .store import CaseBase").body[0]
    assert _imported("casebase.pages", ROOT / "casebase" / "pages.py", relative, known) == [
        "casebase.store"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_importing_the_cleaner_loads_neither_torch_nor_the_case_base():
    import subprocess
    import sys

    code = ("import sys, noisecbr, noisecbr_apps.cli, noisecbr_apps.bench; "
            "bad = [m for m in ('casebase', 'training', 'torch', 'sqlalchemy') "
            "if m in sys.modules]; assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_every_command_loads():
    # Each subcommand imported on demand (noisecbr_apps.cli._LAZY) exists: a renamed function
    # would otherwise surface only when a user runs the command.
    import click

    from noisecbr_apps import cli

    assert set(cli._LAZY) == {"train", "runs", "serve", "spark"}
    for name in cli._LAZY:
        assert isinstance(cli._lazy_command(name), click.Command), name
    assert {"clean", "bench", *cli._LAZY} <= set(cli.main.list_commands(click.Context(cli.main)))


def test_bench_cv_without_torch_says_what_to_install(monkeypatch):
    # noisecbr installed without torch: bench --cv says what is missing.
    import sys

    import pytest

    from noisecbr_apps import bench

    monkeypatch.setitem(sys.modules, "training.crossval", None)  # import raises ImportError
    with pytest.raises(bench.BenchUsageError, match="cv trains fold models.*torch"):
        bench.cv_models([], folds=2, seed=0, progress=False)


def _third_party_imports(package: str) -> dict[str, set[str]]:
    """The top-level names of the modules outside the project that each module of
    ``package`` imports (inside functions too)."""
    known = _modules()
    out: dict[str, set[str]] = {}
    for name, path in known.items():
        if name.split(".")[0] != package:
            continue
        for node in ast.walk(ast.parse(_source(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for imported in names:
                top = imported.split(".")[0]
                if top and top not in LAYERS:
                    out.setdefault(top, set()).add(name)
    return out


def test_the_engine_imports_no_application_library():
    import sys

    imported = _third_party_imports("noisecbr")
    outside = {top: sorted(where) for top, where in imported.items()
               if top not in ENGINE_LIBRARIES and top not in sys.stdlib_module_names}
    assert outside == {}
    assert "lxml" in imported and "numpy" in imported  # the check reads the imports it names
    assert not APPLICATION_LIBRARIES & set(imported)
    # The check can fail: the applications import what the engine must not.
    assert {"click", "fastapi"} <= set(_third_party_imports("noisecbr_apps"))


def test_cleaning_loads_no_application_library():
    import subprocess
    import sys

    code = ("import sys, noisecbr; noisecbr.clean(open('examples/tide-pools.html', 'rb').read()); "
            f"bad = sorted(m for m in {sorted(APPLICATION_LIBRARIES)!r} if m in sys.modules); "
            "assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_every_package_and_data_file_is_installed():
    # A non-editable install (the README's first command, .ci/run) has only the packages
    # pyproject.toml lists and the package data it names: a package or a data file missed
    # there works in the editable checkout and fails in the installed one.
    import tomllib
    from fnmatch import fnmatch

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(config["setuptools"]["packages"])
    # experiments/ runs from a checkout: it is not installed.
    found = {".".join(path.parent.relative_to(ROOT).parts)
             for package in LAYERS if package != "experiments"
             for path in (ROOT / package).rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
    patterns = config["setuptools"]["package-data"]["noisecbr.data"]
    data = [path.name for path in (ROOT / "noisecbr" / "data").iterdir()
            if path.suffix not in (".py", ".pyc") and path.is_file()]
    assert data and all(any(fnmatch(name, p) for p in patterns) for name in data), data
