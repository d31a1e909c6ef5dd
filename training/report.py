"""Evaluation reports as the paper gives them, and more: per-class correct-classification rate and
MSE on known and on unseen data, confusion matrices, the MSE-vs-epoch curve and the known-vs-
unseen bar chart (PNG + CSV), and the feature-group / choice ablation.

*Correct-classification rate* of a class = cases of that class predicted as that class / cases
of that class (the paper's per-class figure, i.e. recall). *MSE* = mean over cases and the three
outputs of (score − one-hot target)², with the model's normalised scores
(:meth:`noisecbr.score.model.Model.predict_proba`). *Known* data are held-out pages of training
sites, *unseen* data are pages of sites never trained on (the test sites; the validation sites chose
the epoch and the hyperparameters and are reported separately).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from noisecbr.result import LABELS
from noisecbr.score.model import Model

from .datasets import Dataset
from .lexicon import LexicalCases, pool_cases
from .spool import gather

__all__ = ["batched_proba", "evaluate", "metrics_of", "format_table", "write_reports",
           "inference_speed", "ablation", "format_ablation", "PAPER_UNSEEN"]

#: The paper's correct-classification rates on unseen data (noise, data, mixture).
PAPER_UNSEEN = {"noise": 0.837, "data": 0.779, "mixture": 0.653}


def batched_proba(model: Model, X: np.ndarray, rows: np.ndarray | None = None,
                  batch: int = 262144, lexical: LexicalCases | None = None,
                  kinds: np.ndarray | None = None) -> np.ndarray:
    """``model.predict_proba`` of X's rows (all, or those indexed by ``rows``), ``batch`` rows
    at a time: a whole case base's vectors are never copied at once. ``lexical``: the cases'
    lexical fields, and ``kinds`` their pages' kind probabilities (rows of X), for a model
    that reads them."""
    n = len(X) if rows is None else len(rows)
    proba = np.zeros((n, len(model.labels)), dtype=np.float32)
    for start in range(0, n, batch):
        part = (np.arange(start, min(start + batch, n)) if rows is None
                else rows[start:start + batch])
        pooled = None
        if getattr(model, "lexicon", None) is not None:
            if lexical is None:
                raise ValueError("the model reads lexical fields: the cases' are needed")
            pooled = pool_cases(model.lexicon, lexical, part)
        part_kinds = None
        if getattr(model, "kind_inputs", ()):
            if kinds is None:
                raise ValueError("the model reads the page's kind: the cases' are needed")
            part_kinds = kinds[part]
        inputs = [gather(X, part)]  # spooled vectors: read a batch at a time
        inputs += [pooled] if pooled is not None or part_kinds is not None else []
        inputs += [part_kinds] if part_kinds is not None else []
        proba[start:start + batch] = model.predict_proba(*inputs)
    return proba


def evaluate(model: Model, dataset: Dataset, batch: int = 262144) -> dict:
    """Per-class rates, MSE, accuracy and the confusion matrix (rows truth, columns predicted)."""
    return metrics_of(batched_proba(model, dataset.X, batch=batch, lexical=dataset.lexical,
                                    kinds=dataset.kinds), dataset)


def metrics_of(proba: np.ndarray, dataset: Dataset) -> dict:
    """:func:`evaluate`'s figures for given class scores of the dataset's cases (one model's, or
    the pooled out-of-fold scores of a cross-validation)."""
    n = len(dataset)
    k = proba.shape[1]
    labels = LABELS[:k]
    y = dataset.with_classes(k).y
    pred = proba.argmax(1)
    correct = pred == y
    confusion = np.bincount(y * k + pred, minlength=k * k).reshape(k, k)
    sq = float(((proba - np.eye(k, dtype=np.float32)[y]) ** 2).sum(dtype=np.float64))
    per_class = confusion.sum(1)
    rates = {label: (float(confusion[c, c] / per_class[c]) if per_class[c] else float("nan"))
             for c, label in enumerate(labels)}
    rates.update((label, float("nan")) for label in LABELS[k:])  # classes the model lacks
    # The same rates with every page weighing the same (a page's cases share weight 1): the
    # case-level figures are dominated by the few pages with 5 000 - 14 000 subtrees.
    page_rates = {}
    if n:
        _, page_index, page_sizes = np.unique(dataset.pages, return_inverse=True,
                                              return_counts=True)
        w = 1.0 / page_sizes[page_index]
        for c, label in enumerate(labels):
            mask = y == c
            page_rates[label] = (float((w * correct)[mask].sum() / w[mask].sum())
                                 if mask.any() else float("nan"))
    page_rates.update((label, float("nan")) for label in LABELS[k:])
    return {
        "cases": int(n),
        "rates": rates,
        "mse": sq / max(n * k, 1),
        "accuracy": float(np.trace(confusion) / max(n, 1)),
        "balanced_accuracy": (float(np.nanmean([rates[label] for label in labels])) if n
                              else float("nan")),
        "confusion": confusion.tolist(),
        "page_weighted_rates": page_rates,
    }


def inference_speed(model: Model, X: np.ndarray, repeats: int = 1, batch: int = 1024) -> float:
    """Subtrees per second of numpy batch inference (page-sized batches of ``batch``): the
    network's cost; a model's lexical fields are given already pooled (pooling is part of a
    page's features)."""
    X = np.ascontiguousarray(X)
    lexicon = getattr(model, "lexicon", None)
    t0 = time.perf_counter()
    for _ in range(repeats):
        for start in range(0, len(X), batch):
            part = X[start:start + batch]
            if lexicon is None:
                model.predict_proba(part)
            else:
                model.predict_proba(part, np.zeros((len(part), lexicon.width), np.float32))
    return repeats * len(X) / max(time.perf_counter() - t0, 1e-9)


def _pct(x: float) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


#: Column headers of the metrics' parts: what each part's cases are.
PART_NAMES = {
    "val": "validation sites",
    "known": "known sites, unseen pages",
    "unseen": "unseen sites",
    "unseen_cv": "unseen sites (cv)",
    "known_walk": "known sites, walk cases",
    "unseen_walk": "unseen sites, walk cases",
    "unseen_cv_walk": "unseen sites (cv), walk cases",
}


def format_table(results: dict[str, dict[str, dict]], parts=("known", "unseen")) -> str:
    """``results[preset][part] = evaluate(...)`` → the paper's table, presets side by side:
    the correct-classification rate (%) of each class, then MSE, accuracy and balanced
    accuracy, one column per preset and part (:data:`PART_NAMES` says which cases)."""
    names = list(results)
    titles = [f"{n}: {PART_NAMES.get(p, p)}" for n in names for p in parts]
    width = max(13, *(len(t) for t in titles))
    header = f"{'% correct':<10}" + "".join(f" | {t:>{width}}" for t in titles)
    lines = [header, "-" * len(header)]
    for label in LABELS:
        row = f"{label:<10}"
        for n in names:
            for p in parts:
                m = results[n].get(p)
                rate = m["rates"].get(label, float("nan")) if m else float("nan")
                row += f" | {_pct(rate):>{width}}"
        lines.append(row)
    for key, fmt in (("mse", "{:.4f}"), ("accuracy", None), ("balanced_accuracy", None)):
        row = f"{key if key != 'balanced_accuracy' else 'balanced':<10}"
        for n in names:
            for p in parts:
                m = results[n].get(p)
                val = "n/a" if not m else (fmt.format(m[key]) if fmt else _pct(m[key]))
                row += f" | {val:>{width}}"
        lines.append(row)
    return "\n".join(lines)


def _confusion_text(metrics: dict) -> str:
    c = np.asarray(metrics["confusion"])
    labels = LABELS[:len(c)]
    lines = ["truth \\ pred " + " ".join(f"{label:>9}" for label in labels)]
    for i, label in enumerate(labels):
        lines.append(f"{label:<13}" + " ".join(f"{int(v):9d}" for v in c[i]))
    return "\n".join(lines)


def write_reports(out_dir: str | Path, history: list[tuple[float, float]], best_epoch: int,
                  metrics: dict[str, dict], details: list[dict] | None = None,
                  title: str = "") -> dict[str, Path]:
    """CSV + PNG next to the run: the error-vs-epoch curve, the known-vs-unseen bars, the
    per-part metrics and confusion matrices. Returns the written paths."""
    import matplotlib

    matplotlib.use("Agg")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"history_csv": _write_history_csv(out / "history.csv", history, details),
             "history_png": _plot_history(out / "error_vs_epoch.png", history, best_epoch,
                                          details, title),
             "metrics_csv": _write_metrics_csv(out / "metrics.csv", metrics),
             "confusion_csv": _write_confusion_csv(out / "confusion.csv", metrics)}
    bars = _plot_bars(out / "known_vs_unseen.png", metrics, title)
    if bars is not None:
        paths["bars_png"] = bars
    text = [format_table({title or "model": metrics}, parts=tuple(metrics))]
    for part, m in metrics.items():
        text += ["", f"confusion ({part}):", _confusion_text(m)]
    path = out / "report.txt"
    path.write_text("\n".join(text) + "\n")
    paths["report_txt"] = path
    return paths


