"""A site's stored cases → the :class:`noisecbr.memory.SiteMemory` that cleans its other pages.

Reads every page of the site as stored (the tidied body each case was built from) with the
*current* labels of its cases, so a correction made with ``casebase label`` or ``casebase
import-page --labels`` changes how the site's next pages are cleaned, without retraining.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from noisecbr.layout import LabelledPage, site_host
from noisecbr.memory import MemorySourceError, SiteMemory, declared_url
from noisecbr.tidy import InputError

from .errors import CaseBaseError
from .models import Case, Page, Site
from .pages import page_cases, stored_table
from .store import CaseBase

# site_host is noisecbr.layout's, imported here for the callers that found it here.
__all__ = ["PageMemories", "memory_from_truth", "open_page_memories", "site_host",
           "site_memory"]


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
