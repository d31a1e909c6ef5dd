"""casebase revectorize: vectors of an older schema recomputed from the stored pages, labels
kept."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import text

from casebase import curation
from casebase.cli import cli
from casebase.pages import parse_stored
from casebase.store import CaseBase
from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA, vectorize
from noisecbr.prepare.subtrees import build_table

OLD_SCHEMA = 2
#: Schema 2 vectors were shorter: old rows get this many features, the new ones all of them.
OLD_FEATURES = 170

_PAGE = """<html><head><title>{title}</title></head><body>
<div id="topbar"><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About</a></div>
<nav class="menu"><ul><li><a href="/a">Section A</a></li><li><a href="/b">Section B</a></li>
<li><a href="/c">Section C</a></li></ul></nav>
<main><article><h1>{title}</h1>
<p>{first}</p>
<p>The harbour master said the new pier would open in spring, weather permitting, and that
the ferry timetable would be published a month before.</p>
<figure><img src="pier.jpg" alt="the pier"><figcaption>The pier in March.</figcaption></figure>
</article>
<aside class="related"><h2>Related</h2><ul><li><a href="/x">Tides and you</a></li>
<li><a href="/y">Ferry fares rise</a></li></ul></aside></main>
<div class="ad banner"><a href="https://ads.test/">Buy now</a></div>
<footer><p>Copyright 2026 Example Gazette. All rights reserved.</p></footer>
</body></html>"""


def _page(title: str, first: str) -> str:
    return _PAGE.format(title=title, first=first)


PAGES = [
    ("https://gazette.test/pier", _page("Pier opens", "Construction of the pier finished "
                                        "on Tuesday after two years of work on the quay.")),
    ("https://gazette.test/fish", _page("Fish market", "The fish market moves to the old "
                                        "warehouse next week, traders confirmed on Monday.")),
    ("https://other.test/ferry", _page("Ferry", "A second ferry joins the island route this "
                                       "summer, the operator announced yesterday.")),
]


def _truth(html: str) -> str:
    """The article's text: the page's main content."""
    article = html[html.index("<article>"):html.index("</article>")]
    return " ".join(re.sub(r"<[^>]+>", " ", article).split())


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.delenv("NOISECBR_DB", raising=False)
    return f"sqlite:///{tmp_path / 'revectorize.sqlite'}"


@pytest.fixture
def cb(db):
    base = CaseBase.open(db)
    yield base
    base.close()


def run(db: str, *args: str):
    return CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)


def _build(cb: CaseBase) -> dict[str, int]:
    """Two pages labelled from their truth, one labelled by hand; returns page ids by name."""
    ids = {}
    for name, (url, html) in zip(("pier", "fish"), PAGES[:2]):
        ids[name] = cb.add_page(html, url=url, truth=_truth(html)).page_id
    url, html = PAGES[2]
    ids["ferry"] = cb.add_page(html, url=url, labels={
        "//article": "data", "//nav": "noise", "//footer": "noise", "//aside": "mixture",
        "//article/p": "data"}).page_id
    return ids


def _make_old(cb: CaseBase, where: str, **params) -> int:
    """Turn the cases ``where`` selects into schema-2 cases with shorter (and wrong) vectors."""
    with cb.engine.begin() as connection:
        return connection.execute(text(
            f"UPDATE cases SET schema_version = {OLD_SCHEMA}, "
            f"vector = substr(vector, 5, {4 * OLD_FEATURES}) WHERE {where}"), params).rowcount


def _rows(cb: CaseBase) -> dict[int, tuple]:
    """Every column of every case, by id."""
    with cb.engine.connect() as connection:
        return {row[0]: tuple(row) for row in connection.execute(text(
            "SELECT id, page_id, path, position, tag, label, label_source, text, vector, "
            "schema_version, count, created_at, updated_at FROM cases ORDER BY id"))}


def _kept(rows: dict[int, tuple]) -> dict[int, tuple]:
    """What revectorize must never change: everything but vector, schema and updated_at."""
    return {i: row[:8] + (row[10], row[11]) for i, row in rows.items()}


def _expected(cb: CaseBase, page_id: int) -> np.ndarray:
    return vectorize(build_table(parse_stored(cb.page_html(page_id))))


def _history(cb: CaseBase) -> list[tuple]:
    with cb.engine.connect() as connection:
        return [tuple(r) for r in connection.execute(text(
            "SELECT id, case_id, old_label, new_label, source, changed_at, note "
            "FROM label_history ORDER BY id"))]


def test_revectorize_recomputes_old_cases_keeps_labels_and_reports_unmatched(cb, db):
    pages = _build(cb)
    # A hand correction on a case that will be revectorized.
    corrected = next(c for c in cb.iter_cases(page_id=pages["pier"]) if c.tag == "figcaption")
    cb.relabel(corrected.id, "noise", note="a caption is not the story")
    current = _rows(cb)
    assert all(row[9] == VECTOR_SCHEMA for row in current.values())

    # The pier page entirely old, the fish page half old, the hand-labelled page old too.
    n_old = _make_old(cb, "page_id = :p", p=pages["pier"])
    n_old += _make_old(cb, "page_id = :p AND position % 2 = 0", p=pages["fish"])
    n_old += _make_old(cb, "page_id = :p", p=pages["ferry"])
    # One old case whose path no longer names the element at its position: left as it is.
    unmatched = next(c for c in cb.iter_cases(page_id=pages["fish"], schema_version=OLD_SCHEMA)
                     if c.tag == "p")
    with cb.engine.begin() as connection:
        connection.execute(text("UPDATE cases SET path = :path WHERE id = :id"),
                           {"path": unmatched.path + "/span[7]", "id": unmatched.id})
    before = _rows(cb)
    history = _history(cb)
    assert len(cb.load_arrays().y) == len(before) - n_old  # the old cases are not trainable

    result = run(db, "revectorize", "--quiet")
    print(result.stdout, result.stderr)
    assert result.exit_code == 1
    assert (f"schema {VECTOR_SCHEMA}: 3 pages, {n_old - 1} case(s) updated, "
            "1 case(s) left at another schema") in result.stdout
    assert f"case {unmatched.id} (page {pages['fish']}): path differs" in result.stderr
    assert "1 case(s) not found in their stored page" in result.stderr

    after = _rows(cb)
    assert _kept(after) == _kept(before)  # labels, sources, texts, counts, paths untouched
    assert _history(cb) == history
    assert cb.get_case(corrected.id).label == "noise"
    assert cb.get_case(corrected.id).label_source == "human"
    for page_id in pages.values():
        vectors = _expected(cb, page_id)
        for case in cb.iter_cases(page_id=page_id):
            if case.id == unmatched.id:
                continue
            assert case.schema_version == VECTOR_SCHEMA
            assert case.vector.tobytes() == vectors[case.position].tobytes(), case
            # Recomputed vectors are the ones the import wrote (current cases were not touched).
            assert case.vector.tobytes() == current[case.id][8]
    # The unmatched case kept its old vector and schema.
    assert after[unmatched.id][8:10] == before[unmatched.id][8:10]
    assert len(after[unmatched.id][8]) == 4 * OLD_FEATURES
    arrays = cb.load_arrays()
    assert len(arrays.y) == len(after) - 1 and arrays.X.shape[1] == len(FEATURE_NAMES)

    # A second run changes nothing, and reports the same case again.
    again = run(db, "revectorize", "--quiet")
    assert again.exit_code == 1
    assert "1 pages, 0 case(s) updated, 1 case(s) left" in again.stdout
    assert f"case {unmatched.id} (page {pages['fish']}): path differs" in again.stderr
    assert _rows(cb) == after

    # With its path repaired the case is recomputed, and then there is nothing left to do.
    with cb.engine.begin() as connection:
        connection.execute(text("UPDATE cases SET path = :path WHERE id = :id"),
                           {"path": unmatched.path, "id": unmatched.id})
    repaired = run(db, "revectorize", "--quiet")
    assert repaired.exit_code == 0 and "1 case(s) updated, 0 case(s) left" in repaired.stdout
    assert cb.get_case(unmatched.id).vector.tobytes() == current[unmatched.id][8]
    final = _rows(cb)
    noop = run(db, "revectorize", "--quiet")
    assert noop.exit_code == 0 and not noop.stderr
    assert "0 pages, 0 case(s) updated, 0 case(s) left" in noop.stdout
    assert _rows(cb) == final


def test_unparsable_page_and_position_out_of_range_are_reported(cb):
    pages = _build(cb)
    _make_old(cb, "1 = 1")
    far = next(cb.iter_cases(page_id=pages["pier"]))
    with cb.engine.begin() as connection:
        connection.execute(text("UPDATE cases SET position = 100000 WHERE id = :id"),
                           {"id": far.id})
        connection.execute(text("UPDATE pages SET html = :html WHERE id = :id"),
                           {"html": b"not zlib at all", "id": pages["ferry"]})
    before = _rows(cb)
    report = cb.revectorize()
    ferry = [i for i, row in before.items() if row[1] == pages["ferry"]]
    assert report.pages == 3 and report.remaining == len(ferry) + 1
    assert report.updated == len(before) - len(ferry) - 1
    assert report.reasons == {curation.UNMATCHED_PAGE: len(ferry),
                              curation.UNMATCHED_POSITION: 1}
    assert {case_id for case_id, _, _ in report.unmatched} == {far.id, *ferry}
    after = _rows(cb)
    for case_id in (far.id, *ferry):
        assert after[case_id] == before[case_id]


def test_deduplicated_cases_are_recomputed_from_the_case_kept(cb, db):
    url, html = PAGES[0]
    truth = _truth(html)
    first = cb.add_page(html, url=url, source="one", truth=truth).page_id
    second = cb.add_page(html, url=url, source="two", truth=truth).page_id
    # A person's label on the second copy: dedupe keeps that copy (on the second page).
    chosen = next(c for c in cb.iter_cases(page_id=second) if c.tag == "article")
    cb.relabel(chosen.id, chosen.label, note="checked")
    merged = cb.dedupe()
    assert merged > 0
    counts = {c.id: c.count for c in cb.iter_cases()}
    assert counts[chosen.id] == 2 and {c.page_id for c in cb.iter_cases()} == {first, second}
    _make_old(cb, "1 = 1")
    history = _history(cb)

    result = run(db, "revectorize", "--quiet")
    assert result.exit_code == 0, result.output
    multiple = sum(1 for n in counts.values() if n > 1)
    assert f"({multiple} merged by dedupe, recomputed from the case kept)" in result.stdout
    assert {c.id: c.count for c in cb.iter_cases()} == counts
    assert _history(cb) == history
    vectors = {page_id: _expected(cb, page_id) for page_id in (first, second)}
    for case in cb.iter_cases():
        assert case.schema_version == VECTOR_SCHEMA
        assert case.vector.tobytes() == vectors[case.page_id][case.position].tobytes()
    assert len(cb.load_arrays().y) == len(counts)


def test_each_page_is_one_transaction_and_a_rerun_continues(cb, db, monkeypatch):
    pages = _build(cb)
    _make_old(cb, "1 = 1")
    before = _rows(cb)
    calls = []
    original = curation._page_vectors

    def interrupted_on_the_second_page(blob):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(blob)

    monkeypatch.setattr(curation, "_page_vectors", interrupted_on_the_second_page)
    result = run(db, "revectorize", "--quiet")
    assert result.exit_code == 130
    assert "1 page(s) recomputed" in result.stderr and "run revectorize again" in result.stderr

    # A failure in the middle of writing a page rolls the whole page back.
    update_each = CaseBase._update_each

    def fail_after_writing(session, statement, rows):
        update_each(session, statement, rows)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(curation, "_page_vectors", original)
    monkeypatch.setattr(CaseBase, "_update_each", staticmethod(fail_after_writing))
    crashed = run(db, "revectorize", "--quiet")
    assert crashed.exit_code == 6 and "disk on fire" in crashed.stderr

    def schemas(page_id):
        return {row[9] for row in _rows(cb).values() if row[1] == page_id}

    first, *others = sorted(pages.values())
    assert schemas(first) == {VECTOR_SCHEMA}
    assert all(schemas(page_id) == {OLD_SCHEMA} for page_id in others)
    for case_id, row in _rows(cb).items():
        if row[1] != first:
            assert row == before[case_id]

    monkeypatch.setattr(CaseBase, "_update_each", staticmethod(update_each))
    resumed = run(db, "revectorize", "--quiet")
    assert resumed.exit_code == 0
    assert f"2 pages, {sum(1 for r in before.values() if r[1] != first)} case(s) updated" \
        in resumed.stdout
    assert all(row[9] == VECTOR_SCHEMA for row in _rows(cb).values())
    assert _kept(_rows(cb)) == _kept(before)
