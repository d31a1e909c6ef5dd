"""Runs in the case base: migration 0002 agrees with the model, records round-trip, the CLI."""

from __future__ import annotations

import json

import numpy as np
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from click.testing import CliRunner
from conftest import needs_torch
from sqlalchemy import inspect

from casebase.connection import _create_engine, migrate
from casebase.models import Base
from casebase.store import CaseBase
from noisecbr.score.artifact import load_model
from training.cli import runs, train_run
from training.runs import Run, compare_runs, finish_run, get_run, list_runs, start_run
from training.sources import synthetic


def _url(tmp_path):
    return f"sqlite:///{tmp_path / 'cb.sqlite'}"


def test_runs_model_and_migration_agree(tmp_path):
    assert "runs" in Base.metadata.tables and Run.__table__ is Base.metadata.tables["runs"]
    cb = CaseBase.open(_url(tmp_path))
    # The runs table arrived in 0002; later revisions keep it (0003 only widens label checks).
    assert cb.revision() >= "0002_runs"
    with cb.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    cb.close()


def test_0002_goes_down_and_up(tmp_path):
    engine = _create_engine(_url(tmp_path))
    migrate(engine)
    assert "runs" in inspect(engine).get_table_names()
    migrate(engine, "0001_initial", downgrade=True)
    assert "runs" not in inspect(engine).get_table_names()
    assert "cases" in inspect(engine).get_table_names()
    migrate(engine)
    assert "runs" in inspect(engine).get_table_names()
    engine.dispose()


def test_run_record_round_trips(tmp_path):
    cb = CaseBase.open(_url(tmp_path))
    data = {"cases": 10, "per_label": {"noise": 6, "data": 3, "mixture": 1}, "sha256": "ab" * 32}
    run_id = start_run(cb, "paper", {"lr": 0.5, "hidden": [14]}, 3, data)
    assert get_run(cb, run_id)["status"] == "running"
    metrics = {"unseen": {"rates": {"noise": 0.9, "data": 0.8, "mixture": float("nan")},
                          "mse": 0.1}}
    finish_run(cb, run_id, history=[(0.3, 0.4), (0.2, 0.35)], best_epoch=2, metrics=metrics,
               duration=1.5, artifact_path="/x/model.safetensors")
    cb.close()
    cb = CaseBase.open(_url(tmp_path))
    r = get_run(cb, run_id)
    assert (r["preset"], r["status"], r["seed"], r["best_epoch"]) == ("paper", "finished", 3, 2)
    assert r["hyperparameters"] == {"lr": 0.5, "hidden": [14]}
    assert r["data"] == data and r["data_hash"] == "ab" * 32
    assert r["history"] == [[0.3, 0.4], [0.2, 0.35]]
    assert r["metrics"]["unseen"]["rates"] == {"noise": 0.9, "data": 0.8, "mixture": None}
    assert r["duration"] == 1.5 and r["artifact_path"] == "/x/model.safetensors"
    assert r["code_version"].startswith("noisecbr") or r["code_version"]
    assert r["created_at"]
    assert [x["id"] for x in list_runs(cb)] == [run_id]
    cb.close()


@needs_torch
def test_train_run_records_everything_and_cli_reads_it(tmp_path):
    url = _url(tmp_path)
    cb = CaseBase.open(url)
    dataset = synthetic(n_sites=24, per_site=40)
    overrides = {"hidden": (16,), "batch_size": 64, "lr": 1e-2, "threads": 1}
    first = train_run(cb, "default", seed=1, out=tmp_path / "run1", epochs=3, quiet=True,
                      dataset=dataset, overrides=overrides)
    second = train_run(cb, "paper", seed=1, out=tmp_path / "run2", epochs=2, quiet=True,
                       dataset=dataset, overrides={"epoch_cases": 300, "threads": 1})
    cb.close()
    assert first["status"] == "finished" and len(first["history"]) == 3
    assert first["data"]["sha256"] == dataset.fingerprint()
    assert set(first["metrics"]) >= {"val", "unseen", "inference_subtrees_per_s"}
    # The run records what it took: the loading time and the process's peak memory.
    assert first["metrics"]["peak_memory_mb"] > 10 and first["metrics"]["load_seconds"] >= 0
    model = load_model(first["artifact_path"])
    assert model.metadata["run_id"] == first["id"] and model.metadata["preset"] == "default"
    for name in ("history.csv", "metrics.csv", "confusion.csv", "error_vs_epoch.png",
                 "report.txt", "run.json"):
        assert (tmp_path / "run1" / name).is_file(), name
    runner = CliRunner()
    out = runner.invoke(runs, ["list", "--db", url])
    assert out.exit_code == 0, out.output
    assert "paper" in out.output and "default" in out.output
    out = runner.invoke(runs, ["show", str(first["id"]), "--db", url])
    assert out.exit_code == 0 and "unseen" in out.output, out.output
    out = runner.invoke(runs, ["show", str(second["id"]), "--db", url, "--json"])
    assert json.loads(out.output)["preset"] == "paper"
    out = runner.invoke(runs, ["compare", str(first["id"]), str(second["id"]), "--db", url])
    assert out.exit_code == 0 and "hp.loss" in out.output, out.output
    assert runner.invoke(runs, ["show", "999", "--db", url]).exit_code != 0
    assert any(k == "hp.optimizer" for k, _, _ in compare_runs(first, second))


