"""The cleaner's walk scores only the subtrees it reaches (noisecbr.decide.walk.walk_lazily,
noisecbr.pipeline.score_and_decide): the same decisions as the walk over every subtree's
scores, a fraction of the scores computed, and the full path wherever something reads them
all (the fallback, a site's memory or evidence, smoothing, a subclass's own scores)."""

from __future__ import annotations

import numpy as np
import pytest
from fuzzing import fixture_pages

import noisecbr.pipeline as pipeline
from noisecbr.cleaner import Cleaner
from noisecbr.decide.walk import MODES, Thresholds, walk, walk_lazily
from noisecbr.result import LABELS

PAGES = fixture_pages()


def _scores_of(proba: np.ndarray, asked: list[np.ndarray]):
    """A row scorer that reads ``proba`` and records the rows it was asked for."""
    def score_rows(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.copy())
        return proba[rows]
    return score_rows


@pytest.mark.parametrize("page", range(len(PAGES)))
def test_the_lazy_walk_decides_as_the_walk_over_every_score(page):
    cleaner = Cleaner()
    prepared = cleaner.prepare(PAGES[page])
    table = prepared.table
    rng = np.random.default_rng(page)
    # The model's scores, and random ones that send the walk down other paths.
    random = rng.dirichlet(np.ones(len(LABELS)), size=len(table)).astype(np.float32)
    for proba in (cleaner.score(prepared), random):
        for mode in MODES:
            thresholds = Thresholds.of(cleaner.model, mode)
            for lookahead in (1, 2, 4, 50):
                asked: list[np.ndarray] = []
                decision, scores = walk_lazily(table, _scores_of(proba, asked), thresholds,
                                               lookahead=lookahead)
                assert np.array_equal(decision, walk(table, proba, thresholds))
                rows = np.concatenate(asked)
                assert len(np.unique(rows)) == len(rows)  # no row scored twice
                # Every decided row was scored, and carries its scores.
                decided = np.flatnonzero(decision >= 0)
                assert np.isin(decided, rows).all()
                assert np.array_equal(scores[decided], proba[decided])


def test_the_lazy_walk_scores_a_part_of_a_page_level_by_level():
    cleaner = Cleaner()
    prepared = cleaner.prepare(PAGES[0])
    table = prepared.table
    proba = cleaner.score(prepared)
    asked: list[np.ndarray] = []
    decision, _ = walk_lazily(table, _scores_of(proba, asked), cleaner.thresholds,
                              lookahead=1)
    # One level a round: the body, then the children of each round's mixtures.
    assert asked[0].tolist() == [0]
    for before, rows in zip(asked, asked[1:]):
        assert set(table.parent[rows].tolist()) <= set(
            before[decision[before] == LABELS.index("mixture")].tolist())
    assert len(np.concatenate(asked)) < len(table)
    # A page of one element: one round, one row.
    body = cleaner.prepare("<html><body></body></html>")
    asked = []
    decision, _ = walk_lazily(body.table, _scores_of(np.eye(1, len(LABELS), 1,
                                                            dtype=np.float32), asked),
                              cleaner.thresholds)
    assert decision.tolist() == [LABELS.index("data")] and len(asked) == 1


@pytest.mark.parametrize("page", range(len(PAGES)))
def test_the_cleaner_decides_as_decide_over_every_score(page):
    cleaner = Cleaner()
    prepared = cleaner.prepare(PAGES[page])
    expected = pipeline.decide(prepared, cleaner.score(prepared),
                               cleaner.thresholds_for(prepared))
    lazy = pipeline.score_and_decide(prepared, cleaner.model, cleaner.thresholds_for(prepared))
    assert np.array_equal(lazy.decision, expected.decision)
    assert lazy.fell_back == expected.fell_back and lazy.mode == expected.mode
    decided = np.flatnonzero(lazy.decision >= 0)
    np.testing.assert_allclose(lazy.proba[decided], expected.proba[decided], atol=1e-5)
    full = cleaner.render(prepared, expected)
    result = cleaner.clean(PAGES[page])
    assert (result.text, result.title, result.fallback) == (full.text, full.title,
                                                            full.fallback)
    assert [(d.path, d.label) for d in result.decisions] == [
        (d.path, d.label) for d in full.decisions]


def test_clean_scores_no_page_whole_unless_the_walk_keeps_too_little(monkeypatch,
                                                                      article_html):
    whole: list[int] = []
    scores_of = pipeline.RowScores.__call__

    def counted(self, rows):
        if rows is None:
            whole.append(len(self.table))
        return scores_of(self, rows)

    monkeypatch.setattr(pipeline.RowScores, "__call__", counted)
    cleaner = Cleaner()
    text = cleaner.clean(article_html).text
    assert "Anemones open like flowers" in text
    assert whole == []
    # Rows scored noise: the lazy walk keeps nothing, and the page is then scored whole (by
    # the same row scorer) and decided as decide() decides it: here the model's scores keep
    # the article.
    noise = np.zeros((1, len(LABELS)), dtype=np.float32)
    noise[0, 0] = 1.0
    monkeypatch.setattr(pipeline.RowScores, "__call__", lambda self, rows: (
        counted(self, rows) if rows is None else np.repeat(noise, len(rows), axis=0)))
    result = cleaner.clean(article_html)
    assert whole == [len(cleaner.prepare(article_html).table)]
    assert result.text == text


