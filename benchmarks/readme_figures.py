"""Regenerate every figure of the README: run each bench command and rewrite its table.

A table sits between ``<!-- figures:NAME -->`` and ``<!-- /figures -->`` in README.md, and is
only ever written by this script, so a figure cannot outlive the code that measured it:

    python benchmarks/readme_figures.py                  # every table (minutes: --cv trains)
    python benchmarks/readme_figures.py --only modernweb
    python benchmarks/readme_figures.py --data /path/to/shared/data --readme README.md

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


@dataclass(frozen=True)
class Figure:
    """One README table: ``noisecbr bench`` on one dataset with these options."""

    dataset: str
    options: tuple[str, ...]

    def arguments(self, data: str) -> list[str]:
        """The bench command's arguments, with the datasets under ``data``."""
        return ["bench", f"{data}/{self.dataset}", *self.options]


#: The README's tables by name.
FIGURES: dict[str, Figure] = {
    "modernweb": Figure("modernweb-dev", (
        "--cv", "5", "-e", "noisecbr", "-e", "trafilatura", "-e", "readability",
        "-e", "resiliparse", "-e", "justext", "-e", "boilerpy3", "-e", "none")),
    "dragnet-article": Figure("dragnet", (
        "--cv", "5", "--truth", "article", "-e", "noisecbr", "-e", "trafilatura",
        "-e", "readability", "--modes", "--oracle")),
    # Never trained or tuned on: the embedded default, not fold models.
    "cleaneval": Figure("cleaneval-dev", ("-e", "noisecbr", "-e", "trafilatura",
                                          "-e", "readability")),
    "readability": Figure("readability", ("-e", "noisecbr", "-e", "trafilatura",
                                          "-e", "readability")),
}

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
             f"| {figure.dataset} ({pages} pages) | P | R | F1 | ± | docs/s |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        f1 = f"{float(row['f1']):.3f}"
        name = row["extractor"]
        speed = f"{float(row['docs_per_s']):.1f}" if row["docs_per_s"] else "–"
        if not row["docs_per_s"]:
            f1, name = f"*{f1}*", f"*{name}*"
        elif float(row["f1"]) == best:
            f1, name = f"**{f1}**", f"**{name}**"
        lines.append(f"| {name} | {float(row['precision']):.3f} | {float(row['recall']):.3f} | "
                     f"{f1} | {float(row['f1_ci95']):.3f} | {speed} |")
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


def measure(figure: Figure, data: Path) -> tuple[list[dict[str, str]], int]:
    """Run the bench command; its CSV rows and the number of pages it scored."""
    with tempfile.TemporaryDirectory() as scratch:
        table = Path(scratch) / "bench.csv"
        command = [sys.executable, "-m", "noisecbr.cli", *figure.arguments(str(data)),
                   "--csv", str(table)]
        print("+", " ".join(command), file=sys.stderr, flush=True)
        done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
        print(done.stdout, file=sys.stderr)
        with table.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    # The bench's first line: "<dataset>: <n> pages".
    pages = int(re.search(r": (\d+) pages", done.stdout.splitlines()[0])[1])
    return rows, pages


def main(argv: list[str] | None = None) -> None:
    """Measure the chosen tables and rewrite them in the README."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(FIGURES), action="append",
                        help="only this table (repeatable)")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "NOISECBR_SHARED_DATA", ROOT.parent / "shared" / "data")),
        help="the development data [env NOISECBR_SHARED_DATA; default: ../shared/data]")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = parser.parse_args(argv)
    day = datetime.date.today().isoformat()
    tables = {}
    for name in args.only or sorted(FIGURES):
        rows, pages = measure(FIGURES[name], args.data)
        tables[name] = render(FIGURES[name], rows, pages, day)
    args.readme.write_text(replace_blocks(args.readme.read_text(encoding="utf-8"), tables),
                           encoding="utf-8")
    print(f"rewrote {', '.join(tables)} in {args.readme}", file=sys.stderr)


if __name__ == "__main__":
    main()
