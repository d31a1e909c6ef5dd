import re

import numpy as np
import pytest
from lxml import etree

from noisecbr.features import (
    FEATURE_GROUPS,
    FEATURE_NAMES,
    FEATURES,
    KEYWORDS,
    LEAF_TYPES,
    group_slices,
    keywords,
    leaf_counts,
    leaf_shares,
    vectorize,
)
from noisecbr.features.vectors import page_columns
from noisecbr.prepare.subtrees import WORD, at_level, build_table
from noisecbr.prepare.tidy import tidy

PAGE = ("<body><div id='menu' class='nav'><a>Home</a><a>News</a><img src=x></div>"
        "<div class='article-content'><p>Some text, here.</p><p>More <a>link</a> text.</p></div>"
        "</body>")


def table():
    return build_table(tidy(PAGE))


def test_eq1_worked_example_by_hand():
    t = table()
    # elements: 0 body, 1 div#menu, 2 a, 3 a, 4 img, 5 div.article, 6 p, 7 p, 8 a
    assert t.tags == ["body", "div", "a", "a", "img", "div", "p", "p", "a"]
    counts = leaf_counts(t)
    shares = leaf_shares(counts)
    a, img, p, text = (LEAF_TYPES.index(n) for n in ("a", "img", "p", "text"))
    # menu: leaves a, a, img → x_a = 2/3, x_img = 1/3
    assert shares[1, a] == pytest.approx(2 / 3) and shares[1, img] == pytest.approx(1 / 3)
    # article: leaves p (childless), a (inside 2nd p), and the 2nd p's two text pieces
    # ("More ", " text.") beside its child → T = 4: x_p = 1/4, x_a = 1/4, x_text = 2/4
    assert counts[5].sum() == 4
    assert shares[5, p] == pytest.approx(0.25) and shares[5, text] == pytest.approx(0.5)


def test_eq1_rows_sum_to_one():
    shares = leaf_shares(leaf_counts(table()))
    assert np.allclose(shares.sum(axis=1), 1.0)


def test_full_vector_shape_and_features():
    t = table()
    x = vectorize(t)
    assert x.shape == (len(t), len(FEATURE_NAMES)) and x.dtype == np.float32
    assert np.isfinite(x).all()
    name = {n: i for i, n in enumerate(FEATURE_NAMES)}
    # link density: the menu is all links, the article has one link word of five
    assert x[1, name["link_density"]] == pytest.approx(1.0)
    assert 0.0 < x[5, name["link_density"]] < 0.3
    assert x[1, name["kw:nav"]] == 1.0 and x[5, name["kw:article"]] == 1.0
    # the links in the menu inherit its keyword, the article's paragraphs do not
    assert x[2, name["anc_kw:nav"]] == 1.0 and x[6, name["anc_kw:nav"]] == 0.0
    slices = group_slices()
    assert slices["leaf"].stop - slices["leaf"].start == len(LEAF_TYPES)


def test_the_table_names_each_column_once_in_contiguous_groups():
    assert len(set(FEATURE_NAMES)) == len(FEATURE_NAMES) == len(FEATURES) == 221
    assert [f.group for f in FEATURES] == [
        group for group, columns in group_slices().items()
        for _ in range(columns.stop - columns.start)]
    assert sum(map(len, FEATURE_GROUPS.values())) == len(FEATURES)


def test_the_pure_path_computes_the_quantities_the_table_names():
    named = {f.of for f in FEATURES if f.transform not in ("at", "relative")}
    named |= {f.per for f in FEATURES if f.per is not None}
    assert page_columns(table()).quantities.keys() == named
    columns = {f.of for f in FEATURES if f.transform in ("at", "relative")}
    assert columns <= set(FEATURE_NAMES)


def test_ad_keyword_is_a_whole_token():
    t = build_table(tidy("<body><div class='header'>x</div><div class='ad-slot'>y</div></body>"))
    x = vectorize(t)
    ad = FEATURE_NAMES.index("kw:ad")
    assert x[1, ad] == 0.0 and x[2, ad] == 1.0


def test_subtree_ranges_and_threshold_level():
    t = table()
    assert list(t.end) == [9, 5, 3, 4, 5, 9, 7, 9, 9]
    assert list(at_level(t, 1)) == [1, 5]
    words = t.subtree(t.piece_words)
    assert words[0] == words[1] + words[5] == 2 + 6


def test_deep_page_vectorises():
    depth = 20_000  # flattened by tidy to its maximal parse depth, text kept
    t = build_table(tidy("<body>" + "<div>" * depth + "x y" + "</div>" * depth + "</body>"))
    x = vectorize(t)
    assert x.shape[0] == len(t) > 1000
    assert t.subtree(t.piece_words)[0] == 2


