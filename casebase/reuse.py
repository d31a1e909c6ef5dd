"""A site's stored cases → the :class:`~noisecbr.site.memory.SiteMemory` cleaning its other pages.

Reads the site's labelled pages as stored (the tidied body each case was built from) with the
*current* labels of their cases, so a correction made with ``casebase label`` or ``casebase
import-page --labels`` changes how the site's next pages are cleaned, without retraining.

A memory reads at most :data:`MEMORY_PAGES` pages: above that, the site's most recently
labelled ones (the newest change of their cases, then the newest page); the older pages are
not read, and their labels do not count. :class:`SiteMemories` keeps the memories of a
process (the service's pool processes), at most :data:`MEMORY_SITES` sites, and reads one
again only when the case base changed in a way that can change it; the check reads the
database (no page, a bounded number of cases), so a change by another process shows too.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import case as when
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from noisecbr.eval.datasets import LabelledPage, site_host
from noisecbr.prepare.subtrees import ElementTable
from noisecbr.prepare.tidy import InputError
from noisecbr.result import LABELS
from noisecbr.site.memory import MemorySourceError, SiteMemory, declared_url

from .derived import stored_paths
from .errors import CaseBaseError, NotFoundError
from .models import Case, LabelHistory, Page, Site
from .pages import page_cases, stored_table
from .store import CaseBase

# site_host is noisecbr.eval.datasets's, imported here for the callers that found it here.
__all__ = ["MEMORY_PAGES", "MEMORY_SITES", "SITE_MEMORIES", "PageMemories", "SiteMemories",
           "memory_from_boxes", "memory_from_truth", "open_page_memories", "page_site",
           "site_host", "site_memory", "site_tables", "stored_page"]

#: Labelled pages of a site read into its memory, the most recently labelled first. A site's
#: templates recur on every page: one or two labelled pages carry the memory's gain
#: (docs/experiments.md, "Site memory"), and 32 hold each template many times over. Each page
#: is parsed again (4 to 8 ms a page of a site's import), so one memory costs at most about a
#: quarter of a second of a worker, however many pages the site has.
MEMORY_PAGES = 32
#: Site memories a process keeps (:class:`SiteMemories`, :class:`PageMemories`), the least
#: recently used dropped first. A memory holds the distinct markup of its pages: a few
#: kilobytes for a site's template, about 16 MB for 32 pages of 1 500 elements of ever
#: different classes each; 8 bound a pool process to about 130 MB of them at worst, and it
#: serves the few sites its reviewers work on at a time.
MEMORY_SITES = 8


def _site_id(session: Session, host: str) -> int | None:
    return session.execute(select(Site.id).where(Site.host == site_host(host))).scalar()


def _labelled_pages(session: Session, site: int | None, limit: int) -> list[int]:
    """The ids of the site's ``limit`` most recently labelled pages, in id order (the order
    the memory adds them in). A page's last labelling is the newest of its cases' creations
    and label changes (not a revectorize or a dedupe, which change no label); the newest page
    first among equals."""
    if site is None:
        return []
    of_site = Page.site_id == site
    labelled = dict(session.execute(
        select(Case.page_id, func.max(func.coalesce(Case.created_at, Page.created_at)))
        .join(Page, Page.id == Case.page_id)
        .where(of_site).group_by(Case.page_id)).all())
    relabelled = session.execute(
        select(Case.page_id, func.max(LabelHistory.changed_at)).select_from(LabelHistory)
        .join(Case, Case.id == LabelHistory.case_id).join(Page, Page.id == Case.page_id)
        .where(of_site).group_by(Case.page_id)).all()
    for page_id, changed in relabelled:
        if changed is not None and (labelled[page_id] is None or changed > labelled[page_id]):
            labelled[page_id] = changed
    recent = sorted(labelled, key=lambda page_id: (labelled[page_id] is not None,
                                                   labelled[page_id] or 0, page_id))
    return sorted(recent[-limit:]) if limit > 0 else []


def _read_page(session: Session, page_id: int) -> tuple[ElementTable, list, list] | None:
    """The stored page ``page_id``'s table with the label and case id of each element (None
    where it has no case); None when the page has no case or cannot be read back. Cases after
    the page's elements (extra rows: :func:`casebase.derived.with_extras`), and cases whose
    stored path is not the element's the page has at their position now, are left out rather
    than guessed."""
    cases = session.execute(
        select(Case.id, Case.position, Case.label)
        .where(Case.page_id == page_id).order_by(Case.id)).all()
    if not cases:
        return None
    html, outline_blob = session.execute(select(Page.html, Page.outline)
                                         .where(Page.id == page_id)).one()
    table = stored_table(html)
    if table is None:
        return None  # a damaged stored page teaches nothing; the others still count
    # A case's element is the one at its position when the page parses now as it did when its
    # outline was stored (another lxml could parse it otherwise: then the paths tell).
    paths, stored = table.paths(), stored_paths(outline_blob)
    labels: list[str | None] = [None] * len(table)
    ids: list[int | None] = [None] * len(table)
    for case_id, position, label in cases:
        if 0 <= position < len(table) and position < len(stored) and (
                stored[position] == paths[position]):
            labels[position], ids[position] = label, case_id
    return table, labels, ids


def _read_memory(session: Session, pages: Sequence[int]) -> SiteMemory:
    memory = SiteMemory()
    for page_id in pages:
        read = _read_page(session, page_id)
        if read is not None:
            memory.add(*read)
    return memory


def site_memory(casebase: CaseBase, host: str, limit: int | None = None) -> SiteMemory:
    """The memory of the labelled pages of the site ``host`` in the case base (an empty memory
    when the site has none): of its ``limit`` (default :data:`MEMORY_PAGES`) most recently
    labelled pages, the older ones left out. A stored page that cannot be read back is left
    out too. Read afresh on every call: :data:`SITE_MEMORIES` keeps them."""
    with casebase.reading() as session:
        pages = _labelled_pages(session, _site_id(session, host),
                                MEMORY_PAGES if limit is None else limit)
        return _read_memory(session, pages)


#: A label's weight in :func:`_state`'s sum: a relabelled case changes the sum by its id
#: times the difference (1 to 3).
_LABEL_WEIGHT = when({label: i + 1 for i, label in enumerate(LABELS)}, value=Case.label,
                     else_=0)


def _newest(session: Session) -> tuple:
    """The newest case and label change of the whole case base (two index reads): a new case
    anywhere (an import, a new label) or a relabel through the case base changes them."""
    return (session.execute(select(func.max(Case.id))).scalar(),
            session.execute(select(func.max(LabelHistory.id))).scalar())


def _state(session: Session, site: int | None, newest: tuple, pages: Sequence[int]) -> tuple:
    """What a memory of ``pages`` of the site ``site`` was read from: ``newest``
    (:func:`_newest`, read before the pages were chosen) and aggregates of those pages' cases,
    a bounded read that no page's HTML is part of: their count (deletions, dedupes), a sum of
    their ids weighted by label and sums of their positions and counts (a change by plain SQL,
    which writes no history), their newest change and their pages' schemas (revectorize)."""
    if not pages:
        return (site, *newest)
    cases = session.execute(
        select(func.count(Case.id), func.sum(Case.id * _LABEL_WEIGHT), func.sum(Case.position),
               func.sum(Case.count), func.max(Case.updated_at))
        .where(Case.page_id.in_(pages))).one()
    schemas = session.execute(select(func.sum(Page.vector_schema))
                              .where(Page.id.in_(pages))).scalar()
    return (site, *newest, *cases, schemas)


