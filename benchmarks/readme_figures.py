"""Regenerate every figure of the README and of docs/results.md: run each bench command and
rewrite its table.

A table sits between ``<!-- figures:NAME -->`` and ``<!-- /figures -->`` in docs/results.md
(each bench's full table, with its F1 by page type or language) and the README's summary, one
row per set, between ``<!-- figures:summary -->`` markers; they are only ever written by this
script, so a figure cannot outlive the code that measured it:

    python benchmarks/readme_figures.py                  # every table (the fold models first)
    python benchmarks/readme_figures.py --only modernweb  # one table (and the summary's row)
    python benchmarks/readme_figures.py --data /path/to/shared/data

The block says which command measured the table and on which day. Rows are sorted by F1, the
best F1 in bold.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the README's commands say the development data is (a checkout beside ``shared/``).
SHOWN_DATA = "../shared/data"


#: The embedded recipe's fold models (``python -m training.crossval DATA --out FOLDS``), and
#: the same recipe without the lexical fields (``--without-lexical``): the folders the bench
#: commands name, made first when missing.
FOLDS = "runs/recipe-folds"
FOLDS_WITHOUT_LEXICAL = "runs/recipe-folds-nolex"
PEERS = ("-e", "noisecbr", "-e", "trafilatura", "-e", "readability")


@dataclass(frozen=True)
class Figure:
    """One README table: ``noisecbr bench`` on one dataset with these options (and, after the
    table, the F1 by page type or language when they ask for it)."""

    dataset: str
    options: tuple[str, ...]

    def arguments(self, data: str) -> list[str]:
        """The bench command's arguments, with the datasets under ``data``."""
        return ["bench", f"{data}/{self.dataset}", *self.options]

    @property
    def folds(self) -> str | None:
        """The folder of fold models the command reads, if any."""
        options = list(self.options)
        return options[options.index("--fold-models") + 1] if "--fold-models" in options else None


#: The README's tables by name. Each training set is scored by the recipe's fold models (every
#: page by a model trained as the embedded default is, on all six sets, without its site).
FIGURES: dict[str, Figure] = {
    "wcxb": Figure("wcxb-dev", (
        "--fold-models", FOLDS, *PEERS, "-e", "resiliparse", "--by-type")),
    "modernweb": Figure("modernweb-dev", (
        "--fold-models", FOLDS, *PEERS, "-e", "resiliparse", "-e", "justext", "-e", "boilerpy3",
        "-e", "none", "--by-type")),
    "dragnet-article": Figure("dragnet", (
        "--fold-models", FOLDS, "--truth", "article", *PEERS, "--modes", "--oracle")),
    "fundus": Figure("fundus", ("--fold-models", FOLDS, *PEERS, "--by-lang")),
    "fundus-without-lexical": Figure("fundus", (
        "--fold-models", FOLDS_WITHOUT_LEXICAL, "-e", "noisecbr", "--by-lang")),
    "utomo-chaos2017": Figure("utomo-chaos2017", ("--fold-models", FOLDS, *PEERS)),
    "utomo-big9": Figure("utomo-big9", ("--fold-models", FOLDS, *PEERS)),
    "chinese-wce": Figure("chinese-wce", ("--fold-models", FOLDS, *PEERS)),
    # Never trained or tuned on: the embedded default, not fold models.
    "cleaneval": Figure("cleaneval-dev", PEERS),
    "readability": Figure("readability", PEERS),
}
#: The figures the README's summary has a row of (the others are in docs/results.md only).
SUMMARIZED = ("wcxb", "fundus", "utomo-chaos2017", "utomo-big9", "chinese-wce",
              "dragnet-article", "cleaneval", "readability")
#: The figures whose table by page type or language is in the README too (with the command
#: that measured it; the whole table is in docs/results.md).
IN_README = ("wcxb",)

_BLOCK = re.compile(r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures -->)",
                    re.DOTALL)


