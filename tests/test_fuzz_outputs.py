"""Every output of hostile inputs (issue 54): each ``-f`` format of ``noisecbr clean`` and the row
of a WARC record, for inputs of every family of tests/fuzzing.py (random bytes, mutated pages,
tag soup, control characters, bad charsets, deep nesting, hostile attribute names), gives its
output or refuses the input with an InputError. A seeded run of 500 inputs in process
(tests/fuzzing.py every_output), the long one of 10^4 with NOISECBR_SLOW_TESTS=1, and real
``noisecbr clean`` runs over folders of such pages and WARCs of them."""

from __future__ import annotations

import collections
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import slow
from fuzzing import (
    HTTP_HEADERS,
    OUTPUT_FAMILIES,
    RowFiles,
    check_row,
    every_output,
    output_input,
)

import noisecbr
from noisecbr.prepare.tidy import InputError
from noisecbr_apps.crawl.warc import response_record

#: Inputs of the run in the normal suite (15 to 20 s of CPU, most of it the deep pages' JSON
#: and Markdown) and of the long one (about 6 minutes).
FAST_INPUTS = 500
SLOW_INPUTS = 10_000
_FAMILIES = list(OUTPUT_FAMILIES)
#: The C0 controls but tab and newline, DEL and the C1 controls: no output file holds one.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _run(count: int, seed: str, folder: Path) -> collections.Counter:
    """``count`` inputs, the families in turn, each through every output: fails with the first
    inputs that raised (their numbers make them again: ``output_input(seed, family, i)``)."""
    outcomes: collections.Counter = collections.Counter()
    failures = []
    rows = RowFiles(folder)
    for i in range(count):
        family = _FAMILIES[i % len(_FAMILIES)]
        page = output_input(seed, family, i)
        try:
            outcomes[every_output(page, i, rows) or "result"] += 1
        except Exception as error:  # noqa: BLE001 - reported below, with the input's number
            failures.append(f"{seed}:{family}:{i}: {type(error).__name__}: {error}")
    assert failures == [], f"{len(failures)} of {count} inputs raised: {failures[:5]}"
    assert rows.close() > 0  # the rows of the run, by the crawl's JSONL and Parquet writers
    return outcomes


def test_seeded_inputs_give_every_output(tmp_path):
    outcomes = _run(FAST_INPUTS, "54-outputs", tmp_path)
    assert outcomes["result"] > FAST_INPUTS // 2  # most inputs are pages, not refused


@slow
def test_many_inputs_give_every_output(tmp_path):
    started = time.process_time()
    outcomes = _run(SLOW_INPUTS, "54-outputs-long", tmp_path)
    print(f"{SLOW_INPUTS} inputs in {time.process_time() - started:.0f} s CPU: {dict(outcomes)}")


# -- noisecbr clean itself ----------------------------------------------------------------------
#: The runs of ``noisecbr clean``: over a folder of pages (to a folder of outputs, or to
#: standard output) or a WARC of them, with the options of each.
RUNS = {
    "text": ("pages", ["-f", "text"]),
    "markdown": ("pages", ["-f", "markdown", "--links", "--images"]),
    "html": ("pages", ["-f", "html", "--keep-media", "--comments", "--title"]),
    "unsafe html": ("pages", ["-f", "html", "--unsafe-html", "--favor", "precision"]),
    "json by site": ("pages", ["-f", "json", "--by-site"]),
    "json in 2 processes": ("pages", ["-f", "json", "-j", "2", "--page-type", "forum"]),
    "markdown to stdout": ("stdout", ["-f", "markdown", "--no-title"]),
    "jsonl": ("warc", ["-f", "jsonl"]),
    "parquet with markdown": ("warc", ["-f", "parquet", "--markdown"]),
    "jsonl by site": ("warc", ["-f", "jsonl", "--by-site", "--comments"]),
}
#: Pages per run: one of each family, and a few more.
PAGES = 10


def _pages(folder: Path, seed: str) -> dict[str, bytes]:
    """``PAGES`` mutated pages in ``folder`` (as files hold them: a text one as UTF-8)."""
    folder.mkdir()
    pages = {}
    for i in range(PAGES):
        family = _FAMILIES[i % len(_FAMILIES)]
        page = output_input(seed, family, i)
        data = page if isinstance(page, bytes) else page.encode("utf-8", "surrogatepass")
        pages[f"p{i:02d}-{family}.html"] = data
        (folder / f"p{i:02d}-{family}.html").write_bytes(data)
    return pages


