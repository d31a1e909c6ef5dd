import json

import numpy as np
import pytest
from lxml import html as lxml_html

import noisecbr
from noisecbr.cleaner import Cleaner
from noisecbr.features import FEATURE_NAMES
from noisecbr.result import LABELS
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import Model, ModelError, SchemaMismatchError


def test_default_model_removes_furniture_and_keeps_article(article_html):
    result = noisecbr.clean(article_html, url="https://coastal.example/tide-pools")
    text = result.text
    assert "Anemones open like flowers" in text
    assert "Rangers run free guided walks" in text
    assert "Beadlet anemones in deep red and green" in text
    for noise in ("Accept all cookies", "All rights reserved", "About us", "Sitemap"):
        assert noise not in text


def test_result_html_reparses_and_decisions_are_complete(article_html):
    result = noisecbr.clean(article_html)
    document = lxml_html.document_fromstring(result.html)
    assert "Anemones" in document.text_content()
    assert result.decisions and result.decisions[0].path == "/html/body"
    assert {d.label for d in result.decisions} <= set(LABELS)
    for decision in result.decisions:
        assert sum(decision.probabilities) == pytest.approx(1.0, abs=1e-3)
    payload = json.loads(result.to_json())
    assert payload["text"] == result.text and len(payload["decisions"]) == len(result.decisions)


def _constant_model(noise: float, data: float, mixture: float) -> Model:
    """A model whose output ignores its input: softmax of fixed logits."""
    n = len(FEATURE_NAMES)
    logits = np.log(np.array([noise, data, mixture], dtype=np.float32))
    return Model(weights=[np.zeros((3, n), np.float32)], biases=[logits],
                 columns=np.arange(n), mean=np.zeros(n), scale=np.ones(n),
                 output_activation="softmax")


def test_walk_follows_the_scores():
    page = "<body><div><p>one two three</p><p>four five six</p></div></body>"
    everything_noise = Cleaner(_constant_model(0.9, 0.05, 0.05)).clean(page)
    assert everything_noise.text == ""
    # the body is never removed; its children are
    assert [d.label for d in everything_noise.decisions] == ["mixture", "noise"]
    everything_data = Cleaner(_constant_model(0.05, 0.9, 0.05), keep_threshold=0.8).clean(page)
    assert everything_data.text == "one two three\n\nfour five six"
    descended = Cleaner(_constant_model(0.2, 0.2, 0.6)).clean(page)
    assert descended.text == "one two three\n\nfour five six"
    assert [d.label for d in descended.decisions] == ["mixture", "mixture", "data", "data"]


def test_smoothing_option_runs(article_html):
    result = Cleaner(smooth=0.1).clean(article_html)
    assert "Anemones" in result.text


