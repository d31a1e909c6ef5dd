"""Click commands for training: ``train`` and the ``runs`` group (list / show / compare).

The noisecbr CLI attaches them (``cli.add_command(train)``, ``cli.add_command(runs)``);
``python -m training.cli`` runs them standalone.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import click

from casebase.arguments import CheckedGroup
from noisecbr.exits import EXIT_NOT_FOUND
from noisecbr.result import PAPER_LABELS

from .presets import PRESETS

__all__ = ["train", "runs", "main", "train_run"]

_DB_HELP = "Case base: SQLAlchemy URL or SQLite path [env NOISECBR_DB; default: casebase's]."


def _open(db: str | None):
    """The case base of ``--db``, as it is: a file that does not exist is not made (a mistyped
    path would become an empty case base), exit 3 with one line."""
    import training.runs  # noqa: F401  (registers the runs table on the case base metadata)
    from casebase.store import CaseBase, NotFoundError

    try:
        return CaseBase.open(db, create=False)
    except NotFoundError as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(EXIT_NOT_FOUND)


def _echo(quiet: bool, message: str = "") -> None:
    if not quiet:
        click.echo(message)


def _peak_memory_mb() -> float:
    """The largest resident memory of this process so far (MB): what a run records, so that
    a case base's growth shows where training will stop fitting the machine."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def train_run(casebase, preset: str = "default", seed: int = 0, out: str | Path | None = None,
              epochs: int | None = None, quiet: bool = False, split_seed: int = 0,
              dataset=None, overrides: dict | None = None, cv: int | None = None,
              spool: str | Path | None = None) -> dict:
    """Everything ``noisecbr train`` does, callable from Python: read the case base (or use
    ``dataset``), split by site, record the run, fit, export, evaluate, write reports, finish
    the run. Returns the run record.

    The case base is streamed into a spool (:mod:`training.spool`) in a temporary directory
    under ``spool`` (default: beside the run directory), removed afterwards: the vectors and
    token ranges are read from there a batch at a time, so a case base larger than memory
    trains (the run records its peak resident memory). The spool and the split parts
    written from it take about 1.8 KB of disk a case while the run lasts.

    ``cv`` (K ≥ 2) also trains K models on site-grouped folds (drawn with ``split_seed``) and
    reports the per-class rates of every case scored by the model that held its site out
    (``unseen_cv``, and ``unseen_cv_walk`` for the walk-frontier cases): unseen-site rates over
    all sites, where one split's test sites move the figures by several points."""
    # Beside the runs by default: the system's temporary directory may be memory (tmpfs),
    # which would hold the spool in RAM unseen by the run's peak-memory figure.
    spool = Path(spool) if spool else (Path(out).parent if out else Path("runs"))
    spool.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".noisecbr-spool-", dir=spool,
                                     ignore_cleanup_errors=True) as directory:
        return _train_run(casebase, preset, seed, out, epochs, quiet, split_seed, dataset,
                          overrides, cv, Path(directory))