def _write_history_csv(path: Path, history: list[tuple[float, float]],
                       details: list[dict] | None) -> Path:
    """Per epoch: the training and validation errors and the epoch's details."""
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        keys = [k for k in (details[0] if details else {}) if k not in ("epoch",)]
        w.writerow(["epoch", "train_error", "val_error", *keys])
        for e, (tr, va) in enumerate(history, 1):
            extra = [details[e - 1].get(k) for k in keys] if details else []
            w.writerow([e, f"{tr:.6g}", f"{va:.6g}", *extra])
    return path


def _plot_history(path: Path, history: list[tuple[float, float]], best_epoch: int,
                  details: list[dict] | None, title: str) -> Path:
    """The error-vs-epoch curve, with the best epoch marked."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    epochs = np.arange(1, len(history) + 1)
    ax.plot(epochs, [h[0] for h in history], label="training")
    ax.plot(epochs, [h[1] for h in history], label="validation (unseen sites)")
    if details and "val_mse" in details[0]:
        ax.plot(epochs, [d["val_mse"] for d in details], "--", label="validation MSE")
    ax.axvline(best_epoch, color="grey", ls=":", label=f"best epoch {best_epoch}")
    ax.set_xlabel("epoch")
    ax.set_ylabel("error")
    ax.set_title(f"{title} error vs epoch".strip())
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _write_metrics_csv(path: Path, metrics: dict[str, dict]) -> Path:
    """One row per part: cases, per-class rates, MSE, accuracy, balanced accuracy."""
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["part", "cases", *[f"rate_{label}" for label in LABELS], "mse", "accuracy",
                    "balanced_accuracy"])
        for part, m in metrics.items():
            w.writerow([part, m["cases"], *[f"{m['rates'][label]:.6f}" for label in LABELS],
                        f"{m['mse']:.6f}", f"{m['accuracy']:.6f}",
                        f"{m['balanced_accuracy']:.6f}"])
    return path


def _write_confusion_csv(path: Path, metrics: dict[str, dict]) -> Path:
    """Each part's confusion matrix, one row per true class."""
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["part", "truth", *[f"pred_{label}" for label in LABELS]])
        for part, m in metrics.items():
            for label, row in zip(LABELS, m["confusion"]):
                w.writerow([part, label, *row])
    return path


