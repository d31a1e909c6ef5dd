"""``mining.md`` (Markdown tables) and ``mining.png`` (one panel per set and measure).

The generated part of ``mining.md`` is rewritten on every run; whatever follows the line
:data:`KEEP_MARK` in an existing file (the discussion, written by hand) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np

from .evaluate import MethodResult, SetResult
from .measures import NEAR_DUPLICATE, SHINGLE

__all__ = ["KEEP_MARK", "markdown", "plot", "write_report"]

KEEP_MARK = "<!-- written by hand below this line: kept when experiments.mining_eval reruns -->"

_COLUMNS = ("method", "accuracy", "macro-F1", "Δ accuracy vs no cleaning",
            "multi-page sites: accuracy", "multi-page sites: macro-F1",
            "clustering F", f"near-duplicate share (J > {NEAR_DUPLICATE:g})", "empty pages")


def _mean_sd(values: Sequence[float]) -> str:
    return f"{np.mean(values):.3f} ± {np.std(values):.3f}" if len(values) else "–"


def _signed(values: Sequence[float]) -> str:
    return f"{np.mean(values):+.3f} ± {np.std(values):.3f}"


def _row(m: MethodResult) -> list[str]:
    near = ("n/a (weights, no text)" if m.near_duplicates is None
            else f"{m.near_duplicates:.3f} ± {m.near_duplicates_ci:.3f}")
    return [m.method, _mean_sd(m.accuracy), _mean_sd(m.macro_f1), _signed(m.delta_accuracy),
            _mean_sd(m.multi_accuracy), _mean_sd(m.multi_f1), _mean_sd(m.cluster_f), near,
            str(m.empty)]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def set_section(result: SetResult) -> str:
    """The Markdown of one set: what it is, then the table."""
    s = result.settings
    classes = ", ".join(f"{c} {n}" for c, n in result.classes.items())
    return "\n".join([
        f"### {result.name}", "",
        (f"{result.pages} pages in {len(result.classes)} classes ({classes}); "
        f"{result.groups} fold groups; {result.multi_page} pages on a host with ≥ "
        f"{s['min_site_pages']} pages (where the site-level methods and the memory act); "
        f"{result.pairs} same-host page pairs for the near-duplicate share; clustering F of "
        f"the partition *one cluster per fold group* (sites alone): {result.group_f:.3f}."),
        *[f"- {note}" for note in result.notes], "",
        (f"Accuracy, macro-F1 and Δ: mean ± sd over {s['folds']} site-grouped folds × "
        f"{s['repeats']} fold assignments; multi-page columns: the out-of-fold predictions on "
        f"those pages, mean ± sd over the {s['repeats']} assignments; clustering F: mean ± sd "
        f"over {s['runs']} k-means seeds; near-duplicate share: ± half-width of a 95 % "
        "bootstrap over hosts."), "",
        _table(_COLUMNS, [_row(m) for m in result.methods]), "",
        ("What the documents hold: median words per page (CST: terms of positive weight), and "
        "the pages whose document contains their own class name as a word."), "",
        _table(("method", "median words", "pages naming their class"),
               [(m.method, f"{m.median_words:.0f}", f"{m.names_class} / {result.pages}")
                for m in result.methods]), ""])


def markdown(results: Sequence[SetResult], command: str, preamble: str) -> str:
    """The generated part of ``mining.md``."""
    return "\n".join([
        "# Does cleaning help web mining? (issue 18)", "",
        (f"Generated on {date.today().isoformat()} by `{command}`; the figure is "
        "`mining.png`."), "",
        preamble.strip(), "", "## Results", "",
        *[set_section(r) for r in results]])


_PANELS = (("accuracy", "accuracy (site-grouped)", lambda m: (np.mean(m.accuracy),
                                                              np.std(m.accuracy))),
           ("macro_f1", "macro-F1", lambda m: (np.mean(m.macro_f1), np.std(m.macro_f1))),
           ("cluster_f", "clustering F (k-means)", lambda m: (np.mean(m.cluster_f),
                                                              np.std(m.cluster_f))),
           ("near", f"same-host near-duplicate share\n({SHINGLE}-shingle J > {NEAR_DUPLICATE:g})",
            lambda m: (m.near_duplicates, m.near_duplicates_ci)))


def plot(results: Sequence[SetResult], path: Path) -> None:
    """Horizontal bars with error bars: one row per set, one column per measure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), len(_PANELS), squeeze=False, sharey="row",
                             figsize=(4 * len(_PANELS), 0.45 * 10 * len(results) + 1))
    for row, result in enumerate(results):
        names = [m.method for m in result.methods]
        for col, (_, title, value) in enumerate(_PANELS):
            ax = axes[row][col]
            pairs = [value(m) for m in result.methods]
            means = [np.nan if v is None else v for v, _ in pairs]
            errors = [0.0 if e is None else e for _, e in pairs]
            ax.barh(range(len(names)), means, xerr=errors, color="#4c72b0", capsize=2)
            ax.axvline(means[0], color="grey", lw=0.8, ls="--")  # no cleaning
            ax.set_yticks(range(len(names)), names, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, 1)
            ax.set_title(f"{result.name}: {title}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(results: Sequence[SetResult], out: Path, command: str, preamble: str) -> Path:
    """Write ``out/mining.md`` (keeping the hand-written part) and ``out/mining.png``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "mining.md"
    kept = ""
    if path.is_file():
        old = path.read_text(encoding="utf-8")
        if KEEP_MARK in old:
            kept = old.split(KEEP_MARK, 1)[1]
    path.write_text(markdown(results, command, preamble) + "\n" + KEEP_MARK + kept,
                    encoding="utf-8")
    plot(results, out / "mining.png")
    return path
