"""Every compiled function against its pure Python twin, found where the engine binds them
(``BACKEND.dispatch`` registers each pair): the fixture pages and generated ones are cleaned with
the calls' arguments recorded, then each pair is called on them and must give the same output,
bit for bit (and fill any array it was given the same way)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from fuzzing import FAMILIES, fixture_pages, generate
from lxml import etree

import noisecbr
from noisecbr.features import leaf_counts, vectorize
from noisecbr.features.lexical import FIELDS, value_buckets
from noisecbr.native.backend import BACKEND, _copied
from noisecbr.prepare import visibility
from noisecbr.prepare.limits import MAX_ATTRIBUTES
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import InputError, tidy

#: Every pair the engine binds (the count a refactoring must not lose silently).
TWINS = 25


def _pooled(fill, lexicon, inputs) -> np.ndarray:
    out = np.zeros((len(inputs), len(FIELDS) * lexicon.dim), dtype=np.float32)
    fill(out, None)
    return out


#: What the twins whose output is not a value return, made one: the poolers and the row
#: fillers fill every row; the hiding carriers are an iterable (an ordered dict's keys on the
#: pure path, a list in C) of which the caller keeps the hidden ones (the kernel leaves out the
#: styled elements whose style cannot hide them).
RETURNED = {"noisecbr.features.lexical._pooler_pure": _pooled,
            "noisecbr.features.vectors._pure_rows": lambda fill, table: fill(None),
            "noisecbr.prepare.visibility._hiding_carriers_pure":
                lambda found, *args: [e for e in found if visibility._is_hidden(e)]}

pytestmark = pytest.mark.skipif(BACKEND.kernel is None,
                                reason="the compiled kernel is not in use (pure path)")


def _pages() -> list[bytes | str]:
    rng = random.Random(40)
    # A tag with more attributes than the limit: the long tags' scan.
    crowded = ("<html><body><div " + " ".join(f"data-a{i}='{i}'" for i in range(MAX_ATTRIBUTES + 9))
               + "><p>Harbour news, a paragraph of words long enough to be kept.</p></div>"
               "</body></html>")
    # Hidden elements of every kind and a JSON-LD declaration in the body: what tidying removes
    # and moves.
    hidden = ("<html><body><div hidden>gone</div><p style='display: none'>gone</p>"
              "<section aria-hidden='true'>gone</section><p style='color:red'>shown</p>"
              "<script type='application/ld+json'>{\"@type\": \"NewsArticle\"}</script>"
              "<noscript><p>fallback</p></noscript><iframe><p>frame</p></iframe>"
              "<article><p>Harbour news, a paragraph of words long enough to be kept.</p>"
              "</article></body></html>")
    # The made pages first: a twin's first calls are the ones recorded.
    return [crowded, hidden, *fixture_pages(),
            *(generate(rng, family) for family in FAMILIES for _ in range(4))]


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[tuple[tuple, dict]]]:
    cleaner = noisecbr.Cleaner()
    with BACKEND.recording() as calls:
        for html in _pages():
            try:
                result = cleaner.clean(html)
                table = build_table(tidy(html))
                vectorize(table)  # every row's vector, not the walk's few
                leaf_counts(table)  # eq. 1's counts (the compiled vectors read the kernel's)
            except InputError:
                continue
            result.markdown, result.html, result.to_json()  # noqa: B018 - rendered on demand
            cleaner.score(cleaner.prepare(html))  # the whole page's scores
        # Attribute values' buckets one at a time (the pages' are cached by earlier tests).
        for value in ("twin-check post_body", "Twin Check é", "x" * 70):
            value_buckets(value)
    return calls


def same(a: object, b: object) -> bool:
    """Whether two outputs are the same: arrays by dtype and bits (NaN equal to NaN), lxml
    elements by identity, containers item by item."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, etree._Element):
        return a is b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def test_every_twin_is_registered_and_exercised(recorded):
    assert len(BACKEND.twins) == TWINS, sorted(BACKEND.twins)
    assert sorted(set(BACKEND.twins) - set(recorded)) == []
    # Exercised on something: each pair's reference gives a non-empty output on some call.
    empty = []
    for name, calls in recorded.items():
        twin = BACKEND.twins[name]
        outputs = []
        for args, kwargs in calls:
            given = _copied(args)
            output = twin.pure(*given, **_copied(kwargs))
            outputs.append(RETURNED[name](output, *given) if name in RETURNED else output)
        if all(hasattr(o, "__len__") and len(o) == 0 for o in outputs):
            empty.append(name)
    assert empty == []


@pytest.mark.parametrize("name", sorted(BACKEND.twins))
def test_the_twins_agree(name, recorded):
    twin = BACKEND.twins[name]
    for args, kwargs in recorded.get(name, []):
        outputs = []
        for function in (twin.pure, twin.compiled):
            given, named = _copied(args), _copied(kwargs)
            output = function(*given, **named)
            if name in RETURNED:
                output = RETURNED[name](output, *given)
            outputs.append((output, given, named))
        assert same(outputs[0], outputs[1]), name


def test_a_difference_is_seen():
    assert not same(np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert not same([np.array([1, 2])], [np.array([1, 3])])
    assert same((1, [np.array([np.nan])]), (1, [np.array([np.nan])]))
    assert not same({"a": 1}, {"a": 2}) and not same(1, 1.0)
