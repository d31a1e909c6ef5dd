"""The page's kind: its evidence, the kind model, the network reading it, the override, the
headline on request, the confidence and the fallback hook (models made by hand: the engine's
behaviour, whatever the embedded model learnt)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLE_PAGE

from noisecbr import Cleaner
from noisecbr.eval.metric import word_f1
from noisecbr.features import FEATURE_NAMES
from noisecbr.pipeline import prepare
from noisecbr.render.confidence import CONFIDENCE_EVIDENCE, ConfidenceModel
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.kind import (
    EVIDENCE_NAMES,
    KINDS,
    KindModel,
    nested_types,
    one_hot,
    url_words,
)
from noisecbr.score.model import Model, SchemaMismatchError

HTML = EXAMPLE_PAGE.read_bytes()


def kind_model(favourite: str = "forum", seed: int = 0) -> KindModel:
    """A kind model whose biases make ``favourite`` the most probable kind of every page."""
    rng = np.random.default_rng(seed)
    bias = np.zeros(len(KINDS))
    bias[KINDS.index(favourite)] = 50.0
    return KindModel([rng.normal(0, 0.01, (len(KINDS), len(EVIDENCE_NAMES)))], [bias],
                     np.zeros(len(EVIDENCE_NAMES)), np.ones(len(EVIDENCE_NAMES)))


def kind_reading_model(seed: int = 0, confidence: ConfidenceModel | None = None,
                       **metadata) -> Model:
    """A small random network over every column that reads the page's kind."""
    rng = np.random.default_rng(seed)
    width = len(FEATURE_NAMES)
    return Model(weights=[rng.normal(0, 0.05, (8, width + len(KINDS))),
                          rng.normal(0, 0.5, (4, 8))],
                 biases=[np.zeros(8), np.array([0.0, 2.0, 0.0, -3.0])],
                 columns=np.arange(width), mean=np.zeros(width), scale=np.ones(width),
                 kind_inputs=KINDS, kind_model=kind_model(), confidence_model=confidence,
                 metadata=dict(metadata))


def confidence_of_kept_share() -> ConfidenceModel:
    """A confidence model whose expected F1 is the share of the page's words kept."""
    weights = np.zeros(len(CONFIDENCE_EVIDENCE))
    weights[CONFIDENCE_EVIDENCE.index("kept:share")] = 1.0
    knots = np.linspace(0.0, 1.0, 11)
    return ConfidenceModel(weights=weights, bias=0.0, mean=np.zeros(len(weights)),
                           scale=np.ones(len(weights)), knots=knots, values=knots)


def test_word_f1_counts_lower_cased_words_as_a_bag():
    assert word_f1("The the CAT", "the cat the") == 1.0
    assert word_f1("the the the", "the cat") == pytest.approx(0.4)  # P 1/3, R 1/2
    assert word_f1("", "") == 1.0 and word_f1("", "words") == 0.0


def test_the_evidence_has_one_number_per_name_and_reads_the_declarations():
    page = prepare(HTML, url="https://shop.example/products/red-shoe")
    evidence = page.evidence
    assert evidence.shape == (len(EVIDENCE_NAMES),) and np.all(np.isfinite(evidence))
    assert evidence[EVIDENCE_NAMES.index("url:product")] == 1.0
    assert url_words("https://x.test/docs/api-v2/Intro") == ["docs", "api", "v", "intro"]
    ld = [{"@type": "QAPage", "mainEntity": {"@type": "Question", "acceptedAnswer": [
        {"@type": "Answer"}]}}]
    assert sorted(nested_types(ld)) == ["Answer", "QAPage", "Question"]


def test_the_kind_model_gives_probabilities():
    model = kind_model("listing")
    proba = model.predict_proba(np.zeros(len(EVIDENCE_NAMES)))
    assert proba.shape == (len(KINDS),) and proba.sum() == pytest.approx(1.0)
    assert KINDS[int(np.argmax(proba))] == "listing"
    rows = model.predict_proba(np.zeros((3, len(EVIDENCE_NAMES))))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0)


def test_the_kind_shifts_the_first_layer_as_an_input_column_would():
    model = kind_reading_model()
    rng = np.random.default_rng(1)
    vectors = rng.random((5, len(FEATURE_NAMES))).astype(np.float32)
    kinds = one_hot("product")
    # The same network over the vectors with the kind probabilities appended as columns.
    first = np.asarray(model.raw_weights()[0], dtype=np.float64)
    hidden = np.maximum(np.hstack([vectors, np.tile(kinds, (5, 1))]) @ first.T, 0.0)
    logits = hidden @ np.asarray(model.raw_weights()[1], dtype=np.float64).T + model.biases[1]
    expected = np.exp(logits - logits.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(vectors, kinds=kinds), expected, atol=1e-5)
    with pytest.raises(ValueError, match="kind"):
        model.predict_proba(vectors)


def test_a_model_file_keeps_its_kind_and_confidence_models(tmp_path):
    model = kind_reading_model(confidence=confidence_of_kept_share(),
                               kind_modes=dict.fromkeys(KINDS, "recall"))
    loaded = load_model(save_model(model, tmp_path / "m.safetensors"))
    assert loaded.kind_inputs == KINDS
    evidence = np.linspace(0, 1, len(EVIDENCE_NAMES))
    np.testing.assert_allclose(loaded.kind_model.predict_proba(evidence),
                               model.kind_model.predict_proba(evidence))
    row = np.linspace(0, 1, len(CONFIDENCE_EVIDENCE))
    assert loaded.confidence_model.predict(row) == model.confidence_model.predict(row)
    assert loaded.metadata["kind_modes"]["forum"] == "recall"


