"""Site memories kept per process: read once per site, again only when its cases change, at
most MEMORY_PAGES pages each and MEMORY_SITES sites (casebase.reuse.SiteMemories)."""

from __future__ import annotations

import zlib

import pytest
from sqlalchemy import create_engine, text

from casebase import reuse
from casebase.reuse import PageMemories, SiteMemories, site_memory
from casebase.store import CaseBase
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.site.memory import NOISE

HEADER, PROMO, ARTICLE = "/html/body/header", "/html/body/main/div", "/html/body/main/article"
#: The labels each stored page of a site gets: its template is noise, its story data.
LABELS = {HEADER: "noise", PROMO: "noise", ARTICLE: "data"}


def _page(n: int) -> str:
    """Page ``n`` of a site: the same header and promo box around a story of its own."""
    return (f'<html><body><header class="top"><a href="/">The Harbour Times</a> <a href="/l">'
            f'Local</a></header><main><article><h1>Story number {n}</h1><p>The story of day '
            f'{n}, told in enough words to read as the content of the page.</p></article>'
            f'<div class="promo">Subscribe today, offer {n}</div></main></body></html>')


def _store(casebase: CaseBase, host: str, pages: range) -> None:
    for n in pages:
        added = casebase.add_page(_page(n), url=f"https://{host}/{n}", source=host,
                                  labels=LABELS)
        assert added.page_id is not None


@pytest.fixture
def casebase(db_url):
    """A case base (SQLite, then PostgreSQL) holding 5 labelled pages of news.test."""
    with CaseBase.open(db_url) as opened:
        _store(opened, "news.test", range(5))
        yield opened


