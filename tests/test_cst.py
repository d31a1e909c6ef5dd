"""Compressed structure tree: the paper's two-page example and hand-computed word weights."""

from __future__ import annotations

import math

import pytest
from treehelpers import nest_deeply

from noisecbr.prepare.tidy import tidy
from noisecbr.seeds import CompressedStructureTree

# Virtual leaves are grandparents of actual leaves, so every block here is two levels deep
# (ul > li > a, div > div > p) and the body three.
NAV = '<ul class="nav"><li><a>Home</a></li><li><a>News</a></li><li><a>About</a></li></ul>'
FOOTER = '<div class="footer"><div><p>Copyright Example</p></div></div>'


def page(article: str, extra: str = "") -> str:
    return (f"<html><body>{NAV}<div class='article'><div>{article}</div></div>{extra}{FOOTER}"
            "</body></html>")


def node(cst: CompressedStructureTree, key: str):
    (found,) = [n for n in cst.nodes() if n.key == key]
    return found


def test_paper_example_root_and_body_importance() -> None:
    # Both pages: <html> holds one <body> (same style); the bodies' children differ.
    p1 = page("<p>Apple banana</p>")
    p2 = page("<p>Cherry</p>", extra="<div class='ad'><div><p>Buy now</p></div></div>")
    cst = CompressedStructureTree().fit([p1, p2])
    assert cst.root.tag == "html"
    assert cst.root.tag_nodes == 2
    assert cst.root.node_imp == pytest.approx(0.0)
    body = node(cst, "body")
    assert len(body.styles) == 2
    assert body.node_imp == pytest.approx(1.0)  # -2 · (1/2 · log2 1/2)
    assert body.path_imp == pytest.approx(1.0)  # 1 - (1 - 0)(1 - 1)


def test_shared_footer_weighs_less_than_article() -> None:
    p1 = page("<h1>Apple banana</h1><p>common apple</p>")
    p2 = page("<p>Cherry common</p>")
    cst = CompressedStructureTree().fit([p1, p2])
    body = node(cst, "body")
    assert body.node_imp == pytest.approx(0.0)  # same body style on both pages
    footer = node(cst, "div[class=footer]")
    article = node(cst, "div[class=article]")
    # Leaf importance: footer words all spread evenly (H = 1) → 0; article: apple, banana,
    # cherry H = 0, common H = 1 → 1 - 1/4.
    assert footer.leaf_imp == pytest.approx(0.0)
    assert article.leaf_imp == pytest.approx(0.75)
    # PathImp of the article's words: 1 - (1 - 0)(1 - 0)(1 - 0.75) = 0.75.
    assert article.leaf_path_imp == pytest.approx(0.75)
    weights = cst.weights(p1)
    # W = PathImp · (1 - H) · f: apple occurs twice on page 1.
    assert weights["apple"] == pytest.approx(0.75 * 1.0 * 2)
    assert weights["banana"] == pytest.approx(0.75)
    assert weights["common"] == pytest.approx(0.0)
    assert weights["copyright"] == pytest.approx(0.0)
    assert weights["home"] == pytest.approx(0.0)
    assert weights["copyright"] < weights["banana"]


def test_unseen_page_words_weigh_by_site_statistics() -> None:
    cst = CompressedStructureTree().fit([page("<p>Apple common</p>"),
                                         page("<p>Cherry common</p>")])
    weights = cst.weights(page("<p>Kiwi common</p>"))
    # Article leaf: apple, cherry H = 0, common H = 1 → leaf_imp 1 - 1/3. A new word has H = 0.
    assert weights["kiwi"] == pytest.approx(2 / 3)
    assert weights["common"] == pytest.approx(0.0)
    assert weights["home"] == pytest.approx(0.0)


def test_jaccard_merges_restyled_block() -> None:
    six = "".join(f"<li><a>word{i}</a></li>" for i in range(6))
    x = "<div class='x'><div><p>{}</p></div></div>"
    a = f"<html><body><ul class='menu'>{six}</ul>{x.format('one')}</body></html>"
    b = (f"<html><body><ul class='menu'>{six}<li><a>shop</a></li></ul>{x.format('two')}"
         "</body></html>")
    cst = CompressedStructureTree().fit([a, b])
    # Styles differ (6 vs 7 <li>), characteristic sets overlap 6/7 ≥ 0.85: one element node.
    menu = node(cst, "ul[class=menu]")
    assert menu.tag_nodes == 2
    assert menu.node_imp == pytest.approx(1.0)
    # Six words spread evenly (H = 1), "shop" on one page (H = 0): 1 - 6/7.
    assert menu.leaf_imp == pytest.approx(1 / 7)
    # Below a 5-word overlap (5/7 < 0.85) the blocks stay apart.
    five = "".join(f"<li><a>word{i}</a></li>" for i in range(5))
    c = (f"<html><body><ul class='menu'>{five}<li><a>shop</a></li><li><a>sale</a></li></ul>"
         f"{x.format('three')}</body></html>")
    cst = CompressedStructureTree().fit([a, c])
    assert len([n for n in cst.nodes() if n.key == "ul[class=menu]"]) == 2


def test_single_page_weights_are_frequencies() -> None:
    cst = CompressedStructureTree().fit([page("<p>Apple apple</p>")])
    weights = cst.weights(page("<p>Apple apple</p>"))
    assert weights["apple"] == pytest.approx(2.0)
    assert weights["home"] == pytest.approx(1.0)


def test_entropy_of_uneven_word() -> None:
    cst = CompressedStructureTree().fit([page("<p>Apple apple pear</p>"),
                                         page("<p>Apple fig</p>")])
    h = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    article = node(cst, "div[class=article]")
    assert article.entropies["apple"] == pytest.approx(h)
    leaf_imp = 1 - h / 3  # apple h, pear 0, fig 0
    assert article.leaf_imp == pytest.approx(leaf_imp)
    weights = cst.weights(page("<p>Apple apple pear</p>"))
    assert weights["apple"] == pytest.approx(leaf_imp * (1 - h) * 2)


def test_no_pages() -> None:
    with pytest.raises(ValueError, match="at least one page"):
        CompressedStructureTree().fit([])


def _deep_body(depth: int, words: str):
    return nest_deeply(tidy(page(f"<p>{words}</p>")), depth)


def test_deep_page_is_not_recursive() -> None:
    cst = CompressedStructureTree().fit_bodies([_deep_body(3_000, "a"), _deep_body(3_000, "b")])
    weights = cst.weights_of_body(_deep_body(3_000, "a"))
    # The deep words sit in one leaf on both pages, spread evenly: weight 0.
    assert weights["deep"] == pytest.approx(0.0)
    assert weights["a"] > 0


def test_hyperparameters_in_the_constructor_and_fit_returns_the_tree():
    tree = CompressedStructureTree(share=0.6, jaccard=0.5)
    with pytest.raises(ValueError, match="not fitted"):
        tree.weights(page("<p>Apple</p>"))
    assert tree.fit([page("<p>Apple</p>"), page("<p>Pear</p>")]) is tree
    assert (tree.share, tree.jaccard) == (0.6, 0.5) and tree.root is not None
