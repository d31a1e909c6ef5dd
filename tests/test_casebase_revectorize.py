"""casebase revectorize: pages of an older vector schema recomputed from their stored HTML,
labels kept."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import text

from casebase import curation
from casebase.cli import cli
from casebase.derived import (
    Outline,
    decode_outline,
    decode_vectors,
    encode_outline,
    encode_vectors,
)
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


def _make_old(cb: CaseBase, page_id: int) -> None:
    """Turn a page into one of schema 2, its vectors shorter (and wrong)."""
    with cb.engine.begin() as connection:
        blob = connection.execute(text("SELECT vectors FROM pages WHERE id = :p"),
                                  {"p": page_id}).scalar()
        old = decode_vectors(blob)[:, 1:1 + OLD_FEATURES]
        connection.execute(text("UPDATE pages SET vector_schema = :s, vectors = :v "
                                "WHERE id = :p"),
                           {"s": OLD_SCHEMA, "v": encode_vectors(old), "p": page_id})


def _move_path(cb: CaseBase, page_id: int, position: int, path: str) -> None:
    """Write another path into a page's stored outline at ``position`` (as if the element had
    been named otherwise when the page was stored)."""
    with cb.engine.begin() as connection:
        blob = connection.execute(text("SELECT outline FROM pages WHERE id = :p"),
                                  {"p": page_id}).scalar()
        outline = decode_outline(blob)
        paths = list(outline.paths)
        paths[position] = path
        connection.execute(text("UPDATE pages SET outline = :o WHERE id = :p"), {
            "o": encode_outline(Outline(tuple(paths), outline.tags, outline.texts)),
            "p": page_id})


def _rows(cb: CaseBase) -> dict[int, tuple]:
    """Every column of every case, by id."""
    with cb.engine.connect() as connection:
        return {row[0]: tuple(row) for row in connection.execute(text(
            "SELECT id, page_id, position, label, label_source, count, created_at, updated_at "
            "FROM cases ORDER BY id"))}


def _pages(cb: CaseBase) -> dict[int, tuple]:
    with cb.engine.connect() as connection:
        return {row[0]: tuple(row) for row in connection.execute(text(
            "SELECT id, vector_schema, vectors, outline, html FROM pages ORDER BY id"))}


def _expected(cb: CaseBase, page_id: int) -> np.ndarray:
    return vectorize(build_table(parse_stored(cb.page_html(page_id))))


def _history(cb: CaseBase) -> list[tuple]:
    with cb.engine.connect() as connection:
        return [tuple(r) for r in connection.execute(text(
            "SELECT id, case_id, old_label, new_label, source, changed_at, note "
            "FROM label_history ORDER BY id"))]


def test_revectorize_recomputes_old_pages_keeps_labels_and_reports_unmatched(cb, db):
    pages = _build(cb)
    # A hand correction on a case that will be revectorized.
    corrected = next(c for c in cb.iter_cases(page_id=pages["pier"]) if c.tag == "figcaption")
    cb.relabel(corrected.id, "noise", note="a caption is not the story")
    current = {c.id: c.vector.tobytes() for c in cb.iter_cases()}
    assert {c.schema_version for c in cb.iter_cases()} == {VECTOR_SCHEMA}

    for page_id in pages.values():
        _make_old(cb, page_id)
    # One case of the fish page whose stored path names no element of the page now: it is kept
    # (label, path, text) as an extra row of its page, without a vector.
    unmatched = next(c for c in cb.iter_cases(page_id=pages["fish"]) if c.tag == "p")
    _move_path(cb, pages["fish"], unmatched.position, unmatched.path + "/span[7]")
    before, history = _rows(cb), _history(cb)
    assert len(cb.load_arrays().y) == 0  # the old cases are not trainable

    result = run(db, "revectorize", "--quiet")
    assert result.exit_code == 1
    assert (f"schema {VECTOR_SCHEMA}: 3 pages, {len(before) - 1} case(s) updated, "
            "0 case(s) left at another schema") in result.stdout
    assert f"case {unmatched.id} (page {pages['fish']}): path differs" in result.stderr
    assert "1 case(s) not found in their stored page" in result.stderr

    after = _rows(cb)
    moved = {i for i in before if after[i] != before[i]}
    assert moved == {unmatched.id}  # everything else untouched: labels, sources, positions
    assert after[unmatched.id][3:6] == before[unmatched.id][3:6]  # label, source, count
    assert _history(cb) == history
    assert cb.get_case(corrected.id).label == "noise"
    assert cb.get_case(corrected.id).label_source == "human"
    kept = cb.get_case(unmatched.id)
    assert kept.path == unmatched.path + "/span[7]" and kept.text == unmatched.text
    assert not np.isfinite(kept.vector).any()
    for page_id in pages.values():
        vectors = _expected(cb, page_id)
        for case in cb.iter_cases(page_id=page_id):
            assert case.schema_version == VECTOR_SCHEMA
            if case.id == unmatched.id:
                continue
            assert case.vector.tobytes() == vectors[case.position].tobytes(), case
            # Recomputed vectors are the ones the import stored.
            assert case.vector.tobytes() == current[case.id]
    arrays = cb.load_arrays()
    assert len(arrays.y) == len(before) - 1 and arrays.X.shape[1] == len(FEATURE_NAMES)

    # A second run has nothing to do.
    final = _pages(cb)
    noop = run(db, "revectorize", "--quiet")
    assert noop.exit_code == 0 and not noop.stderr
    assert "0 pages, 0 case(s) updated, 0 case(s) left" in noop.stdout
    assert _pages(cb) == final


def test_a_case_whose_element_moved_follows_it(cb):
    pages = _build(cb)
    _make_old(cb, pages["pier"])
    case = next(c for c in cb.iter_cases(page_id=pages["pier"]) if c.tag == "figcaption")
    other = next(c for c in cb.iter_cases(page_id=pages["pier"]) if c.tag == "footer")
    # The stored outline names the figcaption at the footer's position: the footer's case is
    # the figcaption's element, as the page parses now.
    _move_path(cb, pages["pier"], other.position, case.path)
    report = cb.revectorize()
    assert report.unmatched == [] and report.pages == 1
    moved = cb.get_case(other.id)
    assert moved.position == case.position and moved.path == case.path
    assert moved.label == other.label  # its label stays its own


def test_unparsable_page_and_position_out_of_range_are_reported(cb):
    pages = _build(cb)
    for page_id in pages.values():
        _make_old(cb, page_id)
    far = next(cb.iter_cases(page_id=pages["pier"]))
    with cb.engine.begin() as connection:
        connection.execute(text("UPDATE cases SET position = 100000 WHERE id = :id"),
                           {"id": far.id})
        connection.execute(text("UPDATE pages SET html = :html WHERE id = :id"),
                           {"html": b"not zlib at all", "id": pages["ferry"]})
    before, stored = _rows(cb), _pages(cb)
    report = cb.revectorize()
    ferry = [i for i, row in before.items() if row[1] == pages["ferry"]]
    assert report.pages == 3 and report.remaining == len(ferry)
    assert report.updated == len(before) - len(ferry) - 1
    assert report.reasons == {curation.UNMATCHED_PAGE: len(ferry),
                              curation.UNMATCHED_POSITION: 1}
    assert {case_id for case_id, _, _ in report.unmatched} == {far.id, *ferry}
    after = _rows(cb)
    for case_id in ferry:
        assert after[case_id] == before[case_id]
    assert _pages(cb)[pages["ferry"]] == stored[pages["ferry"]]
    # The case beyond its page's elements is kept, an extra row without path or vector.
    kept = cb.get_case(far.id)
    assert kept.label == before[far.id][3] and kept.path == "" and len(kept.vector)
    assert far.id not in cb.load_arrays().case_ids


def test_deduplicated_cases_keep_their_counts(cb, db):
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
    for page_id in (first, second):
        _make_old(cb, page_id)
    history = _history(cb)

    result = run(db, "revectorize", "--quiet")
    assert result.exit_code == 0, result.output
    multiple = sum(1 for n in counts.values() if n > 1)
    assert f"({multiple} merged by dedupe)" in result.stdout
    assert {c.id: c.count for c in cb.iter_cases()} == counts
    assert _history(cb) == history
    vectors = {page_id: _expected(cb, page_id) for page_id in (first, second)}
    for case in cb.iter_cases():
        assert case.schema_version == VECTOR_SCHEMA
        assert case.vector.tobytes() == vectors[case.page_id][case.position].tobytes()
    assert len(cb.load_arrays().y) == len(counts)


def test_each_page_is_one_transaction_and_a_rerun_continues(cb, db, monkeypatch):
    pages = _build(cb)
    for page_id in pages.values():
        _make_old(cb, page_id)
    before = _pages(cb)
    calls = []
    original = curation.derive

    def interrupted_on_the_second_page(table):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(table)

    monkeypatch.setattr(curation, "derive", interrupted_on_the_second_page)
    result = run(db, "revectorize", "--quiet")
    assert result.exit_code == 130
    assert "1 page(s) recomputed" in result.stderr and "run revectorize again" in result.stderr

    # A failure in the middle of writing a page rolls the whole page back.
    write_page = CaseBase._write_page

    def fail_after_writing(session, *args):
        write_page(session, *args)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(curation, "derive", original)
    monkeypatch.setattr(CaseBase, "_write_page", staticmethod(fail_after_writing))
    crashed = run(db, "revectorize", "--quiet")
    assert crashed.exit_code == 6 and "disk on fire" in crashed.stderr

    first, *others = sorted(pages.values())
    assert _pages(cb)[first][1] == VECTOR_SCHEMA
    for page_id in others:
        assert _pages(cb)[page_id] == before[page_id]

    monkeypatch.setattr(CaseBase, "_write_page", staticmethod(write_page))
    resumed = run(db, "revectorize", "--quiet")
    assert resumed.exit_code == 0
    rest = sum(1 for c in cb.iter_cases() if c.page_id != first)
    assert f"2 pages, {rest} case(s) updated" in resumed.stdout
    assert {row[1] for row in _pages(cb).values()} == {VECTOR_SCHEMA}
