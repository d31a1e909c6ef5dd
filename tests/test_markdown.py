"""Markdown output: the exact Markdown of a fixture page (headings of three levels, nested and
ordered lists, a table with its header, fenced code with its language and indentation, inline
code, a quote, emphasis, a link and an image with and without being asked for), through the API,
the CLI and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import noisecbr
from noisecbr.cli import main
from noisecbr.markdown import render_markdown
from noisecbr.tidy import tidy

FIXTURES = Path(__file__).parent / "fixtures" / "markdown"
PAGE = (FIXTURES / "structure.html").read_bytes()
BASE = "https://tides.test/learn/tables"


def test_the_fixture_page_gives_its_exact_markdown():
    plain = (FIXTURES / "structure.md").read_text().rstrip("\n")
    assert render_markdown(tidy(PAGE)) == plain
    assert "[the guide]" not in plain and "![" not in plain  # not asked for: their text only
    assert "see the guide." in plain
    rich = (FIXTURES / "structure-links-images.md").read_text().rstrip("\n")
    assert render_markdown(tidy(PAGE), links=True, images=True, base_url=BASE) == rich
    assert "[the guide](https://tides.test/guide/tables)" in rich
    assert "![A tide chart](https://tides.test/learn/img/chart.png)" in rich
    for line in ("# Working with tide tables", "## Before you go", "### Ports",
                 "  - the coefficient", "    1. under 70: small", "2. Pack a map",
                 "| Port | Low water |", "| --- | --- |", "| Roscoff \\| Bloscon | 06:40 |",
                 "```python", "        if row.kind == \"low\":", "> Nor should you.",
                 "`tides --port brest`", "*high*", "**low**", "someone\\_else"):
        assert line in plain.split("\n") or line in plain, line


def test_a_removed_subtree_is_not_in_the_markdown_and_deep_pages_render():
    body = tidy(PAGE)
    removed = set(body.iterfind(".//table")) | set(body.iterfind(".//blockquote"))
    written = render_markdown(body, removed)
    assert "| Port" not in written and "> The sea" not in written and "### Ports" in written
    deep = "<html><body>" + "<div>" * 1_400 + "<p>deep <em>words</em></p>" + "</div>" * 1_400
    assert render_markdown(tidy(deep + "</body></html>")) == "deep *words*"


def test_the_result_the_cli_and_json_give_markdown(tmp_path):
    page = (Path(__file__).resolve().parents[1] / "examples" / "tide-pools.html").read_bytes()
    result = noisecbr.clean(page, url="https://coast.test/pools")
    assert "## What you will find" in result.markdown
    assert "- Beadlet anemones in deep red and green" in result.markdown
    assert json.loads(result.to_json())["markdown"] == result.markdown
    source = tmp_path / "tide-pools.html"
    source.write_bytes(page)
    out = CliRunner().invoke(main, ["clean", str(source), "-f", "markdown"])
    assert out.exit_code == 0 and out.output == result.markdown + "\n"
    other = tmp_path / "b.html"
    other.write_bytes(page)
    written = tmp_path / "out"
    batch = CliRunner().invoke(main, ["clean", str(source), str(other), "-o", str(written),
                                      "-f", "markdown", "--links", "-q"])
    assert batch.exit_code == 0
    assert sorted(p.name for p in written.iterdir()) == ["b.md", "tide-pools.md"]
    refused = CliRunner().invoke(main, ["clean", str(source), "--images"])
    assert refused.exit_code == 2 and "give -f markdown" in refused.output
