"""Training from a spool: a case base's vectors and token ranges written to disk as it is read,
and read back a batch at a time, give the same data and the same model as in memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from training.spool import Sink, gather, is_spooled, release, take

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"


def test_a_sink_gives_the_same_arrays_in_memory_and_on_disk(tmp_path):
    rng = np.random.default_rng(0)
    parts = [rng.normal(size=(k, 3)).astype(np.float32) for k in (4, 0, 7)]
    memory, disk = Sink(), Sink(tmp_path)
    for part in parts:
        memory.append("x", part)
        disk.append("x", part)
    a, b = memory.finish("x", np.float32, (3,)), disk.finish("x", np.float32, (3,))
    np.testing.assert_array_equal(a, b)
    assert is_spooled(b) and not is_spooled(a)
    # Mapped and unlinked: nothing stays in the spool directory once the arrays are gone.
    assert list(tmp_path.iterdir()) == []
    assert Sink(tmp_path).finish("never", np.int64, (2,)).shape == (0, 2)


def test_a_sink_refuses_rows_of_another_shape(tmp_path):
    sink = Sink(tmp_path)
    sink.append("x", np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="after rows of"):
        sink.append("x", np.zeros((2, 4), np.float32))
    sink.close()
    assert list(tmp_path.iterdir()) == []


def test_take_of_a_spooled_array_is_spooled_and_equal(tmp_path, monkeypatch):
    import training.spool as spool

    monkeypatch.setattr(spool, "CHUNK_ROWS", 5)  # several chunks
    sink = Sink(tmp_path)
    values = np.arange(60, dtype=np.int64).reshape(20, 3)
    sink.append("x", values)
    spooled = sink.finish("x", np.int64, (3,))
    index = np.array([19, 0, 3, 3, 7, 12, 18])
    taken = take(spooled, index)
    release(spooled)
    assert is_spooled(taken)
    np.testing.assert_array_equal(taken, values[index])
    np.testing.assert_array_equal(take(spooled, np.zeros(20, bool)), values[:0])
    np.testing.assert_array_equal(take(values, index), values[index])


def test_gather_reads_scattered_and_close_rows_of_a_spooled_array(tmp_path):
    sink = Sink(tmp_path)
    values = np.arange(3000, dtype=np.float32).reshape(1000, 3)
    sink.append("x", values)
    spooled = sink.finish("x", np.float32, (3,))
    for index in ([999, 0, 500, 0], [10, 12, 11], [5]):  # one by one; mapped; one row
        np.testing.assert_array_equal(gather(spooled, index), values[index])
    np.testing.assert_array_equal(gather(spooled[100:], [0, 899]), values[[100, 999]])
    view = np.asarray(spooled)[100:]  # a view starting inside the file, read one row at a time
    np.testing.assert_array_equal(gather(view, [899, 0, 450]), values[[999, 100, 550]])
    np.testing.assert_array_equal(gather(spooled, np.arange(1000) % 500 == 7), values[[7, 507]])
    with pytest.raises(IndexError):
        gather(spooled, [1000, 0])


@pytest.fixture(scope="module")
def casebase_url(tmp_path_factory):
    from click.testing import CliRunner

    from casebase.cli import cli as casebase_cli

    url = f"sqlite:///{tmp_path_factory.mktemp('spool') / 'cb.sqlite'}"
    result = CliRunner().invoke(casebase_cli, ["--db", url, "import", "-q", "--no-oracle",
                                               "--jobs", "0", str(FIXTURE)])
    assert result.exit_code == 0, result.output
    return url


def _fields(dataset):
    return {"X": dataset.X, "y": dataset.y, "sites": dataset.sites, "pages": dataset.pages,
            "case_ids": dataset.case_ids, "frontier": dataset.frontier,
            **{f"lexical.{name}": getattr(dataset.lexical, name)
               for name in ("text", "attr", "text_range", "attr_range", "page_range")}}


def test_a_spooled_casebase_reads_as_the_casebase_in_memory(casebase_url, tmp_path):
    from casebase.store import CaseBase
    from training.stored import from_casebase

    with CaseBase.open(casebase_url) as cb:
        memory = from_casebase(cb)
        spooled = from_casebase(cb, spool=tmp_path)
    assert len(memory) > 100 and memory.frontier.any()
    assert is_spooled(spooled.X) and is_spooled(spooled.lexical.attr_range)
    assert not is_spooled(memory.X)
    for name, value in _fields(memory).items():
        np.testing.assert_array_equal(_fields(spooled)[name], value, err_msg=name)
    # A subset (a split's part) is spooled too, and equal to the subset in memory.
    index = np.flatnonzero(memory.y != 1)[::3]
    part = spooled.subset(index)
    assert is_spooled(part.X) and is_spooled(part.lexical.text_range)
    for name, value in _fields(memory.subset(index)).items():
        np.testing.assert_array_equal(_fields(part)[name], value, err_msg=name)
    assert spooled.fingerprint() == memory.fingerprint()


def test_a_model_trained_from_the_spool_equals_the_one_trained_in_memory(casebase_url,
                                                                         tmp_path):
    from casebase.store import CaseBase
    from training.splits import make_splits
    from training.stored import from_casebase
    from training.train import fit

    with CaseBase.open(casebase_url) as cb:
        memory = from_casebase(cb)
        spooled = from_casebase(cb, spool=tmp_path)
    splits = make_splits(memory, seed=1)
    models = [fit(d.subset(splits.train), d.subset(splits.val), "default", seed=0,
                  progress=False, epochs=2).model for d in (memory, spooled)]
    a, b = models
    for left, right in zip(a.weights + a.biases, b.weights + b.biases):
        np.testing.assert_array_equal(left, right)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.lexicon.text_vectors, b.lexicon.text_vectors)


def test_train_run_leaves_nothing_in_its_spool_directory(casebase_url, tmp_path):
    import shutil

    from casebase.store import CaseBase
    from training.cli import train_run

    db = tmp_path / "cb.sqlite"
    shutil.copy(casebase_url.removeprefix("sqlite:///"), db)
    spool = tmp_path / "spool"
    spool.mkdir()
    with CaseBase.open(f"sqlite:///{db}") as cb:
        run = train_run(cb, "default", out=tmp_path / "run", epochs=1, quiet=True,
                        spool=spool)
    assert run["status"] == "finished" and run["metrics"]["peak_memory_mb"] > 0
    assert list(spool.iterdir()) == []