def _plot_bars(path: Path, metrics: dict[str, dict], title: str) -> Path | None:
    """Per-class correct rates of the known and unseen parts beside the paper's; None when
    there is no such part."""
    import matplotlib.pyplot as plt

    bars = [p for p in ("known", "unseen", "unseen_cv", "known_walk", "unseen_walk")
            if p in metrics]
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    width = 0.8 / (len(bars) + 1)
    x = np.arange(len(LABELS))
    for k, part in enumerate(bars):
        ax.bar(x + k * width, [100 * metrics[part]["rates"][label] for label in LABELS],
               width, label=part)
    ax.bar(x + len(bars) * width, [100 * PAPER_UNSEEN.get(label, np.nan) for label in LABELS],
           width, label="paper, unseen", color="lightgrey")
    ax.set_xticks(x + width * len(bars) / 2, LABELS)
    ax.set_ylabel("correct classification (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{title} known vs unseen".strip())
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3, fontsize=8,
              frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- ablation -----------------------------------------------------------------------------------
def ablation(train: Dataset, val: Dataset, preset="default", seed: int = 0,
             variants: dict | None = None, epochs: int | None = None,
             progress: bool = False, log=None) -> dict[str, dict]:
    """Retrain ``preset`` with one change at a time; per-class rates on the validation sites.

    Default variants: drop each feature group in turn, and undo each training choice (class
    weights, page weights, wordless down-weighting, normalisation, dropout, width). Measured on
    the validation sites (unseen), never on test.
    """
    from noisecbr.features import FEATURE_GROUPS

    from .presets import get_preset
    from .train import fit

    base = get_preset(preset)
    if variants is None:
        variants = {"full": {}}
        for group in FEATURE_GROUPS:
            if group in base.groups:
                variants[f"-{group}"] = {"groups": tuple(g for g in base.groups if g != group)}
        variants.update({
            "leaf only": {"groups": ("leaf",)},
            "no class weights": {"class_power": 0.0},
            "balanced class weights": {"class_power": 1.0},
            "no page weights": {"page_power": 0.0},
            "wordless weight 1": {"wordless_weight": 1.0},
            "no normalisation": {"normalize": False},
            "no dropout": {"dropout": 0.0},
            "hidden 64": {"hidden": (64,)},
            "hidden 512-256-128": {"hidden": (512, 256, 128)},
        })
    out: dict[str, dict] = {}
    for name, change in variants.items():
        p = base.replace(**change)
        result = fit(train, val, p, seed=seed, progress=progress, epochs=epochs)
        m = evaluate(result.model, val)
        m["seconds"] = result.duration
        out[name] = m
        if log:
            log(f"{name:<24} " + " ".join(f"{label} {_pct(m['rates'][label])}"
                                          for label in LABELS)
                + f"  balanced {_pct(m['balanced_accuracy'])}  ({result.duration:.0f} s)")
    return out


def format_ablation(results: dict[str, dict]) -> str:
    """The ablation's per-class rates and balanced accuracy per variant, with the change from
    'full'.
    """
    lines = [f"{'variant':<24} {'noise':>6} {'data':>6} {'mixture':>8} {'balanced':>9} {'Δbal':>6}",
             "-" * 64]
    ref = results.get("full", next(iter(results.values())))["balanced_accuracy"]
    for name, m in results.items():
        r = m["rates"]
        lines.append(f"{name:<24} {_pct(r['noise']):>6} {_pct(r['data']):>6} "
                     f"{_pct(r['mixture']):>8} {_pct(m['balanced_accuracy']):>9} "
                     f"{100 * (m['balanced_accuracy'] - ref):+6.1f}")
    return "\n".join(lines)
