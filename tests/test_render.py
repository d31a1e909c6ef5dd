import random
import re

import pytest
from lxml import html as lxml_html

from noisecbr.prepare.tidy import tidy
from noisecbr.render import text as render
from noisecbr.render.text import render_html, render_text


def test_blocks_lines_and_whitespace():
    body = tidy("<body><h1>Title</h1><p>First   para\n graph.</p><ul><li>one</li><li>two</li>"
                "</ul><p>a<b>b</b>c <br>next line</p><table><tr><td>x</td><td>y</td></tr>"
                "</table></body>")
    assert render_text(body) == ("Title\n\nFirst para graph.\n\none\ntwo\n\nabc\nnext line"
                                 "\n\nx\ty")


def test_a_tables_rows_are_lines_and_its_cells_tab_separated():
    body = tidy("<body><p>Intro</p><table><tr><th>Port</th><th> Low water </th><td></td></tr>"
                "<tr><td>Brest</td><td></td><td>06:12</td></tr>"
                "<tr><td><p>a cell of blocks</p></td><td>x <b>y</b></td></tr></table>"
                "<p>after</p></body>")
    expected = ("Intro\n\nPort\tLow water\nBrest\t06:12\n\na cell of blocks\n\nx y\n\n"
                "after")
    assert render_text(body) == expected
    assert render._render_in_python(body) == expected  # the compiled walk and the Python one
    assert render._join(list(_parts(body))) == expected


def test_removed_subtree_keeps_its_tail_and_document_order():
    body = tidy("<body><p>alpha <span>beta</span> gamma <span>delta</span> omega</p></body>")
    spans = body.findall(".//span")
    assert render_text(body, {spans[0]}) == "alpha gamma delta omega"


def test_html_reparses():
    body = tidy("<body><div><p>kept</p></div></body>")
    document = render_html(body, title="T")
    reparsed = lxml_html.document_fromstring(document)
    assert reparsed.findtext(".//p") == "kept"
    assert reparsed.findtext(".//title") == "T"


# -- the fast paths give what the plain walk and join give -------------------------------------

MIXED = ("<body>lead <div>one\u00a0two <a>three</a> four<br>five</div>"
         "<ul><li> six </li><li>seven\u200beight</li></ul><table><tr><td>a</td><td>b\u2003c</td>"
         "</tr></table><p>x<span> y </span>z</p>tail <h2>head</h2><!-- c -->after comment"
         "<p>\t</p><section><p>deep <b>bold</b></p></section> end</body>")


def test_other_spaces_are_the_difference_of_the_two_whitespace_definitions():
    expected = {chr(c) for c in range(0x110000)
                if chr(c).isspace() != bool(render._SPACES.fullmatch(chr(c)))}
    assert set(render._OTHER_SPACES) == expected


def test_fast_join_matches_the_part_by_part_join():
    rng = random.Random(0)
    alphabet = ["a", "b", "P", "L", " ", "  ", "\t", "\n", "\xa0", "\u200b", "\u2003", "\x1c",
                "\x85", "x y", " z ", "\x01", "\x02", "\r\n", "\x0c"]
    for _ in range(5000):
        parts = []
        for _ in range(rng.randint(0, 10)):
            r = rng.random()
            if r < 0.25:
                parts.append(render._PARAGRAPH)
            elif r < 0.45:
                parts.append(render._LINE)
            elif r < 0.6:
                parts.append(render._CELL)
            else:
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))))
        assert render._join_fast(parts) == render._join(parts)
    # a NUL inside a text part is left to the part-by-part join
    assert render._join_fast(["a\x00Pb", render._LINE, "c"]) is None


