"""The casebase command line, end to end: CliRunner, and a real process for interruptions."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import dataset_with_page

from casebase.cli import cli
from casebase.store import CaseBase
from noisecbr.result import PAPER_LABELS

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.delenv("NOISECBR_DB", raising=False)
    return f"sqlite:///{tmp_path / 'cli.sqlite'}"


def run(db: str, *args: str, input: str | None = None):
    result = CliRunner().invoke(cli, ["--db", db, *args], input=input, catch_exceptions=False)
    return result


def test_help_everywhere():
    runner = CliRunner()
    assert runner.invoke(cli, ["--help"]).exit_code == 0
    for command in cli.commands:
        result = runner.invoke(cli, [command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, command


def test_end_to_end(db, tmp_path):
    assert run(db, "init").exit_code == 0
    result = run(db, "import", str(FIXTURE), "--quiet", "-j", "0")
    assert result.exit_code == 0, result.output
    print(result.output)
    assert "4 imported" in result.stdout and "oracle ceiling: P" in result.stdout
    assert "pages/s" in result.stdout and "noise" in result.stdout

    again = run(db, "import", str(FIXTURE), "--quiet", "--no-oracle", "-j", "0")
    assert again.exit_code == 0 and "4 already there" in again.stdout
    assert "skipped news-1: already in the case base" in again.stderr

    stats = json.loads(run(db, "stats", "--json").stdout)
    assert stats["pages"] == 4 and all(stats["by_label"][label] for label in PAPER_LABELS)
    assert "harbour-gazette.test" in run(db, "stats").stdout

    listing = run(db, "list", "--label", "data", "--site", "harbour-gazette.test", "--limit", "3")
    assert listing.exit_code == 0
    rows = listing.stdout.splitlines()
    assert rows[0].split()[:3] == ["id", "site", "path"] and len(rows) == 4
    assert "of" in listing.stderr
    searched = run(db, "search", "sourdough", "--json").stdout
    found = [json.loads(line) for line in searched.splitlines()]
    assert found and all("sourdough" in case["text"].lower() for case in found)
    case_id = found[-1]["id"]

    shown = run(db, "show", str(case_id))
    assert shown.exit_code == 0 and "html:" in shown.stdout and "vector (" in shown.stdout
    record = json.loads(run(db, "show", str(case_id), "--json").stdout)
    assert record["html"].startswith(f"<{record['tag']}") and len(record["vector"]) > 100

    relabelled = run(db, "label", str(case_id), "data", "--note", "it is content")
    assert relabelled.exit_code == 0 and "→ data (human)" in relabelled.stdout
    record = json.loads(run(db, "show", str(case_id), "--json").stdout)
    assert record["label_source"] == "human"
    assert record["history"][0]["note"] == "it is content"

    assert "nothing deleted" in run(db, "delete", str(case_id), input="n\n").stdout
    assert run(db, "delete", str(case_id), "--yes").exit_code == 0
    assert run(db, "show", str(case_id)).exit_code == 3

    exported = tmp_path / "all.jsonl.gz"
    assert run(db, "export", str(exported)).exit_code == 0
    copy = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    assert run(copy, "import-jsonl", str(exported)).exit_code == 0
    original = json.loads(run(db, "stats", "--json").stdout)
    copied = json.loads(run(copy, "stats", "--json").stdout)
    original.pop("db_size"), copied.pop("db_size")
    assert copied == original

    deduped = run(db, "dedupe")
    assert deduped.exit_code == 0 and "merged" in deduped.stdout


def test_worker_processes_give_the_same_case_base(db, tmp_path):
    dataset = tmp_path / "dataset"
    shutil.copytree(FIXTURE, dataset)
    truth = json.loads((dataset / "ground-truth.json").read_text())
    # A page with the bytes of another (skipped) and one that is not HTML (failed), in between.
    truth["news-1b"] = truth["news-1"]
    truth["blog-0"] = {"url": "https://bin.test/x", "articleBody": "nothing"}
    (dataset / "ground-truth.json").write_text(json.dumps(truth))
    shutil.copy(dataset / "html" / "news-1.html.gz", dataset / "html" / "news-1b.html.gz")
    with gzip.open(dataset / "html" / "blog-0.html.gz", "wb") as handle:
        handle.write(bytes(range(256)) * 20)
    parallel = f"sqlite:///{tmp_path / 'parallel.sqlite'}"
    one = run(db, "import", str(dataset), "--quiet", "-j", "0")
    two = run(parallel, "import", str(dataset), "--quiet", "-j", "2", "--batch-rows", "7")
    assert one.exit_code == two.exit_code == 1
    # The first line says which new database each import created.
    assert one.stderr.startswith("casebase: created a new case base at")
    assert one.stderr.splitlines()[1:] == two.stderr.splitlines()[1:]
    assert "same bytes as news-1" in one.stderr
    assert one.stdout.splitlines()[1:3] == two.stdout.splitlines()[1:3]
    a, b = CaseBase.open(db), CaseBase.open(parallel)
    for left, right in zip(a.load_arrays(), b.load_arrays()):
        assert (left == right).all()
    assert [c.path for c in a.iter_cases()] == [c.path for c in b.iter_cases()]
    a.close(), b.close()


def test_exit_codes(db, tmp_path):
    run(db, "import", str(FIXTURE), "--quiet", "--no-oracle", "-j", "0")
    assert run(db, "show", "999999").exit_code == 3
    missing = run(db, "show", "999999")
    assert missing.stderr.strip() == "Error: no case with id 999999"
    assert run(db, "label", "999999", "noise").exit_code == 3
    assert run(db, "delete", "1", "999999", "--yes").exit_code == 3
    assert run(db, "label", "1", "junk").exit_code == 2
    assert run(db, "list", "--limit", "0").exit_code == 2
    assert run(db, "frobnicate").exit_code == 2
    assert run(db, "import", str(tmp_path / "nowhere")).exit_code == 2
    assert run(db, "delete", "2").exit_code == 2  # no answer to the confirmation

    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database " * 100)
    broken = run(str(garbage), "stats")
    assert broken.exit_code == 5 and "Traceback" not in broken.output
    assert len(broken.stderr.strip().splitlines()) == 1


def test_failed_pages_are_reported_and_exit_1(db, tmp_path):
    dataset = dataset_with_page(tmp_path / "dataset", "zz-binary", bytes(range(256)) * 20)
    result = run(db, "import", str(dataset), "--quiet", "-j", "0")
    assert result.exit_code == 1
    assert "failed zz-binary:" in result.stderr and "1 failed" in result.stdout
    assert json.loads(run(db, "stats", "--json").stdout)["pages"] == 4


def test_import_page_with_labels(db, tmp_path):
    page = FIXTURE / "html" / "blog-2.html.gz"
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"//article": "data", "//div[@id='topbar']": "noise",
                                  "/html/body/table": "noise"}))
    result = run(db, "import-page", str(page), "--url", "https://notes.workshop-blog.test/p",
                 "--labels", str(labels))
    assert result.exit_code == 1  # one path matched nothing
    assert "unknown path (selects no element): /html/body/table" in result.stderr
    assert "2 cases" in result.stdout
    cases = [json.loads(line) for line in run(db, "list", "--json").stdout.splitlines()]
    assert {(c["tag"], c["label"], c["label_source"]) for c in cases} == {
        ("article", "data", "human"), ("div", "noise", "human")}
    labels.write_text(json.dumps({"//article": "junk"}))
    assert run(db, "import-page", str(page), "--labels", str(labels)).exit_code == 2
    assert run(db, "import-page", str(page)).exit_code == 2
    # The same page again with another label: a further correction of it, not a skip.
    labels.write_text(json.dumps({"//div[@id='topbar']": "data"}))
    again = run(db, "import-page", str(page), "--labels", str(labels))
    assert again.exit_code == 0 and "0 new cases, 1 relabelled" in again.stdout
    cases = [json.loads(line) for line in run(db, "list", "--json").stdout.splitlines()]
    assert ("div", "data") in {(c["tag"], c["label"]) for c in cases}


def test_a_correction_with_only_a_wrong_path_stores_nothing(db, tmp_path):
    # The README's correction workflow (issue 43, item 9): the refused page was stored with no
    # case, and the run with the right path then skipped it as already stored.
    page = FIXTURE / "html" / "blog-2.html.gz"
    labels = tmp_path / "fix.json"
    labels.write_text(json.dumps({"/html/body/main/div[7]": "noise"}))
    wrong = run(db, "import-page", str(page), "--url", "https://n.test/p", "--labels",
                str(labels))
    assert wrong.exit_code == 3 and "nothing stored" in wrong.stderr
    assert json.loads(run(db, "stats", "--json").stdout)["pages"] == 0
    labels.write_text(json.dumps({"//div[@id='topbar']": "noise"}))
    right = run(db, "import-page", str(page), "--url", "https://n.test/p", "--labels",
                str(labels))
    assert right.exit_code == 0 and "1 cases" in right.stdout


_SLOW_IMPORT = """
import signal, sys, time
# A shell starts background jobs with SIGINT ignored, and Python then never raises
# KeyboardInterrupt; Ctrl-C at a terminal always arrives, so the test restores that.
signal.signal(signal.SIGINT, signal.default_int_handler)
import os
import casebase.pages as pages
original = pages.prepare_page
# With NOISECBR_TEST_GATE set, every page after the first waits until that file exists (at
# most 60 s): the test decides when the import may go on, however slow the machine is.
gate = os.environ.get("NOISECBR_TEST_GATE")
seen = []
def slow(*args, **kwargs):
    sys.stderr.write("PAGE\\n"); sys.stderr.flush()
    seen.append(1)
    if gate and len(seen) > 1:
        deadline = time.monotonic() + 60
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.05)
    else:
        time.sleep(0.4)
    return original(*args, **kwargs)
