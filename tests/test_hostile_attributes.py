"""Attributes whose names are not names (issue 54): a page whose tags hold ``{a}``, ``a<b``,
control characters or ``&#0;`` where an attribute's name goes gives its HTML like any other, its
text kept and those attributes dropped, where the sanitiser used to raise ``ValueError: Empty
tag name`` (lxml reads a name that starts with ``{`` as ``{namespace}name``). A seeded run of
mutated pages (tests/fuzzing.py) reads every output; the long one runs with
NOISECBR_SLOW_TESTS=1."""

from __future__ import annotations

import random

import pytest
from conftest import slow
from fuzzing import clean_everything, fixture_pages, hostile_attributes

import noisecbr
import noisecbr.render.text as text_module
from noisecbr.render.text import sanitised_body

#: Inputs of the run in the normal suite (about 2 s) and of the long one.
FAST_INPUTS = 500
SLOW_INPUTS = 10_000

SENTENCE = "The sandbars off the lighthouse dry out for an hour at the spring low tide."
#: Attributes as a damaged tag holds them. The first seven raised: a name that starts with
#: "{" (left so, too, once the control characters before it are taken out of the serialised
#: body) is empty, unclosed or another one to lxml. The others never did, and must not.
HOSTILE = {
    "empty namespaced name": "{a}=1",
    "unclosed namespace": "{a=1",
    "another attribute's name": "{x}y=1",
    "a bare brace": "{",
    "empty braces": "{}=2",
    "a control byte before a brace": "\x01{a}=1",
    "a NUL and DEL before a brace": "\x00\x7f{a}=1",
    "a reference to NUL": "&#0;{a}=1 a&#0;=2",
    "a control character": "a\x01b=1",
    "markup in the name": "a<b=1 <c=2",
    "an equals sign first": "=a=1",
    "a quote and an equals sign": "\"x =y=1",
}


def _page(attribute: str) -> str:
    return (f"<html><head><title>Tides</title></head><body><article><h1>Tide tables</h1>"
            f"<p {attribute} title=kept>{SENTENCE}</p><p>Second paragraph of the notes, "
            f"long enough to be kept with the first.</p></article></body></html>")


@pytest.mark.parametrize("attribute", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_attribute_leaves_the_html_and_the_text(attribute):
    result = noisecbr.clean(_page(attribute))
    assert SENTENCE in result.text
    document = result.html
    assert SENTENCE in document
    assert f'<p title="kept">{SENTENCE}</p>' in document  # only the misnamed attribute went
    assert "{" not in document
    clean_everything(_page(attribute))  # every other output too


def test_the_sanitiser_is_handed_only_names():
    body = "<body><p {a}=1 {b=2 {x}y=3 a\x01=4 href=/x title=t é=5>x</p></body>"
    assert sanitised_body(body) == '<body><p href="/x" title="t">x</p></body>'


def test_pages_with_proper_names_give_the_html_they_gave(monkeypatch):
    # The names dropped are none the sanitiser keeps: without the pass, the same documents.
    pages = [*fixture_pages(), _page("data-x=1 aria-label=y xml:lang=en")]
    expected = [noisecbr.clean(page).html for page in pages]
    monkeypatch.setattr(text_module, "_drop_misnamed_attributes", lambda document: None)
    assert [noisecbr.clean(page).html for page in pages] == expected


def _run(count: int, seed: str) -> None:
    failures = []
    for i in range(count):
        page = hostile_attributes(random.Random(f"{seed}:{i}"))
        try:
            clean_everything(page)
        except Exception as error:  # noqa: BLE001 - reported below, with the input's number
            failures.append(f"{seed}:{i}: {type(error).__name__}: {error}")
    assert failures == [], f"{len(failures)} of {count} inputs raised: {failures[:5]}"


def test_mutated_pages_give_every_output():
    _run(FAST_INPUTS, "54")


@slow
def test_many_mutated_pages_give_every_output():
    _run(SLOW_INPUTS, "54-long")
