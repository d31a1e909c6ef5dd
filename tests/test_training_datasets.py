"""Site-grouped splits, the known-data hold-out, case weights, the npz cache."""

from __future__ import annotations

import numpy as np

from noisecbr.features import FEATURE_NAMES
from training.datasets import Dataset
from training.splits import known_holdout, make_splits, site_folds, split_by_site
from training.weights import case_weights


def _sites(seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 200, size=120)
    return np.repeat([f"s{i}" for i in range(len(sizes))], sizes)


def test_split_by_site_never_shares_a_site_and_is_seeded():
    sites = _sites()
    parts = split_by_site(sites, (0.7, 0.15, 0.15), seed=5)
    assert sum(len(p) for p in parts) == len(sites)
    seen = [set(sites[p]) for p in parts]
    assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])
    shares = [len(p) / len(sites) for p in parts]
    assert abs(shares[0] - 0.7) < 0.1 and abs(shares[1] - 0.15) < 0.1
    again = split_by_site(sites, (0.7, 0.15, 0.15), seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))
    other = split_by_site(sites, (0.7, 0.15, 0.15), seed=6)
    assert not np.array_equal(parts[0], other[0])


def test_site_folds_test_every_site_once():
    sites = _sites(1)
    folds = site_folds(sites, 4, seed=0)
    tested = np.concatenate([test for _, test in folds])
    assert sorted(tested) == list(range(len(sites)))
    for train, test in folds:
        assert not set(sites[train]) & set(sites[test])


def test_known_holdout_keeps_every_site_in_training():
    sites = np.array(["a"] * 6 + ["b"] * 4 + ["c"] * 2)
    pages = np.array(["a1", "a1", "a2", "a2", "a3", "a3", "b1", "b1", "b2", "b2", "c1", "c1"])
    train, known = known_holdout(sites, pages, np.arange(12), fraction=0.5, seed=0)
    assert set(sites[train]) == {"a", "b", "c"}
    assert set(sites[known]) <= {"a", "b"}
    assert not set(pages[train]) & set(pages[known])
    assert len(set(pages[known])) == 3  # a:2 of 3, b:1 of 2 (c has one page)


