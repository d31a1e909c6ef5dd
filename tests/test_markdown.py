"""Markdown output: the exact Markdown of a fixture page (headings of three levels, nested and
ordered lists, a table with its header, fenced code with its language and indentation, inline
code, a quote, emphasis, a link and an image with and without being asked for), through the API,
the CLI and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import noisecbr
from noisecbr.prepare.tidy import tidy
from noisecbr.render.markdown import render_markdown
from noisecbr_apps.cli import main

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


def _md(html: str, **options) -> str:
    return render_markdown(tidy(f"<html><body>{html}</body></html>"), **options)


def test_links_and_text_cannot_run_anything():
    page = ('<p><a href="JavaScript:alert(1)">a</a> <a href=" javascript:x">b</a> '
            '<a href="vbscript:x">c</a> <a href="/ok">d</a> [x](javascript:alert(1)) '
            '&lt;script&gt;</p><img src="data:image/png;base64,AA" alt="e">'
            '<img src="/i.png" alt="f">')
    written = _md(page, links=True, images=True, base_url="https://e.test/p")
    assert written == ("a b c [d](https://e.test/ok) \\[x\\](javascript:alert(1)) \\<script>"
                       "\n\n![f](https://e.test/i.png)")


def test_lists_tables_and_code_in_their_places():
    assert _md("<menu><li>one</li><li>two</li></menu><li>stray</li>") == "- one\n- two\n\nstray"
    assert _md('<ol start="5"><li>five</li><li>six</li></ol>') == "5. five\n6. six"
    assert _md("<ol><li>x<pre>def f():\n    if x:\n        return 1</pre></li></ol>") == (
        "1. x\n   ```\n   def f():\n       if x:\n           return 1\n   ```")
    # A layout table (a cell of blocks, or one column) is its cells' blocks, not a pipe table.
    assert _md("<table><tr><td><h2>Title</h2><p>one.</p><p>two.</p></td></tr></table>") == (
        "## Title\n\none.\n\ntwo.")
    assert _md("<table><tr><td>a</td></tr><tr><td>b</td></tr></table>") == "a\n\nb"
    assert _md("<p><code>a``x</code> and <code>`tick</code></p>") == "```a``x``` and `` `tick ``"


def test_a_line_break_stays_a_line_break():
    from noisecbr.prepare.tidy import tidy
    from noisecbr.render.markdown import render_markdown

    body = tidy("<body><p>The setup:<br>one box<br> two cables</p><ul><li>first<br>second"
                "</li></ul><table><tr><th>a</th><th>b</th></tr><tr><td>1<br>2</td><td>3</td>"
                "</tr></table></body>")
    written = render_markdown(body)
    # CommonMark's hard break: without it the lines render as one run of text.
    assert "The setup:\\\none box\\\ntwo cables" in written
    assert "- first\\\n  second" in written


def test_a_table_keeps_its_own_header_and_gets_an_empty_one_when_it_has_none():
    from noisecbr.prepare.tidy import tidy
    from noisecbr.render.markdown import render_markdown

    headed = render_markdown(tidy(
        "<body><table><thead><tr><td>Name</td><td>Size</td></tr></thead>"
        "<tbody><tr><td>A</td><td>1</td></tr></tbody></table></body>"))
    assert headed.splitlines()[:3] == ["| Name | Size |", "| --- | --- |", "| A | 1 |"]
    bare = render_markdown(tidy("<body><table><tr><td>x</td><td>y</td></tr>"
                                "<tr><td>1</td><td>2</td></tr></table></body>"))
    assert bare.splitlines() == ["|  |  |", "| --- | --- |", "| x | y |", "| 1 | 2 |"]


ARTICLE_WORDS = "Words of the article go on about the harbour and its boats. " * 12


def test_links_and_images_are_made_absolute_without_a_url_given():
    from noisecbr import clean

    page = ("<html><head><link rel='canonical' href='https://site.test/blog/post'></head>"
            f"<body><article><p>{ARTICLE_WORDS}<a href='/other'>other</a> <img "
            "src='data:image/gif;base64,R0lGOD' data-src='pics/a.jpg' alt='A boat'></p>"
            "</article></body></html>")
    written = clean(page).to_markdown(links=True, images=True)
    assert "[other](https://site.test/other)" in written  # the canonical link's address
    assert "![A boat](https://site.test/blog/pics/a.jpg)" in written  # the lazy image's source
    based = page.replace("<head>", "<head><base href='https://cdn.test/root/'>")
    assert "[other](https://cdn.test/other)" in clean(based).to_markdown(links=True)
    assert "![A boat](https://site.test/x/pics/a.jpg)" in clean(
        page, url="https://site.test/x/y").to_markdown(images=True)  # a URL given wins


def test_a_tiny_page_keeps_its_text():
    from noisecbr import clean

    assert clean("<p>just a sentence</p>").text == "just a sentence"


def test_definition_lists_and_nested_quotes_keep_their_structure():
    from noisecbr.prepare.tidy import tidy
    from noisecbr.render.markdown import render_markdown

    written = render_markdown(tidy(
        "<body><dl><dt>Neap tide</dt><dd>The smallest range.</dd><dd>Twice a month."
        "<p>Near the quarter moons.</p></dd><dt>Spring tide</dt><dd>The largest.</dd>"
        "<dt>Usage</dt><dd><pre>tides --neap</pre></dd></dl>"
        "<dl><dd>A definition whose term was removed.</dd></dl>"
        "<blockquote><p>Outer</p><blockquote><p>Inner</p></blockquote><p>Out again</p>"
        "</blockquote></body>"))
    # The definition-list syntax of PHP Markdown Extra, Pandoc and markdown-it's deflist.
    assert ("Neap tide\n\n:   The smallest range.\n\n:   Twice a month.\n\n"
            "Near the quarter moons.\n\nSpring tide\n\n:   The largest.") in written
    # A definition that is a code block stays one for every reader (never indented under ":").
    assert "Usage\n\n```\ntides --neap\n```" in written
    assert "\n\nA definition whose term was removed.\n\n" in written  # no term: a paragraph
    assert "> Outer\n>\n> > Inner\n>\n> Out again" in written
    # A term that writes nothing is no term; a definition of two blocks ends the list.
    assert render_markdown(tidy("<body><p>Intro</p><dl><dt><img src='a.png'></dt><dd>Def</dd>"
                                "</dl></body>")) == "Intro\n\nDef"
    assert render_markdown(tidy("<body><dl><dt>T</dt><dd><p>A</p><p>B</p></dd><dd>C</dd></dl>"
                                "</body>")) == "T\n\n:   A\n\nB\n\nC"
