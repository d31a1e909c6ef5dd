"""Command-line arguments that are not UTF-8 (issue 43, item 8: "unexpected UnicodeEncodeError,
exit 6"): a text argument (a URL, a query, a note, a database URL) is a usage error naming it
(exit 2, one error line); a file name is any bytes, so a path argument that is not UTF-8 is read
and written under its own name, and printed with those bytes as ``\\xNN``.

Each command runs as a user runs it: a process of its own, its arguments handed to it as bytes
(``os.fsdecode(b"\\xff")`` is how Python passes the byte 0xff), its standard output encoded
strictly, as under any UTF-8 locale but C.UTF-8 (PYTHONIOENCODING=utf-8).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import FIXTURES

from casebase.arguments import CheckedGroup, checked
from noisecbr.fsnames import is_undecodable, shown

#: The byte 0xff as Python hands it over in an argument (a lone surrogate).
FF = os.fsdecode(b"\xff")
PAGE = FIXTURES / "unsafe" / "crafted.html"
ARTICLE = "the sandbars off the lighthouse dry out for an hour"
#: Seconds one command may take (generous: a busy machine only makes it slower).
WAIT = 120


def _run(program: str, *args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess:
    """``noisecbr`` or ``casebase`` (``program``) with ``args``, in ``cwd``; output as text,
    its bytes that are not UTF-8 kept as surrogates."""
    module = {"noisecbr": "noisecbr_apps.cli", "casebase": "casebase.cli"}[program]
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for name in ("NOISECBR_DB", "CASEBASE_DEBUG"):  # the test's settings, not the caller's
        environment.pop(name, None)
    environment.update(env or {})
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=environment,
                          capture_output=True, timeout=WAIT, check=False)
    return subprocess.CompletedProcess(
        done.args, done.returncode, os.fsdecode(done.stdout), os.fsdecode(done.stderr))


def _assert_works(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder with a case base of one fixture page, the crafted page, and the same page and
    the fixture dataset under names that are not UTF-8."""
    root = tmp_path_factory.mktemp("arguments")
    shutil.copy(PAGE, root / "page.html")
    shutil.copy(PAGE, root / f"{FF}.html")
    (root / f"d{FF}").mkdir()
    shutil.copy(PAGE, root / f"d{FF}" / "a.html")
    shutil.copytree(FIXTURES / "casebase", root / f"ds{FF}")
    (root / "truth.txt").write_text(ARTICLE, encoding="utf-8")
    done = _run("casebase", "--db", "cb.sqlite", "import", str(FIXTURES / "casebase"),
                "--limit", "1", "--quiet", "--jobs", "0", "--no-oracle", cwd=root)
    _assert_works(done)
    return root


#: Text arguments that are not UTF-8, and the parameter the error names.
TEXT_ARGUMENTS = [
    (("casebase", "--db", "cb.sqlite", "search", FF), "'TEXT'"),
    (("casebase", "--db", "cb.sqlite", "label", "1", "noise", "--note", FF), "'--note'"),
    (("casebase", "--db", "cb.sqlite", "list", "--site", FF), "'--site'"),
    (("casebase", "--db", f"{FF}.sqlite", "stats"), "'--db'"),
    (("casebase", "--db", "cb.sqlite", "import-page", "page.html", "--truth", "truth.txt",
      "--url", f"http://{FF}/"), "'--url'"),
    (("noisecbr", "clean", "page.html", "--url", f"http://{FF}"), "'--url'"),
    (("noisecbr", "clean", "page.html", "--memory", "cb.sqlite", "--site", FF), "'--site'"),
    (("noisecbr", "runs", "show", "1", "--db", FF), "'--db'"),
]


@pytest.mark.parametrize(("command", "named"), TEXT_ARGUMENTS,
                         ids=[" ".join(c).replace(FF, "xff") for c, _ in TEXT_ARGUMENTS])
def test_a_text_argument_that_is_not_utf8_is_a_usage_error_naming_it(folder, command, named):
    done = _run(*command, cwd=folder)
    assert done.returncode == 2, done.stderr
    value = next(argument for argument in command if FF in argument)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    expected = (f"Error: Invalid value for {named}: '{shown(value)}' is not UTF-8 text "
                "(each \\xNN is a byte that is not)")
    assert errors == [expected], done.stderr
    assert "\\xff" in errors[0] and "Traceback" not in done.stderr


def test_a_database_named_in_the_environment_that_is_not_utf8_is_refused_too(folder):
    done = _run("casebase", "stats", cwd=folder, env={"NOISECBR_DB": f"{FF}.sqlite"})
    assert done.returncode == 2 and "'--db': '\\xff.sqlite' is not UTF-8" in done.stderr


def test_the_lazily_loaded_commands_are_checked_as_well(folder):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    done = _run("noisecbr", "serve", "--db", FF, "--port", "0", cwd=folder)
    assert done.returncode == 2 and "'--db': '\\xff' is not UTF-8 text" in done.stderr


