"""A seeded corpus run: N hostile inputs through noisecbr.clean and every attribute of its result.

    python benchmarks/fuzz.py N [--seed S] [--start I] [--failures DIR] [--outputs]

The inputs come from the generators of tests/fuzzing.py (random bytes, mutated fixture pages,
tag soup, control characters, bad charsets, deep nesting), input i of family f from
``random.Random(f"{S}:{f}:{i}")``, so any one of them can be made again alone, and a long run
can be split across processes (``--start 0`` and ``--start 50000`` of N=50000 make the same
100 000 inputs as one run of N=100000). Prints the
refusals by InputError type, the unexpected exceptions by type (each input saved under
``--failures``), the slowest input with its CPU time, and the process's peak RSS.

With ``--outputs`` (issue 54), each input goes instead through every output of the command
line (tests/fuzzing.py every_output): each ``-f`` format of ``noisecbr clean`` and the row of a
WARC record holding it, the rows written by the crawl's JSONL and Parquet writers (to a
temporary folder, read back at the end); the families are then those of tests/fuzzing.py
OUTPUT_FAMILIES (FAMILIES and the pages with hostile attribute names), so input i is another
one than without it.
"""

from __future__ import annotations

import argparse
import collections
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fuzzing import FAMILIES, OUTPUT_FAMILIES, RowFiles, clean_everything, every_output, generate

#: Progress is printed every this many inputs (stderr).
_REPORT_EVERY = 10_000


def run(n: int, seed: int, failures: Path, start: int = 0, outputs: bool = False) -> int:
    """Run the corpus; returns the number of unexpected exceptions. Interrupted (Ctrl-C or
    SIGTERM), it stops and reports the inputs it has finished. ``outputs``: every output of
    each input (the CLI's formats, a WARC row), not the library's result."""
    if outputs:
        with tempfile.TemporaryDirectory(prefix="fuzz-rows-") as folder:
            rows = RowFiles(Path(folder))
            try:
                return _run(n, seed, failures, start, list(OUTPUT_FAMILIES),
                            lambda page, i: every_output(page, i, rows))
            finally:
                print(f"WARC rows written and read back: {rows.close():,}")
    return _run(n, seed, failures, start, list(FAMILIES), lambda page, i: clean_everything(page))


def _run(n: int, seed: int, failures: Path, start: int, families: list[str], check) -> int:
    outcomes: collections.Counter = collections.Counter()
    unexpected: collections.Counter = collections.Counter()
    slowest = (0.0, "")
    started = time.process_time()
    try:
        for i in range(start, start + n):
            family = families[i % len(families)]
            name = f"{seed}:{family}:{i}"
            page = generate(random.Random(name), family)
            t0 = time.process_time()
            try:
                outcomes[check(page, i) or "result"] += 1
            except Exception as error:  # noqa: BLE001 - what the run is looking for
                unexpected[type(error).__name__] += 1
                _save(failures, type(error).__name__, i, page)
            elapsed = time.process_time() - t0
            if elapsed > slowest[0]:
                slowest = (elapsed, f"{name} ({len(page):,} {type(page).__name__})")
            if (i + 1 - start) % _REPORT_EVERY == 0:
                print(f"{i + 1 - start:,} inputs, {sum(unexpected.values())} unexpected, "
                      f"{time.process_time() - started:.0f} s CPU", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("interrupted: reporting the inputs finished so far", file=sys.stderr)
    done = sum(outcomes.values()) + sum(unexpected.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs: {done:,} of {n:,} (seed {seed}, numbers {start:,} to {start + done - 1:,}; "
          f"families in turn: {', '.join(families)})")
    print(f"outcomes: {dict(outcomes.most_common())}")
    print(f"unexpected exceptions: {sum(unexpected.values())} {dict(unexpected)}")
    print(f"slowest input: {slowest[1]}: {slowest[0]:.3f} s CPU")
    print(f"CPU time: {time.process_time() - started:.0f} s; peak RSS: {peak:.0f} MB")
    return sum(unexpected.values())


def _save(failures: Path, kind: str, i: int, page: bytes | str) -> None:
    """Keep an input that raised unexpectedly, and its traceback, to replay it."""
    failures.mkdir(parents=True, exist_ok=True)
    data = page if isinstance(page, bytes) else page.encode("utf-8", "surrogatepass")
    (failures / f"{kind}-{i}.bin").write_bytes(data)
    (failures / f"{kind}-{i}.txt").write_text(traceback.format_exc())


def _interrupt(_signum, _frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="number of the first input")
    parser.add_argument("--failures", type=Path, default=Path("fuzz-failures"),
                        help="where the inputs that raised unexpectedly are saved")
    parser.add_argument("--outputs", action="store_true",
                        help="every output of each input: the formats of `noisecbr clean` and "
                        "a WARC row (and the hostile-attributes family)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops the run with its report
    sys.exit(1 if run(args.n, args.seed, args.failures, args.start, args.outputs) else 0)


if __name__ == "__main__":
    main()
