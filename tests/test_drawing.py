"""The review page's drawing of a page (issue 43, item 2): the page's own decision marks are
refused, and no CSS form loads from elsewhere."""

from __future__ import annotations

import re

from noisecbr.prepare.tidy import tidy
from noisecbr.result import Decision
from noisecbr_apps.service.drawing import DECISION_ATTRIBUTE, LABEL_ATTRIBUTE, draw_page

FOOTER = Decision(path="/html/body/footer", tag="footer", label="noise",
                  probabilities=(1.0, 0.0, 0.0, 0.0), text_length=4)


def test_the_pages_own_decision_marks_are_refused():
    body = tidy(f'<body><div {DECISION_ATTRIBUTE}="0" {LABEL_ATTRIBUTE}="data" '
                f'{DECISION_ATTRIBUTE}-x="1" style="position:fixed;top:0">a box over the '
                'footer</div><p>text</p><footer>foot</footer></body>')
    drawn = draw_page(body, [FOOTER])
    marked = re.findall(rf'<(\w+)[^>]*\b{DECISION_ATTRIBUTE}="0"', drawn)
    assert marked == ["footer"]  # ours only: the page's div carries no mark
    assert f'{LABEL_ATTRIBUTE}="data"' not in drawn and f"{DECISION_ATTRIBUTE}-x" not in drawn


def test_no_css_form_loads_from_elsewhere():
    body = tidy("<body><p style=\"background-image: image-set('http://evil.test/a.png' 1x)\">a</p>"
                "<p style='background:\\75 rl(http://evil.test/b)'>b</p>"
                "<p style='background: url(http://evil.test/c); color: red'>c</p>"
                "<p style='-webkit-image-set(url(http://evil.test/d) 1x)'>d</p>"
                "<footer>foot</footer></body>")
    drawn = draw_page(body, [FOOTER])
    assert "evil.test" not in drawn
    assert "color: red" in drawn  # what loads nothing stays
