"""The service's work on untrusted pages, run in pool processes under a time limit.

Everything that parses a page a client sent (clean, explain, review, store) runs here, in a
pebble process pool of the HTTP worker: cleaning is CPU-bound Python, so a thread cannot be
stopped, but a process can. A job that passes the time limit has its process killed (pebble
starts a fresh one) and the client gets a clear error. Each pool process loads the model once
(:func:`init_worker`) and opens the case base once. It keeps the site memories it read
(:data:`casebase.reuse.SITE_MEMORIES`, a few sites) and reads one again when the site's
cases have changed, whoever changed them: a correction acts on the next request.

Jobs return plain dicts and raise only :class:`JobError` (status + one line): the HTTP layer
turns it into the answer. An unexpected exception is logged here with its traceback and
reaches the client as a one-line 500 (a bug).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any, TypeVar

from noisecbr.cleaner import Cleaner, default_model
from noisecbr.decide.walk import AUTO
from noisecbr.errors import NoisecbrError
from noisecbr.pipeline import Decisions, Page
from noisecbr.prepare.tidy import InputError
from noisecbr.result import Decision
from noisecbr.score.artifact import load_model

__all__ = ["JobError", "add_labels_job", "add_page_job", "clean_job", "explain_job",
           "guarded", "init_worker", "queue_job", "review_job"]

log = logging.getLogger("noisecbr.serve")

#: Cleaners kept per pool process, one per distinct (smooth, comments, favor): a client's
#: smooth value is any float, so the cache is bounded; 16 covers every setting a UI offers.
CLEANER_CACHE = 16
#: Characters of each kept text shown by the review page's panel.
REVIEW_TEXT_CHARS = 20_000
#: The page source under which the review page stores the pages it labels.
REVIEW_SOURCE = "review"
#: Boxes of the correction queue the review page shows with a page (GET /pages/{id}/queue
#: takes its own limit): a short list, one screen of the panel.
REVIEW_QUEUE = 10
#: Stored pages of a site read to count its recurring markup for the queue, the latest first:
#: as many as the site evidence keeps (noisecbr.site.evidence): what recurs on a site shows on a
#: handful of its pages, and each is parsed again on every request (about 5 ms a page).
QUEUE_SITE_PAGES = 16

_state: dict[str, Any] = {}
T = TypeVar("T")


class JobError(NoisecbrError):
    """A job's answer to the client: an HTTP status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message


#: A page cleaned once when a pool process starts: the first client's request then finds every
#: module imported and every cache warm (the time limit counts from a job's start).
_WARM_UP = "<html><body><nav><a>Home</a></nav><main><p>A few words.</p></main></body></html>"


def init_worker(db: str | None, model: str | None) -> None:
    """Load the model (and open the case base) once per pool process, and warm it up."""
    import alembic.util  # noqa: F401 - imported here, not in a client's first request
    import sqlalchemy.exc  # noqa: F401

    from casebase.store import CaseBase

    from . import drawing  # noqa: F401

    _state["model"] = load_model(model) if model else default_model()
    _state["db"] = db
    _state["index"] = None
    if db:
        import casebase.retrieve
        import casebase.reuse  # noqa: F401

        _state["casebase"] = CaseBase.open(db, upgrade=False, create=False,
                                              check=False)  # `serve` checked it
    _cleaner().clean(_WARM_UP).to_json()  # text, HTML and decisions: all warm


def guarded(job: Callable[..., T]) -> Callable[..., T]:
    """Turn the known failures of ``job`` into :class:`JobError`; log the unknown ones (bugs).
    Used by the jobs of the pool and by the HTTP worker's own reads and writes."""

    @functools.wraps(job)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        from alembic.util import CommandError
        from sqlalchemy.exc import SQLAlchemyError

        from casebase.errors import InvalidInputError, InvalidPathError, UnknownPathsError
        from casebase.store import CaseBaseError, NotFoundError

        try:
            return job(*args, **kwargs)
        except JobError:
            raise
        except InputError as error:
            raise JobError(422, f"not a page: {error}") from None
        # The request's labels, not a missing resource nor a broken case base.
        except (UnknownPathsError, InvalidPathError) as error:
            raise JobError(422, f"labels: {error}") from None
        except InvalidInputError as error:
            raise JobError(422, str(error)) from None
        except NotFoundError as error:
            raise JobError(404, str(error)) from None
        except (CaseBaseError, SQLAlchemyError, CommandError) as error:
            first = str(getattr(error, "orig", None) or error).splitlines()[0]
            raise JobError(503, f"cannot use the case base: {first}") from None
        except Exception as error:
            log.exception("%s failed", job.__name__)
            raise JobError(500, f"internal error ({type(error).__name__}), logged by the "
                                "server") from None

    return wrapper


def _casebase():
    casebase = _state.get("casebase")
    if casebase is None:
        raise JobError(503, "this server has no case base: start it with --db URL")
    return casebase


