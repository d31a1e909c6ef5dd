"""More labels for a page already in the case base (the review page's second and later
corrections of a page it stored).

``casebase import-page --labels`` stores a page once, with a case for each labelled path; a page
stored again is skipped. The review page labels a page one box at a time, so after the first
box it adds cases to the stored page: the paths are read on the page as stored (as the import
reads them), a path that already has a case is relabelled (``CaseBase.relabel``: the label
history keeps the change), the others get a new case with the human label.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select

from casebase.importer import case_rows, insert_cases
from casebase.models import Case, Page, decompress_html
from casebase.pages import PreparedPage, cases_from_paths, parse_stored
from casebase.store import CaseBase, NotFoundError
from noisecbr.result import LABELS
from noisecbr.subtrees import build_table

__all__ = ["add_labels"]


def add_labels(casebase: CaseBase, page_id: int, labels: Mapping[str, str]) -> dict:
    """Label the subtrees ``labels`` selects (XPath → label) on the stored page ``page_id``.

    Returns the page id, the case of each path (id, label, source), the number of new and
    relabelled cases, and the paths that select nothing. New cases are inserted in one
    transaction; each relabelling is one more, with its history entry."""
    with casebase.session() as session:
        row = session.execute(select(Page.html, Page.content_hash)
                              .where(Page.id == page_id)).first()
        if row is None:
            raise NotFoundError(f"no page with id {page_id}")
        body = parse_stored(decompress_html(row.html))
        page = PreparedPage(row.content_hash, body, build_table(body), row.html)
        cases = cases_from_paths(page, labels)
        per_element, unknown = cases.labels, cases.unknown_paths
        chosen = [int(i) for i in cases.indices]
        existing = dict(session.execute(
            select(Case.position, Case.id).where(Case.page_id == page_id)).all())
        new = [i for i in chosen if i not in existing]
        insert_cases(session, case_rows(page, page_id, per_element, "human", new))
    relabelled = 0
    for i in chosen:
        if i in existing:
            casebase.relabel(existing[i], LABELS[per_element[i]], source="human",
                             note="review page")
            relabelled += 1
    paths = page.paths
    wanted = {paths[i] for i in chosen}
    cases = casebase.list_cases(page_id=page_id, limit=len(page.table) + 1)
    return {"page_id": page_id, "added": len(new), "relabelled": relabelled,
            "unknown_paths": unknown,
            "cases": {c.path: {"id": c.id, "label": c.label, "source": c.label_source}
                      for c in cases if c.path in wanted}}
