"""Every example of the README runs as it is written: the Python API block, and each line of the
command-line and correction blocks, in a folder holding the files the lines name (``page.html``,
``a.html``, ``crawl/``, ``crawl.warc.gz``). A line that needs what a test cannot have is skipped
by one of :data:`SKIPPED`'s rules, which say why and where it is tested instead."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from warchelpers import make_crawl
from websim import serve_site

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "examples" / "tide-pools.html"

#: Lines not run here: what the line contains, and why.
SKIPPED = {
    "../shared/data": "needs the development data (the bench and F1-gate tests use it)",
    "noisecbr serve": "serves until stopped (tests/test_service_*.py start it)",
    "noisecbr train": "trains a model (tests/test_train*.py)",
}


def _block(after: str, language: str) -> str:
    """The first ``language`` code block of the README after the line ``after``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(re.escape(after) + rf".*?```{language}\n(.*?)```", readme, re.DOTALL)
    assert found, f"no {language} block after {after!r} in the README"
    return found[1]


def _lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The files the README's lines name, as a user running them would have them."""
    here = tmp_path_factory.mktemp("readme")
    shutil.copy(PAGE, here / "page.html")
    (here / "page.html.gz").write_bytes(gzip.compress(PAGE.read_bytes()))
    # A page whose <main> holds a box, the one the correction example labels.
    (here / "a.html").write_text(PAGE.read_text(encoding="utf-8").replace(
        "<main>", "<main><div class='promo'><p>Sign up for the newsletter.</p></div>", 1),
        encoding="utf-8")
    for site in ("example.org", "news.example"):
        (here / "crawl" / site).mkdir(parents=True)
        for k in range(3):
            text = PAGE.read_text(encoding="utf-8").replace("tide", f"tide {k}")
            (here / "crawl" / site / f"p{k}.html").write_text(text, encoding="utf-8")
    (here / "warc").mkdir()
    made = make_crawl(here / "warc")
    shutil.copy(made.warc, here / "crawl.warc.gz")
    (here / "examples").mkdir()
    shutil.copy(PAGE, here / "examples" / PAGE.name)
    return here


def _run(line: str, folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("NOISECBR_DB", None)
    return subprocess.run(["bash", "-c", line], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def test_the_python_api_block_runs_as_written(folder, monkeypatch):
    monkeypatch.chdir(folder)
    namespace: dict = {}
    exec(compile(_block("## Python API", "python"), "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["result"].text and len(namespace["decisions"]) > 0


def test_every_command_line_runs_as_written(folder):
    lines = (_lines(_block("## Command line", "bash"))
             + _lines(_block("Correcting a site", "bash")))
    ran, failed = 0, []
    with serve_site(pages=5) as site:
        for line in lines:
            if any(marker in line for marker in SKIPPED):
                continue
            # The lines that fetch from the web fetch from a loopback copy of example.org.
            line = line.replace("https://example.org/", site.base + "/")
            done = _run(line, folder)
            ran += 1
            if done.returncode != 0:
                failed.append(f"{line}\n  exit {done.returncode}: {done.stderr.strip()[-500:]}")
        fetched = list(site.log)
    assert not failed, "\n".join(failed)
    assert ran >= 12  # the skip rules leave the most of the lines to run
    assert (folder / "cleaned.parquet").is_file() and (folder / "cleaned").is_dir()
    assert "/page/1.html" in fetched and (folder / "site.jsonl").read_text().count("\n") == 5
    assert fetched.count("/page/3.html") == 2  # the crawl's, then import-urls' (cb.sqlite)


def test_the_skip_rules_each_skip_a_line():
    lines = _lines(_block("## Command line", "bash"))
    for marker in SKIPPED:
        assert any(marker in line for line in lines), f"no README line needs {marker!r} now"
