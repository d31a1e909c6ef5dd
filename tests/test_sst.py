"""Site style tree: hand-computed importances and cleaning of a new page of the site."""

from __future__ import annotations

import math

import pytest
from treehelpers import nest_deeply

from noisecbr.prepare.tidy import tidy
from noisecbr.seeds import SiteStyleTree
from noisecbr.seeds.sst import ATTENUATION
from noisecbr.seeds.style import element_key, feature_entropies

NAV = '<ul class="nav"><li>Home</li><li>News</li><li>About</li></ul>'
FOOTER = '<div class="footer"><p>Copyright Example</p></div>'


def page(article: str, aside: str = "") -> str:
    return (f"<html><body>{NAV}<div class='article'>{article}</div>{aside}{FOOTER}"
            "</body></html>")


P1 = page("<h1>Apple banana</h1><p>common apple</p>")
P2 = page("<p>Cherry common</p>")
NEW = page("<h1>Durian season</h1><p>Elderberry jam recipe</p>")


def node_by_key(sst: SiteStyleTree, key: str):
    return [node for node in sst.nodes() if node.key == key]


def test_element_key_normalises_digits_and_case() -> None:
    body = tidy('<div id="Post-1234" class=" entry  x9 " data-x="1">a</div>')
    assert element_key(body[0]) == "div[id=post-#][class=entry x#]"


def test_feature_entropies_hand_values() -> None:
    # "a" occurs twice on page 1 and once on page 2: p = 2/3, 1/3, log base 2.
    want = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    got = feature_entropies([{"a": 2, "b": 1}, {"a": 1, "c": 5}])
    assert got == pytest.approx({"a": want, "b": 0.0, "c": 0.0})
    assert want == pytest.approx(0.918296, abs=1e-6)
    # One instance: nothing is spread, every entropy is 0.
    assert feature_entropies([{"a": 3}]) == {"a": 0.0}


def test_importance_two_pages_same_style() -> None:
    sst = SiteStyleTree().fit([P1, P2])
    body = sst.root
    # Both pages use the body style [ul.nav, div.article, div.footer]: NodeImp = 0.
    assert body.pages == 2
    assert len(body.styles) == 1
    assert body.node_imp == pytest.approx(0.0)
    (nav,) = node_by_key(sst, "ul[class=nav]")
    (article,) = node_by_key(sst, "div[class=article]")
    (footer,) = node_by_key(sst, "div[class=footer]")
    # Navigation and footer: every word once on each page, entropy 1 → CompImp = 1 - 3/3 = 0.
    assert nav.comp_imp == pytest.approx(0.0)
    assert footer.comp_imp == pytest.approx(0.0)
    # Article words: apple (2 on page 1, 0 on page 2) 0, banana 0, cherry 0, common (1, 1) 1:
    # CompImp = 1 - 1/4.
    assert article.comp_imp == pytest.approx(0.75)
    # Body: (1 - γ)·0 + γ·mean(0, 0.75, 0) with γ = 0.9.
    assert body.comp_imp == pytest.approx(ATTENUATION * 0.25)
    assert (nav.status, footer.status, article.status, body.status) == (
        "noise", "noise", "data", "mixture")
    assert sst.importance["body"] == pytest.approx(0.225)
    assert nav.path == "body/s0/0:ul[class=nav]"
    assert sst.importance["body/s0/1:div[class=article]"] == pytest.approx(0.75)


def test_importance_two_pages_two_styles() -> None:
    sst = SiteStyleTree().fit([P1, page("<p>Cherry</p>", aside="<aside><p>x</p></aside>")])
    body = sst.root
    # Two styles, one page each: NodeImp = -2·(1/2·log2 1/2) = 1; every element node below
    # is seen on one page only, so CompImp = 1 for each and for both style nodes.
    assert len(body.styles) == 2
    assert body.node_imp == pytest.approx(1.0)
    assert body.comp_imp == pytest.approx(1.0)
    assert body.status == "data"