class _Held(NamedTuple):
    state: tuple
    pages: list[int]
    memory: SiteMemory


def _kept(held: OrderedDict, key: Hashable) -> Any:
    """The value ``held`` keeps under ``key`` (None if none), marked as the latest used."""
    value = held.get(key)
    if value is not None:
        held.move_to_end(key)
    return value


def _keep(held: OrderedDict, key: Hashable, value: Any, size: int) -> None:
    """Keep ``value`` under ``key``, dropping the least recently used beyond ``size``."""
    held[key] = value
    held.move_to_end(key)
    while len(held) > size:
        held.popitem(last=False)


class SiteMemories:
    """The site memories of a process, at most ``size`` sites (the least recently used dropped
    first), each read (as :func:`site_memory` reads it) on the site's first page and again
    only after the case base changed in a way that can change it, whoever changed it.

    Each call checks, in a few small queries: the newest case and label change of the case
    base (an import or a new label anywhere, a relabel through the case base: every kept
    site is read again after one) and aggregates of the cases of the pages the memory was
    read from (a deletion, a relabel by plain SQL, a revectorize). Not seen: a change by plain
    SQL of a page's stored HTML (the case base never changes it) or of the cases of the site's
    other pages (their labels do not count while they are older than the memory's pages), and
    on SQLite a new case of another page that takes the id of the newest case, deleted since
    the check before (SQLite reuses the largest id): it counts from the next change on.

    Thread-safe: a kept memory is only read by the cleaner, and the table of them changes
    under a lock; two threads asking at once for a site not kept may both read it. Each
    process has its own (the service reads them in its pool processes); a forked child of
    :data:`SITE_MEMORIES`'s process starts with none."""

    def __init__(self, size: int = MEMORY_SITES) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._lock = threading.Lock()
        self._held: OrderedDict[tuple[str, str], _Held] = OrderedDict()

    def get(self, casebase: CaseBase, host: str) -> SiteMemory:
        """The memory of the site ``host`` in ``casebase``, as its cases are now."""
        key = (casebase.url, site_host(host))
        with casebase.reading() as session:
            # Read in this order (one snapshot on SQLite; on a server, a change made meanwhile
            # is in what is read after it, and shows in the next state: read again, not lost).
            newest, site = _newest(session), _site_id(session, host)
            with self._lock:
                held = _kept(self._held, key)
            if held is not None and _state(session, site, newest, held.pages) == held.state:
                return held.memory
            pages = _labelled_pages(session, site, MEMORY_PAGES)
            state = _state(session, site, newest, pages)
            memory = _read_memory(session, pages)
        with self._lock:
            _keep(self._held, key, _Held(state, pages, memory), self.size)
        return memory

    def __len__(self) -> int:
        return len(self._held)

    def clear(self) -> None:
        """Forget every kept memory."""
        with self._lock:
            self._held.clear()

    def _forked(self) -> None:
        """In a forked child: none of the parent's memories, nor its lock (which another
        thread of the parent may have held at the fork)."""
        self._lock = threading.Lock()
        self._held = OrderedDict()


