"""training.modes: threshold sets swept on out-of-fold scores, one per favor mode."""

import numpy as np

from noisecbr.cleaner import default_model
from noisecbr.eval.datasets import LabelledPage
from training.modes import BETAS, Sweep, choose_modes, sweep

SETS = [{"noise": 0.3, "keep": 0.9, "leaf": 0.3}, {"noise": 0.5, "keep": 0.9, "leaf": 0.5},
        {"noise": 0.7, "keep": 0.9, "leaf": 0.7}]


def test_each_mode_takes_the_set_of_its_best_f_score():
    result = Sweep(SETS, precision=np.array([0.95, 0.85, 0.70]),
                   recall=np.array([0.70, 0.90, 0.99]), pages=10)
    assert np.argmax(result.f(1.0)) == 1
    modes = choose_modes(result)
    assert modes == {"precision": SETS[0], "balanced": SETS[1], "recall": SETS[2]}
    assert set(modes) == set(BETAS)


def test_sweep_scores_every_set_on_the_pages(article_html):
    truth = "Anemones open like flowers when the tide comes in"
    pages = [LabelledPage(id=str(i), url=f"https://a{i}.test/", site=f"a{i}.test",
                          html=article_html, truth=truth, dataset="t") for i in range(2)]
    model = default_model()
    result = sweep(pages, {("t", "0"): model, ("t", "1"): model}, sets=SETS)
    assert result.pages == 2 and result.precision.shape == (3,)
    assert ((result.recall >= 0) & (result.recall <= 1)).all()
    # Removing more where unsure never raises recall.
    assert result.recall[0] <= result.recall[2] + 1e-9


def test_modes_weigh_each_development_set_the_same():
    # Pooled over pages the big set would choose set 0; each set's own F1 averaged, set 1.
    big = (np.array([0.95, 0.85, 0.60]), np.array([0.95, 0.86, 0.99]))  # 90 pages
    small = (np.array([0.50, 0.85, 0.70]), np.array([0.50, 0.85, 0.95]))  # 10 pages
    pooled_p = (9 * big[0] + small[0]) / 10
    pooled_r = (9 * big[1] + small[1]) / 10
    result = Sweep(SETS, precision=pooled_p, recall=pooled_r, pages=100,
                   by_dataset={"big": big, "small": small})
    assert np.argmax(result.f(1.0)) == 0
    assert np.argmax(result.f_by_dataset(1.0)) == 1
    assert choose_modes(result)["balanced"] == SETS[1]


def test_sweep_records_each_dataset(article_html):
    truth = "Anemones open like flowers when the tide comes in"
    pages = [LabelledPage(id=str(i), url=f"https://a{i}.test/", site=f"a{i}.test",
                          html=article_html, truth=truth if i else "", dataset=f"set{i}")
             for i in range(2)]
    model = default_model()
    result = sweep(pages, {("set0", "0"): model, ("set1", "1"): model}, sets=SETS)
    assert sorted(result.by_dataset) == ["set0", "set1"]
    precision, recall = result.by_dataset["set1"]
    assert precision.shape == recall.shape == (3,)
    # The pooled figures are the mean of the two one-page sets'.
    assert np.allclose(result.recall, (result.by_dataset["set0"][1] + recall) / 2)
