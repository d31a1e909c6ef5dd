"""SiteLevel(θ) templates: shared header/footer found, articles not, the 85 % rule by hand."""

from __future__ import annotations

import pytest
from lxml import etree

from noisecbr.prepare.tidy import tidy
from noisecbr.seeds import template_labels
from noisecbr.seeds.templates import hash_page, label_templates

HEADER = ("<header><h1>Example News</h1><nav><a href='/'>Home</a> <a href='/w'>World</a> "
          "<a href='/s'>Sport</a></nav></header>")
FOOTER = "<footer><p>Copyright 2024 Example News. All rights reserved.</p></footer>"


def site_page(i: int) -> str:
    article = " ".join(f"Sentence {i}-{j} about topic number {i} and its details."
                       for j in range(8))
    return (f"<html><body>{HEADER}<article id='a{i}'><h2>Story {i}</h2><p>{article}</p>"
            f"</article>{FOOTER}</body></html>")


def test_shared_header_and_footer_are_templates() -> None:
    labels = template_labels([site_page(i) for i in range(10)])
    assert len(labels) == 10
    for page_labels in labels:
        assert page_labels["/html/body/header"] is True
        assert page_labels["/html/body/header/nav"] is True
        assert page_labels["/html/body/header/nav/a[2]"] is True
        assert page_labels["/html/body/footer"] is True
        assert page_labels["/html/body/footer/p"] is True
        assert page_labels["/html/body/article"] is False
        assert page_labels["/html/body/article/h2"] is False
        assert page_labels["/html/body/article/p"] is False
        assert page_labels["/html/body"] is False


def test_theta_needs_enough_pages() -> None:
    # A block on 2 of 10 pages: a template at θ = 0.1 (2 ≥ 1, and ≥ 2 pages), not at θ = 0.3.
    pages = [site_page(i) for i in range(10)]
    ad = "<aside><p>Buy the special offer</p></aside>"
    pages[3] = pages[3].replace("</body>", ad + "</body>")
    pages[7] = pages[7].replace("</body>", ad + "</body>")
    assert template_labels(pages)[3]["/html/body/aside"] is True
    assert template_labels(pages, theta=0.3)[3]["/html/body/aside"] is False


def test_one_page_or_copies_have_no_templates() -> None:
    page = site_page(1)
    assert not any(template_labels([page])[0].values())
    # The same page twice is one page: still nothing is repeated across the site.
    assert not any(template_labels([page, page])[1].values())


def test_sizes_are_markup_plus_text() -> None:
    body = tidy("<div><p>hello</p><b>x1</b></div>")
    hashes = hash_page(body)
    sizes = {el.tag: size for el, size in zip(hashes.elements, hashes.sizes, strict=True)}
    # <p>hello</p>: 2·1 + 5 + 5 = 12; <b>x1</b>: 2 + 5 + 2 = 9; <div>…</div>: 11 + 12 + 9.
    assert sizes == {"p": 12, "b": 9, "div": 32, "body": 2 * 4 + 5 + 32}


@pytest.mark.parametrize("shared_length, expected", [(100, False), (120, True)])
def test_share_rule_hand_example(shared_length: int, expected: bool) -> None:
    shared = "s" * shared_length
    bodies = [tidy(f"<div><p>{shared}</p><b>x{i}</b></div>") for i in range(2)]
    labels = label_templates(bodies)
    div = bodies[0][0]
    p, b = div
    assert labels[0][p] is True   # the same <p> on both pages
    assert labels[0][b] is False  # x0 vs x1
    # Covered share of the div: size(p) / size(div) = (7 + n) / (11 + 7 + n + 9).
    # n = 100: 107 / 127 = 0.843 ≤ 0.85; n = 120: 127 / 147 = 0.864 > 0.85.
    assert labels[0][div] is expected


def test_attributes_do_not_change_the_hash() -> None:
    a = tidy("<div id='post-1'><p>same</p></div><p>one</p>")
    b = tidy("<div id='post-2'><p>same</p></div><p>two</p>")
    labels = label_templates([a, b])
    assert labels[0][a[0]] is True
    assert labels[0][a[1]] is False


def test_deep_page_is_not_recursive() -> None:
    bodies = []
    for words in ("one", "two"):
        body = tidy(f"<p>{words}</p>")
        element = body
        for _ in range(5_000):
            element = etree.SubElement(element, "div")
        etree.SubElement(element, "p").text = "shared"
        bodies.append(body)
    labels = label_templates(bodies)
    deepest = next(iter(bodies[0].iter("div")))
    assert labels[0][deepest] is True  # the whole chain is the same on both pages
    assert labels[0][bodies[0]] is True  # ... and is well over 85 % of the body


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError, match="theta"):
        label_templates([], theta=0.0)
    with pytest.raises(ValueError, match="share"):
        label_templates([], share=1.0)
