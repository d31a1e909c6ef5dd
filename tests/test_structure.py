"""The structure measure of the bench: code lines and table rows kept intact."""

from __future__ import annotations

import gzip
import json

from click.testing import CliRunner

from noisecbr_apps.cli import main
from noisecbr_apps.structure import page_structure, structure_counts

PAGE = """<html><body><pre>def f():
    return 1</pre>
<table><tr><th>Port</th><th>Low</th></tr><tr><td>Brest</td><td>06:12</td></tr>
<tr><td>only one cell</td></tr></table></body></html>"""


def test_code_lines_and_rows_kept_and_intact():
    structure = page_structure(PAGE)
    assert structure.code_lines == ("def f():", "    return 1")
    assert structure.rows == (("Port", "Low"), ("Brest", "06:12"))  # a row of one cell: no row
    intact = structure_counts(structure, "def f():\n    return 1\n\nPort\tLow\nBrest | 06:12")
    assert (intact.code_kept, intact.code_intact, intact.rows_kept, intact.rows_intact) == (
        2, 2, 2, 2)
    flat = structure_counts(structure, "def f(): return 1 Port Low Brest 06:12")
    assert (flat.code_kept, flat.code_intact, flat.rows_kept, flat.rows_intact) == (2, 0, 2, 2)
    broken = structure_counts(structure, "def f():\nreturn 1\nPort\nLow\n06:12 Brest")
    assert (broken.code_kept, broken.code_intact, broken.rows_kept, broken.rows_intact) == (
        2, 1, 2, 0)
    assert structure_counts(structure, "nothing of it").code_kept == 0
    # A page that is not a page has no structure (the extractors' failures are counted apart).
    assert page_structure(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).rows == ()


def test_bench_prints_the_structure_of_every_row(tmp_path):
    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    (data / "html" / "1.html.gz").write_bytes(gzip.compress(PAGE.encode()))
    (data / "ground-truth.json").write_text(json.dumps({"1": {"url": "", "articleBody":
                                                              "def f(): return 1"}}))
    result = CliRunner().invoke(main, ["bench", str(data), "-e", "noisecbr", "-e", "none",
                                       "--structure"])
    assert result.exit_code == 0, result.output
    table = result.output.split("Structure kept:")[1]
    assert "code lines intact" in table and "none" in table and "noisecbr" in table
