"""Docs/s of WARC → Parquet: ``noisecbr clean -j 1``, ``-j 2``, Spark ``local[1]``, ``local[2]``.

    python benchmarks/make_warc.py ../shared/data -o /tmp/crawl --files 4
    python benchmarks/crawl_scale.py /tmp/crawl/*.warc.gz -o /tmp/crawl-out

Each command runs as a user would run it (a fresh process: model loading and, for Spark, the
JVM's start are in the wall time); the pages are counted in the Parquet it wrote. Wall time on
a shared machine: the commands run in turn ``--repeat`` times, the fastest run of each is
reported, with the load average before it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq


def commands(warcs: list[str], out: Path) -> dict[str, list[str]]:
    """The four runs, by name: the command line of each."""
    clean = [sys.executable, "-m", "noisecbr.cli", "clean", *warcs, "-f", "parquet", "-q"]
    spark = [sys.executable, "-m", "noisecbr.spark", *warcs]
    return {
        "clean -j 1": [*clean, "-o", str(out / "j1"), "-j", "1"],
        "clean -j 2": [*clean, "-o", str(out / "j2"), "-j", "2"],
        "spark local[1]": [*spark, "-o", str(out / "s1"), "--master", "local[1]"],
        "spark local[2]": [*spark, "-o", str(out / "s2"), "--master", "local[2]"],
    }


def main() -> None:
    """Run the commands one after the other and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("warcs", nargs="+")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--only", nargs="*", help="run only these (e.g. 'clean -j 1')")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs of each command, interleaved; the fastest is reported (2)")
    args = parser.parse_args()
    runs = {name: command for name, command in commands(args.warcs, args.output).items()
            if not args.only or name in args.only}
    best: dict[str, tuple[float, int, float]] = {}
    for _ in range(args.repeat):
        for name, command in runs.items():
            wall, pages, load = _run(command)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, pages, load)
    print("| run | pages | wall s | docs/s | load avg before |\n|---|---|---|---|---|")
    for name, (wall, pages, load) in best.items():
        print(f"| {name} | {pages} | {wall:.1f} | {pages / wall:.1f} | {load:.1f} |")


def _run(command: list[str]) -> tuple[float, int, float]:
    """Wall seconds, pages written and the 1-minute load average before the run."""
    target = Path(command[command.index("-o") + 1])
    shutil.rmtree(target, ignore_errors=True)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    return wall, pq.read_table(target).num_rows, load


if __name__ == "__main__":
    main()