@pytest.mark.parametrize("html", [MIXED, "example"])
def test_render_matches_the_part_by_part_join(html, article_html, monkeypatch):
    body = tidy(article_html if html == "example" else html)
    elements = list(body.iter())
    joined = []
    fast = render._join_fast
    monkeypatch.setattr(render, "_join_fast", lambda parts: joined.append(parts) or fast(parts))
    for step in (10**9, 3, 7):
        removed = set(elements[1::step])
        text = render._render_in_python(body, removed)
        # the fast join was used, and agrees with the loop over the same parts, and with the
        # compiled walk where it is in use
        assert joined and fast(joined[-1]) == render._join(joined[-1]) == text
        assert render_text(body, removed) == text


def test_render_keeps_whitespace_it_does_not_collapse():
    body = tidy("<body><p> a\u2003 b\u200b\u200bc\x0c d </p></body>")
    assert render_text(body) == re.sub(r"[ \u200b\x0c]+", " ", "a\u2003 b\u200b\u200bc\x0c d")


@pytest.mark.parametrize("walk", ["compiled where built", "python"])
def test_render_texts_joins_the_subtrees_texts_as_paragraphs(walk, monkeypatch):
    if walk == "python":
        monkeypatch.setattr(render.BACKEND, "kernel", None)
    body = tidy("<body><div>a <b>b</b></div><p>c</p><ul><li>d</li><li>e</li></ul><span> </span>"
                "<section>f<br>g</section>x</body>")
    roots = list(body)
    expected = "\n\n".join(filter(None, (render_text(root) for root in roots)))
    assert render.render_texts(roots) == expected == "a b\n\nc\n\nd\ne\n\nf\ng"
    assert render.render_texts([]) == ""
    assert render.render_texts(roots[2:3]) == "d\ne"


PRE_PAGE = """<html><body><main><p>Intro   text.</p><pre><code class="language-rust">fn main() {
    // s is not valid here
    let s = "hello";   // s is valid

    println!("{s}");\r
}
</code></pre><p>After <span>the</span>   code.</p><pre>
  indented first line
\ttabbed <b>bold</b> <i class="gone">removed</i>tail</pre></main></body></html>"""


def test_a_code_block_keeps_its_lines_and_indentation():
    body = tidy(PRE_PAGE)
    removed = set(body.iterfind(".//i"))
    assert render_text(body, removed) == (
        "Intro text.\n\n"
        'fn main() {\n    // s is not valid here\n    let s = "hello";   // s is valid\n\n'
        '    println!("{s}");\n}\n\n'
        "After the code.\n\n"
        "  indented first line\n\ttabbed bold tail")
    # render_texts (the comments) and the Python walk give the same.
    assert render.render_texts([body]) == render.render_text(body)
    assert render._render_in_python(body).translate(render._RESTORE) == render_text(body)


def test_a_cleaned_page_keeps_its_code_blocks():
    import noisecbr

    code = "def hello():\n    return 'hi'\n\nprint(hello())"
    page = (f"<html><body><article><h1>How to</h1><p>{'Some words of the article. ' * 12}</p>"
            f"<pre><code>{code}</code></pre><p>{'More words after the code. ' * 12}</p>"
            "</article></body></html>")
    assert code in noisecbr.clean(page).text


def test_a_code_blocks_no_break_spaces_stay_and_a_muted_pre_loses_its_text():
    body = tidy("<body><pre>def f():\n\u00a0\u00a0\u00a0\u00a0return 1</pre></body>")
    assert render_text(body) == "def f():\n\u00a0\u00a0\u00a0\u00a0return 1"
    body = tidy("<body><div><pre>code <b>bold</b> tail</pre>after</div></body>")
    pre = body.find(".//pre")
    assert render_text(body, (), {pre}) == "bold\n\nafter"  # its own text and tails dropped


def _parts(body):
    """The parts the Python walk joins (its marks and texts), for the part-by-part join."""
    walker = lxml_html.etree.iterwalk(body, events=("start", "end"))
    for event, element in walker:
        if event == "start":
            mark = render._START_MARK.get(element.tag)
            if mark:
                yield mark
            if element.text:
                yield element.text
        else:
            mark = render._END_MARK.get(element.tag)
            if mark:
                yield mark
            if element is not body and element.tail:
                yield element.tail
