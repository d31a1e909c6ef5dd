"""The embedded model on a small page of each kind (fixtures written for these tests, from no
site of the development data): each is read as its kind and cleaned as its kind is."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

from noisecbr import Cleaner
from noisecbr.score.kind import KINDS

KIND_PAGES = FIXTURES / "kinds"


@pytest.fixture(scope="module")
def cleaner() -> Cleaner:
    return Cleaner()


def _page(kind: str) -> bytes:
    return (KIND_PAGES / f"{kind}.html").read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_each_page_is_read_as_its_kind_and_walked_in_its_mode(cleaner, kind):
    result = cleaner.clean(_page(kind))
    assert result.page_type == kind, result.page_types
    assert result.mode == cleaner.kind_modes[kind]
    assert 0.0 <= result.confidence <= 1.0


def test_a_listing_keeps_every_item_and_drops_its_furniture(cleaner):
    text = cleaner.clean(_page("listing")).text
    titles = re.findall(r'class="post-teaser__title"><a [^>]*>([^<]+)<', _page("listing").decode())
    excerpts = re.findall(r'class="post-teaser__excerpt">([^<]+)<', _page("listing").decode())
    assert len(titles) == len(excerpts) == 6
    for item in titles + excerpts:
        assert item.replace("&#x27;", "'") in text
    for furniture in ("Subscribe", "Privacy", "Older posts", "Support us"):
        assert furniture not in text


def test_a_collection_keeps_its_products_names_and_prices(cleaner):
    text = cleaner.clean(_page("collection")).text
    for name, price in (("Alpine Rain Jacket", "€189.00"), ("Insulated Gloves", "€45.00")):
        assert name in text and price in text
    assert "Free shipping on orders" not in text and "© 2025" not in text


def test_a_thread_keeps_every_post(cleaner):
    text = cleaner.clean(_page("forum")).text
    for post in ("smells like nail polish remover", "The acetone smell just means it is hungry",
                 "it doubles in five hours"):
        assert post in text
    assert "Terms and rules" not in text and "Post reply" not in text


def test_a_product_keeps_its_description_specifications_and_price(cleaner):
    text = cleaner.clean(_page("product")).text
    for part in ("A waterproof leather boot", "Full-grain leather", "€149.00"):
        assert part in text
    assert "Summit Outfitters" not in text.split("\n")[-1]  # no footer


def test_documentation_keeps_its_code_and_article_its_body(cleaner):
    docs = cleaner.clean(_page("documentation")).text
    assert 'settings = parse_config("tidewater.toml", strict=True)' in docs
    assert "Raise an error for keys the schema does not know" in docs
    assert "Changelog" not in docs and "Edit this page" not in docs
    article = cleaner.clean(_page("article")).text
    assert article.startswith("The harbour council voted on Thursday evening")
    assert "Related stories" not in article and "Storm floods fish market" not in article


def test_the_kind_given_overrides_the_one_read(cleaner):
    result = cleaner.clean(_page("listing"), page_type="article")
    assert result.page_type == "article" and result.mode == cleaner.kind_modes["article"]