def _train_run(casebase, preset, seed, out, epochs, quiet, split_seed, dataset, overrides, cv,
               spool: Path) -> dict:
    """:func:`train_run` with its spool directory."""
    from noisecbr.result import LABELS
    from noisecbr.score.artifact import save_model

    from .presets import get_preset
    from .report import evaluate, format_table, inference_speed, write_reports
    from .runs import fail_run, finish_run, get_run, start_run
    from .splits import make_splits
    from .spool import gather
    from .stored import from_casebase
    from .train import fit

    t0 = time.perf_counter()
    if dataset is None:
        dataset = from_casebase(casebase, spool=spool, progress=not quiet)
    if len(dataset) == 0:
        raise click.ClickException("the case base has no cases of this vector schema: "
                                   "import a dataset first (casebase import DIR)")
    load_seconds = time.perf_counter() - t0
    _echo(quiet, f"loaded {len(dataset):,} cases in {load_seconds:.1f} s "
                 f"({', '.join(f'{k} {v:,}' for k, v in dataset.label_counts().items())})")
    p = get_preset(preset, epochs=epochs, **(overrides or {}))
    splits = make_splits(dataset, seed=split_seed)
    parts = splits.describe(dataset)
    snapshot = dataset.snapshot()
    snapshot["splits"] = {"seed": split_seed, **parts}
    run_id = start_run(casebase, p.name, p.hyperparameters(), seed, snapshot)
    out = Path(out) if out else Path("runs") / f"run-{run_id}"
    problem = _split_problem(dataset, splits, split_seed)
    if problem is not None:  # recorded as the run's failure, said in one line
        fail_run(casebase, run_id, problem)
        raise click.ClickException(problem)
    try:
        train_set, val_set = dataset.subset(splits.train), dataset.subset(splits.val)
        result = fit(train_set, val_set, p, seed=seed, progress=not quiet,
                     metadata={"run_id": run_id, "data_sha256": snapshot["sha256"],
                               "split_seed": split_seed})
        model = result.model
        artifact = save_model(model, out / "model.safetensors")
        metrics = {"val": evaluate(model, val_set), **_part_metrics(model, dataset, splits)}
        if cv:
            _echo(quiet, f"cross-validating on {cv} site-grouped folds")
            metrics.update(_cv_metrics(dataset, cv, p, seed, split_seed, progress=not quiet))
        sample = gather(dataset.X, splits.test[:200_000])
        speed = inference_speed(model, sample)
        write_reports(out, result.history, result.best_epoch, metrics, result.details,
                      title=p.name)
        summary = {**metrics, "inference_subtrees_per_s": speed,
                   "train_seconds": result.duration, "epochs_run": len(result.history),
                   "load_seconds": load_seconds, "peak_memory_mb": _peak_memory_mb(),
                   "labels": list(LABELS)}
        finish_run(casebase, run_id, history=result.history, best_epoch=result.best_epoch,
                   metrics=summary, duration=result.duration,
                   artifact_path=str(artifact.resolve()))
    except BaseException as error:
        fail_run(casebase, run_id, f"{type(error).__name__}: {error}")
        raise
    (out / "run.json").write_text(json.dumps(get_run(casebase, run_id), indent=2,
                                             default=str))
    if not quiet:
        click.echo(f"run {run_id}: preset {p.name}, seed {seed}, best epoch {result.best_epoch}"
                   f" of {len(result.history)}")
        click.echo(format_table({p.name: metrics}, parts=tuple(metrics)))
        click.echo(f"peak memory {summary['peak_memory_mb']:,.0f} MB (loading the cases "
                   f"{load_seconds:.1f} s)")
        click.echo(f"training time {result.duration:.1f} s on {len(train_set):,} cases; "
                   f"inference {speed:,.0f} subtrees/s (numpy, batches of 1024)")
        click.echo(f"artifact {artifact}; reports in {out}")
    return get_run(casebase, run_id)


#: How many split seeds after the chosen one are tried for a suggestion.
_SEEDS_TRIED = 50


def _split_problem(dataset, splits, split_seed: int) -> str | None:
    """Why the site-grouped split cannot train a model (a part that needs cases has none), and
    the fix; None when it can. A case base of few sites, or one site holding most cases, may
    leave the training or validation part empty for some seeds."""
    from .splits import make_splits

    if len(splits.train) and len(splits.val):
        return None
    empty = "training" if not len(splits.train) else "validation"
    sites = len(set(dataset.sites.tolist()))
    for other in range(split_seed + 1, split_seed + 1 + _SEEDS_TRIED):
        trial = make_splits(dataset, seed=other)
        if len(trial.train) and len(trial.val):
            return (f"the site-grouped split (seed {split_seed}) leaves the {empty} part "
                    f"without cases: {sites} sites are too few or too uneven for it; "
                    f"--split-seed {other} gives every part cases, or import pages of more "
                    "sites")
    return (f"the case base's {sites} site(s) cannot be split by site into training and "
            f"validation parts (no seed up to {split_seed + _SEEDS_TRIED} can): import pages "
            "of more sites")