def render(figure: Figure, rows: list[dict[str, str]], pages: int, day: str) -> str:
    """The markdown of one table block (without its markers) from the bench's CSV rows. A row
    that cleans nothing (``--oracle``'s, with no docs/s) comes last, in italics, and is never
    the bold best."""
    measured = sorted((row for row in rows if row["docs_per_s"]),
                      key=lambda row: -float(row["f1"]))
    rows = measured + [row for row in rows if not row["docs_per_s"]]
    best = max(float(row["f1"]) for row in measured) if measured else None
    command = " ".join(["noisecbr", *figure.arguments(SHOWN_DATA)])
    lines = [f"`{command}`, measured {day}:", "",
             f"| {figure.dataset} ({pages} pages) | P | R | F1 | ± | word F1 | docs/s |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        f1 = f"{float(row['f1']):.3f}"
        name = row["extractor"]
        speed = f"{float(row['docs_per_s']):.1f}" if row["docs_per_s"] else "–"
        if not row["docs_per_s"]:
            f1, name = f"*{f1}*", f"*{name}*"
        elif float(row["f1"]) == best:
            f1, name = f"**{f1}**", f"**{name}**"
        lines.append(f"| {name} | {float(row['precision']):.3f} | {float(row['recall']):.3f} | "
                     f"{f1} | {float(row['f1_ci95']):.3f} | {float(row['word_f1']):.3f} | "
                     f"{speed} |")
    return "\n".join(lines) + "\n"


def replace_blocks(readme: str, tables: dict[str, str]) -> str:
    """``readme`` with the body of each ``figures:NAME`` block in ``tables`` replaced; raises
    KeyError when a table has no block."""
    found = {match["name"] for match in _BLOCK.finditer(readme)}
    missing = sorted(set(tables) - found)
    if missing:
        raise KeyError(f"no <!-- figures:NAME --> block for {', '.join(missing)}")
    return _BLOCK.sub(lambda m: m.group(1) + tables.get(m["name"], m["body"]) + m.group(4),
                      readme)


def grouped(stdout: str, rows: list[dict[str, str]]) -> str:
    """The bench's F1 by page type or language (its text table after "F1 by …:") as a
    markdown table, "" when it printed none. ``rows``: the CSV rows, whose scored extractors
    are its columns, in order."""
    lines = stdout.splitlines()
    starts = [k for k, line in enumerate(lines) if line.startswith("F1 by ")]
    if not starts:
        return ""
    names = [row["extractor"] for row in rows]
    body = [line for line in lines[starts[0] + 3:] if line.strip()]
    what = lines[starts[0]][len("F1 by "):].rstrip(":")
    out = ["", f"F1 by {what}:", "", f"| {what} | pages | " + " | ".join(names) + " |",
           "|---" * (len(names) + 2) + "|"]
    out += ["| " + " | ".join([line[:16].strip(), *line[16:].split()]) + " |"
            for line in body]
    return "\n".join(out) + "\n"


def prepare(figure: Figure, data: Path) -> None:
    """Make the fold models the figure's command reads, when its folder holds none."""
    folds = figure.folds
    if folds is None or (ROOT / folds / "folds.json").is_file():
        return
    command = [sys.executable, "-m", "training.crossval", str(data), "--out", str(ROOT / folds)]
    if folds == FOLDS_WITHOUT_LEXICAL:
        command.append("--without-lexical")
    print("+", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


#: The summary's columns: the row of each of these extractors (noisecbr: its first row).
SUMMARY = ("noisecbr", "trafilatura", "readability")
_SUMMARY_ROW = re.compile(r"^\| (?P<name>[\w-]+) \((?P<pages>\d+)\) \|")


def summary_row(name: str, rows: list[dict[str, str]], pages: int) -> str:
    """The README summary's row of one bench: F1 (P) of noisecbr and the peers, and docs/s."""
    def first(prefix: str) -> dict[str, str] | None:
        return next((row for row in rows if row["extractor"].startswith(prefix)
                     and row["docs_per_s"]), None)

    found = [first(prefix) for prefix in SUMMARY]
    cells = [f"{float(row['f1']):.3f} ({float(row['precision']):.3f})" if row else "–"
             for row in found]
    best = max((float(row["f1"]) for row in found if row), default=None)
    cells = [f"**{cell}**" if row and float(row["f1"]) == best else cell
             for cell, row in zip(cells, found)]
    speeds = " / ".join(f"{float(row['docs_per_s']):.0f}" for row in found[:2] if row)
    return f"| {name} ({pages}) | " + " | ".join(cells) + f" | {speeds} |"


def replace_summary(readme: str, rows: dict[str, str], day: str) -> str:
    """``readme`` with the rows of ``rows`` (by dataset) replaced or added in its summary
    block, in SUMMARIZED's order; the block's first line says the day."""
    match = next((m for m in _BLOCK.finditer(readme) if m["name"] == "summary"), None)
    if match is None:
        raise KeyError("no <!-- figures:summary --> block")
    kept = {}
    for line in match["body"].splitlines():
        found = _SUMMARY_ROW.match(line)
        if found:
            kept[found["name"]] = line
    kept.update(rows)
    head = [f"Measured {day} (each row's command: docs/results.md):", "",
            "| set (pages) | " + " | ".join(f"{name} F1 (P)" for name in SUMMARY)
            + " | docs/s noisecbr / trafilatura |", "|---" * (len(SUMMARY) + 2) + "|"]
    order = list(dict.fromkeys(FIGURES[name].dataset for name in SUMMARIZED))
    body = [kept[name] for name in order if name in kept]
    text = "\n".join(head + body) + "\n"
    return readme[:match.start("body")] + text + readme[match.end("body"):]


def measure(figure: Figure, data: Path) -> tuple[list[dict[str, str]], int, str]:
    """Run the bench command; its CSV rows, the number of pages it scored and its output."""
    with tempfile.TemporaryDirectory() as scratch:
        table = Path(scratch) / "bench.csv"
        command = [sys.executable, "-m", "noisecbr_apps.cli", *figure.arguments(str(data)),
                   "--csv", str(table)]
        print("+", " ".join(command), file=sys.stderr, flush=True)
        done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
        print(done.stdout, file=sys.stderr)
        with table.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    # The bench's first line: "<dataset>: <n> pages".
    pages = int(re.search(r": (\d+) pages", done.stdout.splitlines()[0])[1])
    return rows, pages, done.stdout


def main(argv: list[str] | None = None) -> None:
    """Measure the chosen tables and rewrite them in the README."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(FIGURES), action="append",
                        help="only this table (repeatable)")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "NOISECBR_SHARED_DATA", ROOT.parent / "shared" / "data")),
        help="the development data [env NOISECBR_SHARED_DATA; default: ../shared/data]")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "results.md")
    args = parser.parse_args(argv)
    day = datetime.date.today().isoformat()
    tables, summary, in_readme = {}, {}, {}
    for name in args.only or list(FIGURES):
        prepare(FIGURES[name], args.data)
        rows, pages, stdout = measure(FIGURES[name], args.data)
        table = render(FIGURES[name], rows, pages, day)
        tables[name] = table + grouped(stdout, rows)
        if name in IN_README:  # the command, then the table by type alone
            table_rows = [line for line in grouped(stdout, rows).splitlines()
                          if line.startswith("|")]
            in_readme[name] = table.splitlines()[0] + "\n\n" + "\n".join(table_rows) + "\n"
        if name in SUMMARIZED:
            summary[FIGURES[name].dataset] = summary_row(FIGURES[name].dataset, rows, pages)
    args.results.write_text(replace_blocks(args.results.read_text(encoding="utf-8"), tables),
                            encoding="utf-8")
    readme = replace_summary(args.readme.read_text(encoding="utf-8"), summary, day)
    readme = replace_blocks(readme, in_readme)
    args.readme.write_text(readme, encoding="utf-8")
    print(f"rewrote {', '.join(tables)} in {args.results} and the summary in {args.readme}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