def test_pages_whose_names_are_not_utf8_are_cleaned_and_named_with_their_bytes(folder):
    both = _run("noisecbr", "clean", "page.html", f"{FF}.html", cwd=folder)
    _assert_works(both)
    assert "==> \\xff.html <==" in both.stdout and both.stdout.count(ARTICLE) == 2
    out = _run("noisecbr", "clean", f"d{FF}", "-o", f"out{FF}", cwd=folder)
    _assert_works(out)
    assert "wrote 1 of 1 pages to out\\xff" in out.stderr
    assert ARTICLE in (folder / f"out{FF}" / "a.txt").read_text(encoding="utf-8")
    json_file = _run("noisecbr", "clean", f"{FF}.html", "-o", f"{FF}.json", cwd=folder)
    _assert_works(json_file)
    assert ARTICLE in json.loads((folder / f"{FF}.json").read_text(encoding="utf-8"))["text"]
    missing = _run("noisecbr", "clean", f"gone{FF}.html", cwd=folder)
    assert missing.returncode == 3
    assert missing.stderr.strip() == ("noisecbr: no such file or directory: gone\\xff.html "
                                      "(nothing was cleaned)")


def test_a_dataset_and_a_page_whose_names_are_not_utf8_are_imported(folder):
    dataset = _run("casebase", "--db", "names.sqlite", "import", f"ds{FF}", "--limit", "1",
                   "--quiet", "--jobs", "0", "--no-oracle", cwd=folder)
    _assert_works(dataset)
    assert dataset.stdout.startswith("ds\\xff: 1 pages read, 1 imported")
    page = _run("casebase", "--db", "names.sqlite", "import-page", f"{FF}.html", "--truth",
                "truth.txt", "--url", "http://harbour-notes.test/", cwd=folder)
    _assert_works(page)
    again = _run("casebase", "--db", "names.sqlite", "import-page", f"{FF}.html", "--truth",
                 "truth.txt", "--url", "http://harbour-notes.test/", cwd=folder)
    _assert_works(again)
    assert again.stdout.startswith("\\xff.html: already in the case base as page")
    stats = _run("casebase", "--db", "names.sqlite", "stats", "--json", cwd=folder)
    _assert_works(stats)
    assert "ds\\\\xff" in stats.stdout  # the dataset's name, stored as text (JSON-escaped)


def test_an_export_to_a_file_whose_name_is_not_utf8_is_written(folder):
    done = _run("casebase", "--db", "cb.sqlite", "export", f"{FF}.jsonl", cwd=folder)
    _assert_works(done)
    assert done.stdout.rstrip().endswith("sites to \\xff.jsonl")
    back = _run("casebase", "--db", "back.sqlite", "import-jsonl", f"{FF}.jsonl", cwd=folder)
    _assert_works(back)


def test_a_crawl_whose_names_are_not_utf8_is_written_as_parquet(folder):
    pytest.importorskip("fastwarc", reason="the warc extra is not installed")
    parquet = pytest.importorskip("pyarrow.parquet", reason="the warc extra is not installed")
    from warchelpers import make_crawl

    (folder / "crawl").mkdir()
    crawl = make_crawl(folder / "crawl")
    shutil.copy(crawl.warc, folder / f"{FF}.warc.gz")
    done = _run("noisecbr", "clean", f"{FF}.warc.gz", "-o", f"{FF}.parquet", cwd=folder)
    _assert_works(done)
    assert done.stderr.startswith("noisecbr: \\xff.warc.gz: ")
    with open(folder / f"{FF}.parquet", "rb") as handle:  # pyarrow takes no such path either
        assert parquet.read_table(handle).num_rows == crawl.cleaned


def test_bench_of_a_dataset_whose_name_is_not_utf8_prints_it(folder):
    done = _run("noisecbr", "bench", f"ds{FF}", "--limit", "1", cwd=folder)
    _assert_works(done)
    assert done.stdout.startswith("ds\\xff: 1 pages")
    nothing = _run("noisecbr", "bench", f"d{FF}", cwd=folder)  # a folder, not a dataset
    assert nothing.returncode == 6
    assert nothing.stderr.strip() == ("noisecbr: d\\xff has no ground-truth.json: not a "
                                      "dataset directory")


def test_shown_escapes_only_the_bytes_that_are_not_utf8():
    assert shown(f"caf\u00e9 {FF}.html") == "caf\u00e9 \\xff.html"
    assert shown("\ud800") == "\\ud800"  # a surrogate no byte decodes to
    assert is_undecodable(FF) and not is_undecodable("caf\u00e9")


def test_a_command_defined_elsewhere_is_checked_as_a_copy():
    @click.command()
    @click.option("--note")
    def note(note: str | None) -> None:
        click.echo(note)

    group = CheckedGroup("top", commands={"note": note})
    copy = checked(note)
    assert copy is not note and type(note) is click.Command and checked(copy) is copy
    with pytest.raises(click.BadParameter, match="is not UTF-8 text") as refused:
        group.main(["note", "--note", FF], standalone_mode=False)
    assert refused.value.param.name == "note"
    assert note.make_context("note", ["--note", FF]).params["note"] == FF  # left as it was
