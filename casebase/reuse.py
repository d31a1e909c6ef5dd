"""A site's stored cases → the :class:`noisecbr.memory.SiteMemory` that cleans its other pages.

Reads every page of the site as stored (the tidied body each case was built from) with the
*current* labels of its cases, so a correction made with ``casebase label`` or ``casebase
import-page --labels`` changes how the site's next pages are cleaned, without retraining.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from noisecbr.layout import LabelledPage, site_host
from noisecbr.memory import MemorySourceError, SiteMemory, declared_url
from noisecbr.subtrees import ElementTable
from noisecbr.tidy import InputError

from .errors import CaseBaseError, NotFoundError
from .models import Case, Page, Site
from .pages import page_cases, stored_table
from .store import CaseBase

# site_host is noisecbr.layout's, imported here for the callers that found it here.
__all__ = ["PageMemories", "memory_from_boxes", "memory_from_truth", "open_page_memories",
           "site_host", "site_memory", "site_tables", "stored_page"]


def site_memory(casebase: CaseBase, host: str) -> SiteMemory:
    """The memory of every labelled page of the site ``host`` in the case base (an empty memory
    when the site has none). Cases whose stored path no longer selects their element's position
    (hand-written paths) are left out rather than guessed, and so is a stored page that cannot
    be read back."""
    memory = SiteMemory()
    with casebase.reading() as session:
        site = session.execute(select(Site.id).where(Site.host == site_host(host))).scalar()
        if site is None:
            return memory
        page_ids = session.execute(
            select(Page.id).where(Page.site_id == site).order_by(Page.id)).scalars().all()
        for page_id in page_ids:
            cases = session.execute(
                select(Case.id, Case.position, Case.path, Case.label)
                .where(Case.page_id == page_id).order_by(Case.id)
            ).all()
            if not cases:
                continue
            table = stored_table(session.execute(
                select(Page.html).where(Page.id == page_id)).scalar())
            if table is None:
                continue  # a damaged stored page teaches nothing; the others still count
            paths = table.paths()
            labels: list[str | None] = [None] * len(table)
            ids: list[int | None] = [None] * len(table)
            for case_id, position, path, label in cases:
                if 0 <= position < len(table) and paths[position] == path:
                    labels[position], ids[position] = label, case_id
            memory.add(table, labels, ids)
    return memory


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
    correction queue (:mod:`noisecbr.queue`) counts recurring markup. A stored page that cannot
    be read back is left out."""
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


class PageMemories:
    """The site memory for each page to clean, read from a case base and kept per site: the
    memory of ``host`` for every page, or (without a host) of the site each page declares
    (:func:`noisecbr.memory.declared_url`). Picklable: a worker process reads the case base
    itself, once per site."""

    def __init__(self, database: str, host: str | None = None) -> None:
        self.database = database
        self.host = site_host(host) if host else None
        self._memories: dict[str, SiteMemory] = {}

    def __getstate__(self) -> dict:
        return {"database": self.database, "host": self.host}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["database"], state["host"])

    def site_of(self, page: bytes | str) -> str | None:
        """The site whose memory cleans ``page``; None when the page declares no URL."""
        if self.host is not None:
            return self.host
        url = declared_url(page)
        try:
            return site_host(url) if url else None
        except ValueError:
            return None

    def check(self) -> None:
        """Read the case base once, so that an unreadable one fails here, not on every page."""
        with CaseBase.open(self.database, upgrade=False, create=False) as casebase, \
                casebase.reading() as s:
            s.execute(select(Site.id).limit(1)).all()

    def memory(self, host: str) -> SiteMemory:
        """The site memory of ``host``, read from the case base once and then kept."""
        if host not in self._memories:
            with CaseBase.open(self.database, upgrade=False, create=False) as casebase:
                self._memories[host] = site_memory(casebase, host)
        return self._memories[host]

    def __call__(self, page: bytes | str) -> SiteMemory | None:
        host = self.site_of(page)
        return None if host is None else self.memory(host)


def open_page_memories(database: str, site_or_url: str | None = None) -> PageMemories:
    """The :class:`PageMemories` of ``noisecbr clean --memory DB`` (its ``page_memories`` hook),
    with the case base read once: the memory of ``site_or_url``'s site is loaded, or (without
    one) the case base is checked. Raises ValueError for a site name that is not a host, and
    :class:`noisecbr.memory.MemorySourceError` when the case base cannot be read."""
    memories = PageMemories(database, site_or_url)
    try:
        if memories.host is None:
            memories.check()
        else:
            memories.memory(memories.host)
    except (CaseBaseError, SQLAlchemyError, OSError) as error:
        raise MemorySourceError(f"cannot read the case base {database}: {error}") from error
    return memories
