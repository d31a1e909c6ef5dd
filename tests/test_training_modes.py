"""training.modes: threshold sets swept on out-of-fold scores, one per favor mode."""

import numpy as np

from noisecbr.cleaner import default_model
from noisecbr.layout import LabelledPage
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