def _dataset(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, len(FEATURE_NAMES)), dtype=np.float32)
    X[: n // 4, FEATURE_NAMES.index("log_words")] = 0.0
    y = rng.choice(3, n, p=[0.7, 0.25, 0.05])
    sites = np.array([f"s{i % 40}" for i in range(n)])
    pages = np.array([f"s{i % 40}/{(i // 40) % 3}" for i in range(n)])
    return Dataset(X=X, y=y, sites=sites, pages=pages)


def test_case_weights_balance_classes_after_page_weights():
    d = _dataset()
    w = case_weights(d, class_power=1.0, page_power=1.0, wordless=0.5)
    assert abs(w.mean() - 1.0) < 1e-5
    mass = np.bincount(d.y, weights=w, minlength=3)
    np.testing.assert_allclose(mass, mass.mean(), rtol=1e-5)
    assert np.all(case_weights(d) == 1.0)


def test_npz_cache_and_fingerprint(tmp_path):
    d = _dataset()
    path = d.save_npz(tmp_path / "d.npz")
    back = Dataset.load_npz(path)
    assert back.fingerprint() == d.fingerprint()
    np.testing.assert_array_equal(back.X, d.X)
    shuffled = d.subset(np.random.default_rng(1).permutation(len(d)))
    changed = d.subset(np.arange(len(d)))
    changed.y[0] = (changed.y[0] + 1) % 3
    assert changed.fingerprint() != d.fingerprint()
    splits = make_splits(d, seed=0)
    assert len(splits.train) + len(splits.val) + len(splits.test) + len(splits.known) == len(d)
    assert shuffled.label_counts() == d.label_counts()


def test_deduplicated_cases_weigh_their_count():
    d = _dataset()
    d.counts = np.ones(len(d), dtype=np.int64)
    d.counts[0] = 5
    w = case_weights(d)
    assert w[0] == 5 * w[1]
    assert d.subset(np.array([0, 1])).counts.tolist() == [5, 1]


def test_from_casebase_reads_cases_and_frontier(tmp_path):
    from casebase.store import CaseBase
    from training.stored import from_casebase

    fixtures = __import__("pathlib").Path(__file__).parent / "fixtures"
    datasets = [p for p in fixtures.iterdir() if (p / "ground-truth.json").is_file()]
    if not datasets:
        import pytest

        pytest.skip("no fixture dataset")
    from click.testing import CliRunner

    from casebase.cli import cli as casebase_cli

    url = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    result = CliRunner().invoke(casebase_cli, ["--db", url, "import", "-q", "--no-oracle",
                                               "--jobs", "0", str(datasets[0])])
    assert result.exit_code in (0, 1), result.output
    cb = CaseBase.open(url)
    d = from_casebase(cb)
    cb.close()
    assert len(d) > 0 and d.case_ids is not None and d.frontier is not None
    assert d.frontier.any() and not d.frontier.all()
    assert d.X.shape[1] == len(FEATURE_NAMES)


def test_cases_from_the_casebase_have_the_lexical_fields_of_the_same_pages(tmp_path):
    # Training from a case base learns the same lexical fields as training from the pages:
    # the stored pages are parsed again and each case's element found at its position.
    from pathlib import Path

    from click.testing import CliRunner

    from casebase.cli import cli as casebase_cli
    from casebase.store import CaseBase
    from noisecbr.eval.datasets import read_dataset
    from noisecbr.features.lexical import bucket
    from training.lexicon import pool_cases
    from training.sources import from_labelled
    from training.stored import from_casebase

    fixture = Path(__file__).parent / "fixtures" / "casebase"
    url = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    result = CliRunner().invoke(casebase_cli, ["--db", url, "import", "-q", "--no-oracle",
                                               "--jobs", "0", str(fixture)])
    assert result.exit_code == 0, result.output
    with CaseBase.open(url) as cb:
        stored = from_casebase(cb)
    direct = from_labelled(list(read_dataset(fixture)), 1)
    assert stored.lexical is not None and len(stored.lexical) == len(stored)
    # The same words, whatever order the two read the cases in: compare the pooled fields.
    words = np.unique(np.concatenate([direct.lexical.text, direct.lexical.attr]))
    from noisecbr.features.lexical import Lexicon

    rng = np.random.default_rng(0)
    lexicon = Lexicon(words, rng.normal(size=(len(words), 3)).astype(np.float32), words,
                      rng.normal(size=(len(words), 3)).astype(np.float32))
    a = pool_cases(lexicon, stored.lexical)
    b = pool_cases(lexicon, direct.lexical)
    key = lambda d, pooled: sorted(map(tuple, np.round(np.c_[d.X[:, :40], pooled], 5)))  # noqa: E731
    assert key(stored, a) == key(direct, b)
    assert bucket("harbour") in set(stored.lexical.text.tolist())


def test_the_npz_cache_keeps_weights_counts_and_lexical_fields(tmp_path):
    from training.sources import synthetic

    d = synthetic(n_sites=3, per_site=5)
    d.weights = np.linspace(0.5, 2.0, len(d))
    d.counts = np.arange(1, len(d) + 1)
    back = Dataset.load_npz(d.save_npz(tmp_path / "cases.npz"))
    np.testing.assert_array_equal(back.weights, d.weights)
    np.testing.assert_array_equal(back.counts, d.counts)
    for name in ("text", "attr", "text_range", "attr_range", "page_range"):
        np.testing.assert_array_equal(getattr(back.lexical, name), getattr(d.lexical, name))


def test_the_recipes_relabelled_sets_follow_the_article_body_convention():
    # dragnet's pages are labelled as the article-body sets are: the caption its truth keeps
    # is noise; a page of another set keeps its truth's labels.
    from test_labelling import NEWS, NEWS_TRUTH

    from noisecbr.eval.datasets import LabelledPage
    from noisecbr.result import DATA, NOISE
    from training.recipe import RELABELLED_SETS
    from training.sources import from_labelled

    assert "dragnet" in RELABELLED_SETS
    pages = [LabelledPage(id="1", url="https://a.test/1", site="a.test", html=NEWS.encode(),
                          truth=NEWS_TRUTH, dataset=name) for name in ("dragnet", "other")]
    cases = from_labelled(pages, 1, relabelled=RELABELLED_SETS)
    caption = FEATURE_NAMES.index("tag:figure")
    for name, label in (("dragnet", NOISE), ("other", DATA)):
        mine = (cases.pages == f"{name}/1") & (cases.X[:, caption] == 1)
        assert mine.any() and set(cases.y[mine].tolist()) >= {label}, name