#: The site memories of this process: the service's pool processes clean with these.
SITE_MEMORIES = SiteMemories()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SITE_MEMORIES._forked)


def stored_page(casebase: CaseBase, page_id: int) -> tuple[ElementTable, str, bool | None]:
    """The element table of the stored page ``page_id`` (in which its cases' positions and paths
    were taken; its body is ``table.elements[0]``), its site's host and whether its head
    declared it an article (None: stored before that was recorded). :class:`NotFoundError`
    when there is no such page, :class:`CaseBaseError` when it cannot be read back."""
    with casebase.reading() as session:
        row = session.execute(select(Page.html, Site.host, Page.declared_article)
                              .join(Site, Page.site_id == Site.id)
                              .where(Page.id == page_id)).first()
    if row is None:
        raise NotFoundError(f"no page with id {page_id}")
    table = stored_table(row.html)
    if table is None:
        raise CaseBaseError(f"the stored page {page_id} cannot be read back")
    return table, row.host, row.declared_article


def site_tables(casebase: CaseBase, host: str, limit: int, exclude: int | None = None
                ) -> list[ElementTable]:
    """The element tables of up to ``limit`` stored pages of the site ``host``, the latest
    first, without the page ``exclude``: the site's pages, labelled or not, on which the
    correction queue (:mod:`noisecbr_apps.corrections`) counts recurring markup. A stored page that
    cannot be read back is left out."""
    with casebase.reading() as session:
        site = session.execute(select(Site.id).where(Site.host == site_host(host))).scalar()
        if site is None:
            return []
        query = select(Page.html).where(Page.site_id == site)
        if exclude is not None:
            query = query.where(Page.id != exclude)
        blobs = session.execute(query.order_by(Page.id.desc()).limit(limit)).scalars().all()
    return [table for table in map(stored_table, blobs) if table is not None]


