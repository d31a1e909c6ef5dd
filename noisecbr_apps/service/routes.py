"""The endpoints of ``noisecbr serve``.

A page arrives either as the raw request body (``text/html``, or any ``text/*``, ``application/
octet-stream`` or form type, as ``curl --data-binary`` sends it; the URL and options in the query
string) or as JSON ``{"html": ..., "url": ..., "options": {...}}``. The work on it runs in the
process pool (:mod:`.work`); reads and relabellings of cases run in the HTTP worker's threads.
"""

from __future__ import annotations

import secrets
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from lxml import etree
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from noisecbr.result import LABELS
from noisecbr.score.kind import KINDS

from . import work

__all__ = ["router"]

router = APIRouter()

#: Longest URL accepted (browsers and proxies stop near 2 000 to 8 000 characters).
MAX_URL = 8_192
#: Longest note kept with a relabelling.
MAX_NOTE = 2_000
#: Most labelled paths in one request (a page has a few thousand elements at most).
MAX_LABELS = 10_000
#: Most boxes of a correction queue in one answer (a page has a few thousand elements at most).
MAX_QUEUE = 1_000
#: Content types read as a raw page; JSON is parsed; anything else is refused (415).
_RAW_TYPES = ("text/", "application/xhtml+xml", "application/octet-stream",
              "application/x-www-form-urlencoded", "multipart/form-data")
_bearer = HTTPBearer(auto_error=False, description="The token `noisecbr serve` printed or was "
                                                   "given with --token.")


# -- request models -----------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CleanOptions(_Strict):
    """The options of ``noisecbr clean``."""

    format: Literal["text", "markdown", "html", "json"] = "json"
    links: bool = Field(False, description="format=markdown: links as [text](url).")
    images: bool = Field(False, description="format=markdown: images as ![alt](src).")
    memory: bool = Field(False, description="Clean with the site memory of the page's site "
                                            "(needs the case base).")
    smooth: float | None = Field(None, ge=0, le=1e6, description="Isotonic smoothing penalty.")
    comments: bool = Field(False, description="Keep reader comments, after the main text.")
    favor: Literal["auto", "balanced", "precision", "recall"] = Field(
        "auto", description="The model's threshold set: remove more where unsure "
                            "(precision) or keep more (recall) on every page, or each page "
                            "as its convention asks (auto).")
    page_type: Literal[KINDS] | None = Field(  # type: ignore[valid-type]: the kinds' names
        None, description="The page's kind, in place of the kind the model reads off it.")
    title: bool | None = Field(None, description="The headline first in the text and Markdown "
                               "(true), or left out (false); default: as the page's kind does.")


class ExplainOptions(_Strict):
    """The options of ``casebase explain``."""

    k: int = Field(3, ge=1, le=50, description="Stored cases shown per subtree.")
    memory: bool = False
    other_sites: bool = False


class ReviewOptions(_Strict):
    """Options of /review: ``k``, how many nearest stored cases explain a decision."""

    k: int = Field(3, ge=1, le=20)


class PageIn(_Strict):
    """A page in a request body: its HTML and, optionally, its URL."""

    html: str = Field(description="The page's HTML.")
    url: str | None = Field(None, max_length=MAX_URL, description="Its URL (its host is its "
                                                                  "site).")


class CleanIn(PageIn):
    """The body of POST /clean: a page and the cleaner's options."""

    options: CleanOptions = CleanOptions()


class ExplainIn(PageIn):
    """The body of POST /explain: a page and the explanation's options."""

    options: ExplainOptions = ExplainOptions()


class ReviewIn(PageIn):
    """The body of POST /review: a page and the review's options."""

    options: ReviewOptions = ReviewOptions()


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    if len(labels) > MAX_LABELS:
        raise ValueError(f"at most {MAX_LABELS:,} paths")
    for path, label in labels.items():
        if label not in LABELS:
            raise ValueError(f"{label!r} is not one of {', '.join(LABELS)}")
        try:
            etree.XPath(path)
        except etree.XPathSyntaxError:
            raise ValueError(f"invalid XPath {path[:80]!r}") from None
    return labels


class StoreIn(PageIn):
    """A page to store with labels, as ``casebase import-page --labels`` stores it."""

    url: str = Field("", max_length=MAX_URL)
    labels: dict[str, str] = Field(description='{"XPath": "noise|data|mixture"}')
    source: str = Field("api", min_length=1, max_length=64,
                        description="Pages are unique per source and content.")
    site: str | None = Field(None, max_length=255)

    _labels = field_validator("labels")(_check_labels)