def _part_metrics(model, dataset, splits) -> dict:
    """Metrics of ``model`` on the known and unseen parts of ``splits``, and on their cases
    that the cleaner's walk decides (``known_walk``, ``unseen_walk``) when the dataset knows
    them."""
    from .report import evaluate

    metrics = {}
    parts = {"known": splits.known, "unseen": splits.test}
    for part, index in parts.items():
        if len(index):
            metrics[part] = evaluate(model, dataset.subset(index))
    if dataset.frontier is not None:
        # The cases the cleaner's top-down walk decides (all ancestors mixture).
        for part, index in parts.items():
            walk = index[dataset.frontier[index]]
            if len(walk):
                metrics[f"{part}_walk"] = evaluate(model, dataset.subset(walk))
    return metrics


def _cv_metrics(dataset, folds: int, preset, seed: int, split_seed: int,
                progress: bool) -> dict:
    """``unseen_cv`` (and ``unseen_cv_walk``): metrics of every case scored by the model of
    the site-grouped fold that held its site out."""
    import numpy as np

    from .crossval import out_of_fold_scores
    from .report import metrics_of

    proba = out_of_fold_scores(dataset, folds, preset, seed, progress=progress,
                               split_seed=split_seed)
    metrics = {"unseen_cv": metrics_of(proba, dataset)}
    if dataset.frontier is not None and dataset.frontier.any():
        walk = np.flatnonzero(dataset.frontier)
        metrics["unseen_cv_walk"] = metrics_of(proba[walk], dataset.subset(walk))
    return metrics


@click.command("train")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default="default",
              show_default=True, help="paper: Htwe's published set-up; default: tuned for "
                                      "unseen sites; encoded: the default's training on "
                                      "piecewise-linear encodings of the columns.")
@click.option("--db", metavar="URL", default=None, help=_DB_HELP)
@click.option("--seed", type=int, default=0, show_default=True, help="Training seed.")
@click.option("--split-seed", type=int, default=0, show_default=True,
              help="Seed of the site-grouped train / validation / test split.")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None,
              help="Run directory (model.safetensors, reports) [default: runs/run-<id>].")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Override the preset's epoch count.")
@click.option("--cv", type=click.IntRange(min=2), default=None, metavar="K",
              help="Also report per-class rates on unseen sites pooled over K site-grouped "
                   "folds (K more models are trained).")
@click.option("--spool-dir", "spool", type=click.Path(file_okay=False, exists=True),
              default=None, help="Where the case base's vectors are spooled while training "
              "(about 2 KB a case, removed afterwards) [default: beside the run directory].")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no table.")
def train(preset, db, seed, split_seed, out, epochs, cv, spool, quiet):
    """Train a model on the case base, record the run, write the artifact and reports.

    The case base is streamed from the database into a spool on disk and read from there a
    batch at a time: memory holds the cases' labels and sites, not their vectors."""
    casebase = _open(db)
    try:
        run = train_run(casebase, preset, seed, out, epochs, quiet, split_seed, cv=cv,
                        spool=spool)
    finally:
        casebase.close()
    if quiet:
        click.echo(run["artifact_path"])


def _rate(metrics, part, label):
    try:
        return f"{100 * metrics[part]['rates'][label]:.1f}"
    except (KeyError, TypeError):
        return "-"


@click.group("runs")
def runs():
    """Training runs recorded in the case base."""


