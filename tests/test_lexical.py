"""The learned lexical fields: hashed tokens, their buckets, and the pooling a model does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from noisecbr.features import FEATURE_NAMES, vectorize
from noisecbr.features.lexical import (
    BUCKET_BITS,
    FIELDS,
    HEAD_WORDS,
    Lexicon,
    attribute_tokens,
    bucket,
    lexical_inputs,
)
from noisecbr.prepare.subtrees import build_table
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import Model, ModelError


def _table(html: str):
    return build_table(etree.HTML(html).find("body"))


def test_a_token_lands_in_the_same_bucket_every_time():
    assert bucket("related") == bucket("Related") == bucket("RELATED")
    assert 0 <= bucket("Ähnliche") < 2 ** BUCKET_BITS
    # FNV-1a of the UTF-8 bytes, not Python's salted hash: the same in another process with
    # another hash seed, and pinned so that a change of the function is seen (a model's
    # buckets would silently stop matching).
    code = ("from noisecbr.features.lexical import bucket; "
            "print(bucket('related'), bucket('Ähnliche'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout.split()
    assert [int(v) for v in out] == [bucket("related"), bucket("Ähnliche")]
    assert bucket("related") == 844994
    from noisecbr.features.hashing import python_bucket

    for token in ("related", "Ähnliche", "İstanbul", "関連記事", "x", "a" * 80, "\U0001f600"):
        assert bucket(token) == python_bucket(token)  # the kernel's hash is Python's


def test_attribute_values_split_into_words():
    assert attribute_tokens("article-body related_stories carouselItem x 42") == [
        "article", "body", "related", "stories", "carousel", "item"]
    assert attribute_tokens("HTMLParser Übersicht") == ["html", "parser", "übersicht"]
    assert attribute_tokens("") == []


def _lexicon(known_text: dict[str, list[float]], known_attr: dict[str, list[float]]) -> Lexicon:
    def table(known):
        items = sorted((bucket(token), vector) for token, vector in known.items())
        return (np.array([b for b, _ in items], dtype=np.int64),
                np.array([v for _, v in items], dtype=np.float32).reshape(len(items), 2))

    text_buckets, text_vectors = table(known_text)
    attr_buckets, attr_vectors = table(known_attr)
    return Lexicon(text_buckets, text_vectors, attr_buckets, attr_vectors)


PAGE = ('<html><body><div class="story-body"><p>Plain words here and there.</p></div>'
        '<aside class="rail related"><h3>Related stories</h3><a href="/x">Other news today</a>'
        '</aside></body></html>')


def test_pooled_fields_are_means_of_the_known_tokens():
    lexicon = _lexicon({"related": [1.0, 0.0], "stories": [0.0, 1.0], "words": [2.0, 2.0]},
                       {"related": [4.0, 0.0], "rail": [0.0, 4.0]})
    table = _table(PAGE)
    pooled = lexicon.pool(lexical_inputs(table))
    assert pooled.shape == (len(table), len(FIELDS) * 2)
    fields = {name: pooled[:, k * 2:(k + 1) * 2] for k, name in enumerate(FIELDS)}
    aside, h3, p = table.tags.index("aside"), table.tags.index("h3"), table.tags.index("p")
    np.testing.assert_allclose(fields["attr"][aside], [2.0, 2.0])  # rail and related
    np.testing.assert_allclose(fields["anc"][h3], [2.0, 2.0])  # its parent's tokens
    np.testing.assert_allclose(fields["head"][aside], [0.5, 0.5])  # "Related stories …"
    np.testing.assert_allclose(fields["bag"][p], [2.0, 2.0])  # only "words" is known
    np.testing.assert_allclose(fields["page"][p], fields["bag"][0])  # the body's words
    np.testing.assert_allclose(fields["attr"][p], [0.0, 0.0])  # no attribute: nothing
    assert HEAD_WORDS >= 2


def test_unseen_tokens_are_harmless():
    lexicon = _lexicon({"related": [1.0, 0.0]}, {"related": [4.0, 0.0]})
    plain = lexicon.pool(lexical_inputs(_table(PAGE)))
    noisy = PAGE.replace('class="rail related"', 'class="rail related css-1x2y3z qx7-promo"')
    noisy = noisy.replace("Related stories", "Related zzqxv stories")
    pooled = lexicon.pool(lexical_inputs(_table(noisy)))
    aside = _table(noisy).tags.index("aside")
    # Unknown tokens add nothing and are not counted: the means of the known ones stand.
    np.testing.assert_allclose(pooled[aside, :2], plain[aside, :2])
    assert np.all(np.isfinite(pooled))
    empty = _lexicon({}, {}).pool(lexical_inputs(_table(PAGE)))
    assert not empty.any()


def test_a_model_with_a_lexicon_survives_its_file(tmp_path):
    lexicon = _lexicon({"related": [1.0, -1.0]}, {"rail": [0.5, 0.5]})
    rng = np.random.default_rng(0)
    columns = np.arange(len(FEATURE_NAMES))
    width = len(columns) + lexicon.width
    model = Model(weights=[rng.normal(size=(8, width)), rng.normal(size=(4, 8))],
                  biases=[np.zeros(8), np.zeros(4)], columns=columns,
                  mean=np.zeros(len(columns)), scale=np.ones(len(columns)), lexicon=lexicon)
    table = _table(PAGE)
    vectors, inputs = vectorize(table), lexical_inputs(table)
    loaded = load_model(save_model(model, tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(loaded.predict_proba(vectors, inputs),
                                  model.predict_proba(vectors, inputs))
    with pytest.raises(ValueError, match="lexical"):
        model.predict_proba(vectors)
    with pytest.raises(ModelError, match="lexical inputs"):
        Model(weights=[rng.normal(size=(8, len(columns))), rng.normal(size=(4, 8))],
              biases=[np.zeros(8), np.zeros(4)], columns=columns, mean=np.zeros(len(columns)),
              scale=np.ones(len(columns)), lexicon=lexicon)
    bad = Lexicon(lexicon.text_buckets[::-1].copy(), lexicon.text_vectors, lexicon.attr_buckets,
                  lexicon.attr_vectors)
    bad.text_buckets = np.array([5, 3], dtype=np.int64)
    bad.text_vectors = np.zeros((2, 2), dtype=np.float32)
    with pytest.raises(ModelError, match="sorted"):
        Model(weights=model.raw_weights(), biases=model.biases, columns=columns,
              mean=np.zeros(len(columns)), scale=np.ones(len(columns)), lexicon=bad)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_each_elements_attribute_values_are_found_once(path, monkeypatch):
    from noisecbr.native.backend import BACKEND

    if path == "python":
        monkeypatch.setattr(BACKEND, "kernel", None)
    elif BACKEND.kernel is None:
        pytest.skip("the compiled kernel is not built (NOISECBR_PURE_PYTHON=1)")
    # Many distinct values in one attribute, few in the others: numbered apart, the four
    # attributes' lists gave two values one number.
    items = "".join(f'<li class="c{k}" id="i{k % 3}" role="r{k % 2}">x</li>' for k in range(40))
    table = _table(f'<html><body><ul aria-label="list" class="c3">{items}</ul>'
                   '<p class="">y</p></body></html>')
    values, positions = table.attribute_values()
    assert values[0] is None and len(set(values)) == len(values)
    assert positions.shape == (len(table.keyword_values), len(table))
    for attribute, column in zip(table.keyword_values, positions):
        assert [values[k] for k in column] == attribute


def test_the_kernel_pools_the_fields_as_numpy_does(monkeypatch, article_html):
    from noisecbr.native.backend import BACKEND
    from noisecbr.prepare.tidy import tidy

    if BACKEND.kernel is None:
        pytest.skip("the compiled kernel is not built (NOISECBR_PURE_PYTHON=1)")

    pages = [article_html, PAGE.encode(), (Path(__file__).parent / "fixtures" / "news" /
                                           "de-lokal.html").read_bytes()]
    rng = np.random.default_rng(0)
    for html in pages:
        inputs = lexical_inputs(build_table(tidy(html)))
        # Half the page's buckets known, vectors of every size (sums that round).
        known = np.unique(np.concatenate([inputs.text, inputs.attr]))[::2]
        lexicon = Lexicon(known, rng.normal(size=(len(known), 8)).astype(np.float32) * 1e3,
                          known, rng.normal(size=(len(known), 8)).astype(np.float32))
        compiled = lexicon.pool(inputs)
        with BACKEND.pure():
            assert compiled.tobytes() == lexicon.pool(inputs).tobytes()
        # A few rows at a time (the lazy walk's rounds): each row as the whole page's.
        pooled = lexicon.pooler(inputs)
        for rows in (np.arange(len(inputs))[::-3], np.array([len(inputs) - 1, 0]),
                     np.zeros(0, dtype=np.int64)):
            assert pooled(rows).tobytes() == compiled[rows].tobytes()
            with BACKEND.pure():
                assert lexicon.pool(inputs, rows).tobytes() == compiled[rows].tobytes()
        with pytest.raises(ValueError, match="row"):
            pooled(np.array([len(inputs)]))


def test_the_kernel_splits_attribute_values_as_the_pattern_does():
    import random
    import string

    import noisecbr.features.lexical as lexical_module
    from noisecbr.native.backend import BACKEND

    if BACKEND.kernel is None:
        pytest.skip("the compiled kernel is not built (NOISECBR_PURE_PYTHON=1)")
    values = ["article-body related_stories carouselItem x 42", "HTMLParser", "MyHTTPServer2Go",
              "getElementByID", "iPhone", "URLPath", "a" * 31, "ab" * 15, "", " -- ", "ÜberBox"]
    rng = random.Random(0)
    alphabet = string.ascii_letters + string.digits + "-_ :."
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
               for _ in range(3000)]
    for value in values:
        expected = tuple(map(bucket, attribute_tokens(value))) if value else ()
        assert lexical_module.value_buckets(value) == expected, value
    # A page's values at once (None and repeats among them), through the cache and without.
    page = [None, *values[:200], "ÜberBox", values[3]]
    expected = [tuple(map(bucket, attribute_tokens(v))) if v else () for v in page]
    assert lexical_module._buckets_of_compiled(page) == expected
    assert lexical_module._buckets_of_compiled(page) == expected
    assert lexical_module._buckets_of_pure(page) == expected


def test_the_kernel_gathers_each_elements_attribute_tokens_as_numpy_does(article_html):
    import noisecbr.features.lexical as lexical_module
    from noisecbr.native.backend import BACKEND
    from noisecbr.prepare.tidy import tidy

    if BACKEND.kernel is None:
        pytest.skip("the compiled kernel is not built (NOISECBR_PURE_PYTHON=1)")
    for html in (article_html, PAGE.encode()):
        table = build_table(tidy(html))
        values, positions = table.attribute_values()
        per_value = lexical_module._buckets_of(values)
        pure = lexical_module._element_runs_pure(per_value, positions)
        compiled = lexical_module._element_runs_compiled(per_value, positions)
        assert [a.tobytes() for a in compiled] == [a.tobytes() for a in pure]
    # By hand: three values (the first no token), two attributes, three elements.
    per_value = [(), (5, 6), (7,)]
    positions = np.array([[1, 0, 2], [2, 0, 1]])
    for runs in (lexical_module._element_runs_pure, lexical_module._element_runs_compiled):
        tokens, ends = runs(per_value, positions)
        assert tokens.tolist() == [5, 6, 7, 7, 5, 6] and ends.tolist() == [3, 3, 6]
    with pytest.raises(ValueError, match="value index"):
        lexical_module._element_runs_compiled(per_value, np.array([[3]]))
    with pytest.raises(TypeError, match="tuple"):
        lexical_module._element_runs_compiled([[5]], np.array([[0]]))


def test_training_bags_of_long_pages_alone():
    # Every page of a batch longer than the page field's sample: no page is read whole.
    from training.lexicon import Bags, LexicalCases

    text = np.arange(1000, dtype=np.int64) % 50
    ranges = np.array([[0, 600], [600, 1000]])
    cases = LexicalCases(text, np.zeros(0, np.int64), ranges, np.zeros((2, 4, 2), np.int64),
                         ranges.copy())
    bags = Bags(cases, np.arange(50), np.zeros(0, np.int64), page_sample=256)
    tokens, offsets, inverse = bags.batch(np.array([0, 1, 1]))[4]
    assert offsets.tolist() == [0, 256] and len(tokens) == 512 and inverse.tolist() == [0, 1, 1]
