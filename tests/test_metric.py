import pytest

from noisecbr.eval.metric import PageScore, aggregate, score_page, shingles, tokens


def test_identical_texts_score_one():
    s = score_page("the quick brown fox jumps over", "the quick brown fox jumps over")
    assert (s.precision, s.recall) == (1.0, 1.0)
    assert aggregate([s]).f1 == 1.0


def test_disjoint_texts_score_zero():
    s = score_page("alpha beta gamma delta", "one two three four")
    assert s.precision == 0.0 and s.recall == 0.0
    assert aggregate([s]).f1 == 0.0


def test_empty_prediction_has_zero_recall():
    s = score_page("", "one two three four five")
    assert s.recall == 0.0 and s.precision == 0.0


def test_both_empty_is_perfect():
    s = score_page("", "")
    assert (s.precision, s.recall) == (1.0, 1.0)


def test_hand_computed_partial_overlap():
    # truth shingles: (a b c d), (b c d e); predicted: (a b c d), (b c d x) → TP 1, FP 1, FN 1
    s = score_page("a b c d x", "a b c d e")
    assert s.tp == pytest.approx(1 / 3) and s.fp == pytest.approx(1 / 3)
    assert s.precision == pytest.approx(0.5) and s.recall == pytest.approx(0.5)


def test_multiset_counts_and_short_texts():
    assert shingles(tokens("a b c d a b c d"))[("a", "b", "c", "d")] == 2
    assert shingles(["a", "b"]) == {("a", "b"): 1}
    # a repeated passage counts once per occurrence in the truth
    s = score_page("a b c d a b c d", "a b c d")
    assert s.precision < 1.0 and s.recall == 1.0


def test_macro_average_weighs_pages_equally():
    pages = [PageScore(1.0, 0.0, 0.0), PageScore(0.0, 0.5, 0.5)]
    scores = aggregate(pages)
    assert scores.precision == pytest.approx(0.5) and scores.recall == pytest.approx(0.5)
