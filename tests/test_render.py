from lxml import html as lxml_html

from noisecbr.render import render_html, render_text
from noisecbr.tidy import tidy


def test_blocks_lines_and_whitespace():
    body = tidy("<body><h1>Title</h1><p>First   para\n graph.</p><ul><li>one</li><li>two</li>"
                "</ul><p>a<b>b</b>c <br>next line</p><table><tr><td>x</td><td>y</td></tr>"
                "</table></body>")
    assert render_text(body) == ("Title\n\nFirst para graph.\n\none\ntwo\n\nabc\nnext line"
                                 "\n\nx y")


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