pages.prepare_page = slow
from casebase.cli import main
main()
"""


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_interrupted_import_leaves_the_database_as_it_was(tmp_path, how):
    url = f"sqlite:///{tmp_path / 'killed.sqlite'}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("NOISECBR_DB", None)
    # Rows are flushed after every page (--batch-rows 1): pages are in the transaction when the
    # import dies.
    process = subprocess.Popen(
        [sys.executable, "-c", _SLOW_IMPORT, "--db", url, "import", "--quiet", "--jobs", "0",
         "--batch-rows", "1", str(FIXTURE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path, text=True)
    try:
        pages = 0
        deadline = time.monotonic() + 60
        while pages < 3 and time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, "the import ended before it could be interrupted"
            pages += line.strip() == "PAGE"
        assert pages == 3
        # Mid-import, another connection sees nothing and is not blocked (WAL).
        cb = CaseBase.open(url)
        assert cb.stats()["pages"] == 0
        process.send_signal(getattr(signal, how))
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if how == "SIGINT":
        assert process.returncode == 130
        assert "interrupted" in stderr and "Traceback" not in stderr
    else:
        assert process.returncode == -signal.SIGKILL
    stats = cb.stats()
    assert (stats["pages"], stats["cases"], stats["sites"]) == (0, 0, 0)
    cb.close()
    # And the database still works: a complete import afterwards succeeds.
    result = CliRunner().invoke(cli, ["--db", url, "import", "--quiet", "-j", "0", str(FIXTURE)])
    assert result.exit_code == 0 and "4 imported" in result.stdout


def _fake_template_labels(pages, theta=0.10, share=0.85):
    """Stands in for noisecbr.seeds.templates.template_labels: a subtree is template when
    the same path holds the same text on every page."""
    from casebase.derived import subtree_texts
    from noisecbr.prepare.subtrees import build_table
    from noisecbr.prepare.tidy import tidy

    tables = [build_table(tidy(page)) for page in pages]
    keyed = [dict(zip(t.paths(), subtree_texts(t))) for t in tables]
    common = set.intersection(*(set(k.items()) for k in keyed))
    return [{path: (path, text) in common for path, text in k.items()} | {"/html/body/x[9]": True}
            for k in keyed]


def test_import_site_stores_template_subtrees_as_noise(db, tmp_path, monkeypatch):
    import types

    fake = types.ModuleType("noisecbr.seeds.templates")
    fake.template_labels = _fake_template_labels
    monkeypatch.setitem(sys.modules, "noisecbr.seeds.templates", fake)
    site = tmp_path / "site"
    site.mkdir()
    for name in ("blog-1", "blog-2"):
        shutil.copy(FIXTURE / "html" / f"{name}.html.gz", site)
    (site / "notes.txt").write_text("not a page")
    result = run(db, "import-site", str(site), "--site", "notes.workshop-blog.test", "--quiet")
    assert result.exit_code == 0, result.output
    assert "2 imported" in result.stdout and "2 template paths matched no element" in result.stdout
    cases = [json.loads(line) for line in run(db, "list", "--json", "--limit", "500").stdout
             .splitlines()]
    assert cases and {(c["label"], c["label_source"], c["site"]) for c in cases} == {
        ("noise", "site_template", "notes.workshop-blog.test")}
    paths = {c["path"] for c in cases}
    assert "/html/body/div[1]" in paths  # the top bar
    assert not any("/article" in p for p in paths)
    again = run(db, "import-site", str(site), "--site", "notes.workshop-blog.test", "--quiet")
    assert again.exit_code == 0 and "2 already there" in again.stdout


def test_import_site_without_templates_module(db, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "noisecbr.seeds.templates", None)
    result = run(db, "import-site", str(tmp_path), "--site", "x.test")
    assert result.exit_code == 6 and "not available" in result.stderr


def test_default_database_comes_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "env.sqlite"
    monkeypatch.setenv("NOISECBR_DB", str(path))
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0 and str(path) in result.stdout and path.exists()


def test_a_command_on_a_database_that_does_not_exist_refuses_it(tmp_path, monkeypatch):
    """A mistyped --db must not become a new, empty case base: reading commands exit 3 with
    the path and create nothing; the commands that fill a case base create it and say so."""
    monkeypatch.delenv("NOISECBR_DB", raising=False)
    missing = tmp_path / "no" / "such" / "dir" / "x.sqlite"
    for command in (["stats"], ["list"], ["search", "word"], ["export", str(tmp_path / "o.jsonl")],
                    ["dedupe"], ["label", "1", "noise"]):
        result = run(str(missing), *command)
        assert result.exit_code == 3, (command, result.output)
        assert f"no case base at {missing}" in result.stderr and "casebase init" in result.stderr
    assert not (tmp_path / "no").exists()
    # Nor does cleaning with a site memory create one (a SQLAlchemy URL, not a plain path).
    from noisecbr_apps.cli import main as noisecbr_main

    page = tmp_path / "page.html"
    page.write_text("<p>" + "words " * 50 + "</p>")
    cleaned = CliRunner().invoke(noisecbr_main, ["clean", str(page), "--memory",
                                                 f"sqlite:///{missing}", "--site", "a.test"])
    assert cleaned.exit_code == 5 and "no case base at" in cleaned.output
    assert not (tmp_path / "no").exists()
    created = run(str(missing), "init")
    assert created.exit_code == 0 and f"created a new case base at {missing}" in created.stderr
    assert missing.is_file()
    again = run(str(missing), "stats")
    assert again.exit_code == 0 and "created" not in again.stderr
    fresh = tmp_path / "fresh.sqlite"
    imported = run(str(fresh), "import", str(FIXTURE), "--quiet", "--no-oracle", "-j", "0")
    assert imported.exit_code == 0 and f"created a new case base at {fresh}" in imported.stderr


def _damage(html_dir: Path) -> None:
    """news-2 cut short (a truncated download) and a gzip bomb (12 MB of spaces in 12 kB)."""
    news = (html_dir / "news-2.html.gz").read_bytes()
    (html_dir / "news-2.html.gz").write_bytes(news[: len(news) // 2])
    (html_dir / "bomb.html.gz").write_bytes(gzip.compress(b"<p>" + b" " * 12_000_000))


def test_a_damaged_or_oversized_page_file_is_reported_and_skipped(db, tmp_path):
    """One truncated .gz or gzip bomb among good pages: the others are imported, the bad ones
    listed, exit 1 — never the whole import aborted (import, import-site, import-page)."""
    dataset = dataset_with_page(tmp_path / "data", "bomb", b"<p>x</p>")
    _damage(dataset / "html")
    result = run(db, "import", str(dataset), "--quiet", "--no-oracle", "-j", "0")
    assert result.exit_code == 1, result.output
    assert "3 imported" in result.stdout and "2 failed" in result.stdout
    assert "failed news-2: cannot decompress the gzip input" in result.stderr
    assert "failed bomb: input decompresses to more than 10,000,000 bytes" in result.stderr

    site = tmp_path / "site"
    site.mkdir()
    for name in ("blog-1", "blog-2", "news-2"):
        shutil.copy(FIXTURE / "html" / f"{name}.html.gz", site)
    _damage(site)
    other = f"sqlite:///{tmp_path / 'site.sqlite'}"
    result = run(other, "import-site", str(site), "--site", "blog.test", "--quiet")
    assert result.exit_code == 1, result.output
    assert "2 imported" in result.stdout and "2 failed" in result.stdout
    assert "failed news-2.html.gz: cannot decompress" in result.stderr

    page = run(other, "import-page", str(site / "bomb.html.gz"), "--truth", str(site / "x"))
    assert page.exit_code == 2  # --truth names a missing file: click's usage error
    (site / "x").write_text("text")
    page = run(other, "import-page", str(site / "bomb.html.gz"), "--truth", str(site / "x"))
    assert page.exit_code == 1 and "more than 10,000,000 bytes" in page.stderr


def test_numbers_beyond_a_databases_integers_are_usage_errors(db, tmp_path):
    # issue 43, item 8: "unexpected OverflowError", exit 6; and no database made for it.
    huge = str(2**64)
    for args in (["show", huge], ["label", huge, "noise"], ["delete", huge, "--yes"],
                 ["list", "--limit", huge], ["list", "--offset", huge], ["list", "--page", huge]):
        result = run(db, *args)
        assert result.exit_code == 2 and "not in the range" in result.output, args
    assert not (tmp_path / "cli.sqlite").exists()


def test_reading_commands_never_create_migrate_or_repair(db, tmp_path):
    # issue 43, item 8: `stats` migrated an older case base without a word and made a 0-byte
    # file a case base.
    import sqlite3

    from casebase.connection import migrate
    from casebase.store import CaseBase
    from noisecbr.exits import EXIT_CASEBASE

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    stats = run(f"sqlite:///{empty}", "stats")
    assert stats.exit_code == EXIT_CASEBASE and "not a case base" in stats.stderr
    assert empty.stat().st_size == 0
    old = tmp_path / "old.sqlite"
    CaseBase.open(str(old)).close()
    with CaseBase.open(str(old)) as casebase:
        migrate(casebase.engine, "0001", downgrade=True)
        before = casebase.revision()
    stats = run(f"sqlite:///{old}", "stats")
    assert stats.exit_code == EXIT_CASEBASE and "older than this noisecbr" in stats.stderr
    assert "casebase init" in stats.stderr
    with sqlite3.connect(old) as connection:  # untouched
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone() == (
            before,)
    assert run(f"sqlite:///{old}", "init").exit_code == 0  # a writing command migrates
    assert run(f"sqlite:///{old}", "stats").exit_code == 0


def test_a_file_path_with_a_question_mark_is_refused_not_read_as_another_file(tmp_path):
    # In a SQLAlchemy URL the '?' starts the options: the case base would be tmp_path / "q".
    folder = tmp_path / "q?dir"
    folder.mkdir()
    result = CliRunner().invoke(cli, ["--db", str(folder / "cb.sqlite"), "stats"])
    assert result.exit_code != 0 and "cannot hold '?'" in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q?dir"]  # nothing made beside it