# -- cleaning -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=CLEANER_CACHE)
def _cleaner(smooth: float | None = None, comments: bool = False, favor: str = AUTO,
             title: bool | None = None) -> Cleaner:
    return Cleaner(_state["model"], smooth=smooth, comments=comments, favor=favor, title=title)


def _memory(page: bytes | str, url: str | None):
    """The site memory of the page's site (of ``url``, else of the URL the page declares) as
    the case base holds it now; None when the page names no site."""
    from casebase.reuse import SITE_MEMORIES, page_site, site_host

    casebase = _casebase()
    try:
        host = site_host(url) if url else page_site(page)
    except ValueError as error:
        raise JobError(422, f"url: {error}") from None
    return None if host is None else SITE_MEMORIES.get(casebase, host)


def _result_body(result, fmt: str, links: bool = False, images: bool = False) -> Any:
    if fmt == "text":
        return result.text + "\n"
    if fmt == "markdown":
        return result.to_markdown(links=links, images=images) + "\n"
    if fmt == "html":
        return result.html
    return result.to_dict()  # what `noisecbr clean -f json` prints


@guarded
def clean_job(page: bytes | str, url: str | None, options: Mapping[str, Any]) -> dict:
    """Clean one page as ``noisecbr clean`` does: the body in ``options["format"]``."""
    cleaner = _cleaner(options.get("smooth"), bool(options.get("comments")),
                       options.get("favor") or AUTO, options.get("title"))
    memory = _memory(page, url) if options.get("memory") else None
    result = cleaner.clean(page, url=url, memory=memory, page_type=options.get("page_type"))
    return {"body": _result_body(result, options.get("format", "json"),
                                 bool(options.get("links")), bool(options.get("images"))),
            "memory": None if memory is None else memory.pages}


# -- explaining ---------------------------------------------------------------------------------
def _index():
    """The case index of this process, opened again when the case base has changed (the
    fingerprint covers new, deleted and relabelled cases), as ``casebase explain`` opens it
    (:func:`casebase.neighbours.open_index`: exact for a small case base, else the approximate
    index on disk, which follows the changes without being rebuilt; ``casebase index`` builds
    it)."""
    from casebase.neighbours import open_index
    from casebase.retrieve import index_fingerprint

    casebase, model = _casebase(), _state["model"]
    # Read before the fingerprint: a write committed after it changes it for the next request.
    token = casebase.change_token()
    held = _state["index"]
    if held is not None and token is not None and held[2] == token:
        return held[1]  # nothing written since the index was checked
    fingerprint = index_fingerprint(casebase, model)
    if held is not None and held[0] == fingerprint:
        _state["index"] = (fingerprint, held[1], token)
        return held[1]
    # A request never builds the approximate index (a minute at millions of cases, past the
    # job's time limit): `casebase index` does; a grown delta is searched as it is meanwhile.
    index = open_index(casebase, model, build=False)
    _state["index"] = (fingerprint, index, token)
    return index


@guarded
def explain_job(page: bytes | str, url: str | None, k: int, memory: bool,
                other_sites: bool) -> list[dict]:
    """``casebase explain --json``: each decided subtree with its ``k`` nearest cases."""
    from casebase.retrieve import explain_page

    site_memory = _memory(page, url) if memory else None
    index = _index()
    return [item.to_dict() for item in explain_page(
        index, _casebase(), page, url=url or None, k=k, other_sites=other_sites,
        memory=site_memory, cleaner=_cleaner())]


def _neighbours(page: Page, decided: Decisions, url: str | None, k: int) -> dict[str, list]:
    """The nearest stored cases of each subtree of the decided ``page``, by path (none when
    the case base holds no case to compare with)."""
    from casebase.retrieve import explain_decided
    from casebase.store import CaseBaseError

    try:
        index = _index()
    except CaseBaseError:
        return {}
    items = explain_decided(index, _casebase(), page, decided, _cleaner(), url=url or None,
                            k=k)
    return {item.path: [n.to_dict() | {"same_markup": False} for n in item.neighbours]
            + [n.to_dict() | {"same_markup": True} for n in item.same_markup] for item in items}


def _stored(page: bytes | str) -> dict:
    """The page as the review page stored it (its id and its cases by path), if it did."""
    from casebase.pages import content_hash

    casebase = _casebase()
    with casebase.session() as session:
        page_id = casebase.find_page(session, REVIEW_SOURCE, content_hash(page))
    if page_id is None:
        return {"page_id": None, "cases": {}}
    cases = casebase.list_cases(page_id=page_id, limit=1_000_000)
    return {"page_id": page_id,
            "cases": {c.path: {"id": c.id, "label": c.label, "source": c.label_source}
                      for c in cases}}