def _url(casebase: CaseBase) -> str:
    """The case base's URL with its password: another connection's, another process's."""
    return casebase.engine.url.render_as_string(hide_password=False)


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The stored pages read back (their tidied HTML), in order: every call of the function
    that turns a stored page into its table."""
    seen: list[str] = []
    real = reuse.stored_table

    def counted(blob):
        seen.append(zlib.decompress(blob).decode())
        return real(blob)

    monkeypatch.setattr(reuse, "stored_table", counted)
    return seen


@pytest.fixture
def memories(monkeypatch) -> SiteMemories:
    """This process's site memories, empty for the test (the service's jobs use them)."""
    fresh = SiteMemories()
    monkeypatch.setattr(reuse, "SITE_MEMORIES", fresh)
    return fresh


def _header_recalled(memory) -> int:
    """What ``memory`` recalls for the header of a new page of the site."""
    table = build_table(tidy(_page(99)))
    return int(memory.recall(table)[table.paths().index(HEADER)])


def test_the_second_request_for_a_site_reads_no_page(casebase, reads, memories, monkeypatch,
                                                     flawed_model):
    from noisecbr_apps.service import work

    monkeypatch.setattr(work, "_state", {})
    work._cleaner.cache_clear()
    try:
        # As a pool process of the service runs the jobs, in this process.
        work.init_worker(_url(casebase), flawed_model)
        options = {"memory": True, "format": "text"}
        assert "Subscribe today" in work.clean_job(_page(7), None, {"format": "text"})["body"]
        first = work.clean_job(_page(7), "https://news.test/7", options)
        assert first["memory"] == 5 and len(reads) == 5
        # The site's labels removed its header and promo box, which the model keeps.
        assert first["body"].strip() == ("The story of day 7, told in enough words to read as "
                                         "the content of the page.")
        second = work.clean_job(_page(8), "https://news.test/8", options)
        assert second["memory"] == 5 and len(reads) == 5
        # The queue of a stored page: its page and the site's 4 others (the markup that
        # recurs there) are read, no page of the memory.
        assert work.queue_job(1, 3)["memory_pages"] == 5 and len(reads) == 5 + 1 + 4
        assert work.clean_job(_page(9), None, options)["memory"] is None  # names no site
    finally:
        if "casebase" in work._state:
            work._state["casebase"].close()
        work._cleaner.cache_clear()


@pytest.mark.parametrize("write", ["relabel", "add_labels", "add_page", "delete", "dedupe"])
def test_a_write_through_the_api_is_seen_by_the_next_request(casebase, reads, memories,
                                                               write):
    first = memories.get(casebase, "news.test")
    assert memories.get(casebase, "news.test") is first and len(reads) == 5
    header = next(c.id for c in casebase.list_cases(page_id=1) if c.path == HEADER)
    if write == "relabel":
        casebase.relabel(header, "data")
    elif write == "add_labels":
        casebase.add_labels(1, {HEADER: "data"})  # relabels the header's case
    elif write == "add_page":
        _store(casebase, "news.test", range(5, 6))
    elif write == "delete":
        assert casebase.delete_cases([header]) == ([header], [])
    else:
        assert casebase.dedupe() > 0  # the pages' identical headers and promo boxes merge
    again = memories.get(casebase, "news.test")
    # Read again: every page that still holds a case (dedupe left them on the first page).
    assert again is not first and len(reads) == 5 + again.pages
    assert again.pages == {"add_page": 6, "dedupe": 1}.get(write, 5)
    if write in ("relabel", "add_labels"):
        # One page now says the header is data: the pages disagree, the network decides.
        assert _header_recalled(first) == NOISE and _header_recalled(again) == -1
    assert memories.get(casebase, "news.test") is again  # and kept again


def test_revectorize_is_seen_by_the_next_request(casebase, reads, memories):
    with casebase.session() as session:  # as a case base of an older vector schema holds them
        session.connection().exec_driver_sql("UPDATE pages SET vector_schema = 1")
    stale = memories.get(casebase, "news.test")
    assert memories.get(casebase, "news.test") is stale and len(reads) == 5
    report = casebase.revectorize()
    assert report.updated == 15
    assert memories.get(casebase, "news.test") is not stale and len(reads) == 10


def test_a_change_by_another_process_is_seen_by_the_next_request(casebase, reads, memories):
    first = memories.get(casebase, "news.test")
    header = next(c.id for c in casebase.list_cases(page_id=2) if c.path == HEADER)
    # Another process's plain SQL: no timestamp, no history, a connection of its own.
    other = create_engine(_url(casebase))
    try:
        with other.begin() as connection:
            connection.execute(text("UPDATE cases SET label = 'data' WHERE id = :id"),
                               {"id": header})
        relabelled = memories.get(casebase, "news.test")
        assert len(reads) == 10 and _header_recalled(relabelled) == -1
        with other.begin() as connection:
            connection.execute(text("DELETE FROM cases WHERE id = :id"), {"id": header})
        deleted = memories.get(casebase, "news.test")
        assert len(reads) == 15 and _header_recalled(deleted) == NOISE
        with other.begin() as connection:  # a new site, no case: nothing of this one changed
            connection.execute(text("INSERT INTO sites (host) VALUES ('other.test')"))
        assert memories.get(casebase, "news.test") is deleted and len(reads) == 15
    finally:
        other.dispose()
    assert _header_recalled(first) == NOISE


def test_a_site_above_the_cap_reads_its_most_recently_labelled_pages(casebase, reads,
                                                                      memories, monkeypatch):
    monkeypatch.setattr(reuse, "MEMORY_PAGES", 3)
    # Labelled long ago, all of them: the newest pages come first.
    with casebase.session() as session:
        session.connection().exec_driver_sql(
            "UPDATE cases SET created_at = '2020-01-01 00:00:00'")
    memory = memories.get(casebase, "news.test")
    assert memory.pages == 3 and len(reads) == 3
    assert [n for n in range(5) if any(f"number {n}<" in page for page in reads)] == [2, 3, 4]
    # A correction of the oldest page makes it one of the most recently labelled.
    article = next(c.id for c in casebase.list_cases(page_id=1) if c.path == ARTICLE)
    casebase.relabel(article, "mixture")
    del reads[:]
    assert memories.get(casebase, "news.test").pages == 3 and len(reads) == 3
    assert [n for n in range(5) if any(f"number {n}<" in page for page in reads)] == [0, 3, 4]
    # A change by plain SQL of a page the memory does not read changes nothing: not read again.
    kept = memories.get(casebase, "news.test")
    with casebase.session() as session:
        session.connection().exec_driver_sql("UPDATE cases SET label = 'data' WHERE page_id = 2")
    assert memories.get(casebase, "news.test") is kept and len(reads) == 3
    # The batch paths (noisecbr clean --memory, the Spark job) read the same pages.
    assert site_memory(casebase, "news.test").pages == 3
    assert PageMemories(_url(casebase), "news.test").memory("news.test").pages == 3
    assert site_memory(casebase, "news.test", limit=10).pages == 5


def test_at_most_size_sites_are_kept(casebase, reads, monkeypatch):
    _store(casebase, "b.test", range(2))
    _store(casebase, "c.test", range(3))
    memories = SiteMemories(size=2)
    for host in ("news.test", "b.test", "c.test"):
        memories.get(casebase, host)
    assert len(memories) == 2 and len(reads) == 5 + 2 + 3
    memories.get(casebase, "b.test")
    memories.get(casebase, "c.test")
    assert len(reads) == 10  # the two latest are kept
    assert memories.get(casebase, "news.test").pages == 5 and len(reads) == 15  # read again
    memories.get(casebase, "c.test")
    assert len(reads) == 15  # used last but one: kept
    memories.get(casebase, "b.test")
    assert len(reads) == 17  # the least recently used went first
    with pytest.raises(ValueError, match="at least 1"):
        SiteMemories(size=0)
    # A batch's memories are bounded too.
    monkeypatch.setattr(reuse, "MEMORY_SITES", 2)
    batch = PageMemories(_url(casebase))
    for host in ("news.test", "b.test", "c.test", "news.test"):
        batch.memory(host)
    assert len(batch._memories) == 2 and len(reads) == 17 + 5 + 2 + 3 + 5


def test_an_unknown_site_is_kept_until_it_appears(casebase, reads, memories):
    unknown = memories.get(casebase, "later.test")
    assert len(unknown) == 0 and memories.get(casebase, "later.test") is unknown
    _store(casebase, "later.test", range(2))
    assert memories.get(casebase, "later.test").pages == 2 and len(reads) == 2