def _refusals(pages: dict[str, bytes]) -> dict[str, str]:
    """The pages an InputError refuses, with its reason (what stderr must list)."""
    refused = {}
    cleaner = noisecbr.Cleaner()
    for name, data in pages.items():
        try:
            cleaner.prepare(data)
        except InputError as error:
            refused[name] = str(error)
    return refused


def _noisecbr(*arguments: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "noisecbr_apps.cli", "clean", "-q",
                           *arguments], capture_output=True, check=False, timeout=600)
    stderr = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert done.returncode in (0, 1), (done.returncode, stderr)
    return done


def _failed(stderr: str) -> dict[str, str]:
    """The inputs stderr lists as failed, by file name, with their reasons."""
    lines = stderr.splitlines()
    heads = [k for k, line in enumerate(lines) if re.match(r"noisecbr: \d+ of \d+ inputs failed",
                                                           line)]
    if not heads:
        return {}
    failed = {}
    for line in lines[heads[-1] + 1:]:
        path, _, reason = line.strip().partition(": ")
        failed[Path(path).name] = reason
    return failed


def _clean_pages(tmp_path: Path, seed: str, how: str, options: list[str]) -> None:
    pages = _pages(tmp_path / "pages", seed)
    out = tmp_path / "out"
    target = [] if how == "stdout" else ["-o", str(out)]
    done = _noisecbr(str(tmp_path / "pages"), *target, *options)
    stderr = done.stderr.decode("utf-8", "replace")
    refused = _refusals(pages)
    # Exit 1 only for the pages an InputError refuses, each listed with its reason.
    assert done.returncode == (1 if refused else 0), stderr
    assert _failed(stderr) == refused, stderr
    fmt = options[options.index("-f") + 1]
    outputs = ([done.stdout] if how == "stdout" else
               [path.read_bytes() for path in sorted(out.iterdir())])
    if how != "stdout":
        suffix = {"text": ".txt", "markdown": ".md", "html": ".html", "json": ".json"}[fmt]
        assert sorted(path.name for path in out.iterdir()) == sorted(
            name.removesuffix(".html") + suffix for name in pages if name not in refused)
    for output in outputs:
        text = output.decode("utf-8")  # strict: what was written is UTF-8
        found = _CONTROLS.search(text)
        assert found is None, f"control character {found.group()!r} in -f {fmt} output"
        if fmt == "json":
            assert isinstance(json.loads(text), dict)


def _clean_warc(tmp_path: Path, seed: str, options: list[str]) -> None:
    pages = _pages(tmp_path / "pages", seed)
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(b"".join(  # each page's HTTP headers drawn: not one set per family
        response_record(f"http://site{k % 3}.example/{name}", data,
                        random.Random(f"{seed}:{name}").choice(HTTP_HEADERS))
        for k, (name, data) in enumerate(pages.items())))
    fmt = options[options.index("-f") + 1]
    rows_file = tmp_path / f"rows.{fmt}"
    done = _noisecbr(str(warc), "-o", str(rows_file), *options)
    stderr = done.stderr.decode("utf-8", "replace")
    # Exit 1 only for a damaged archive; a page that does not clean for a reason other than its
    # input ("cleaning failed") or whose HTTP response does not read is a fault.
    assert done.returncode == 0, stderr
    summary = re.search(r"(\d+) records read, (\d+) pages cleaned(.*)", stderr)
    assert summary is not None and int(summary.group(1)) == len(pages), stderr
    assert "cleaning failed" not in stderr and "unreadable HTTP response" not in stderr, stderr
    if fmt == "parquet":
        rows = pq.read_table(rows_file).to_pylist()
    else:
        with rows_file.open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines]
    assert len(rows) == int(summary.group(2)), stderr
    for row in rows:
        check_row(row, markdown="--markdown" in options)


def _clean(tmp_path: Path, seed: str, run: str) -> None:
    how, options = RUNS[run]
    if how == "warc":
        _clean_warc(tmp_path, seed, options)
    else:
        _clean_pages(tmp_path, seed, how, options)


@pytest.mark.parametrize("run", RUNS)
def test_noisecbr_clean_gives_every_format_of_hostile_pages(tmp_path, run):
    _clean(tmp_path, "54-cli", run)


@slow
@pytest.mark.parametrize("seed", ["54-cli-1", "54-cli-2"])
@pytest.mark.parametrize("run", RUNS)
def test_more_runs_of_noisecbr_clean(tmp_path, run, seed):
    _clean(tmp_path, seed, run)
