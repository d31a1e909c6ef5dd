"""Retrieve: stored cases nearest a page's subtrees, as an API and as `casebase explain`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from casebase.cli import cli
from casebase.retrieve import CaseIndex, explain_page
from casebase.store import CaseBase, CaseBaseError
from noisecbr.cleaner import Cleaner, default_model
from noisecbr.features import FEATURE_NAMES
from noisecbr.score.model import Model

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
NEWS_URL = json.loads((FIXTURE / "ground-truth.json").read_text())["news-1"]["url"]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('retrieve') / 'cb.sqlite'}"
    result = CliRunner().invoke(cli, ["--db", url, "import", str(FIXTURE), "--quiet", "-j", "0",
                                      "--no-oracle"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return url


def _news_page() -> bytes:
    return gzip.decompress((FIXTURE / "html" / "news-1.html.gz").read_bytes())


def test_a_stored_page_finds_its_own_cases(filled):
    with CaseBase.open(filled) as cb:
        index = CaseIndex.build(cb, default_model())
        assert len(index) == cb.count_cases()
        assert np.allclose(np.linalg.norm(index.embeddings, axis=1), 1.0, atol=1e-5)
        explanations = explain_page(index, cb, _news_page(), url=NEWS_URL, k=3)
    assert explanations and explanations[0].path == "/html/body"
    for item in explanations:
        # The page is stored: each subtree's own case has the same vector, so similarity 1.
        best = item.neighbours[0]
        assert best.similarity >= 0.999
        assert [n.similarity for n in item.neighbours] == sorted(
            (n.similarity for n in item.neighbours), reverse=True)
    own = [any(n.path == item.path and n.site == "harbour-gazette.test" for n in item.neighbours)
           for item in explanations]
    assert sum(own) >= 0.95 * len(own)


def test_other_sites_leaves_the_pages_own_site_out(filled):
    with CaseBase.open(filled) as cb:
        index = CaseIndex.build(cb, default_model())
        explanations = explain_page(index, cb, _news_page(), url=NEWS_URL, k=3,
                                    other_sites=True, path_contains="/article")
    assert explanations and all("/article" in item.path for item in explanations)
    sites = {n.site for item in explanations for n in item.neighbours}
    assert sites and "harbour-gazette.test" not in sites


def test_neighbours_show_current_labels(filled):
    with CaseBase.open(filled) as cb:
        index = CaseIndex.build(cb, default_model())
        first = explain_page(index, cb, _news_page(), url=NEWS_URL, k=1)
        target = next(item for item in first if item.neighbours[0].label == "data")
        case_id = target.neighbours[0].case_id
        cb.relabel(case_id, "noise", note="test: a correction shows at once")
        try:
            again = explain_page(index, cb, _news_page(), url=NEWS_URL, k=1)
            shown = {n.case_id: n.label for item in again for n in item.neighbours}
            assert shown[case_id] == "noise"
        finally:
            cb.relabel(case_id, "data", note="test: undone")


def _identity_model(width: int = 4) -> Model:
    """A model whose hidden layer is the first ``width`` features (ReLU of x)."""
    n = len(FEATURE_NAMES)
    first = np.zeros((width, n), dtype=np.float32)
    first[np.arange(width), np.arange(width)] = 1.0
    return Model(weights=[first, np.zeros((3, width), np.float32)],
                 biases=[np.zeros(width), np.zeros(3)], columns=np.arange(n),
                 mean=np.zeros(n), scale=np.ones(n))


def test_nearest_ranks_by_cosine_and_clips_k():
    model = _identity_model()
    stored = np.array([[1, 0, 0, 0], [0.9, 0.1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], np.float32)
    units = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    index = CaseIndex(model, np.array([10, 11, 12, 13]), np.array([0, 0, 1, 2]),
                      np.array(["a", "a", "b", "c"]), units)
    query = np.zeros((2, len(FEATURE_NAMES)), np.float32)
    query[0, :4] = [2, 0.1, 0.1, 0]  # cosines 0.9975, 0.9969, 0.0499, 0.0353
    query[1, :4] = [0, 0.2, 0, 3]    # cosines 0, 0.0073, 0.0665, 0.7055
    positions, similarity = index.nearest(query, k=2)
    assert positions.tolist() == [[0, 1], [3, 2]]
    assert similarity[0].tolist() == pytest.approx([0.9975, 0.9969], abs=1e-4)
    assert similarity[1].tolist() == pytest.approx([0.7055, 0.0665], abs=1e-4)
    positions, _ = index.nearest(query, k=10)  # more than stored: all of them, best first
    assert positions.tolist() == [[0, 1, 2, 3], [3, 2, 1, 0]]
    positions, _ = index.nearest(query, k=2, exclude_site="a")  # positions stay the index's
    assert positions.tolist() == [[2, 3], [3, 2]]
    with pytest.raises(ValueError):
        index.nearest(query, k=0)


def test_explain_command(filled, tmp_path):
    page = tmp_path / "news.html"
    page.write_bytes(_news_page())
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", filled, "explain", str(page), "--url", NEWS_URL,
                                 "-k", "2"])
    assert result.exit_code == 0, result.output
    assert "/html/body  <body>  mixture" in result.stdout
    assert "neighbours agree" in result.stdout and "subtrees explained" in result.stderr
    lines = runner.invoke(cli, ["--db", filled, "explain", str(page), "--json", "--path",
                                "/article"]).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert records and all(len(r["neighbours"]) == 3 and "/article" in r["path"]
                           for r in records)
    assert 0.0 <= records[0]["agreement"] <= 1.0
    usage = runner.invoke(cli, ["--db", filled, "explain", str(page), "--other-sites"])
    assert usage.exit_code == 2 and "--url" in usage.output
    binary = tmp_path / "image.html"
    binary.write_bytes(bytes(range(256)) * 20)
    bad = runner.invoke(cli, ["--db", filled, "explain", str(binary)])
    assert bad.exit_code == 6 and "binary" in bad.stderr
    junk_model = tmp_path / "junk.safetensors"
    junk_model.write_bytes(b"not a model")
    bad_model = runner.invoke(cli, ["--db", filled, "explain", str(page), "--model",
                                    str(junk_model)])
    assert bad_model.exit_code == 4 and "junk.safetensors" in bad_model.stderr
    assert "unexpected" not in bad_model.stderr


def test_explain_on_an_empty_case_base(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    with CaseBase.open(url) as cb, pytest.raises(CaseBaseError, match="no cases"):
        CaseIndex.build(cb, default_model())
    page = tmp_path / "p.html"
    page.write_text("<p>Hello there, reader.</p>")
    result = CliRunner().invoke(cli, ["--db", url, "explain", str(page)])
    assert result.exit_code == 5 and "no cases" in result.stderr


@pytest.mark.parametrize("k", [1, 3, 20])
def test_top_k_matches_a_full_sort(k):
    from casebase.retrieve import _top_k

    rng = np.random.default_rng(k)
    scores = rng.standard_normal((5, 200)).astype(np.float32)
    scores[:, 50:60] = scores[:, [0]]  # ties: the lower column comes first
    expected = np.array([sorted(range(200), key=lambda c: (-row[c], c))[:k] for row in scores])
    top, values = _top_k(scores.copy(), k)
    assert (top == expected).all()
    assert np.array_equal(values, np.take_along_axis(scores, expected, 1))


def test_the_index_file_is_reused_until_the_case_base_changes(filled, tmp_path, monkeypatch):
    cache = tmp_path / "index.npz"
    with CaseBase.open(filled) as cb:
        built = CaseIndex.build(cb, default_model(), cache=cache)
        assert cache.is_file()

        def no_rebuild(*args, **kwargs):
            raise AssertionError("rebuilt although the saved index is current")

        with monkeypatch.context() as patch:
            patch.setattr(CaseIndex, "_build", classmethod(no_rebuild))
            again = CaseIndex.build(cb, default_model(), cache=cache)
        assert np.array_equal(again.embeddings, built.embeddings)
        assert np.array_equal(again.case_ids, built.case_ids)
        assert list(again.sites) == list(built.sites)
        # A relabel, a corrupt file and another model each mean a rebuild.
        rebuilt = []
        original = CaseIndex._build.__func__

        def counting(cls, *args, **kwargs):
            rebuilt.append(1)
            return original(cls, *args, **kwargs)

        monkeypatch.setattr(CaseIndex, "_build", classmethod(counting))
        cb.relabel(int(built.case_ids[0]), "data", note="test")
        CaseIndex.build(cb, default_model(), cache=cache)
        CaseIndex.build(cb, default_model(), cache=cache)
        assert len(rebuilt) == 1
        cache.write_bytes(b"not an index")
        CaseIndex.build(cb, default_model(), cache=cache)
        assert len(rebuilt) == 2
        other = _identity_model(len(FEATURE_NAMES))
        CaseIndex.build(cb, other, cache=cache)
        assert len(rebuilt) == 3
        # A cache that cannot be written (here: its folder is missing) costs only the saving.
        unwritable = tmp_path / "missing" / "index.npz"
        assert len(CaseIndex.build(cb, default_model(), cache=unwritable)) == len(built)
        assert not unwritable.parent.exists()
        assert not list(tmp_path.glob("*.partial"))


class _ArticleScoredNoise(Cleaner):
    """The default model, except that every <article> scores noise: the walk keeps almost
    nothing of the news page, and the cleaner falls back."""

    def score(self, page):
        proba = super().score(page)
        proba[[tag == "article" for tag in page.table.tags]] = (0.97, 0.01, 0.01, 0.01)
        return proba


def test_explanations_are_the_decisions_the_result_comes_from(filled):
    model = default_model()
    for cleaner in (Cleaner(model), _ArticleScoredNoise(model)):
        result = cleaner.clean(_news_page(), url=NEWS_URL)
        with CaseBase.open(filled) as cb:
            index = CaseIndex.build(cb, model)
            explanations = explain_page(index, cb, _news_page(), url=NEWS_URL, k=1,
                                        cleaner=cleaner)
        assert [(e.path, e.decision) for e in explanations] == [
            (d.path, d.label) for d in result.decisions]
    assert result.fallback  # the second cleaner's: its explanations include the fallback's


def test_an_explanation_as_plain_data_is_every_field_of_it_and_its_neighbours(filled):
    # to_dict is written out field by field (dataclasses.asdict deep-copies hundreds of
    # neighbours a page); a field added to either dataclass must reach it.
    import dataclasses

    from casebase.retrieve import Explanation, Neighbour
    from noisecbr.result import named_probabilities

    near = Neighbour(case_id=7, label="noise", similarity=0.5, site="a.example", path="/html",
                     text="Home")
    item = Explanation(path="/html/body", tag="nav", decision="noise",
                       probabilities=(0.9, 0.05, 0.05), neighbours=(near, near),
                       source="memory", same_markup=(near,))
    expected = {**dataclasses.asdict(item),
                "probabilities": named_probabilities(item.probabilities), "agreement": 1.0}
    assert item.to_dict() == expected
    assert list(item.to_dict()) == list(expected)  # the same keys in the same order
    assert near.to_dict() == dataclasses.asdict(near)
    with CaseBase.open(filled) as cb:
        model = default_model()
        page = (FIXTURE / "html" / "news-1.html.gz").read_bytes()
        for explained in explain_page(CaseIndex.build(cb, model), cb, gzip.decompress(page),
                                      url=NEWS_URL, k=3):
            assert explained.to_dict() == {
                **dataclasses.asdict(explained),
                "probabilities": named_probabilities(explained.probabilities),
                "agreement": explained.agreement}