@guarded
def review_job(page: bytes | str, url: str | None, k: int) -> dict:
    """Everything the review page shows of a page: the page drawn with its decisions marked,
    the decisions, the kept text, and with a case base the nearest stored cases and the cases
    already stored for this page."""
    from .drawing import draw_page

    cleaner = _cleaner()
    memory = _memory(page, url) if "casebase" in _state else None
    prepared = cleaner.prepare(page, url=url)
    # Decided once: the result, the queue and the nearest cases explain the same decisions.
    decided = cleaner.decide(prepared, memory=memory)
    result = cleaner.render(prepared, decided)
    decisions: list[Decision] = result.decisions
    out = {"url": url, "decisions": [asdict(d) for d in decisions],
           "text": result.text[:REVIEW_TEXT_CHARS],
           "frame": draw_page(prepared.body, decisions), "casebase": "casebase" in _state,
           "memory_pages": memory.pages if memory else 0, "mode": decided.mode}
    if "casebase" in _state:
        out["neighbours"] = _neighbours(prepared, decided, url, k)
        out["stored"] = _stored(page)
    out["queue"] = _queue(prepared.table, decided, _page_site(
        page, url, out.get("stored", {}).get("page_id")), REVIEW_QUEUE)
    return out


# -- the correction queue -----------------------------------------------------------------------
def _queue(table, decided: Decisions, recurrence, limit: int) -> list[dict]:
    """The first ``limit`` boxes of the correction queue of a decided page (its table and
    decisions; the markup counted on the site's other pages in ``recurrence``, None when none
    is known), without those the site's stored labels already decide."""
    from noisecbr_apps.corrections import rank_boxes, settled_boxes

    settled = settled_boxes(len(table), decided.recalled, decided.stored)
    return [entry.to_dict() for entry in rank_boxes(
        table, decided.proba, decided.decision, recurrence, settled=settled, limit=limit)]


def _site_recurrence(host: str, exclude: int | None = None):
    """The recurring markup of the site's stored pages (up to :data:`QUEUE_SITE_PAGES`,
    without the page ``exclude``)."""
    from casebase.reuse import site_tables
    from noisecbr_apps.corrections import Recurrence

    return Recurrence(site_tables(_casebase(), host, QUEUE_SITE_PAGES, exclude))


def _page_site(page: bytes | str, url: str | None, stored_id: int | None):
    """The recurrence of a reviewed page's site (of ``url``, else of the URL the page
    declares) on its stored pages; None without a case base or a site."""
    from casebase.reuse import site_host
    from noisecbr.site.memory import declared_url

    if "casebase" not in _state:
        return None
    named = url or declared_url(page)
    if not named:
        return None
    try:
        host = site_host(named)
    except ValueError:
        return None
    return _site_recurrence(host, stored_id)


@guarded
def queue_job(page_id: int, limit: int) -> dict:
    """The correction queue of a stored page: its boxes where one click changes its site's
    most text, best first (:mod:`noisecbr_apps.corrections`), decided with the site memory as the
    review page decides it, the markup counted on the site's other stored pages. A stored page keeps
    its body only: whether its head declared it an article was recorded when it was stored
    (a page stored before that is walked in the mode of its prose,
    :mod:`noisecbr.decide.convention`)."""
    from casebase.reuse import SITE_MEMORIES, stored_page

    casebase = _casebase()
    table, host, declared = stored_page(casebase, page_id)
    memory = SITE_MEMORIES.get(casebase, host)
    decided = _cleaner().decide(Page(table.elements[0], table, declared=declared),
                                 memory=memory)
    recurrence = _site_recurrence(host, page_id)
    return {"page_id": page_id, "site": host, "site_pages": recurrence.pages,
            "memory_pages": memory.pages, "mode": decided.mode,
            "boxes": _queue(table, decided, recurrence, limit)}


# -- storing ------------------------------------------------------------------------------------
@guarded
def add_page_job(page: bytes | str, url: str, labels: Mapping[str, str], source: str,
                 site: str | None) -> dict:
    """Store a page with labels for some of its subtrees, as ``casebase import-page --labels``
    does (a page already stored under ``source`` is not stored again)."""
    casebase = _casebase()
    added = casebase.add_page(page, url=url, source=source, site=site, labels=dict(labels),
                              label_source="human")
    page_id = added.page_id if added.page_id is not None else added.duplicate_of
    cases = casebase.list_cases(page_id=page_id, limit=1_000_000)
    return {"page_id": added.page_id, "duplicate_of": added.duplicate_of,
            "cases": {c.path: {"id": c.id, "label": c.label, "source": c.label_source}
                      for c in cases if c.path in labels} if added.page_id else {},
            "counts": dict(added.cases), "unknown_paths": added.unknown_paths}


@guarded
def add_labels_job(page_id: int, labels: Mapping[str, str]) -> dict:
    """Label more subtrees of a stored page: a new case for each path that has none."""
    return _casebase().add_labels(page_id, labels)
