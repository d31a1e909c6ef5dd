"""benchmarks/readme_figures.py: the README's tables are the bench's output, between markers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("readme_figures",
                                                  ROOT / "benchmarks" / "readme_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


ROWS = [
    {"extractor": "trafilatura", "precision": "0.7", "recall": "0.8", "f1": "0.7467",
     "f1_ci95": "0.02", "word_f1": "0.7512", "docs_per_s": "17.12", "failures": "0"},
    {"extractor": "noisecbr (cv 5)", "precision": "0.8", "recall": "0.9", "f1": "0.8471",
     "f1_ci95": "0.01", "word_f1": "0.8503", "docs_per_s": "68.5", "failures": "0"},
]


def test_a_table_is_rendered_sorted_with_its_command_and_day():
    figures = _script()
    figure = figures.FIGURES["modernweb"]
    block = figures.render(figure, ROWS, 790, "2026-11-23")
    lines = block.splitlines()
    assert lines[0].startswith("`noisecbr bench ../shared/data/modernweb-dev --fold-models "
                               "runs/recipe-folds -e noisecbr")
    assert lines[0].endswith("measured 2026-11-23:")
    assert lines[2] == "| modernweb-dev (790 pages) | P | R | F1 | ± | word F1 | docs/s |"
    assert lines[4] == ("| **noisecbr (cv 5)** | 0.800 | 0.900 | **0.847** | 0.010 | 0.850 | "
                        "68.5 |")
    assert lines[5] == "| trafilatura | 0.700 | 0.800 | 0.747 | 0.020 | 0.751 | 17.1 |"


def test_the_oracle_row_comes_last_and_is_never_the_best():
    figures = _script()
    oracle = {"extractor": "oracle: best row per page", "precision": "0.9", "recall": "0.95",
              "f1": "0.9243", "f1_ci95": "0.01", "word_f1": "0.93", "docs_per_s": "",
              "failures": "0"}
    lines = figures.render(figures.FIGURES["modernweb"], [oracle, *ROWS], 790,
                           "2026-11-23").splitlines()
    assert lines[4].startswith("| **noisecbr (cv 5)** |")
    assert lines[6] == ("| *oracle: best row per page* | 0.900 | 0.950 | *0.924* | 0.010 | "
                        "0.930 | – |")


def test_only_the_blocks_change_and_every_table_has_one_in_the_results():
    figures = _script()
    readme = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    tables = {name: f"new {name}\n" for name in figures.FIGURES}
    rewritten = figures.replace_blocks(readme, tables)
    for name in figures.FIGURES:
        assert f"<!-- figures:{name} -->\nnew {name}\n<!-- /figures -->" in rewritten
    outside = figures._BLOCK.sub("", readme)
    assert figures._BLOCK.sub("", rewritten) == outside
    with pytest.raises(KeyError, match="nowhere"):
        figures.replace_blocks(readme, {"nowhere": "x\n"})


def test_the_tables_show_the_commands_that_regenerate_them():
    figures = _script()
    readme = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    for name, figure in figures.FIGURES.items():
        body = next(m["body"] for m in figures._BLOCK.finditer(readme) if m["name"] == name)
        command = " ".join(["noisecbr", *figure.arguments(figures.SHOWN_DATA)])
        assert body.startswith(f"`{command}`, measured ")


def test_a_bench_run_becomes_a_table(tmp_path):
    data = SHARED_DATA / "cleaneval-dev"
    if not (data / "ground-truth.json").is_file():
        pytest.skip(f"development data not found at {data} (set NOISECBR_SHARED_DATA)")
    figures = _script()
    figure = figures.Figure("cleaneval-dev", ("--limit", "4", "-e", "noisecbr", "-e", "none"))
    rows, pages, _ = figures.measure(figure, SHARED_DATA)
    assert pages == 4 and {row["extractor"] for row in rows} == {"noisecbr", "none"}
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- figures:quick -->\nold\n<!-- /figures -->\nend\n")
    readme.write_text(figures.replace_blocks(readme.read_text(), {
        "quick": figures.render(figure, rows, pages, "2026-11-23")}))
    text = readme.read_text()
    assert "old" not in text and "| cleaneval-dev (4 pages) |" in text and text.endswith("end\n")


def test_the_readme_summary_takes_a_row_of_each_table():
    figures = _script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- figures:summary -->" in readme
    rows = [{"extractor": "noisecbr (recipe folds)", "precision": "0.95", "recall": "0.97",
             "f1": "0.96", "f1_ci95": "0.01", "docs_per_s": "300.4", "failures": "0"},
            {"extractor": "noisecbr (recipe folds) precision", "precision": "0.99",
             "recall": "0.5", "f1": "0.66", "f1_ci95": "0.01", "docs_per_s": "290",
             "failures": "0"},
            {"extractor": "trafilatura", "precision": "0.93", "recall": "0.97", "f1": "0.95",
             "f1_ci95": "0.01", "docs_per_s": "40.2", "failures": "0"}]
    row = figures.summary_row("fundus", rows, 176)
    assert row == "| fundus (176) | **0.960 (0.950)** | 0.950 (0.930) | – | 300 / 40 |"
    block = "<!-- figures:summary -->\nold\n| chinese-wce (69) | a | b | c | d |\n<!-- /figures -->"
    out = figures.replace_summary(f"intro\n{block}\nend\n", {"fundus": row}, "2026-11-25")
    lines = out.splitlines()
    assert lines[0] == "intro" and lines[-1] == "end" and "old" not in out
    assert lines[-4] == row and lines[-3].startswith("| chinese-wce (69)")  # in the sets' order
    assert "Measured 2026-11-25" in out


def test_a_table_by_page_type_becomes_markdown():
    figures = _script()
    stdout = ("x: 3 pages\n\nF1 by page type:\npage type        pages noisecbr (recipe folds) "
              "trafilatura\n" + "-" * 58 + "\narticle            360                   0.939"
              "       0.950\n(none)               2                   0.800       0.700\n")
    rows = [{"extractor": "noisecbr (recipe folds)"}, {"extractor": "trafilatura"}]
    assert figures.grouped(stdout, rows).splitlines()[1:] == [
        "F1 by page type:", "", "| page type | pages | noisecbr (recipe folds) | trafilatura |",
        "|---|---|---|---|", "| article | 360 | 0.939 | 0.950 |", "| (none) | 2 | 0.800 | 0.700 |"]
    assert figures.grouped("x: 3 pages\n", rows) == ""
