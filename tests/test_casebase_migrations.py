"""The Alembic migrations agree with the models, go down and up again, and keep data."""

from __future__ import annotations

import numpy as np
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from casebase.connection import _create_engine, migrate
from casebase.models import Base
from casebase.store import CaseBase


def _url(tmp_path, name="m.sqlite") -> str:
    return f"sqlite:///{tmp_path / name}"


def _ours(name, type_, parent_names) -> bool:
    # Compare every table declared on Base; a table of a later revision whose model is not
    # importable here is left to its own tests.
    return type_ != "table" or name in Base.metadata.tables


try:  # training runs (0002_runs) are declared on casebase.models.Base
    import training.runs  # noqa: F401
except ImportError:
    pass


def test_models_and_migrations_agree(db_url):
    cb = CaseBase.open(db_url)
    with cb.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_name": _ours})
        diff = compare_metadata(context, Base.metadata)
    cb.close()
    assert diff == []


def test_open_creates_every_table_with_sqlite_settings(tmp_path):
    cb = CaseBase.open(_url(tmp_path))
    tables = set(inspect(cb.engine).get_table_names())
    assert {"sites", "pages", "cases", "label_history", "alembic_version"} <= tables
    with cb.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() > 0
    assert cb.revision() is not None
    cb.close()


def test_downgrade_to_base_and_upgrade_again(db_url):
    engine = _create_engine(db_url)
    migrate(engine)
    migrate(engine, "base", downgrade=True)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate(engine)
    assert {"sites", "pages", "cases", "label_history"} <= set(inspect(engine).get_table_names())
    engine.dispose()


def test_upgrade_to_head_keeps_data_written_at_0001(db_url):
    engine = _create_engine(db_url)
    migrate(engine, "0001_initial")
    vector = np.arange(4, dtype="<f4").tobytes()
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO sites (id, host) VALUES (1, 'example.com')"))
        connection.execute(text(
            "INSERT INTO pages (id, site_id, url, source, external_id, content_hash, parser, "
            "html, truth) VALUES (1, 1, 'https://example.com/a', 'ds', 'a', 'h1', 'lxml', :html, "
            "'the truth')"), {"html": b"zlib"})
        connection.execute(text(
            "INSERT INTO cases (id, page_id, path, position, tag, label, label_source, text, "
            "vector, schema_version) VALUES (7, 1, '/html/body', 0, 'body', 'mixture', "
            "'ground_truth', 'words', :vector, 1)"), {"vector": vector})
        connection.execute(text(
            "INSERT INTO label_history (case_id, old_label, new_label, source, note) "
            "VALUES (7, 'data', 'mixture', 'human', 'why')"))
    migrate(engine, "head")
    engine.dispose()
    cb = CaseBase.open(db_url)
    case = cb.get_case(7)
    assert (case.site, case.path, case.label, case.text, case.count) == (
        "example.com", "/html/body", "mixture", "words", 1)
    assert case.vector.tobytes() == vector
    assert cb.case_history(7)[0]["note"] == "why"
    cb.close()


def test_check_constraints_guard_the_enumerations(tmp_path):
    import pytest
    from sqlalchemy.exc import IntegrityError

    cb = CaseBase.open(_url(tmp_path))
    with pytest.raises(IntegrityError), cb.engine.begin() as connection:
        connection.execute(text("INSERT INTO sites (id, host) VALUES (1, 'x')"))
        connection.execute(text(
            "INSERT INTO pages (id, site_id, url, source, content_hash, parser, html) "
            "VALUES (1, 1, '', 'ds', 'h', 'lxml', x'00')"))
        connection.execute(text(
            "INSERT INTO cases (page_id, position, label, label_source) "
            "VALUES (1, 0, 'junk', 'human')"))
    cb.close()


def test_comment_label_needs_0003_and_blocks_its_downgrade(db_url):
    import pytest
    from sqlalchemy.exc import IntegrityError

    engine = _create_engine(db_url)
    migrate(engine, "0002_runs")
    insert = text(
        "INSERT INTO cases (id, page_id, path, position, tag, label, label_source, text, vector, "
        "schema_version) VALUES (1, 1, '/html/body', 0, 'body', 'comment', 'human', '', :blob, "
        "3)").bindparams(blob=b"")
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO sites (id, host) VALUES (1, 'example.com')"))
        connection.execute(text(
            "INSERT INTO pages (id, site_id, url, source, content_hash, parser, html) "
            "VALUES (1, 1, '', 'ds', 'h', 'lxml', :blob)"), {"blob": b""})
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(insert)
    migrate(engine, "0003_comment_label")
    with engine.begin() as connection:
        connection.execute(insert)
    migrate(engine, "head")  # and the label stays through every later revision
    with pytest.raises(RuntimeError, match="'comment'"):
        migrate(engine, "0002_runs", downgrade=True)
    with engine.connect() as connection:  # the refused downgrade changed nothing
        assert connection.execute(text("SELECT label FROM cases")).scalar() == "comment"
    engine.dispose()


def test_what_a_page_declared_is_stored_exported_and_dropped_only_by_a_downgrade(db_url):
    import io

    import pytest

    from casebase.store import CaseBaseError
    from casebase.transfer import export_jsonl, import_jsonl

    page = ('<html><head>{}<title>t</title></head><body><article><p>{}</p></article>'
            '</body></html>')
    words = "The harbour wall will be repaired in spring, the council said today. " * 4
    cb = CaseBase.open(db_url)
    added = cb.add_page(page.format('<meta property="og:type" content="article">', words),
                        source="a", labels={"//article": "data", "//p": "data"})
    cb.add_page(page.format("", words), source="b")
    case = cb.list_cases(page_id=added.page_id, limit=10)[0]
    cb.relabel(case.id, "mixture", note="history to keep")
    # A page read from an export made before the column existed: not known.
    exported = io.StringIO()
    export_jsonl(cb, exported)
    lines = exported.getvalue().splitlines()
    assert sum('"declared_article":true' in line for line in lines) == 1
    old = [line.replace('"declared_article":true,', "").replace('"source":"a"', '"source":"c"')
           for line in lines if '"source":"a"' in line or '"type":"casebase"' in line]
    assert len(old) == 2 and "declared_article" not in old[1]
    import_jsonl(cb, old)
    with pytest.raises(CaseBaseError, match="declared_article 'yes'"):
        import_jsonl(cb, [old[0], old[1].replace('"source":"c"', '"source":"d"')
                          .replace('"truth"', '"declared_article":"yes","truth"')])
    with cb.engine.connect() as connection:
        stored = dict(connection.execute(text("SELECT source, declared_article FROM pages")).all())
    assert {k: (None if v is None else bool(v)) for k, v in stored.items()} == {
        "a": True, "b": False, "c": None}
    cb.close()
    engine = _create_engine(db_url)
    migrate(engine, "0003_comment_label", downgrade=True)
    with engine.connect() as connection:  # the pages, their cases and history are all there
        assert connection.execute(text("SELECT COUNT(*) FROM pages")).scalar() == 3
        assert connection.execute(text("SELECT COUNT(*) FROM cases")).scalar() == 2
        assert connection.execute(text(
            "SELECT new_label FROM label_history WHERE note = 'history to keep'")).all() == [
            ("mixture",)]
        assert "declared_article" not in {c["name"] for c in inspect(connection).get_columns(
            "pages")}
    migrate(engine)
    with engine.connect() as connection:
        assert connection.execute(text(
            "SELECT COUNT(*) FROM pages WHERE declared_article IS NULL")).scalar() == 3
    engine.dispose()
