"""The nearest-case index follows the case base (issue 54): the commands that change it bring
the index ``casebase explain`` reads up to date, with no `casebase index` step, and a failure
to index loses no case."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import text

pytest.importorskip("faiss", reason="the approximate index needs faiss-cpu")

from casebase import neighbours, upkeep  # noqa: E402
from casebase.cli import cli  # noqa: E402
from casebase.neighbours import ApproximateIndex, index_directory, open_index  # noqa: E402
from casebase.retrieve import CaseIndex, index_fingerprint  # noqa: E402
from casebase.store import CaseBase  # noqa: E402
from noisecbr.cleaner import Cleaner, default_model  # noqa: E402
from noisecbr.features import VECTOR_SCHEMA, vectorize  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TRUTH = json.loads((FIXTURE / "ground-truth.json").read_text())
NEWS_URL = TRUTH["news-1"]["url"]


def _run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _page(name: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes())


@pytest.fixture
def approximate(monkeypatch):
    """The fixture case base is a few thousand cases: past these, explain reads the
    approximate index and a write folds every change into it."""
    monkeypatch.setattr(neighbours, "EXACT_UP_TO", 10)
    monkeypatch.setattr(upkeep, "FOLD_FROM", 1)
    # Every list searched: the index answers as the exact search does (to its 16-bit codes).
    monkeypatch.setattr(neighbours, "NPROBE", 1 << 14)


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """The fixture dataset imported through the CLI, its index built by the import."""
    path = tmp_path_factory.mktemp("follows") / "cb.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(neighbours, "EXACT_UP_TO", 10)
        result = _run("--db", str(path), "import", str(FIXTURE), "--quiet", "-j", "0",
                      "--no-oracle")
    assert result.exit_code == 0, result.output
    assert "nearest-case approximate index built" in result.stderr
    return path


@pytest.fixture
def db(imported, tmp_path) -> Path:
    """A copy of the imported case base and its index for each test (the tests change it)."""
    path = tmp_path / "cb.sqlite"
    shutil.copy(imported, path)
    shutil.copytree(imported.with_name(imported.name + ".index"),
                    path.with_name(path.name + ".index"))
    return path


def _current(path: Path) -> ApproximateIndex:
    """The index as a reader opens it, checked to hold every case and nothing beside it."""
    with CaseBase.open(str(path)) as cb:
        index = ApproximateIndex.open(cb, default_model(), index_directory(cb), build=False)
        assert len(index.delta) == 0 and len(index.masked) == 0
        with_vectors = sum(len(batch.case_ids) for batch in cb.iter_arrays())
        assert index.index.ntotal == with_vectors
    return index


def _no_build(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("built again although the index is current")

    monkeypatch.setattr(ApproximateIndex, "build", classmethod(refuse))


def _explained(path: Path, tmp_path: Path, *options: str) -> list[dict]:
    page = tmp_path / "page.html"
    page.write_bytes(_page("news-1"))
    result = _run("--db", str(path), "explain", str(page), "--url", NEWS_URL, "--json",
                  "-k", "3", *options)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _agree_with_exact(path: Path, tmp_path: Path) -> None:
    """explain's neighbours (from the index) are the exact search's: the same similarities
    (to the index's 16-bit codes) and labels; cases of equal similarity may come in another
    order."""
    by_index = _explained(path, tmp_path)
    by_exact = _explained(path, tmp_path, "--index", "exact", "--no-cache")
    assert [e["path"] for e in by_index] == [e["path"] for e in by_exact]
    for a, b in zip(by_index, by_exact):
        assert len(a["neighbours"]) == len(b["neighbours"]) == 3
        similarity = [[n["similarity"] for n in e["neighbours"]] for e in (a, b)]
        assert np.allclose(*similarity, atol=5e-3)
    with CaseBase.open(str(path)) as cb:
        for item in by_index:
            for n in item["neighbours"]:
                assert cb.get_case(n["case_id"]).label == n["label"]


def test_import_builds_the_index_explain_reads(db, tmp_path, approximate, monkeypatch):
    _current(db)
    _no_build(monkeypatch)  # the first explanation after the import builds nothing
    with CaseBase.open(str(db)) as cb:  # the service, which never builds, has it too
        assert isinstance(open_index(cb, default_model(), build=False), ApproximateIndex)
    _agree_with_exact(db, tmp_path)


def test_label_dedupe_delete_and_another_page_keep_it_current(db, tmp_path, approximate,
                                                              monkeypatch):
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 100.0)  # folded, not built anew
    directory = db.with_name(db.name + ".index")
    trained = json.loads((directory / "meta.json").read_text())["lists"]
    with CaseBase.open(str(db)) as cb:
        first, second = [case.id for _, case in zip(range(2), cb.iter_cases(batch=2))]
        label = cb.get_case(first).label
    relabel = "noise" if label != "noise" else "data"
    assert _run("--db", str(db), "label", str(first), relabel).exit_code == 0
    _current(db)
    assert _explained(db, tmp_path)  # labels are read from the case base: nothing to fold
    assert _run("--db", str(db), "delete", "--yes", str(second)).exit_code == 0
    _current(db)
    # Another page, then the same one again from another source: dedupe merges the twins.
    page, truth = tmp_path / "estuary.html", tmp_path / "estuary.txt"
    page.write_bytes(_page("news-1").replace(b"harbour", b"estuary"))
    truth.write_text(TRUTH["news-1"]["articleBody"], encoding="utf-8")
    for source in ("import", "copy"):
        result = _run("--db", str(db), "import-page", str(page), "--url",
                      "https://estuary.test/a", "--truth", str(truth), "--source", source)
        assert result.exit_code == 0, result.output
        assert "approximate index updated" in result.stderr
        _current(db)
    result = _run("--db", str(db), "dedupe")
    assert result.exit_code == 0 and "merged 0 " not in result.stdout, result.output
    assert "approximate index updated" in result.stderr
    _current(db)
    meta = json.loads((directory / "meta.json").read_text())
    assert meta["lists"] == trained and meta["changed"] > 0  # its centroids kept
    _agree_with_exact(db, tmp_path)
    with CaseBase.open(str(db)) as cb:
        cases = {c.id for c in cb.iter_cases()}
    assert second not in cases
    assert second not in set(np.load(directory / "ids.npy").tolist())


def test_past_its_share_of_changes_a_write_builds_it_anew(db, tmp_path, approximate,
                                                         monkeypatch):
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 0.0)
    directory = db.with_name(db.name + ".index")
    with CaseBase.open(str(db)) as cb:
        some = [case.id for _, case in zip(range(3), cb.iter_cases(batch=3))]
    result = _run("--db", str(db), "delete", "--yes", *map(str, some))
    assert "approximate index built" in result.stderr, result.output
    assert "changed" not in json.loads((directory / "meta.json").read_text())
    _current(db)


def test_a_failing_index_build_leaves_the_cases_committed(tmp_path, approximate,
                                                         monkeypatch):
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ApproximateIndex, "build", classmethod(fail))
    path = tmp_path / "cb.sqlite"
    result = _run("--db", str(path), "import", str(FIXTURE), "--quiet", "-j", "0",
                  "--no-oracle")
    assert result.exit_code == 0, result.output
    assert "the changes are stored, but the nearest-case index could not" in result.stderr
    with CaseBase.open(str(path)) as cb:
        assert cb.count_cases() > 100
        assert {p for p, in cb.engine.connect().execute(text(
            "SELECT external_id FROM pages"))} == set(TRUTH)
    assert not path.with_name(path.name + ".index").exists()
    # explain cannot build it either: it says so and searches exactly.
    page = tmp_path / "page.html"
    page.write_bytes(_page("news-1"))
    result = _run("--db", str(path), "explain", str(page), "--url", NEWS_URL, "--json")
    assert result.exit_code == 0, result.output
    assert "searching exactly" in result.stderr
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert items and all(len(item["neighbours"]) == 3 for item in items)


def test_an_interrupted_index_build_keeps_the_import(tmp_path, approximate, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ApproximateIndex, "build", classmethod(interrupt))
    path = tmp_path / "cb.sqlite"
    result = _run("--db", str(path), "import", str(FIXTURE), "--quiet", "-j", "0",
                  "--no-oracle")
    assert result.exit_code == 130
    assert "the changes are stored" in result.stderr
    with CaseBase.open(str(path)) as cb:
        assert cb.count_cases() > 100


def test_no_index_leaves_it_to_explain(tmp_path, approximate):
    path = tmp_path / "cb.sqlite"
    result = _run("--db", str(path), "import", str(FIXTURE), "--quiet", "-j", "0",
                  "--no-oracle", "--no-index")
    assert result.exit_code == 0, result.output
    assert not path.with_name(path.name + ".index").exists()
    assert _explained(path, tmp_path)
    _current(path)  # built by the explanation and kept


def test_an_index_of_another_model_is_left_to_casebase_index(db, approximate, monkeypatch):
    directory = db.with_name(db.name + ".index")
    meta = json.loads((directory / "meta.json").read_text())
    (directory / "meta.json").write_text(json.dumps({**meta, "digest": "another:model"}))
    _no_build(monkeypatch)
    with CaseBase.open(str(db)) as cb:
        case = next(cb.iter_cases(batch=1))
        cb.delete_cases([case.id])
        assert upkeep.follow(cb).action == "kept"


def test_the_exact_search_file_follows_labels_and_new_cases(tmp_path, monkeypatch):
    monkeypatch.setattr(upkeep, "EXACT_SAVED_FROM", 1)
    path = tmp_path / "cb.sqlite"
    result = _run("--db", str(path), "import", str(FIXTURE), "--quiet", "-j", "0",
                  "--no-oracle")
    assert result.exit_code == 0, result.output
    npz = path.with_name(path.name + ".explain-index.npz")
    model = default_model()
    original = CaseIndex._build.__func__

    def current() -> CaseIndex:
        with CaseBase.open(str(path)) as cb:
            saved = CaseIndex.load(npz, model, index_fingerprint(cb, model))
            assert saved is not None
            fresh = original(CaseIndex, cb, model)
        assert np.array_equal(saved.case_ids, fresh.case_ids)
        assert np.array_equal(saved.labels, fresh.labels)
        assert np.array_equal(saved.embeddings, fresh.embeddings)
        return saved

    current()
    with CaseBase.open(str(path)) as cb:
        case = next(cb.iter_cases(batch=1))
    rebuilt = []
    monkeypatch.setattr(CaseIndex, "_build", classmethod(
        lambda cls, *a, **k: rebuilt.append(1) or original(cls, *a, **k)))
    assert _run("--db", str(path), "label", str(case.id),
                "noise" if case.label != "noise" else "data").exit_code == 0
    assert rebuilt == []  # a relabel refreshes the saved labels, no embedding
    current()
    assert _run("--db", str(path), "delete", "--yes", str(case.id)).exit_code == 0
    assert len(rebuilt) == 1
    current()


def test_revectorized_pages_reach_an_index_built_before(db, approximate, monkeypatch):
    monkeypatch.setattr(neighbours, "REBUILD_SHARE", 1.0)
    with CaseBase.open(str(db)) as cb:
        with cb.engine.begin() as connection:
            page_id = connection.execute(text("SELECT MIN(id) FROM pages")).scalar_one()
            connection.execute(text("UPDATE pages SET vector_schema = :s WHERE id = :p"),
                               {"s": VECTOR_SCHEMA - 1, "p": page_id})
        model = default_model()
        directory = index_directory(cb)
        ApproximateIndex.build(cb, model, directory)  # without the page's cases
        stale = [c.id for c in cb.iter_cases(page_id=page_id)]
        cb.revectorize()  # the same case ids, now of the current schema
        index = ApproximateIndex.open(cb, model, directory, build=False)
        assert set(stale) <= set(index.delta.case_ids.tolist())
        queries = vectorize(Cleaner(model).prepare(_page("news-1"), url=NEWS_URL).table)
        assert len(index.nearest_cases(queries, 3)[0])
