"""Bad paths and vectors (issue 43, item 7): refused at the door, tolerated once inside.

An import refuses a case record whose path is an XPath expression or whose vector is not the
schema's width of finite values, before anything is written; a label path that computes
rather than selects is a usage error (exit 2, HTTP 422), never a 500 or a "case base down"
503; and a case base that already holds such records (written by older code) still explains
pages and shows its other cases.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from casebase.cli import cli
from casebase.store import CaseBase
from noisecbr.features import FEATURE_NAMES

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: XPath expressions that are no element path: a number, a string, and one that selects the
#: first <div> child of every parent rather than naming one element.
EXPRESSIONS = ["count(//*)", "//div[1]", "string(/)"]


def run(db: str, *args: str):
    """``casebase --db DB ARGS…`` in-process, its stdout and stderr kept apart."""
    return CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)


def _vector(values: np.ndarray) -> str:
    """A vector as an export writes it: base64 of float32 little-endian bytes."""
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _page(name: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes())


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A SQLite case base of the fixture dataset (4 pages), to copy or export."""
    path = tmp_path_factory.mktemp("stored") / "cb.sqlite"
    result = CliRunner().invoke(cli, ["--db", f"sqlite:///{path}", "import", str(FIXTURE),
                                      "-q", "-j", "0", "--no-oracle"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def export_lines(stored, tmp_path_factory) -> list[str]:
    """The lines ``casebase export`` writes for :func:`stored`."""
    out = tmp_path_factory.mktemp("export") / "all.jsonl"
    assert run(f"sqlite:///{stored}", "export", str(out)).exit_code == 0
    return out.read_text(encoding="utf-8").splitlines()


def _tampered(lines: list[str], tmp_path: Path, **fields) -> tuple[Path, int]:
    """The export with ``fields`` changed in its last case record (so every page and most
    cases come before it), and that record's line number."""
    records = [json.loads(line) for line in lines]
    at = max(i for i, record in enumerate(records) if record["type"] == "case")
    records[at].update(fields)
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path, at + 1


def _refused(db: str, path: Path, line: int, field: str) -> None:
    """``import-jsonl`` of ``path`` exits 2 with one line naming the line and the field, and
    leaves the case base empty."""
    result = run(db, "import-jsonl", str(path))
    assert result.exit_code == 2, result.output
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("Error: ") and "Traceback" not in result.stderr
    assert f"line {line}:" in message and field in message, message
    stats = json.loads(run(db, "stats", "--json").stdout)
    assert stats["pages"] == stats["cases"] == stats["sites"] == 0


@pytest.mark.parametrize("path", EXPRESSIONS)
def test_an_import_refuses_a_case_path_that_is_an_xpath_expression(export_lines, tmp_path,
                                                                   path):
    tampered, line = _tampered(export_lines, tmp_path, path=path)
    _refused(f"sqlite:///{tmp_path / 'cb.sqlite'}", tampered, line, "path")


@pytest.mark.parametrize("values", [np.zeros(5), np.zeros(len(FEATURE_NAMES) + 1)],
                         ids=["short", "long"])
def test_an_import_refuses_a_vector_of_another_length_than_the_feature_count(
        export_lines, tmp_path, values):
    tampered, line = _tampered(export_lines, tmp_path, vector=_vector(values))
    _refused(f"sqlite:///{tmp_path / 'cb.sqlite'}", tampered, line, "vector")


def test_an_import_refuses_a_vector_of_bytes_that_are_no_whole_floats(export_lines, tmp_path):
    blob = base64.b64encode(b"\0" * (4 * len(FEATURE_NAMES) + 3)).decode("ascii")
    tampered, line = _tampered(export_lines, tmp_path, vector=blob)
    _refused(f"sqlite:///{tmp_path / 'cb.sqlite'}", tampered, line, "vector")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_an_import_refuses_nan_and_infinite_vectors(export_lines, tmp_path, bad):
    values = np.zeros(len(FEATURE_NAMES))
    values[3] = bad
    tampered, line = _tampered(export_lines, tmp_path, vector=_vector(values))
    _refused(f"sqlite:///{tmp_path / 'cb.sqlite'}", tampered, line, "vector")


@pytest.mark.parametrize("field", ["text", "tag"])
def test_an_import_refuses_a_case_string_holding_a_separator(export_lines, tmp_path, field):
    tampered, line = _tampered(export_lines, tmp_path, **{field: "a\x1fb"})
    _refused(f"sqlite:///{tmp_path / 'cb.sqlite'}", tampered, line, field)


def test_a_case_naming_no_element_without_a_vector_goes_round_trip(export_lines, tmp_path):
    # A hand-written case whose path names no element of its page, exported without a vector
    # (an extra row kept without one): it imports, and exports and imports again, whole.
    tampered, line = _tampered(export_lines, tmp_path, path="/html/body/div[99]", vector="",
                               text="written by hand")
    first = f"sqlite:///{tmp_path / 'first.sqlite'}"
    assert run(first, "import-jsonl", str(tampered)).exit_code == 0
    out = tmp_path / "again.jsonl"
    assert run(first, "export", str(out)).exit_code == 0
    second = f"sqlite:///{tmp_path / 'second.sqlite'}"
    result = run(second, "import-jsonl", str(out))
    assert result.exit_code == 0, result.output
    with CaseBase.open(first) as one, CaseBase.open(second) as two:
        hand = [c for c in two.iter_cases() if c.path == "/html/body/div[99]"]
        assert len(hand) == 1 and hand[0].text == "written by hand"
        assert not np.isfinite(hand[0].vector).any()
        assert two.count_cases() == one.count_cases()
        assert len(two.load_arrays().y) == len(one.load_arrays().y) == one.count_cases() - 1


def test_a_bad_case_of_a_page_already_stored_is_refused_too(export_lines, tmp_path):
    # The export as written imports whole; imported again, its pages are duplicates whose
    # cases are skipped: a bad case among them still refuses the file, nothing changes.
    clean = tmp_path / "all.jsonl"
    clean.write_text("\n".join(export_lines) + "\n", encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    assert run(db, "import-jsonl", str(clean)).exit_code == 0
    before = json.loads(run(db, "stats", "--json").stdout)
    assert before["pages"] == 4
    tampered, line = _tampered(export_lines, tmp_path, path="count(//*)")
    result = run(db, "import-jsonl", str(tampered))
    assert result.exit_code == 2 and f"line {line}: case path" in result.stderr
    after = json.loads(run(db, "stats", "--json").stdout)
    before.pop("db_size"), after.pop("db_size")
    assert after == before


def test_every_path_the_project_writes_is_an_element_path(stored):
    from noisecbr.prepare.subtrees import is_element_path

    cb = CaseBase.open(f"sqlite:///{stored}")
    try:
        paths = [case.path for case in cb.iter_cases()]
    finally:
        cb.close()
    assert paths and all(is_element_path(path) for path in paths)
    assert is_element_path("/*/*[2]") and is_element_path("/html/body/x:y/a.b")
    for expression in [*EXPRESSIONS, "/html/body/div[0]", "/html/body/p[last()]",
                       "/html/body/p | //a", "/html/body/a[@href]", "/html/body/"]:
        assert not is_element_path(expression), expression


@pytest.mark.parametrize("path", ["count(//*)", "string(/)", "true()", "unknown-function()"])
def test_import_page_refuses_a_label_path_that_selects_no_elements(tmp_path, path):
    page, labels = tmp_path / "page.html", tmp_path / "labels.json"
    page.write_bytes(_page("news-1"))
    labels.write_text(json.dumps({"//article": "data", path: "noise"}))
    db = f"sqlite:///{tmp_path / 'cb.sqlite'}"
    assert run(db, "init").exit_code == 0
    result = run(db, "import-page", str(page), "--url", "https://n.test/p", "--labels",
                 str(labels))
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and path in result.stderr
    assert json.loads(run(db, "stats", "--json").stdout)["pages"] == 0


# -- a case base that already holds bad records ---------------------------------------------
@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """The fixture pages stored by the code before revision 0005, with bad records written as
    that code let them in, then opened (so migrated) by this code: by what is wrong with it,
    the id of each damaged case."""
    from legacy_casebase import write_legacy

    path = tmp_path_factory.mktemp("damaged") / "cb.sqlite"
    write_legacy(f"sqlite:///{path}", FIXTURE)
    nan = np.zeros(len(FEATURE_NAMES), dtype="<f4")
    nan[0] = np.nan
    short = np.zeros(5, dtype="<f4").tobytes()
    # A path that names no element keeps the case's own fields after the migration (an extra
    # row of its page), its vector too; a bad vector of a case whose path names its element
    # is recomputed from the page.
    changes = {"count": {"path": "count(//*)"},
               "string": {"path": "string(/)", "vector": short},
               "div": {"path": "//div[1]", "vector": nan.tobytes()},
               "short": {"vector": short}, "ragged": {"vector": b"\0" * 7},
               "nan": {"vector": nan.tobytes()}}
    with sqlite3.connect(path) as connection:
        ids = [row[0] for row in connection.execute("SELECT id FROM cases ORDER BY id")]
        damaged = dict(zip(changes, ids[5:]))
        for what, columns in changes.items():
            for column, value in columns.items():
                connection.execute(f"UPDATE cases SET {column} = ? WHERE id = ?",
                                   (value, damaged[what]))
    connection.close()
    CaseBase.open(f"sqlite:///{path}").close()  # the upgrade to this code's revision
    return path, damaged


def test_training_arrays_leave_out_the_bad_vectors_and_say_which(damaged, caplog):
    path, ids = damaged
    cb = CaseBase.open(f"sqlite:///{path}")
    try:
        with caplog.at_level(logging.WARNING, logger="casebase"):
            arrays = cb.load_arrays()
        total = cb.count_cases()
        recomputed = [cb.get_case(ids[what]) for what in ("short", "ragged", "nan")]
    finally:
        cb.close()
    bad = {ids["string"], ids["div"]}
    assert len(arrays.y) == total - 2 and not bad & set(arrays.case_ids.tolist())
    assert arrays.X.shape == (total - 2, len(FEATURE_NAMES)) and np.isfinite(arrays.X).all()
    assert ids["count"] in arrays.case_ids  # a bad path does not spoil a vector
    for case in recomputed:  # derived from the page again: whole and finite
        assert case.id in arrays.case_ids and case.vector.shape == (len(FEATURE_NAMES),)
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "2 case(s)" in warned and all(str(i) in warned for i in bad)


def test_explain_works_on_a_case_base_with_bad_records(damaged, tmp_path, caplog):
    path, ids = damaged
    page = tmp_path / "page.html"
    page.write_bytes(_page("news-2"))
    with caplog.at_level(logging.WARNING, logger="casebase"):
        result = run(f"sqlite:///{path}", "explain", str(page), "--no-cache", "--json", "-k",
                     "5")
    assert result.exit_code == 0, result.output
    items = [json.loads(line) for line in result.stdout.splitlines()]
    near = {n["case_id"] for item in items for n in item["neighbours"]}
    assert items and near and not near & {ids["string"], ids["div"]}
    assert "left out" in caplog.text


@pytest.mark.parametrize("what", ["count", "string", "div", "ragged"])
def test_show_a_bad_case_flags_it_instead_of_failing(damaged, what):
    path, ids = damaged
    db = f"sqlite:///{path}"
    shown = run(db, "show", str(ids[what]))
    assert shown.exit_code == 0, shown.output
    record = json.loads(run(db, "show", str(ids[what]), "--json").stdout)
    if what == "ragged":  # its vector derived from the page again
        assert record["html"].startswith(f"<{record['tag']}")
        assert len(record["vector"]) == len(FEATURE_NAMES)
    else:
        assert record["html"] is None and "not an element path" in shown.stdout


# -- the service ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served(damaged):
    """A server with write access on the damaged case base."""
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    pytest.importorskip("httpx", reason="TestClient needs httpx (dev extra)")
    from fastapi.testclient import TestClient

    from noisecbr_apps.service.app import Settings, create_app

    path, ids = damaged
    with TestClient(create_app(Settings(db=str(path), token=TOKEN))) as client:
        yield client, ids


def _one_line(answer) -> str:
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and "Traceback" not in detail
    return detail


def test_the_service_explains_and_shows_cases_despite_bad_records(served):
    client, ids = served
    answer = client.post("/explain", json={"html": _page("news-2").decode(),
                                           "url": "https://n.test/b", "options": {"k": 5}})
    assert answer.status_code == 200, answer.text
    near = {n["case_id"] for item in answer.json() for n in item["neighbours"]}
    assert near and not near & {ids["string"], ids["div"]}
    for what, case_id in ids.items():
        case = client.get(f"/cases/{case_id}")
        assert case.status_code == 200, (what, case.text)
        assert (case.json()["html"] is None) == (what in ("count", "string", "div"))


@pytest.mark.parametrize("path", ["count(//*)", "string(/)", "boolean(//p)", "nope()"])
def test_a_label_path_that_selects_no_elements_is_422_naming_it(served, path):
    client, _ = served
    labels = {"/html/body": "data", path: "noise"}
    more = client.post("/pages/1/labels", json={"labels": labels}, headers=AUTH)
    assert more.status_code == 422 and path in _one_line(more)
    new = client.post("/pages", json={"html": "<p>fresh words</p>", "labels": labels,
                                      "source": "validation"}, headers=AUTH)
    assert new.status_code == 422 and path in _one_line(new)
    assert client.get("/cases/1").json()["history"] == []  # nothing was relabelled