class LabelsIn(_Strict):
    """The body of POST /pages/{id}/labels: XPath → label of the subtrees to label."""

    labels: dict[str, str]

    _labels = field_validator("labels")(_check_labels)


class RelabelIn(_Strict):
    """The body of POST /cases/{id}/label: the new label and an optional note."""

    label: str
    note: str | None = Field(None, max_length=MAX_NOTE)

    @field_validator("label")
    @classmethod
    def _known(cls, label: str) -> str:
        if label not in LABELS:
            raise ValueError(f"{label!r} is not one of {', '.join(LABELS)}")
        return label


#: Schemas of the JSON bodies the endpoints read themselves (added to the OpenAPI document's
#: components by the app, so /docs shows them).
PAGE_SCHEMAS: dict[str, dict] = {}


def _page_body(model: type[BaseModel]) -> dict:
    """The OpenAPI request body of an endpoint that takes a raw page or a JSON ``model``."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    PAGE_SCHEMAS.update(schema.pop("$defs", {}))
    PAGE_SCHEMAS[model.__name__] = schema
    return {"requestBody": {"required": True, "content": {
        "text/html": {"schema": {"type": "string", "description": "The page; url and options "
                                                                  "in the query string"}},
        "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def one_line(error: ValidationError | RequestValidationError) -> str:
    """The first problem of a request that does not validate, as one line."""
    errors = error.errors()
    if not errors:
        return "invalid request"
    where = ".".join(str(part) for part in errors[0].get("loc", ()) if part != "body")
    message = errors[0].get("msg", "invalid")
    return f"{where}: {message}" if where else message


async def _read(request: Request, model: type[PageIn]) -> tuple[bytes | str, PageIn]:
    """The page and the request's other fields, from a JSON or a raw body."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await request.body()
    try:
        if kind == "application/json" or kind.endswith("+json"):
            item = model.model_validate_json(body)
            return item.html, item
        if kind and not kind.startswith(_RAW_TYPES):
            raise HTTPException(415, f"send the page as text/html or as JSON, not {kind}")
        if "labels" in model.model_fields:
            raise HTTPException(415, "send JSON {html, url, labels}")
        query = dict(request.query_params)
        top = {k: query.pop(k) for k in list(query) if k in model.model_fields}
        item = model.model_validate({**top, "html": "", "options": query})
        return body, item
    except ValidationError as error:
        raise HTTPException(422, one_line(error)) from None


def _writer(request: Request,
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
            ) -> None:
    """Write endpoints need the bearer token the server was started with."""
    expected = request.app.state.settings.token
    if not expected:
        raise HTTPException(403, "writes are disabled: start the server with --token")
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(401, "missing or wrong bearer token",
                            {"WWW-Authenticate": "Bearer"})


def _casebase(request: Request):
    casebase = request.app.state.casebase
    if casebase is None:
        raise HTTPException(503, "this server has no case base: start it with --db URL")
    return casebase


async def _run(request: Request, job, *args: Any) -> Any:
    return await request.app.state.pool.run(job, *args)


# -- cleaning -----------------------------------------------------------------------------------
@router.post("/clean", openapi_extra=_page_body(CleanIn), tags=["clean"])
async def clean(request: Request):
    """Clean a page, as ``noisecbr clean`` does: the main text (``format=text``), the same as
    Markdown (``markdown``), the cleaned page (``html``) or all of them with every decision
    (``json``, the default)."""
    page, item = await _read(request, CleanIn)
    options = item.options
    out = await _run(request, work.clean_job, page, item.url, options.model_dump())
    headers = {}
    if out["memory"] is not None:
        headers["X-Noisecbr-Memory-Pages"] = str(out["memory"])
    if options.format == "text":
        return PlainTextResponse(out["body"], headers=headers)
    if options.format == "markdown":
        return PlainTextResponse(out["body"], headers=headers, media_type="text/markdown")
    if options.format == "html":
        return HTMLResponse(out["body"], headers=headers)
    return JSONResponse(out["body"], headers=headers)


@router.post("/explain", openapi_extra=_page_body(ExplainIn), tags=["clean"])
async def explain(request: Request) -> list[dict]:
    """Each decided subtree of a page with the ``k`` nearest stored cases, as ``casebase
    explain --json`` prints them (needs the case base)."""
    _casebase(request)
    page, item = await _read(request, ExplainIn)
    options = item.options
    try:
        return await _run(request, work.explain_job, page, item.url, options.k, options.memory,
                          options.other_sites)
    except work.JobError as error:
        if "has no cases of vector schema" in error.message:
            raise HTTPException(409, "the case base holds no cases to compare with: import "
                                     "pages first") from None
        raise


