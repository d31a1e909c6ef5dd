"""Docs/s of WARC → Parquet: ``noisecbr clean -j 1``, ``-j 2``, Spark ``local[1]``, ``local[2]``.

    python benchmarks/make_warc.py ../shared/data -o /tmp/crawl --files 4
    python benchmarks/crawl_scale.py /tmp/crawl/*.warc.gz -o /tmp/crawl-out

Each command runs as a user would run it (a fresh process: model loading and, for Spark, the
JVM's start are in the wall time); the pages are counted in the Parquet it wrote. Wall time on
a shared machine: the commands run in turn ``--repeat`` times, the fastest run of each is
reported, with the load average before it.

Wall time is distorted when other jobs share the cores, so each run also reports its CPU
seconds: those of the process tree the command waited for (``RUSAGE_CHILDREN``: the pool's
workers are reaped by the CLI, Spark's JVM by its driver) and, for Spark, the executors' Python
CPU that the job sums in an accumulator (its Python workers outlive the run's process tree, so
the tree's figure misses them). ``docs per CPU-s`` is pages over the CPU of the Python cleaning
work, the cost a cluster pays per page.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq


def commands(warcs: list[str], out: Path) -> dict[str, list[str]]:
    """The four runs, by name: the command line of each."""
    clean = [sys.executable, "-m", "noisecbr_apps.cli", "clean", *warcs, "-f", "parquet", "-q"]
    spark = [sys.executable, "-m", "noisecbr_apps.crawl.spark", *warcs]
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
    best: dict[str, Run] = {}
    for _ in range(args.repeat):
        for name, command in runs.items():
            run = _run(command)
            print(f"{name}: {run}", file=sys.stderr, flush=True)
            if name not in best or run.wall < best[name].wall:
                best[name] = run
    print("| run | pages | wall s | docs/s | CPU s (process tree + executors) | docs per CPU-s "
          "| load avg before |\n|---|---|---|---|---|---|---|")
    for name, run in best.items():
        cpu = run.tree_cpu + run.executor_cpu
        print(f"| {name} | {run.pages} | {run.wall:.1f} | {run.pages / run.wall:.1f} "
              f"| {run.tree_cpu:.1f} + {run.executor_cpu:.1f} | {run.pages / cpu:.1f} "
              f"| {run.load:.1f} |")


@dataclass
class Run:
    """One run's wall seconds, pages written, CPU seconds and the load average before it."""

    wall: float
    pages: int
    tree_cpu: float
    executor_cpu: float
    load: float


#: The Spark job's summary: "… (executors' Python CPU 12.3 s)".
_EXECUTOR_CPU = re.compile(r"executors' Python CPU ([0-9.]+) s")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str]) -> Run:
    """Run one command; what it cost."""
    target = Path(command[command.index("-o") + 1])
    shutil.rmtree(target, ignore_errors=True)
    load = os.getloadavg()[0]
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, check=True, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    executor = _EXECUTOR_CPU.search(done.stderr)
    return Run(wall, pq.read_table(target).num_rows, _children_cpu() - cpu,
               float(executor.group(1)) if executor else 0.0, load)


if __name__ == "__main__":
    main()