@needs_torch
def test_train_run_with_cv_reports_pooled_unseen_rates(tmp_path):
    cb = CaseBase.open(_url(tmp_path))
    dataset = synthetic()
    # As test_training_fit's separable-classes fit: no dropout, no calibration on a tiny set.
    overrides = {"hidden": (32, 16), "batch_size": 64, "lr": 1e-2, "dropout": 0.0,
                 "weight_decay": 1e-4, "calibrate": None, "threads": 1}
    run = train_run(cb, "default", seed=3, out=tmp_path / "run", epochs=30, quiet=True,
                    dataset=dataset, overrides=overrides, cv=3)
    cb.close()
    pooled = run["metrics"]["unseen_cv"]
    # Every case is scored once, by a model that never saw its site; the classes are separable.
    assert pooled["cases"] == len(dataset)
    assert sum(map(sum, pooled["confusion"])) == len(dataset)
    # Unscored rows (zeros) would all count as noise: data and mixture would fall to 0.
    assert min(pooled["rates"].values()) >= 0.9, pooled["rates"]
    assert "unseen_cv" in (tmp_path / "run" / "report.txt").read_text()


def test_a_case_base_too_small_to_split_by_site_fails_in_one_line(tmp_path):
    """Too few sites for a site-grouped split: a one-line ClickException that names the fix
    (another --split-seed when one works), and the run recorded as failed with it."""
    import click
    import pytest

    from training.splits import make_splits

    cb = CaseBase.open(_url(tmp_path))
    overrides = {"hidden": (8,), "batch_size": 64, "threads": 1}
    with pytest.raises(click.ClickException) as caught:
        train_run(cb, "default", quiet=True, dataset=synthetic(n_sites=1, per_site=20),
                  overrides=overrides, epochs=1, out=tmp_path / "r")
    assert "cannot be split by site" in caught.value.message
    assert "\n" not in caught.value.message
    failed = list_runs(cb)[0]
    assert failed["status"] == "failed" and failed["error"] == caught.value.message

    # Uneven sites: some seeds leave a part empty, others do not; the message names one.
    full = synthetic(n_sites=3, per_site=50)
    sizes = dict(zip(sorted(set(full.sites.tolist())), (50, 30, 20)))
    dataset = full.subset(np.sort(np.concatenate(
        [np.flatnonzero(full.sites == site)[:n] for site, n in sizes.items()])))
    works = [len(s.train) > 0 and len(s.val) > 0
             for s in (make_splits(dataset, seed=k) for k in range(30))]
    assert not all(works) and any(works)
    bad = works.index(False)
    with pytest.raises(click.ClickException) as caught:
        train_run(cb, "default", quiet=True, dataset=dataset, split_seed=bad,
                  overrides=overrides, epochs=1, out=tmp_path / "r")
    suggested = int(caught.value.message.split("--split-seed ")[1].split()[0])
    assert works[suggested] and suggested > bad
    cb.close()


def test_reading_runs_never_makes_a_case_base_and_a_missing_run_is_not_found(tmp_path):
    # issue 43, item 8: `runs list --db typo.sqlite` made an empty database, `runs show 9`
    # exited 1.
    from click.testing import CliRunner

    from casebase.store import CaseBase
    from noisecbr.exits import EXIT_NOT_FOUND
    from noisecbr_apps.cli import main

    typo = tmp_path / "typo.sqlite"
    listed = CliRunner().invoke(main, ["runs", "list", "--db", str(typo)])
    assert listed.exit_code == EXIT_NOT_FOUND and "no case base at" in listed.output
    assert not typo.exists()
    real = tmp_path / "cb.sqlite"
    CaseBase.open(str(real)).close()
    shown = CliRunner().invoke(main, ["runs", "show", "9", "--db", str(real)])
    assert shown.exit_code == EXIT_NOT_FOUND and "9" in shown.output