# -- the case base ------------------------------------------------------------------------------
@work.guarded
def _case(casebase, case_id: int) -> dict:
    from casebase.cli import _case_dict

    case = casebase.get_case(case_id)
    history = [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in entry.items()}
               for entry in casebase.case_history(case_id)]
    return _case_dict(case) | {"html": casebase.subtree_html(case), "history": history}


RowId = Annotated[int, Path(ge=1, le=2**63 - 1)]


@router.get("/cases/{case_id}", tags=["case base"])
async def get_case(request: Request, case_id: RowId) -> dict:
    """A case as ``casebase show --json`` prints it: its subtree's HTML, vector and history."""
    return await run_in_threadpool(_case, _casebase(request), case_id)


@work.guarded
def _relabel(casebase, case_id: int, label: str, note: str | None) -> dict:
    old = casebase.relabel(case_id, label, source="human", note=note)
    return {"id": case_id, "old_label": old, "label": label, "source": "human"}


@router.post("/cases/{case_id}/label", dependencies=[Depends(_writer)], tags=["case base"])
async def relabel(request: Request, case_id: RowId, item: RelabelIn) -> dict:
    """Relabel a case (``casebase label``: the change is kept in its history)."""
    return await run_in_threadpool(_relabel, _casebase(request), case_id, item.label, item.note)


@router.post("/pages", dependencies=[Depends(_writer)], openapi_extra=_page_body(StoreIn),
             tags=["case base"])
async def store_page(request: Request) -> dict:
    """Store a page with labels for some of its subtrees (``casebase import-page --labels``):
    one case per element a path selects; a page already stored under ``source`` is not stored
    again (``page_id`` null, ``duplicate_of`` its id)."""
    _casebase(request)
    page, item = await _read(request, StoreIn)
    return await _run(request, work.add_page_job, page, item.url, item.labels, item.source,
                      item.site)


@router.post("/pages/{page_id}/labels", dependencies=[Depends(_writer)], tags=["case base"])
async def label_page(request: Request, page_id: RowId, item: LabelsIn) -> dict:
    """Label more subtrees of a stored page: a path with a case is relabelled (with history),
    the others get a new case."""
    _casebase(request)
    return await _run(request, work.add_labels_job, page_id, item.labels)


@router.get("/pages/{page_id}/queue", tags=["review"])
async def page_queue(request: Request, page_id: RowId,
                     limit: Annotated[int, Query(ge=1, le=MAX_QUEUE)] = 10) -> dict:
    """The correction queue of a stored page: its boxes where one click changes its site's
    most text first (uncertain scores × words × how often the markup recurs on the site's
    other stored pages; ``noisecbr_apps.corrections``), without those its site's stored labels
    already decide. Each box: its path, the walk's decision, the network's probabilities, its words,
    the page's other boxes with its markup, its recurrence and its score."""
    _casebase(request)
    return await _run(request, work.queue_job, page_id, limit)


@router.get("/healthz", tags=["service"])
async def healthz(request: Request) -> dict:
    """Whether the service runs, and whether its case base answers."""
    casebase = request.app.state.casebase
    state = "none"
    if casebase is not None:
        state = await run_in_threadpool(_ping, casebase)
    return {"status": "ok", "casebase": state, "labels": list(LABELS),
            "writes": bool(request.app.state.settings.token)}


def _ping(casebase) -> str:
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with casebase.engine.connect() as connection:
            connection.execute(text("SELECT COUNT(*) FROM sites")).scalar()
        return "ok"
    except SQLAlchemyError as error:
        return "unavailable: " + str(getattr(error, "orig", None) or error).splitlines()[0]


# -- the review page ----------------------------------------------------------------------------
@router.get("/review", response_class=HTMLResponse, tags=["review"])
async def review_page() -> FileResponse:
    """The review page: choose a page, see its decisions drawn, click a box to relabel it."""
    return FileResponse(str(resources.files("noisecbr_apps.service") / "static" / "review.html"),
                        media_type="text/html")


@router.post("/review", openapi_extra=_page_body(ReviewIn), tags=["review"])
async def review(request: Request) -> dict:
    """What the review page draws: the sanitised page with its decided subtrees marked, the
    decisions, the kept text and (with a case base) the nearest stored cases and the cases
    stored for this page."""
    page, item = await _read(request, ReviewIn)
    return await _run(request, work.review_job, page, item.url, item.options.k)
