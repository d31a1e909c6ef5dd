"""The approximate nearest-case index: agrees with the exact search, follows the case base
(new cases, deletions, relabels, another model) without a rebuild until it must, and streams
the case base page by page."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("faiss", reason="the approximate index needs faiss-cpu")

from casebase import neighbours  # noqa: E402
from casebase.cli import cli  # noqa: E402
from casebase.neighbours import ApproximateIndex, index_directory, open_index  # noqa: E402
from casebase.retrieve import CaseIndex, explain_page  # noqa: E402
from casebase.store import CaseBase  # noqa: E402
from noisecbr.cleaner import Cleaner, default_model  # noqa: E402
from noisecbr.features import vectorize  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TRUTH = json.loads((FIXTURE / "ground-truth.json").read_text())
NEWS_URL = TRUTH["news-1"]["url"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("neighbours") / "cb.sqlite"
    result = CliRunner().invoke(cli, ["--db", f"sqlite:///{path}", "import", str(FIXTURE),
                                      "--quiet", "-j", "0", "--no-oracle"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def cb(stored, tmp_path):
    """A case base of its own for each test (the tests change it)."""
    path = tmp_path / "cb.sqlite"
    shutil.copy(stored, path)
    base = CaseBase.open(f"sqlite:///{path}")
    yield base
    base.close()


def _page(name: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes())


def _queries(model) -> np.ndarray:
    cleaner = Cleaner(model)
    page = cleaner.prepare(_page("news-1"), url=NEWS_URL)
    return vectorize(page.table)


def test_the_index_and_the_exact_search_agree(cb):
    model = default_model()
    exact = CaseIndex.build(cb, model)
    approximate = ApproximateIndex.open(cb, model, index_directory(cb))
    assert len(approximate) == len(exact) == cb.count_cases()
    queries = _queries(model)
    exact_ids, exact_sim = exact.nearest_cases(queries, 3)
    ids, sim = approximate.nearest_cases(queries, 3)
    # Stored float16, so a similarity is exact to about 1e-3; many subtrees have identical
    # twins, so the same similarities may come from other cases of equal vectors.
    close = np.abs(sim - exact_sim).max(axis=1) < 5e-3
    assert close.mean() >= 0.97
    assert (ids[:, 0] >= 0).all()
    first_equal = exact_sim[:, 0] - sim[:, 0] < 5e-3
    assert first_equal.all()
    # An explanation reads the same neighbours' labels either way.
    by_exact = explain_page(exact, cb, _page("news-1"), url=NEWS_URL, k=3)
    by_index = explain_page(approximate, cb, _page("news-1"), url=NEWS_URL, k=3)
    assert [e.path for e in by_exact] == [e.path for e in by_index]
    agree = [e.neighbours[0].label == a.neighbours[0].label
             for e, a in zip(by_exact, by_index)]
    assert np.mean(agree) >= 0.95


def test_a_label_change_reaches_the_index_at_once(cb):
    model = default_model()
    index = ApproximateIndex.open(cb, model, index_directory(cb))
    first = explain_page(index, cb, _page("news-1"), url=NEWS_URL, k=1)
    target = next(item for item in first if item.neighbours[0].label == "data")
    case_id = target.neighbours[0].case_id
    cb.relabel(case_id, "noise", note="test")
    again = explain_page(index, cb, _page("news-1"), url=NEWS_URL, k=1)
    assert {n.case_id: n.label for item in again for n in item.neighbours}[case_id] == "noise"


def test_new_cases_are_searched_beside_the_graph_and_deleted_ones_never_come_back(
        cb, monkeypatch):
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 1.0)  # a new page is a third of this one
    model = default_model()
    directory = index_directory(cb)
    index = ApproximateIndex.open(cb, model, directory)
    built = (directory / "cases.faiss").stat().st_mtime_ns
    before = len(index)
    # A page of a new site: its cases are new to the graph.
    html = _page("news-1").replace(b"harbour", b"estuary")
    added = cb.add_page(html, url="https://estuary.test/a", truth=TRUTH["news-1"]["articleBody"])
    reopened = ApproximateIndex.open(cb, model, directory)
    assert (directory / "cases.faiss").stat().st_mtime_ns == built  # not rebuilt
    assert len(reopened.delta) == sum(added.cases.values())
    assert len(reopened) == before + len(reopened.delta)
    ids, sim = reopened.nearest_cases(_queries(model), 1, exclude_site="harbour-gazette.test")
    new = set(reopened.delta.case_ids.tolist())
    assert np.mean([i in new for i in ids[:, 0].tolist()]) > 0.5  # the twin page's cases
    # Delete the cases nearest the page: they are masked, never returned.
    nearest = {int(i) for i in reopened.nearest_cases(_queries(model), 3)[0].ravel() if i >= 0}
    cb.delete_cases(sorted(nearest))
    masked = ApproximateIndex.open(cb, model, directory)
    assert (directory / "cases.faiss").stat().st_mtime_ns == built
    ids, _ = masked.nearest_cases(_queries(model), 3)
    assert not nearest & set(ids.ravel().tolist())
    assert len(masked) == len(reopened) - len(nearest)


def test_the_graph_is_rebuilt_past_its_share_of_changes_or_for_another_model(cb, monkeypatch):
    model = default_model()
    directory = index_directory(cb)
    ApproximateIndex.open(cb, model, directory)
    built = (directory / "cases.faiss").stat().st_mtime_ns
    cb.add_page(_page("news-1").replace(b"harbour", b"estuary"), url="https://estuary.test/a",
                truth=TRUTH["news-1"]["articleBody"])
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 0.0)
    rebuilt = ApproximateIndex.open(cb, model, directory)
    assert (directory / "cases.faiss").stat().st_mtime_ns != built
    assert len(rebuilt.delta) == 0 and len(rebuilt) == cb.count_cases()
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 0.10)
    # Another first layer: other embeddings.
    # (A model holds its layers transposed for the forward pass; its constructor takes them as
    # a file stores them.)
    layers = [w.T * (2.0 if k == 0 else 1.0) for k, w in enumerate(model.weights)]
    other = dataclasses.replace(model, weights=layers)
    again = (directory / "cases.faiss").stat().st_mtime_ns
    ApproximateIndex.open(cb, other, directory)
    assert (directory / "cases.faiss").stat().st_mtime_ns != again


def test_open_index_is_exact_for_a_small_case_base(cb, monkeypatch):
    model = default_model()
    assert isinstance(open_index(cb, model), CaseIndex)
    monkeypatch.setattr(neighbours, "EXACT_UP_TO", 10)
    assert isinstance(open_index(cb, model), ApproximateIndex)
    assert isinstance(open_index(cb, model, mode="exact"), CaseIndex)
    with pytest.raises(ValueError, match="index mode"):
        open_index(cb, model, mode="fast")


def test_explain_answers_from_the_approximate_index(cb, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(_page("news-1"))
    result = CliRunner().invoke(cli, ["--db", cb.url, "explain", str(page), "--url", NEWS_URL,
                                      "--index", "approximate", "--json", "-k", "2"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert items and all(len(item["neighbours"]) == 2 for item in items)
    assert index_directory(cb).is_dir()


def test_iter_arrays_streams_whole_pages_and_matches_load_arrays(cb):
    everything = cb.load_arrays()
    batches = list(cb.iter_arrays(batch=100))
    assert len(batches) > 1
    for batch in batches:  # a page is never split across batches
        assert not set(batch.page_ids.tolist()) & set().union(*(
            set(b.page_ids.tolist()) for b in batches if b is not batch))
    ids = np.concatenate([b.case_ids for b in batches])
    order = np.argsort(ids)
    assert np.array_equal(ids[order], everything.case_ids)
    assert np.array_equal(np.concatenate([b.X for b in batches])[order], everything.X)
    assert np.array_equal(np.concatenate([b.y for b in batches])[order], everything.y)
    assert np.array_equal(np.concatenate([b.sites for b in batches])[order], everything.sites)
    some = everything.case_ids[::7]
    chosen = list(cb.iter_arrays(only=some))
    assert sorted(np.concatenate([b.case_ids for b in chosen]).tolist()) == some.tolist()


def test_a_request_never_builds_the_index_the_command_does(cb, monkeypatch):
    from casebase.store import CaseBaseError

    monkeypatch.setattr(neighbours, "EXACT_UP_TO", 10)
    model = default_model()
    with pytest.raises(CaseBaseError, match="casebase index"):
        open_index(cb, model, build=False)
    result = CliRunner().invoke(cli, ["--db", cb.url, "index", "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"index of {cb.count_cases():,} cases" in result.stdout
    assert isinstance(open_index(cb, model, build=False), ApproximateIndex)


def test_an_id_is_never_reused_so_a_new_case_is_never_an_old_ones_embedding(cb, monkeypatch):
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 1.0)
    model = default_model()
    directory = index_directory(cb)
    ApproximateIndex.open(cb, model, directory)
    newest = max(c.id for c in cb.iter_cases())
    cb.delete_cases([newest])
    added = cb.add_page(_page("news-1").replace(b"harbour", b"estuary"),
                        url="https://estuary.test/a", truth=TRUTH["news-1"]["articleBody"])
    assert min(c.id for c in cb.iter_cases(page_id=added.page_id)) > newest
    reopened = ApproximateIndex.open(cb, model, directory)
    assert len(reopened.masked) == 1 and reopened.masked[0] == newest
    assert len(reopened.delta) == sum(added.cases.values())
    ids, _ = reopened.nearest_cases(_queries(model), 5)
    assert newest not in set(ids.ravel().tolist())


def test_the_change_token_stands_while_nothing_is_written_and_moves_on_any_commit(cb, tmp_path):
    token = cb.change_token()
    assert token is not None
    list(cb.iter_cases(batch=100))  # reads change nothing
    assert cb.change_token() == token
    other = CaseBase.open(cb.url)  # another connection, as another process would write
    try:
        case = next(other.iter_cases(batch=1))
        other.relabel(case.id, "noise" if case.label != "noise" else "data", note="test")
        moved = cb.change_token()
        assert moved != token
        cb.delete_cases([case.id])  # a write through this case base's own engine counts too
        assert cb.change_token() != moved
    finally:
        other.close()
    last = cb.change_token()
    cb.close()  # a token of the connection opened again is never an old one
    try:
        assert cb.change_token() != last
    finally:
        cb.close()
    memory = CaseBase.open("sqlite://")
    try:
        assert memory.change_token() is None  # no file to watch: the caller checks always
    finally:
        memory.close()


def test_the_service_checks_its_index_again_only_after_a_write(cb, monkeypatch):
    from casebase import retrieve
    from noisecbr_apps.service import work

    checks = []
    fingerprint = retrieve.index_fingerprint
    monkeypatch.setattr(retrieve, "index_fingerprint",
                        lambda *a: checks.append(1) or fingerprint(*a))
    monkeypatch.setattr(work, "_state", {"casebase": cb, "model": default_model(),
                                         "index": None})
    first = work._index()
    opened = len(checks)
    assert opened >= 1
    assert work._index() is first and len(checks) == opened  # nothing written: no check
    case = next(cb.iter_cases(batch=1))
    cb.delete_cases([case.id])
    second = work._index()
    assert len(checks) > opened and second is not first  # a deletion: checked, opened again
    assert case.id not in {n.case_id for item in explain_page(second, cb, _page("news-1"),
                                                               url=NEWS_URL, k=3)
                           for n in item.neighbours}
