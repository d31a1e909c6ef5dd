"""Training runs recorded in the case base database (table ``runs``, migration ``0002_runs``).

A run is created when training starts (status ``running``, so its id can go into the artifact)
and completed when it ends (``finished``, or ``failed`` with the error). It records the preset
and its hyperparameters, the seed, the data snapshot (cases per label, sites, pages and a sha256
over the case set: see :meth:`training.datasets.Dataset.fingerprint`), the per-epoch training
and validation errors, the final metrics, the duration, the artifact path, the code version
(package version + git commit when available) and when it was created.

The ``Run`` model is declared on the case base's declarative ``Base`` so that it is part of the
same metadata as the case tables (``tests/test_training_runs.py`` checks that the model and the
migration agree).
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, CheckConstraint, DateTime, Float, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, mapped_column

from casebase.models import Base
from noisecbr.result import LABELS

__all__ = ["Run", "RUN_STATUSES", "code_version", "start_run", "finish_run", "fail_run",
           "get_run", "list_runs", "run_dict", "compare_runs"]

RUN_STATUSES: tuple[str, ...] = ("running", "finished", "failed")


class Run(Base):
    """A training run: preset, hyperparameters, seed, data snapshot, history, metrics and artifact.
    """

    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint("status IN ('running', 'finished', 'failed')", name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    preset: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="running")
    hyperparameters: Mapped[dict] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(Integer)
    #: {"cases", "per_label", "sites", "pages", "sha256", "schema", "source", "splits": {...}}
    data: Mapped[dict] = mapped_column(JSON)
    #: sha256 of the case set (also in ``data``), as a column to find runs on the same data.
    data_hash: Mapped[str] = mapped_column(String(64))
    #: per epoch: [train_error, val_error]
    history: Mapped[list | None] = mapped_column(JSON)
    best_epoch: Mapped[int | None] = mapped_column(Integer)
    #: {"known": {...}, "unseen": {...}, "val": {...}, "inference_subtrees_per_s": ...}
    metrics: Mapped[dict | None] = mapped_column(JSON)
    duration: Mapped[float | None] = mapped_column(Float)
    artifact_path: Mapped[str | None] = mapped_column(Text)
    code_version: Mapped[str] = mapped_column(String(100))
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, server_default=func.current_timestamp())

    def __repr__(self) -> str:
        return f"Run(id={self.id}, preset={self.preset!r}, status={self.status!r})"


def code_version() -> str:
    """``noisecbr <version>`` plus ``+g<commit>`` (and ``.dirty``) when run from a git tree."""
    try:
        from importlib.metadata import version

        v = version("noisecbr")
    except Exception:
        v = "unknown"
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here,
                                capture_output=True, text=True, timeout=5)
        if commit.returncode == 0 and commit.stdout.strip():
            v += f"+g{commit.stdout.strip()}"
            dirty = subprocess.run(["git", "status", "--porcelain", "--", str(here)], cwd=here,
                                   capture_output=True, text=True, timeout=5)
            if dirty.returncode == 0 and dirty.stdout.strip():
                v += ".dirty"
    except (OSError, subprocess.SubprocessError):
        pass
    return v[:100]


def start_run(casebase, preset: str, hyperparameters: dict, seed: int, data: dict) -> int:
    """Insert a ``running`` run; returns its id."""
    with casebase.session() as session:
        run = Run(preset=preset, status="running", hyperparameters=hyperparameters, seed=seed,
                  data=data, data_hash=data.get("sha256", ""), code_version=code_version())
        session.add(run)
        session.flush()
        return int(run.id)


def finish_run(casebase, run_id: int, *, history, best_epoch: int, metrics: dict,
               duration: float, artifact_path: str | None) -> None:
    """Record a run's history, best epoch, metrics, duration and artifact; it is finished."""
    with casebase.session() as session:
        run = session.get(Run, run_id)
        if run is None:
            raise LookupError(f"no run {run_id}")
        run.status = "finished"
        run.history = [list(map(float, h)) for h in history]
        run.best_epoch = int(best_epoch)
        run.metrics = _jsonable(metrics)
        run.duration = float(duration)
        run.artifact_path = artifact_path


def fail_run(casebase, run_id: int, error: str) -> None:
    """Mark a run failed, with its error (at most 10 000 characters)."""
    with casebase.session() as session:
        run = session.get(Run, run_id)
        if run is not None:
            run.status = "failed"
            run.error = error[:10_000]


def _jsonable(value: Any) -> Any:
    # NaN is not JSON: store null.
    return json.loads(json.dumps(value, default=float).replace("NaN", "null"))


def run_dict(run: Run) -> dict:
    """A run as plain data."""
    return {
        "id": run.id, "preset": run.preset, "status": run.status,
        "hyperparameters": run.hyperparameters, "seed": run.seed, "data": run.data,
        "data_hash": run.data_hash, "history": run.history, "best_epoch": run.best_epoch,
        "metrics": run.metrics, "duration": run.duration, "artifact_path": run.artifact_path,
        "code_version": run.code_version, "error": run.error,
        "created_at": run.created_at.isoformat(sep=" ") if run.created_at else None,
    }


def get_run(casebase, run_id: int) -> dict:
    """The run ``run_id`` as plain data; LookupError when there is none."""
    with casebase.session() as session:
        run = session.get(Run, run_id)
        if run is None:
            raise LookupError(f"no run {run_id}")
        return run_dict(run)


def list_runs(casebase, limit: int = 50) -> list[dict]:
    """The newest ``limit`` runs as plain data."""
    with casebase.session() as session:
        rows = session.execute(select(Run).order_by(Run.id.desc()).limit(limit)).scalars()
        return [run_dict(r) for r in rows]


def compare_runs(a: dict, b: dict) -> list[tuple[str, Any, Any]]:
    """Rows (what, a, b) that differ or matter: hyperparameters, data, metrics."""
    rows: list[tuple[str, Any, Any]] = []
    for key in ("preset", "status", "seed", "data_hash", "best_epoch", "duration",
                "code_version"):
        rows.append((key, a.get(key), b.get(key)))
    ha, hb = a.get("hyperparameters") or {}, b.get("hyperparameters") or {}
    for key in sorted(set(ha) | set(hb)):
        if ha.get(key) != hb.get(key):
            rows.append((f"hp.{key}", ha.get(key), hb.get(key)))
    da, db = (a.get("data") or {}).get("per_label", {}), (b.get("data") or {}).get("per_label", {})
    for key in sorted(set(da) | set(db)):
        rows.append((f"cases.{key}", da.get(key), db.get(key)))
    ma, mb = a.get("metrics") or {}, b.get("metrics") or {}
    for part in ("known", "unseen", "val"):
        pa, pb = ma.get(part) or {}, mb.get(part) or {}
        for label in LABELS:
            rows.append((f"{part}.rate.{label}", (pa.get("rates") or {}).get(label),
                         (pb.get("rates") or {}).get(label)))
        rows.append((f"{part}.mse", pa.get("mse"), pb.get("mse")))
    return rows