def test_model_round_trip_and_schema_check(tmp_path):
    model = _constant_model(0.2, 0.3, 0.5)
    path = save_model(model, tmp_path / "m.safetensors")
    loaded = load_model(path)
    x = np.random.default_rng(0).random((4, len(FEATURE_NAMES)), dtype=np.float32)
    assert np.allclose(loaded.predict_proba(x), model.predict_proba(x))
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(path))
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as handle:
        meta = json.loads(handle.metadata()["noisecbr"])
    meta["vector_schema"] = -1
    save_file(tensors, str(tmp_path / "old.safetensors"), metadata={"noisecbr": json.dumps(meta)})
    with pytest.raises(SchemaMismatchError):
        load_model(tmp_path / "old.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"not a model")
    with pytest.raises(ModelError):
        load_model(tmp_path / "junk.safetensors")



def _normalised_forward(model: Model, x: np.ndarray) -> np.ndarray:
    """The forward pass as written in the artifact: normalise, then the layers (float64)."""
    h = (x[:, model.columns] - model.mean.astype(np.float64)) / model.scale.astype(np.float64)
    for k, (w, b) in enumerate(zip(model.raw_weights(), model.biases)):
        h = h @ w.T.astype(np.float64) + b
        if k < len(model.biases) - 1:
            h = np.maximum(h, 0.0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("mean_scale", [(0.5, 0.2), (5_000.0, 1.0)])
def test_forward_pass_equals_the_normalised_formula(mean_scale):
    # The normalisation is folded into the first layer unless a column's mean dwarfs its scale
    # (the second case), where the unfolded form keeps the digits; both give the formula's scores.
    rng = np.random.default_rng(1)
    n = len(FEATURE_NAMES)
    mean, scale = mean_scale
    model = Model(weights=[rng.normal(size=(16, n)).astype(np.float32),
                           rng.normal(size=(3, 16)).astype(np.float32)],
                  biases=[rng.normal(size=16).astype(np.float32),
                          rng.normal(size=3).astype(np.float32)],
                  columns=np.arange(n), mean=np.full(n, mean), scale=np.full(n, scale))
    assert (model._first is None) == (mean / scale > 1_000)
    x = (mean + scale * rng.normal(size=(50, n))).astype(np.float32)
    assert np.allclose(model.predict_proba(x), _normalised_forward(model, x), atol=1e-4)
def test_bad_input_gets_a_clear_error():
    with pytest.raises(noisecbr.EmptyInputError):
        noisecbr.clean(b"")


def test_threshold_tests_decide_as_scalar_comparisons():
    from noisecbr.decide.walk import _reaches

    rng = np.random.default_rng(0)
    for threshold in (0.5, 0.9, 0.1, 0.123456789, np.float64(0.9), np.float32(0.9), 1, 0):
        edge = np.float32(threshold)
        scores = np.concatenate([
            rng.random(200).astype(np.float32),
            [np.nextafter(edge, np.float32(0)), edge, np.nextafter(edge, np.float32(2))],
        ]).astype(np.float32)
        expected = [bool(score >= threshold) for score in scores]  # numpy scalar comparisons
        assert _reaches(scores, threshold).tolist() == expected


@pytest.mark.parametrize("columns", [np.array([0, 0, 1]), np.array([-1, 2, 3]),
                                     np.array([0, 1, len(FEATURE_NAMES)])])
def test_model_refuses_bad_input_columns(columns):
    # Repeated or out-of-range columns: a clear ModelError when the model is built, not an
    # IndexError (or a silently wrong first layer) when it scores a page.
    with pytest.raises(ModelError):
        Model(weights=[np.ones((3, len(columns)), np.float32)], biases=[np.zeros(3)],
              columns=columns, mean=np.zeros(len(columns)), scale=np.ones(len(columns)))


def test_a_page_stays_whole_after_its_html_is_rendered(article_html):
    # The same prepared page decided under two threshold sets: reading the first result's HTML
    # must not change what the second renders.
    from noisecbr.pipeline import decide, render

    cleaner = Cleaner()
    page = cleaner.prepare(article_html)
    proba = cleaner.score(page)
    strict = Cleaner(favor="precision").thresholds
    first = render(page, decide(page, proba, strict))
    assert first.html  # rendered from a copy of the page
    again = render(page, decide(page, proba, cleaner.thresholds))
    fresh = cleaner.clean(article_html)
    assert (again.text, again.html, again.markdown) == (fresh.text, fresh.html, fresh.markdown)


def test_clean_takes_what_cleaner_takes_and_url_by_name():
    import inspect

    from noisecbr.cleaner import Cleaner, clean

    options = set(inspect.signature(Cleaner).parameters) - {"model"}
    assert options <= set(inspect.signature(clean).parameters)
    for function in (clean, Cleaner.clean, Cleaner.prepare):
        assert inspect.signature(function).parameters["url"].kind is inspect.Parameter.KEYWORD_ONLY
    page = "<html><body><article><p>" + "Words about the harbour and its boats. " * 20 + \
        "</p></article></body></html>"
    assert clean(page, noise_threshold=0.99).text == Cleaner(noise_threshold=0.99).clean(page).text
