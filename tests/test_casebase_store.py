"""CaseBase: importing a dataset, reading cases back, relabelling, dedupe, JSONL round trip."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

from casebase.derived import subtree_texts
from casebase.importer import import_dataset
from casebase.models import MAX_TEXT_CHARS
from casebase.pages import parse_stored, prepare_page
from casebase.store import CaseBase, CaseBaseError, NotFoundError
from casebase.transfer import export_jsonl, import_jsonl
from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.result import LABELS, PAPER_LABELS

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"


@pytest.fixture
def cb(db_url):
    """A case base on SQLite and on PostgreSQL (the db_url fixture of conftest.py)."""
    base = CaseBase.open(db_url)
    yield base
    base.close()


@pytest.fixture
def imported(cb):
    with cb.session() as session:
        report = import_dataset(session, FIXTURE, batch_rows=50)
    return cb, report


def _page_bytes(page_id: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{page_id}.html.gz").read_bytes())


def test_import_labels_every_element_with_all_three_labels(imported):
    cb, report = imported
    print("cases per label:", dict(report.cases))
    assert report.read == report.imported == 4 and not report.failed
    assert all(report.cases[label] > 0 for label in PAPER_LABELS)
    stats = cb.stats()
    assert stats["pages"] == 4 and stats["sites"] == 2
    assert stats["cases"] == sum(report.cases.values())
    assert stats["by_label"] == {label: report.cases[label] for label in LABELS}
    assert stats["by_source"] == {"ground_truth": stats["cases"]}
    # One case per element of the stored page, in document order.
    page_id = next(c.page_id for c in cb.iter_cases() if c.path == "/html/body"
                   and c.site == "harbour-gazette.test")
    table = build_table(parse_stored(cb.page_html(page_id)))
    assert [c.path for c in cb.iter_cases(page_id=page_id)] == table.paths()
    assert len(table) == len(build_table(tidy(_page_bytes("news-1"))))
    assert report.oracle.f1 > 0.9


def test_reimport_skips_pages_already_there(imported):
    cb, _ = imported
    with cb.session() as session:
        again = import_dataset(session, FIXTURE)
    assert again.imported == 0 and sorted(again.duplicates) == ["blog-1", "blog-2", "news-1",
                                                                "news-2"]
    assert cb.stats()["pages"] == 4


def test_cases_read_back_with_text_vector_and_subtree_html(imported):
    cb, _ = imported
    article = next(cb.iter_cases(label="data", site="harbour-gazette.test", batch=3))
    assert article.schema_version == VECTOR_SCHEMA
    assert article.vector.dtype == np.float32 and len(article.vector) == len(FEATURE_NAMES)
    assert set(article.features()) == set(FEATURE_NAMES)
    html = cb.subtree_html(article)
    assert html is not None and html.startswith(f"<{article.tag}")
    # Every stored path is found again in the stored page.
    for case in cb.iter_cases(site="notes.workshop-blog.test", batch=7):
        found = cb.subtree_html(case)
        assert found is not None and found.startswith(f"<{case.tag}"), case.path
    body = next(cb.iter_cases(text="harbour wall", label="data"))
    assert "harbour wall" in body.text.lower()


def test_cases_read_without_their_vectors_are_the_same_cases_and_say_so(imported):
    cb, _ = imported
    ids = [case.id for case in cb.iter_cases(batch=50)][::7]
    full, light = cb.get_cases(ids), cb.get_cases(ids, vectors=False)
    assert list(light) == list(full) and len(full) == len(ids)
    assert list(light.values()) == list(full.values())  # every field but the vectors
    assert all(len(case.vector) == len(FEATURE_NAMES) for case in full.values())
    with pytest.raises(LookupError, match="without its vector"):
        _ = light[ids[0]].vector


def test_filters_and_batches_agree(imported):
    cb, _ = imported
    everything = list(cb.iter_cases(batch=13))
    assert [c.id for c in everything] == sorted(c.id for c in everything)
    assert len(everything) == cb.count_cases()
    for label in LABELS:
        assert cb.count_cases(label=label) == sum(c.label == label for c in everything)
    assert cb.count_cases(site="notes.workshop-blog.test") + cb.count_cases(
        site="harbour-gazette.test") == len(everything)
    assert cb.count_cases(dataset="casebase") == len(everything)
    assert cb.count_cases(source="human") == 0
    assert [c.id for c in cb.list_cases(limit=5, offset=5)] == [c.id for c in everything[5:10]]
    with pytest.raises(CaseBaseError):
        cb.count_cases(label="junk")


def test_load_arrays(imported):
    cb, report = imported
    X, y, sites, page_ids, case_ids = cb.load_arrays()
    n = sum(report.cases.values())
    assert X.shape == (n, len(FEATURE_NAMES)) and X.dtype == np.float32
    assert y.dtype == np.int8 and np.bincount(y, minlength=len(LABELS)).tolist() == [
        report.cases[label] for label in LABELS]
    assert sorted(set(sites.tolist())) == ["harbour-gazette.test", "notes.workshop-blog.test"]
    assert np.all(np.diff(case_ids) > 0) and len(set(page_ids.tolist())) == 4
    first = cb.get_case(int(case_ids[10]))
    assert np.array_equal(X[10], first.vector) and LABELS[y[10]] == first.label
    assert first.site == sites[10] and first.page_id == page_ids[10]
    assert cb.load_arrays(schema_version=999).X.shape[0] == 0
    assert cb.load_counts(case_ids[:3]).tolist() == [1, 1, 1]


def test_relabel_writes_history_in_the_same_transaction(imported):
    cb, _ = imported
    case = next(cb.iter_cases(label="noise"))
    assert cb.relabel(case.id, "data", note="a caption") == "noise"
    again = cb.get_case(case.id)
    assert (again.label, again.label_source) == ("data", "human")
    history = cb.case_history(case.id)
    assert [(h["old_label"], h["new_label"], h["source"], h["note"]) for h in history] == [
        ("noise", "data", "human", "a caption")]
    with pytest.raises(NotFoundError):
        cb.relabel(10**9, "data")
    with pytest.raises(CaseBaseError):
        cb.relabel(case.id, "junk")
    assert len(cb.case_history(case.id)) == 1


def test_delete_cases_removes_their_history(imported):
    cb, _ = imported
    case = next(cb.iter_cases())
    cb.relabel(case.id, "noise")
    deleted, missing = cb.delete_cases([case.id, 10**9])
    assert (deleted, missing) == ([case.id], [10**9])
    assert cb.stats()["history"] == 0
    with pytest.raises(NotFoundError):
        cb.get_case(case.id)


def test_dedupe_merges_identical_vectors_with_the_same_label(cb):
    raw = _page_bytes("blog-1")
    truth = json.loads((FIXTURE / "ground-truth.json").read_text())["blog-1"]["articleBody"]
    first = cb.add_page(raw, url="https://a.test/x", source="one", truth=truth)
    second = cb.add_page(raw, url="https://a.test/x", source="two", truth=truth)
    assert first.page_id and second.page_id and first.cases == second.cases
    n = sum(first.cases.values())
    # One case of the second copy gets another label: it must not merge.
    other = next(c for c in cb.iter_cases(page_id=second.page_id) if c.label == "noise")
    cb.relabel(other.id, "data", note="kept apart")
    before = cb.count_cases()
    merged = cb.dedupe()
    print("merged", merged, "of", before)
    after = list(cb.iter_cases())
    assert merged >= n - 1 and len(after) == before - merged
    assert sum(c.count for c in after) == 2 * n
    assert len({(c.vector.tobytes(), c.label) for c in after}) == len(after)
    assert cb.dedupe() == 0
    # The human-labelled case survived, with its history.
    assert cb.get_case(other.id).label == "data" and cb.case_history(other.id)


def test_add_page_with_path_labels_reports_unknown_paths(cb):
    added = cb.add_page(_page_bytes("news-2"), url="https://n.test/p", labels={
        "/html/body/main": "data", "//nav": "noise", "/html/body/div[99]": "noise"})
    assert added.unknown_paths == ["/html/body/div[99]"]
    assert dict(added.cases) == {"data": 1, "noise": 1}
    assert {c.label_source for c in cb.iter_cases()} == {"human"}
    assert cb.add_page(_page_bytes("news-2"), labels={}).duplicate_of == added.page_id
    with pytest.raises(CaseBaseError):
        cb.add_page(_page_bytes("news-1"), labels={"//[": "noise"})
    assert cb.stats()["pages"] == 1  # the failed page was rolled back


def test_subtree_texts_are_normalised_and_truncated():
    words = " ".join(f"word{i}" for i in range(1000))
    body = tidy(f"<div><p>  a \n b  </p><p>{words}</p></div>")
    table = build_table(body)
    texts = subtree_texts(table)
    assert texts[table.tags.index("p")] == "a b"
    assert len(texts[0]) == MAX_TEXT_CHARS and texts[0].startswith("a b word0 word1")
    assert all(len(t) <= MAX_TEXT_CHARS for t in texts)


def test_jsonl_round_trip_reproduces_stats_and_vectors(imported, tmp_path):
    cb, _ = imported
    case = next(cb.iter_cases(label="mixture"))
    cb.relabel(case.id, "noise", note="round trip")
    exported = io.StringIO()
    counts = export_jsonl(cb, exported)
    assert counts["page"] == 4 and counts["history"] == 1
    copy = CaseBase.open(f"sqlite:///{tmp_path / 'copy.sqlite'}")
    imported_counts = import_jsonl(copy, io.StringIO(exported.getvalue()))
    assert imported_counts["case"] == counts["case"]

    def without_size(stats):
        return {k: v for k, v in stats.items() if k != "db_size"}

    assert without_size(copy.stats()) == without_size(cb.stats())
    a, b = cb.load_arrays(), copy.load_arrays()
    for left, right in zip(a, b):
        assert np.array_equal(left, right)
    assert copy.case_history(case.id)[0]["note"] == "round trip"
    assert copy.page_html(case.page_id) == cb.page_html(case.page_id)
    again = io.StringIO()
    export_jsonl(copy, again)
    assert again.getvalue().splitlines()[1:] == exported.getvalue().splitlines()[1:]
    # Into a non-empty case base: the pages are already there and are skipped.
    skipped = import_jsonl(copy, io.StringIO(exported.getvalue()))
    assert skipped["duplicate_page"] == 4 and skipped["case"] == 0
    copy.close()


def test_jsonl_import_into_a_non_empty_case_base_remaps_ids(imported, tmp_path):
    cb, _ = imported
    case = next(cb.iter_cases(label="data"))
    cb.relabel(case.id, "mixture", note="moved")
    exported = io.StringIO()
    export_jsonl(cb, exported)
    other = CaseBase.open(f"sqlite:///{tmp_path / 'other.sqlite'}")
    other.add_page(b"<p>something else entirely</p>", url="https://z.test/", labels={
        "/html/body/p": "data"})
    counts = import_jsonl(other, io.StringIO(exported.getvalue()))
    assert counts["page"] == 4 and counts["history"] == 1
    assert other.stats()["cases"] == cb.stats()["cases"] + 1
    moved = [c for c in other.iter_cases(source="human") if c.label == "mixture"]
    assert len(moved) == 1 and other.case_history(moved[0].id)[0]["note"] == "moved"
    other.close()


def test_jsonl_import_rejects_garbage_without_writing(cb):
    with pytest.raises(CaseBaseError, match="line 2"):
        import_jsonl(cb, io.StringIO('{"type": "site", "id": 1, "host": "a.test"}\nnot json\n'))
    assert cb.stats()["sites"] == 0


def test_stored_page_reproduces_the_cases_even_when_reparsing_changes_the_tree():
    # libxml2 moves the <li> outside a list when the serialised tree is parsed again: cases are
    # built from the re-parsed tree, so the stored HTML reproduces them.
    raw = b"<html><body><div><p>a</p></div></body></html><html><body><p>late</p></body></html>"
    page = prepare_page(raw)
    from casebase.models import decompress_html

    again = build_table(parse_stored(decompress_html(page.html)))
    assert again.paths() == page.table.paths()
    assert all(p.startswith("/html/body") for p in page.table.paths())


def test_a_correction_none_of_whose_paths_selects_a_box_stores_nothing(cb):
    from casebase.errors import UnknownPathsError

    with pytest.raises(UnknownPathsError, match="nothing stored") as refused:
        cb.add_page(_page_bytes("news-2"), url="https://n.test/p",
                    labels={"/html/body/div[99]": "noise"})
    assert refused.value.paths == ["/html/body/div[99]"]
    assert cb.stats()["pages"] == 0  # so the corrected run is not skipped as a duplicate
    added = cb.add_page(_page_bytes("news-2"), url="https://n.test/p",
                        labels={"/html/body/main": "data"})
    assert added.page_id is not None and dict(added.cases) == {"data": 1}


@pytest.mark.parametrize("count", [0, 1, 2, 57])
def test_an_outline_read_entry_by_entry_is_the_outline_decoded_whole(count):
    # The case records read a stored outline entry by entry (OutlineEntries); every other
    # reader decodes it whole: both must give each element the same path, tag and text.
    from casebase.derived import Outline, OutlineEntries, decode_outline, encode_outline

    rng = np.random.default_rng(count)
    alphabet = ["a", "é", "字", "🙂", " ", "/", "1", ""]
    words = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 6)))) for _ in range(3 * count)]
    outline = Outline(tuple(words[:count]), tuple(words[count:2 * count]),
                      tuple(words[2 * count:]))
    blob = encode_outline(outline)
    whole, entries = decode_outline(blob), OutlineEntries(blob)
    assert len(entries) == len(whole) == count
    assert [entries.path(i) for i in range(count)] == list(whole.paths) == list(outline.paths)
    assert [entries.tag(i) for i in range(count)] == list(whole.tags)
    assert [entries.text(i) for i in range(count)] == list(whole.texts)


def test_a_damaged_outline_is_refused_read_whole_or_entry_by_entry():
    import zlib

    from casebase.derived import (
        OUTLINE_FORMAT,
        Outline,
        OutlineEntries,
        decode_outline,
        encode_outline,
        stored_entries,
    )

    good = encode_outline(Outline(("/html", "/html/body"), ("html", "body"), ("a b", "b")))
    short = bytes([OUTLINE_FORMAT]) + zlib.compress(b"3\x1e/html\x1ehtml\x1ea b")
    # Six entries for a count of two, but in lists of three, one and two: shifted, not whole.
    shifted = bytes([OUTLINE_FORMAT]) + zlib.compress(b"2\x1ea\x1fb\x1fc\x1ed\x1ee\x1ff")
    for blob in (b"", b"\x09" + good[1:], good[:-3], short, shifted):
        with pytest.raises(ValueError):
            decode_outline(blob)
        with pytest.raises(ValueError):
            OutlineEntries(blob)
        assert stored_entries(blob) is None
    entries = OutlineEntries(good)
    assert entries.path(1) == "/html/body" and entries.text(0) == "a b"
    for position in (2, -1):  # never another list's entry
        with pytest.raises(IndexError):
            entries.path(position)