def test_table_paths_match_lxml_getpath(article_html):
    for html in (article_html, PAGE, "<body><p>a</p><div><p>b</p><p>c</p></div><p>d</p></body>"):
        t = build_table(tidy(html))
        tree = t.elements[0].getroottree()
        assert t.paths() == [tree.getpath(e) for e in t.elements]


# -- the table and the keyword flags match their plain definitions ------------------------------


def _reference_table(body):
    """The table by its definition: one iterwalk, pieces emitted at start (text) and end (tail)."""
    elements, parent, depth, end, piece_start, piece_end = [], [], [], [], [], []
    texts, owners, stack = [], [], []
    for event, element in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            index = len(elements)
            elements.append(element)
            parent.append(stack[-1] if stack else -1)
            depth.append(len(stack))
            end.append(0)
            piece_end.append(0)
            piece_start.append(len(texts))
            stack.append(index)
            if element.text and not element.text.isspace():
                texts.append(element.text)
                owners.append(index)
        else:
            index = stack.pop()
            end[index] = len(elements)
            piece_end[index] = len(texts)
            if stack and element.tail and not element.tail.isspace():
                texts.append(element.tail)
                owners.append(stack[-1])
    return elements, parent, depth, end, piece_start, piece_end, texts, owners


@pytest.mark.parametrize("html", [
    PAGE,
    "<body>a<!--c-->b<?pi x?>c<div>d<a href=1>e<b>f</b>g</a>h</div>i<p> </p>\n<p>j</p>k</body>",
    "<body><a>x<a>y</a>z</a><div><a><span>q</span> w</a> e</div></body>",
])
def test_table_matches_an_event_walk(html):
    body = etree.fromstring(html, etree.HTMLParser()).find("body")  # comments and PIs kept
    t = build_table(body)
    elements, parent, depth, end, piece_start, piece_end, texts, owners = _reference_table(body)
    assert t.elements == elements
    assert t.parent.tolist() == parent and t.depth.tolist() == depth
    assert t.end.tolist() == end
    assert t.piece_start.tolist() == piece_start and t.piece_end.tolist() == piece_end
    assert t.piece_text == texts and t.piece_owner.tolist() == owners
    assert t.piece_tokens == [WORD.findall(text) for text in texts]
    assert t.piece_chars.tolist() == [sum(map(len, WORD.findall(text))) for text in texts]
    links = [any(t.tags[a] == "a" for a in _ancestors_or_self(parent, o)) for o in owners]
    assert t.piece_in_link.tolist() == links


def _ancestors_or_self(parent, i):
    while i >= 0:
        yield i
        i = parent[i]


def test_table_with_entity_references():
    root = etree.fromstring('<!DOCTYPE r [<!ENTITY e "ent">]><r>a<s>t &e; u<b>v</b>&e;</s>w</r>',
                            etree.XMLParser(resolve_entities=False))
    t = build_table(root)
    elements, _, _, end, _, _, texts, _ = _reference_table(root)
    assert t.elements == elements and t.piece_text == texts and t.end.tolist() == end


def _masks(values):
    return keywords._keyword_mask_array(values).tolist()


@pytest.mark.parametrize("value", [
    "nav-bar", "HEADER", "site-header__ad", "ad-slot", "ads", "load", "adverts", "Ad", "head",
    "main-content article_body", "x", "", "post_title  sidebarAd", "\u212aeyword-ad",
    "comment-form ads-wrapper", "shared ad ads bad",
])
def test_keyword_mask_matches_the_token_rule(value):
    tokens = re.findall(r"[a-z]+", value.lower())
    expected = {i for i, k in enumerate(KEYWORDS) for token in tokens
                if (token in ("ad", "ads") if k == "ad" else k in token)}
    keywords._MASK_CACHE.clear()  # computed, not remembered from an earlier test
    mask = _masks([value])[0]
    assert _masks([value, None, value]) == [mask, 0, mask]
    assert {i for i in range(len(KEYWORDS)) if mask >> i & 1} == expected


def test_keyword_masks_of_a_batch_are_those_of_each_value():
    values = ["nav-bar", None, "site-header__ad", "", "ads", "load", "adverts\x00ad", "Ad",
              "comment-form ads-wrapper", "header", "x"]
    keywords._MASK_CACHE.clear()
    together = _masks(values)
    alone = []
    for value in values:
        keywords._MASK_CACHE.clear()
        alone.extend(_masks([value]))
    assert together == alone


def test_keyword_masks_of_values_that_lower_casing_lengthens():
    # "İ".lower() is two characters: the matches must still be given to their own values.
    nav = 1 << keywords.KEYWORDS.index("nav")
    assert keywords._new_masks(["İİİİ nav", "x", "İ ad"]) == [
        nav, 0, 1 << keywords.KEYWORDS.index("ad")]