def test_a_kind_model_of_other_evidence_is_refused(tmp_path, monkeypatch):
    path = save_model(kind_reading_model(), tmp_path / "m.safetensors")
    import noisecbr.score.artifact as model_module

    monkeypatch.setattr(model_module, "EVIDENCE_NAMES", (*EVIDENCE_NAMES, "new:thing"))
    with pytest.raises(SchemaMismatchError, match="evidence"):
        load_model(path)


def test_the_result_reports_the_kind_and_the_override_replaces_it():
    cleaner = Cleaner(kind_reading_model(kind_modes={**dict.fromkeys(KINDS, "balanced"),
                                                     "forum": "recall"}))
    guessed = cleaner.clean(HTML)
    assert guessed.page_type == "forum" and set(guessed.page_types) == set(KINDS)
    assert guessed.mode == "recall"  # the forum kind's mode
    given = cleaner.clean(HTML, page_type="product")
    assert given.page_type == "product" and given.page_types["product"] == 1.0
    assert given.mode == "balanced"
    assert given.to_dict()["page_type"] == "product"
    with pytest.raises(ValueError, match="kind"):
        cleaner.clean(HTML, page_type="blog")


def test_the_headline_first_on_request():
    cleaner = Cleaner(kind_reading_model())
    plain = cleaner.clean(HTML, url="https://example.org/a")
    titled = Cleaner(kind_reading_model(), title=True).clean(HTML, url="https://example.org/a")
    headline = "Tide pools of the northern coast"
    assert not plain.text.startswith(headline)
    assert titled.text.startswith(headline + "\n\n")
    assert titled.markdown.startswith(f"# {headline}\n\n")
    assert titled.text.endswith(plain.text)


def test_the_headline_follows_the_kind_when_not_given():
    titles = {**dict.fromkeys(KINDS, False), "forum": True}
    cleaner = Cleaner(kind_reading_model(kind_titles=titles))
    assert cleaner.clean(HTML).text.startswith("Tide pools")  # the model guesses a forum
    assert not cleaner.clean(HTML, page_type="article").text.startswith("Tide pools")


def test_confidence_is_an_expected_f1_in_the_unit_interval():
    result = Cleaner(kind_reading_model(confidence=confidence_of_kept_share())).clean(HTML)
    assert 0.0 <= result.confidence <= 1.0
    assert result.to_dict()["confidence"] == result.confidence
    assert Cleaner(kind_reading_model()).clean(HTML).confidence is None


def test_the_fallback_is_called_exactly_for_pages_under_the_threshold():
    model = kind_reading_model(confidence=confidence_of_kept_share())
    pages = [HTML, b"<html><body><nav><a href='/'>Home</a></nav><p>" + b"word " * 40
             + b"</p></body></html>"]
    confidences = [Cleaner(model).clean(page).confidence for page in pages]
    assert confidences[0] != confidences[1]
    threshold = (confidences[0] + confidences[1]) / 2
    called = []

    def other(html, url):
        called.append(html)
        return "from the other extractor"

    cleaner = Cleaner(model, fallback=other, fallback_below=threshold)
    results = [cleaner.clean(page) for page in pages]
    expected = [page for page, c in zip(pages, confidences) if c < threshold]
    assert called == expected and len(called) == 1
    for result, confidence in zip(results, confidences):
        handed = confidence < threshold
        assert (result.text == "from the other extractor") == handed
        assert result.extractor == ("fallback" if handed else "noisecbr")
    declining = Cleaner(model, fallback=lambda html, url: None, fallback_below=1.0)
    assert declining.clean(HTML).extractor == "noisecbr"


def test_a_fallback_needs_a_confidence_model_and_a_threshold_in_range():
    with pytest.raises(ValueError, match="confidence"):
        Cleaner(kind_reading_model(), fallback=lambda html, url: "")
    with pytest.raises(ValueError, match="fallback_below"):
        Cleaner(kind_reading_model(confidence=confidence_of_kept_share()),
                fallback=lambda html, url: "", fallback_below=1.5)


def test_a_score_that_is_not_a_number_is_the_least_trust():
    model = confidence_of_kept_share()
    row = np.zeros(len(CONFIDENCE_EVIDENCE))
    row[CONFIDENCE_EVIDENCE.index("kept:share")] = np.nan
    assert model.predict(row) == model.values[0]


def test_the_kind_given_is_not_evidence_of_the_results_quality():
    # A network that ignores the kind (its kind weights are 0) and one mode for every kind:
    # giving the kind changes what the result reports, never how far to trust it.
    model = kind_reading_model(confidence=confidence_of_kept_share(),
                               kind_modes=dict.fromkeys(KINDS, "balanced"))
    model.weights[0][-len(KINDS):] = 0.0
    cleaner = Cleaner(model)
    read, given = cleaner.clean(HTML), cleaner.clean(HTML, page_type="listing")
    assert read.text == given.text and given.page_type == "listing"
    assert read.confidence == given.confidence


def test_the_reported_kind_is_the_one_the_walk_follows():
    from noisecbr.result import CleanResult

    kinds = np.zeros(len(KINDS))
    kinds[:2] = [0.49996, 0.50004]  # the same after rounding
    result = CleanResult(html="", text="", kinds=kinds)
    assert result.page_type == KINDS[1] == KINDS[int(np.argmax(kinds))]


def test_the_stages_called_one_by_one_report_the_kind():
    from noisecbr.pipeline import decide

    cleaner = Cleaner(kind_reading_model())
    page = cleaner.prepare(HTML)
    decided = decide(page, cleaner.score(page), cleaner.thresholds_for(page))
    assert decided.kinds is None  # decide alone knows no model
    assert cleaner.render(page, decided).page_type == "forum"
