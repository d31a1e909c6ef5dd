"""Writers wait, readers never block (issue 17), on SQLite and on PostgreSQL: a write
transaction takes the case base's write lock when it begins and waits out the busy timeout;
reads never wait. The imports and the relabel run as real processes, as a user runs them."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

# An import that announces each page ("PAGE" on stderr) and takes a moment over it, so that
# another process can act while it holds its transaction open.
from test_casebase_cli import _SLOW_IMPORT

from casebase.cli import cli
from casebase.store import CaseBase

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"

def _environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("NOISECBR_DB", None)
    return env


def copy_dataset(target: Path, tag: str) -> Path:
    """The fixture dataset with page ids and bytes made distinct by ``tag``."""
    (target / "html").mkdir(parents=True)
    truth = json.loads((FIXTURE / "ground-truth.json").read_text())
    import gzip

    renamed = {}
    for page_id, record in truth.items():
        html = gzip.decompress((FIXTURE / "html" / f"{page_id}.html.gz").read_bytes())
        (target / "html" / f"{tag}-{page_id}.html.gz").write_bytes(
            gzip.compress(html + f"<!-- {tag} -->".encode()))
        renamed[f"{tag}-{page_id}"] = record
    (target / "ground-truth.json").write_text(json.dumps(renamed))
    return target


def start_import(url: str, dataset: Path, cwd: Path, gate: Path | None = None,
                 *options: str) -> subprocess.Popen:
    """An import in its own process; with ``gate``, each page waits until that file exists."""
    env = _environment() if gate is None else {**_environment(), "NOISECBR_TEST_GATE": str(gate)}
    return subprocess.Popen(
        [sys.executable, "-c", _SLOW_IMPORT, "--db", url, "import", "--quiet", "--jobs", "0",
         "--no-oracle", *options, str(dataset)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)


def wait_for_pages(process: subprocess.Popen, pages: int) -> None:
    seen = 0
    deadline = time.monotonic() + 60
    while seen < pages and time.monotonic() < deadline:
        line = process.stderr.readline()
        assert line, "the import ended before another process could act"
        seen += line.strip() == "PAGE"


def casebase_process(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from casebase.cli import main; main()",
                           "--db", url, *args], capture_output=True, text=True,
                          env=_environment(), cwd=cwd, timeout=120, check=False)


def test_a_write_session_holds_the_lock_from_its_start_and_a_read_never_does(tmp_path):
    path = tmp_path / "lock.sqlite"
    cb = CaseBase.open(str(path))
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    with cb.session() as session:
        session.execute(text("SELECT count(*) FROM sites"))
        # Only read so far, and already no other writer can begin: this transaction will not
        # fail to upgrade to writing later.
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        # A reader is not blocked by the writer.
        assert CaseBase.open(str(path)).stats()["pages"] == 0
    with cb.reading() as session:
        session.execute(text("SELECT count(*) FROM sites"))
        other.execute("BEGIN IMMEDIATE")  # a read transaction leaves the write lock free
        other.execute("ROLLBACK")
    other.close()
    cb.close()


def test_a_relabel_during_an_import_waits_and_succeeds(tmp_path, db_url):
    url = db_url
    first = CliRunner().invoke(cli, ["--db", url, "import", "--quiet", "-j", "0", "--no-oracle",
                                     str(FIXTURE)])
    assert first.exit_code == 0
    with CaseBase.open(url) as cb:
        case = cb.list_cases(limit=1)[0]
    target = "noise" if case.label != "noise" else "data"
    gate = tmp_path / "go"
    # --batch-rows 1: each page's rows are written as it is read, so from the second page on
    # the import holds the write lock (and an open transaction) until it commits.
    importing = start_import(url, copy_dataset(tmp_path / "more", "more"), tmp_path, gate,
                             "--batch-rows", "1")
    relabel = None
    try:
        wait_for_pages(importing, 2)
        # Mid-import: a reader is answered at once, a writer waits for the import to commit.
        listed = casebase_process(url, "stats", "--json", cwd=tmp_path)
        assert listed.returncode == 0 and json.loads(listed.stdout)["pages"] == 4
        relabel = subprocess.Popen(
            [sys.executable, "-c", "from casebase.cli import main; main()", "--db", url,
             "label", str(case.id), target], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=_environment(), cwd=tmp_path, text=True)
        time.sleep(2)
        assert relabel.poll() is None, "the relabel did not wait for the import"
        gate.touch()
        importing.communicate(timeout=120)
        relabel.communicate(timeout=120)
    finally:
        for process in (importing, relabel):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert relabel.returncode == 0, relabel.stderr
    assert importing.returncode == 0
    with CaseBase.open(url) as cb:
        assert cb.get_case(case.id).label == target
        assert cb.stats()["pages"] == 8


def test_two_imports_into_one_database_both_complete(tmp_path, db_url):
    url = db_url
    CaseBase.open(url).close()  # created once: both imports find the schema at head
    one = start_import(url, copy_dataset(tmp_path / "one", "one"), tmp_path)
    two = start_import(url, copy_dataset(tmp_path / "two", "two"), tmp_path)
    outputs = []
    try:
        for process in (one, two):
            outputs.append(process.communicate(timeout=120))
    finally:
        for process in (one, two):
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, (stdout, stderr) in zip((one, two), outputs):
        assert process.returncode == 0, stderr
        assert "4 imported" in stdout
    with CaseBase.open(url) as cb:
        stats = cb.stats()
        single = CaseBase.open(f"sqlite:///{tmp_path / 'single.sqlite'}")
    CliRunner().invoke(cli, ["--db", str(tmp_path / "single.sqlite"), "import", "--quiet", "-j",
                             "0", "--no-oracle",
                             str(FIXTURE)])
    assert stats["pages"] == 8 and stats["cases"] == 2 * single.stats()["cases"]
    single.close()