def memory_from_truth(pages: Iterable[LabelledPage]) -> SiteMemory:
    """The memory of pages labelled from their ground truth, as the importer labels them: what
    a user's corrections of those pages would teach (used by ``noisecbr bench --adapt``)."""
    memory = SiteMemory()
    for page in pages:
        try:
            cases = page_cases(page.html, truth=page.truth)
        except InputError:
            continue
        memory.add(cases.page.table, cases.labels.tolist())
    return memory


def memory_from_boxes(table: ElementTable, labels: Sequence[int | str | None],
                      boxes: Iterable[int]) -> SiteMemory:
    """The memory of a few labelled subtrees of one page: element ``i`` of each of ``boxes``
    with its label ``labels[i]`` (a label per element of ``table``, e.g. from its ground truth
    by :func:`casebase.labelling.label_table`), the page's other elements unlabelled. What that
    many clicks on the review page teach (used by ``noisecbr bench --adapt-clicks``)."""
    chosen = [None] * len(table)
    for i in boxes:
        chosen[i] = labels[i]
    memory = SiteMemory()
    memory.add(table, chosen)
    return memory



def page_site(page: bytes | str) -> str | None:
    """The site a page declares (the host of :func:`noisecbr.site.memory.declared_url`); None
    when it declares no URL, or one without a host."""
    url = declared_url(page)
    try:
        return site_host(url) if url else None
    except ValueError:
        return None


class PageMemories:
    """The site memory for each page to clean, read from a case base and kept per site: the
    memory of ``host`` for every page, or (without a host) of the site each page declares
    (:func:`page_site`). A batch's view: a site's memory is read once, on its first page, and
    kept for the batch (at most :data:`MEMORY_SITES` sites, the least recently used dropped
    first). Picklable: a worker process reads the case base itself, once per site."""

    def __init__(self, database: str, host: str | None = None) -> None:
        self.database = database
        self.host = site_host(host) if host else None
        self._memories: OrderedDict[str, SiteMemory] = OrderedDict()

    def __getstate__(self) -> dict:
        return {"database": self.database, "host": self.host}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["database"], state["host"])

    def site_of(self, page: bytes | str) -> str | None:
        """The site whose memory cleans ``page``; None when the page declares no URL."""
        return self.host if self.host is not None else page_site(page)

    def check(self) -> None:
        """Read the case base once, so that an unreadable one fails here, not on every page."""
        with CaseBase.open(self.database, upgrade=False, create=False) as casebase, \
                casebase.reading() as s:
            s.execute(select(Site.id).limit(1)).all()

    def memory(self, host: str) -> SiteMemory:
        """The site memory of ``host``, read from the case base once and then kept."""
        memory = _kept(self._memories, host)
        if memory is None:
            with CaseBase.open(self.database, upgrade=False, create=False) as casebase:
                memory = site_memory(casebase, host)
            _keep(self._memories, host, memory, MEMORY_SITES)
        return memory

    def __call__(self, page: bytes | str) -> SiteMemory | None:
        host = self.site_of(page)
        return None if host is None else self.memory(host)


def open_page_memories(database: str, site_or_url: str | None = None) -> PageMemories:
    """The :class:`PageMemories` of ``noisecbr clean --memory DB`` (its ``page_memories`` hook),
    with the case base read once: the memory of ``site_or_url``'s site is loaded, or (without
    one) the case base is checked. Raises ValueError for a site name that is not a host, and
    :class:`noisecbr.site.memory.MemorySourceError` when the case base cannot be read."""
    memories = PageMemories(database, site_or_url)
    try:
        if memories.host is None:
            memories.check()
        else:
            memories.memory(memories.host)
    except (CaseBaseError, SQLAlchemyError, OSError) as error:
        raise MemorySourceError(f"cannot read the case base {database}: {error}") from error
    return memories
