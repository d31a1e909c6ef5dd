"""Where a page kind's words are lost: the labels' own walk against the truth, by kind.

    python experiments/kind_ceiling.py ../shared/data/wcxb-dev [--check runs/check1.json]

Every page is labelled from its truth as training labels it (casebase.pages.page_cases) and
walked by the labels themselves (keep data, drop noise, descend mixture:
casebase.labelling.oracle); its text is scored by word F1, precision and recall against the
truth. The labels' walk is the ceiling of any scorer trained on these labels with this walk:
where it is low, the loss lies in the labels or the walk, not in how the scorer reads its
columns. ``--check``: a scorer check's JSON (benchmarks/scorer_check.py), its scorers' word
F1 by kind beside the ceiling.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from casebase.labelling import oracle  # noqa: E402
from casebase.pages import page_cases  # noqa: E402
from experiments.recipe_cv import word_pr  # noqa: E402
from noisecbr.eval.datasets import read_dataset, split_truth  # noqa: E402
from noisecbr.eval.metric import word_f1  # noqa: E402
from noisecbr.prepare.tidy import InputError  # noqa: E402
from noisecbr.render.text import render_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--check", type=Path, default=None)
    args = parser.parse_args()
    rows = collections.defaultdict(list)
    for page in read_dataset(args.dataset):
        truth = split_truth(page.truth)[0]
        try:
            cases = page_cases(page.html, truth=page.truth)
        except InputError:
            continue
        removed, dropped = oracle(cases.page.table, cases.subtree_labels)
        elements = cases.page.table.elements
        text = render_text(cases.page.body, {elements[i] for i in removed},
                           {elements[i] for i in dropped})
        p, r = word_pr(text, truth)
        rows[page.page_type].append((f"{page.dataset}/{page.id}", word_f1(text, truth), p, r))
    check = json.loads(args.check.read_text()) if args.check else {}
    print(f"{'kind':<14}{'pages':>6}{'labels F1 / P / R':>24}"
          + "".join(f"{name[:20]:>24}" for name in check))
    for kind, got in sorted(rows.items(), key=lambda kv: -len(kv[1])):
        keys = [g[0] for g in got]
        line = f"{kind:<14}{len(got):>6}{_cell([g[1:] for g in got]):>24}"
        for runs in check.values():
            line += f"{_cell(_scorer_rows(runs, keys)):>24}"
        print(line)


def _scorer_rows(runs: dict, keys: list[str]) -> list[tuple]:
    """A scorer's (F1, P, R) of the pages ``keys``, over its seeds (P and R None when the
    check did not keep them)."""
    out = []
    for run in runs.values():
        pr = run.get("precision_recall", {})
        out += [(run["pages"][k], *pr.get(k, (None, None))) for k in keys if k in run["pages"]]
    return out


def _cell(rows: list[tuple]) -> str:
    """Mean F1 / P / R of ``rows`` (F1 alone when P and R are unknown)."""
    if not rows:
        return "—"
    means = [statistics.mean(r[j] for r in rows) if rows[0][j] is not None else None
             for j in range(3)]
    return " / ".join(f"{m:.3f}" for m in means if m is not None)

if __name__ == "__main__":
    main()