class _EverySubtreeNoise(Cleaner):
    """A cleaner that scores pages its own way: every subtree but the body noise."""

    def score(self, page):
        proba = np.zeros((len(page.table), len(LABELS)), dtype=np.float32)
        proba[:, 0] = 1.0
        return proba


def test_a_subclass_that_scores_pages_its_own_way_is_heard(article_html):
    result = _EverySubtreeNoise().clean(article_html)
    assert result.fallback or result.text == ""
    assert result.text != Cleaner().clean(article_html).text


class _DecidesItsOwnWay(Cleaner):
    """A cleaner whose decisions are its own: everything below the body removed."""

    def decide(self, page, **evidence):
        decisions = super().decide(page, **evidence)
        decision = np.full(len(page.table), -1, dtype=np.int8)
        decision[0] = LABELS.index("mixture")
        decision[page.table.parent == 0] = LABELS.index("noise")
        return pipeline.Decisions(decisions.proba, decision, mode=decisions.mode)


def test_a_subclass_or_an_instance_that_decides_its_own_way_is_heard(article_html):
    assert _DecidesItsOwnWay().clean(article_html).text == ""
    cleaner = Cleaner()
    cleaner.score = _EverySubtreeNoise.score.__get__(cleaner)
    assert cleaner.clean(article_html).text != Cleaner().clean(article_html).text


def test_rows_that_are_not_elements_of_the_page_are_refused(article_html):
    from noisecbr.features.lexical import lexical_inputs
    from noisecbr.features.vectors import row_vectors

    cleaner = Cleaner()
    table = cleaner.prepare(article_html).table
    pooled = cleaner.model.lexicon.pooler(lexical_inputs(table))
    for rows_of in (row_vectors(table), pooled):
        for wrong in (np.array([len(table)]), np.array([-1]), np.ones(len(table), dtype=bool),
                      np.array([0.5]), np.array([2**63], dtype=np.uint64),
                      np.array([[0]]), np.array([-1], dtype=np.int32)):
            with pytest.raises(ValueError, match="row"):
                rows_of(wrong)
        assert rows_of([]).shape[0] == 0
        # Any integer type names the same rows.
        for kind in (np.int32, np.uint16, np.int64):
            same = np.array([0, len(table) - 1], dtype=kind)
            assert rows_of(same).tobytes() == rows_of(np.array([0, len(table) - 1])).tobytes()


@pytest.mark.skipif(__import__("noisecbr.native.backend").native.backend.BACKEND.kernel is None,
                    reason="the compiled kernel is not in use")
def test_the_kernel_reaches_the_rows_the_numpy_marks_reach():
    import random

    import noisecbr.decide.walk as walk_module

    rng = random.Random(0)
    for html in PAGES:
        table = Cleaner().prepare(html).table
        for _ in range(20):
            root = rng.randrange(len(table))
            children = [j for j in range(root + 1, int(table.end[root]))
                        if table.parent[j] == root] or [root]
            frontier = rng.sample(children, max(1, len(children) // 2))
            for lookahead in (1, 2, 4, 9):
                assert np.array_equal(
                    walk_module._within_reach_compiled(table, frontier, lookahead),
                    walk_module._within_reach_pure(table, frontier, lookahead))
    with pytest.raises(ValueError, match="ascending"):
        walk_module.BACKEND.kernel.rows_within(table.end, table.depth, [0, 0], 2)


def test_the_former_stage_names_still_work_and_say_what_replaced_them(article_html):
    import pytest

    cleaner = Cleaner()
    page = cleaner.prepare(article_html)
    with pytest.warns(DeprecationWarning, match="use Cleaner.score"):
        proba = cleaner.predict_proba(page)
    np.testing.assert_array_equal(proba, cleaner.score(page))
    with pytest.warns(DeprecationWarning, match="use Cleaner.decide"):
        decisions = cleaner.predict(page)
    np.testing.assert_array_equal(decisions.decision, cleaner.decide(page).decision)
    with pytest.warns(DeprecationWarning, match="override score instead"):
        class _Old(Cleaner):
            def predict_proba(self, page):
                return _EverySubtreeNoise.score(self, page)
    # While the name is deprecated, the cleaner still hears a subclass written for it.
    assert _Old().clean(article_html).text == _EverySubtreeNoise().clean(article_html).text
    assert _Old().clean(article_html).text != cleaner.clean(article_html).text
    with pytest.warns(DeprecationWarning, match="override decide instead"):
        class _OldDecides(Cleaner):
            def predict(self, page, **evidence):
                with pytest.warns(DeprecationWarning):
                    decisions = super().predict(page, **evidence)
                decision = np.full(len(page.table), -1, dtype=np.int8)
                decision[0] = LABELS.index("noise")
                return pipeline.Decisions(decisions.proba, decision, mode=decisions.mode)
    assert _OldDecides().clean(article_html).text == ""