@runs.command("list")
@click.option("--db", metavar="URL", default=None, help=_DB_HELP)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON lines.")
def runs_list(db, limit, as_json):
    """List runs, newest first, with their unseen-site rates (noise / data / mixture)."""
    from .runs import list_runs

    casebase = _open(db)
    try:
        rows = list_runs(casebase, limit)
    finally:
        casebase.close()
    if as_json:
        for r in rows:
            click.echo(json.dumps(r, default=str))
        return
    click.echo(f"{'id':>4}  {'created':19}  {'preset':8} {'status':9} {'seed':>4} "
               f"{'cases':>9}  {'unseen n/d/m %':>17} {'secs':>7}")
    for r in rows:
        m = r["metrics"] or {}
        rates = "/".join(_rate(m, "unseen", k) for k in PAPER_LABELS)
        click.echo(f"{r['id']:>4}  {str(r['created_at'])[:19]:19}  {r['preset']:8} "
                   f"{r['status']:9} {r['seed']:>4} {r['data'].get('cases', 0):>9,}  "
                   f"{rates:>17} {r['duration'] or 0:>7.1f}")


@runs.command("show")
@click.argument("run_id", type=int)
@click.option("--db", metavar="URL", default=None, help=_DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="The whole record as JSON.")
def runs_show(run_id, db, as_json):
    """Show one run: set-up, data, per-class rates and the error history."""
    from .report import format_table
    from .runs import get_run

    casebase = _open(db)
    try:
        r = get_run(casebase, run_id)
    except LookupError as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    finally:
        casebase.close()
    if as_json:
        click.echo(json.dumps(r, indent=2, default=str))
        return
    click.echo(f"run {r['id']} ({r['status']}), preset {r['preset']}, seed {r['seed']}, "
               f"created {r['created_at']}, code {r['code_version']}")
    d = r["data"]
    click.echo(f"data: {d.get('cases', 0):,} cases {d.get('per_label')}, sha256 "
               f"{r['data_hash'][:16]}…, source {d.get('source')}")
    click.echo("hyperparameters: " + json.dumps(r["hyperparameters"], sort_keys=True))
    if r["error"]:
        click.echo(f"error: {r['error']}")
    m = r["metrics"] or {}
    parts = tuple(p for p in ("val", "known", "unseen", "known_walk", "unseen_walk") if p in m)
    if parts:
        click.echo(format_table({r["preset"]: {p: m[p] for p in parts}}, parts=parts))
    if r["history"]:
        click.echo(f"best epoch {r['best_epoch']} of {len(r['history'])}; duration "
                   f"{r['duration']:.1f} s; artifact {r['artifact_path']}")
        step = max(1, len(r["history"]) // 20)
        for e in sorted(set(range(0, len(r["history"]), step)) | {len(r["history"]) - 1}):
            tr, va = r["history"][e]
            click.echo(f"  epoch {e + 1:>4}  train {tr:.5f}  val {va:.5f}")


@runs.command("compare")
@click.argument("a", type=int)
@click.argument("b", type=int)
@click.option("--db", metavar="URL", default=None, help=_DB_HELP)
def runs_compare(a, b, db):
    """Compare two runs side by side (differing hyperparameters, data, rates)."""
    from .runs import compare_runs, get_run

    casebase = _open(db)
    try:
        ra, rb = get_run(casebase, a), get_run(casebase, b)
    except LookupError as error:
        raise click.ClickException(str(error)) from error
    finally:
        casebase.close()

    def fmt(v):
        if isinstance(v, float):
            return f"{v:.4f}"
        return "-" if v is None else str(v)[:24]

    click.echo(f"{'':28} {'run ' + str(a):>24} {'run ' + str(b):>24}")
    for key, va, vb in compare_runs(ra, rb):
        mark = "" if va == vb else "  *"
        click.echo(f"{key:28} {fmt(va):>24} {fmt(vb):>24}{mark}")


@click.group(cls=CheckedGroup)
def main():
    """noisecbr training (standalone entry point)."""


main.add_command(train)
main.add_command(runs)

if __name__ == "__main__":
    sys.exit(main())
