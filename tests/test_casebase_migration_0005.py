"""Revision 0005 (cases by reference) converts a case base made by the code before it: every
label, label history and training run kept, every case's path, tag, text and vector the same,
the explanations of a page the same, on SQLite and on PostgreSQL."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from legacy_casebase import legacy_rows, write_legacy
from sqlalchemy import text

from casebase.connection import _create_engine, migrate
from casebase.retrieve import CaseIndex, explain_page
from casebase.store import CaseBase
from noisecbr.cleaner import default_model
from noisecbr.result import LABELS

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
NEWS_URL = json.loads((FIXTURE / "ground-truth.json").read_text())["news-1"]["url"]


def _news_page() -> bytes:
    return gzip.decompress((FIXTURE / "html" / "news-1.html.gz").read_bytes())


def _legacy_explanations(rows: dict[int, dict], model) -> list:
    """The explanations of the news page as the code before 0005 gave them: the exact search
    over the cases' own vectors, the neighbours' fields read from their own columns."""
    ids = np.array(sorted(rows), dtype=np.int64)
    vectors = np.stack([np.frombuffer(rows[i]["vector"], dtype="<f4") for i in ids.tolist()])
    hidden = model.hidden(vectors)
    norms = np.linalg.norm(hidden, axis=1, keepdims=True)
    embeddings = np.divide(hidden, norms, out=np.zeros_like(hidden), where=norms > 0)
    labels = np.array([LABELS.index(rows[i]["label"]) for i in ids.tolist()])
    sites = np.array([rows[i]["host"] for i in ids.tolist()])
    index = CaseIndex(model, ids, labels, sites, embeddings)

    def get_cases(case_ids, vectors=True):
        return {i: SimpleNamespace(id=i, label=rows[i]["label"], site=rows[i]["host"],
                                   path=rows[i]["path"], text=rows[i]["text"])
                for i in case_ids if i in rows}

    return explain_page(index, SimpleNamespace(get_cases=get_cases), _news_page(),
                        url=NEWS_URL, k=3)


def test_the_migration_keeps_every_case_and_the_explanations(db_url):
    write_legacy(db_url, FIXTURE)
    engine = _create_engine(db_url)
    with engine.begin() as connection:  # a correction and a training run, as users make them
        first, second = connection.execute(text(
            "SELECT id FROM cases ORDER BY id LIMIT 2")).scalars().all()
        connection.execute(text("UPDATE cases SET label = 'noise', label_source = 'human', "
                                "updated_at = '2026-11-01 10:00:00' WHERE id = :i"), {"i": first})
        connection.execute(text(
            "INSERT INTO label_history (case_id, old_label, new_label, source, note) "
            "VALUES (:i, 'mixture', 'noise', 'human', 'a menu')"), {"i": first})
        connection.execute(text(
            "INSERT INTO runs (preset, status, hyperparameters, seed, data, data_hash, "
            "code_version) VALUES ('default', 'finished', '{}', 3, '{}', 'abc', 'v')"))
    engine.dispose()
    before = legacy_rows(db_url)
    model = default_model()
    expected = _legacy_explanations(before, model)

    cb = CaseBase.open(db_url)  # upgrades to head
    try:
        after = {case.id: case for case in cb.iter_cases()}
        assert sorted(after) == sorted(before)
        for case_id, row in before.items():
            case = after[case_id]
            assert (case.page_id, case.path, case.position, case.tag, case.label,
                    case.label_source, case.text, case.count, case.site) == (
                row["page_id"], row["path"], row["position"], row["tag"], row["label"],
                row["label_source"], row["text"], row["count"], row["host"])
            assert case.vector.tobytes() == row["vector"]
            assert case.schema_version == row["schema_version"]
        assert cb.case_history(first)[0]["note"] == "a menu"
        assert after[first].label_source == "human"
        assert str(after[first].updated_at).startswith("2026-11-01")
        assert after[second].updated_at == after[second].created_at
        with cb.engine.connect() as connection:
            run = connection.execute(text("SELECT preset, seed, data_hash FROM runs")).one()
        assert tuple(run) == ("default", 3, "abc")
        got = explain_page(CaseIndex.build(cb, model), cb, _news_page(), url=NEWS_URL, k=3)
    finally:
        cb.close()
    assert [e.to_dict() for e in got] == [e.to_dict() for e in expected]


def test_a_case_that_names_no_element_and_an_unreadable_page_keep_their_fields(db_url):
    write_legacy(db_url, FIXTURE, limit=2)
    engine = _create_engine(db_url)
    with engine.begin() as connection:
        pages = connection.execute(text("SELECT id FROM pages ORDER BY id")).scalars().all()
        hand = connection.execute(text("SELECT id FROM cases WHERE page_id = :p ORDER BY id "
                                       "LIMIT 1 OFFSET 3"), {"p": pages[0]}).scalar_one()
        connection.execute(text("UPDATE cases SET path = '/html/body/div[99]', "
                                "text = 'written by hand' WHERE id = :i"), {"i": hand})
        connection.execute(text("UPDATE pages SET html = :h WHERE id = :p"),
                           {"h": b"not zlib", "p": pages[1]})
    engine.dispose()
    before = legacy_rows(db_url)
    cb = CaseBase.open(db_url)
    try:
        for case_id, row in before.items():
            case = cb.get_case(case_id)
            assert (case.path, case.tag, case.text, case.label) == (
                row["path"], row["tag"], row["text"], row["label"])
            assert case.vector.tobytes() == row["vector"]
        assert cb.get_case(hand).text == "written by hand"
        assert len(cb.load_arrays().y) == len(before)  # every vector still trains
    finally:
        cb.close()


def test_the_downgrade_writes_every_case_back(db_url):
    write_legacy(db_url, FIXTURE, limit=2)
    before = legacy_rows(db_url)
    engine = _create_engine(db_url)
    migrate(engine)
    migrate(engine, "0004_declared_article", downgrade=True)
    engine.dispose()
    after = legacy_rows(db_url)
    assert after == before