def test_importance_three_pages_unequal_styles() -> None:
    third = page("<p>Fig</p>", aside="<aside><p>x</p></aside>")
    sst = SiteStyleTree().fit([P1, P2, third])
    body = sst.root
    # Styles used by 2 and 1 of m = 3 pages.
    node_imp = -(2 / 3 * math.log(2 / 3, 3) + 1 / 3 * math.log(1 / 3, 3))
    assert body.node_imp == pytest.approx(node_imp)
    # Style 1 (2 pages) children: nav 0, article 0.75, footer 0 → 0.25. Style 2 (1 page): all
    # element nodes seen once → 1. l = 2 styles: weight γ² on the children.
    weight = ATTENUATION ** 2
    want = (1 - weight) * node_imp + weight * (2 / 3 * 0.25 + 1 / 3 * 1.0)
    assert body.comp_imp == pytest.approx(want)


def test_clean_new_page_removes_shared_nav_and_footer() -> None:
    sst = SiteStyleTree().fit([P1, P2])
    result = sst.clean(NEW)
    assert result.text == "Durian season\n\nElderberry jam recipe"
    assert "Home" not in result.html and "Copyright" not in result.html
    assert "Elderberry" in result.html
    labels = {(d.path, d.label) for d in result.decisions}
    assert labels == {
        ("/html/body", "mixture"),
        ("/html/body/ul", "noise"),
        ("/html/body/div[1]", "data"),
        ("/html/body/div[2]", "noise"),
    }
    body = tidy(NEW)
    assert {e.get("class") for e in sst.noisy_elements(body)} == {"nav", "footer"}
    # A decision's text length means what the cleaner's means: word characters, no spaces.
    lengths = {d.path: d.text_length for d in result.decisions}
    assert lengths["/html/body/ul"] == len("HomeNewsAbout")
    assert lengths["/html/body/div[1]"] == len("DurianseasonElderberryjamrecipe")


def test_unmatched_style_is_mapped_child_by_child() -> None:
    sst = SiteStyleTree().fit([P1, P2])
    # A new section the site never showed: the body style is new, but nav and footer still map
    # by key; the unknown section is kept.
    result = sst.clean(page("<p>Grape</p>", aside="<section><p>Brand new</p></section>"))
    assert result.text == "Grape\n\nBrand new"


def test_features_drop_locally_noisy_words() -> None:
    sst = SiteStyleTree().fit([P1, P2])
    bag = sst.features(page("<p>Common kiwi</p>"))
    # "common" has entropy 1 in the article leaf (> 0.8): dropped; kiwi is new: kept.
    assert bag == {"kiwi": 1}


def test_single_page_everything_is_meaningful() -> None:
    sst = SiteStyleTree().fit([P1])
    assert all(node.comp_imp == 1.0 for node in sst.nodes())
    assert "Home" in sst.clean(P1).text


def _deep_body(depth: int, words: str):
    # 5 000 levels is far past Python's recursion limit; lxml's own appends get slow beyond.
    return nest_deeply(tidy(page(f"<p>{words}</p>")), depth)


def test_deep_page_is_not_recursive() -> None:
    sst = SiteStyleTree().fit_bodies([_deep_body(5_000, "a"), _deep_body(5_000, "b")])
    # The deep chain has one style on both pages and the same words: noise.
    noisy = sst.noisy_elements(_deep_body(5_000, "c"))
    assert {e.get("class") for e in noisy} == {"nav", "footer", None}
    assert any(e.tag == "div" and e.get("class") is None for e in noisy)


def test_duplicate_pages_count_once() -> None:
    sst = SiteStyleTree().fit([P1, P1, P2])
    assert sst.root.pages == 2
    # Two copies of one page alone are one page: nothing can be told apart, everything is kept.
    assert SiteStyleTree().fit([P1, P1.encode()]).clean(P1).text.startswith("Home")


def test_no_pages() -> None:
    with pytest.raises(ValueError, match="at least one page"):
        SiteStyleTree().fit([])


def test_hyperparameters_in_the_constructor_and_fit_returns_the_tree():
    sst = SiteStyleTree(threshold=0.3, feature_entropy=0.7)
    with pytest.raises(ValueError, match="not fitted"):
        sst.clean(P1)
    assert sst.fit([P1, P2]) is sst
    assert (sst.threshold, sst.feature_entropy) == (0.3, 0.7) and sst.root is not None
