"""Site-grouped fold models (``bench --cv``), with another set joining training (``--with``)."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from noisecbr.eval.datasets import read_dataset  # noqa: E402
from training import crossval  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"


def _pages():
    return list(read_dataset(FIXTURE))


def _record_fits(monkeypatch, model=None):
    """Replace training by a record of the sites each fold trained and validated on; every fit
    returns ``model`` (by default a label naming the fit)."""
    fits = []

    def fake_fit(train, val, preset, **kwargs):
        fits.append(set(train.sites) | set(val.sites))
        return SimpleNamespace(model=model if model is not None else f"model {len(fits)}")

    monkeypatch.setattr(crossval, "fit", fake_fit)
    return fits


def test_every_page_is_held_out_once_by_a_model_that_never_saw_its_site(monkeypatch):
    fits = _record_fits(monkeypatch)
    pages = _pages()
    out = crossval.fold_models(pages, folds=2, seed=0)
    held = [key for keys, _ in out for key in keys]
    assert sorted(held) == sorted(f"{page.dataset}/{page.id}" for page in pages)
    site_of = {f"{page.dataset}/{page.id}": page.site for page in pages}
    for (ids, _), seen in zip(out, fits):
        assert ids and not {site_of[i] for i in ids} & seen


def test_extra_set_trains_every_fold_except_on_held_out_sites(monkeypatch):
    fits = _record_fits(monkeypatch)
    pages = _pages()
    extra = [
        # the same site as some of the benched pages, and one no fold holds out
        SimpleNamespace(**{**vars(pages[0]), "id": "x-1", "dataset": "other"}),
        SimpleNamespace(**{**vars(pages[0]), "id": "x-2", "dataset": "other",
                           "url": "https://elsewhere.test/a", "site": "elsewhere.test"}),
    ]
    out = crossval.fold_models(pages, folds=2, seed=0, extra=extra)
    site_of = {f"{page.dataset}/{page.id}": page.site for page in pages}
    held = [key for keys, _ in out for key in keys]
    assert sorted(held) == sorted(site_of)  # only the benched set is scored
    for (ids, _), seen in zip(out, fits):
        held_sites = {site_of[i] for i in ids}
        assert not held_sites & seen
        assert "elsewhere.test" in seen
        assert (pages[0].site in seen) == (pages[0].site not in held_sites)
    assert np.any([pages[0].site in seen for seen in fits])


class _ScoresData:
    """A stand-in model of the four classes: every case it scores is data."""

    labels = ("noise", "data", "mixture", "comment")

    def predict_proba(self, X):
        return np.tile(np.float32([0.0, 1.0, 0.0, 0.0]), (len(X), 1))


def test_out_of_fold_scores_come_from_models_that_never_saw_the_case_site(monkeypatch):
    from training.sources import synthetic
    from training.splits import site_folds

    fits = _record_fits(monkeypatch, _ScoresData())
    dataset = synthetic(n_sites=9, per_site=10)
    proba = crossval.out_of_fold_scores(dataset, folds=3, seed=0)
    assert proba.shape == (len(dataset), 4) and np.all(proba.sum(1) == 1.0)  # every case scored
    folds = site_folds(dataset.sites, 3, 0)
    assert len(fits) == len(folds) == 3
    for (_, test), seen in zip(folds, fits):
        assert len(test) and not set(dataset.sites[test]) & seen


def test_the_recipe_folds_are_written_for_the_bench(monkeypatch, tmp_path):
    import json

    from noisecbr.cleaner import default_model

    pages = _pages()
    monkeypatch.setattr(crossval, "recipe_pages", lambda path, sets: [
        p for p in pages if p.dataset in sets])
    monkeypatch.setattr(crossval, "fold_models", lambda pages, folds, seed, progress, preset: [
        ([f"{p.dataset}/{p.id}" for p in pages[k::folds]], default_model())
        for k in range(folds)])
    sets = sorted({p.dataset for p in pages})
    fold_of = crossval.recipe_folds(tmp_path, tmp_path / "out", folds=2, sets=sets)
    written = json.loads((tmp_path / "out" / crossval.FOLDS_INDEX).read_text())
    assert written == fold_of and len(written) == len(pages)
    assert {(tmp_path / "out" / f"fold{k}.safetensors").is_file() for k in (0, 1)} == {True}


def test_the_recipe_weighs_the_article_body_sets():
    from training.recipe import ARTICLE_BODY_WEIGHT, set_weights, weighted
    from training.sources import synthetic

    weights = set_weights(np.array(["fundus/a", "dragnet/1", "utomo-big9/x", "modernweb-dev/2"]))
    assert weights.tolist() == [ARTICLE_BODY_WEIGHT, 1.0, ARTICLE_BODY_WEIGHT, 1.0]
    d = synthetic(n_sites=2, per_site=4)
    d.pages = np.array(["fundus/p"] * 4 + ["dragnet/q"] * 4)
    assert weighted(d).weights.tolist() == [ARTICLE_BODY_WEIGHT] * 4 + [1.0] * 4


@pytest.mark.parametrize("flag, lexical_dim", [([], 8), (["--without-lexical"], 0)])
def test_the_embedded_recipe_can_be_built_without_its_lexical_fields(monkeypatch, tmp_path,
                                                                     flag, lexical_dim):
    from noisecbr.cleaner import default_model
    from noisecbr.score.artifact import load_model
    from training import build_default
    from training.presets import get_preset

    presets, run_ids = [], []

    def fake_fit(train, val, preset, **kwargs):
        presets.append(get_preset(preset))
        run_ids.append(kwargs["metadata"]["run_id"])
        return SimpleNamespace(model=default_model(), best_epoch=1)

    monkeypatch.setattr(build_default, "fit", fake_fit)
    out = tmp_path / "model.safetensors"
    build_default.main([str(FIXTURE.parent), "--sets", FIXTURE.name, "--out", str(out), *flag])
    assert [p.lexical_dim for p in presets] == [lexical_dim]
    assert presets[0].hidden == get_preset("default").hidden  # the recipe otherwise
    assert ("without-lexical" in run_ids[0]) == (lexical_dim == 0)
    assert load_model(out).metadata == default_model().metadata  # the model fit gave, written


def test_a_model_without_lexical_fields_never_replaces_the_embedded_one(monkeypatch):
    from training import build_default

    monkeypatch.setattr(build_default, "fit", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit):
        build_default.main([str(FIXTURE.parent), "--without-lexical"])
