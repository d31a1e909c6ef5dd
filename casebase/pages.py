"""Pages as the case base stores them, and the one way a page and its labels become cases.

The lowest module of the case base above the schema: :mod:`casebase.importer`,
:mod:`casebase.store`, :mod:`casebase.reuse` and :mod:`training.sources` all read pages
through it, and it imports none of them.

A page is stored as its tidied ``<body>`` serialised (:func:`prepare_page`), and every case of
the page is an element of that serialisation *parsed again* (:func:`parse_stored`): on about 2 %
of pages the serialisation does not parse back into the tidied tree (a list item outside a list,
a second ``<html>`` after a premature ``</html>``), and the stored page must reproduce every case
exactly, for ``casebase show``, the site memory and recomputing vectors under a new schema.
:func:`page_cases` labels that re-parsed table, from ground truth or from a path → label map,
for every consumer alike, so training data from pages equals what an import stores.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from lxml import etree
from lxml import html as lxml_html
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from noisecbr.decide.convention import page_declares_article
from noisecbr.prepare.subtrees import ElementTable, build_table, is_element_path
from noisecbr.prepare.tidy import tidy
from noisecbr.result import LABELS

from .errors import CaseBaseError, InvalidPathError
from .labelling import (
    MAX_COVERAGE,
    T_DATA,
    T_NOISE,
    SubtreeLabels,
    article_furniture,
    label_table,
)
from .models import LABEL_SOURCES, Page, Site, compress_html, decompress_html

__all__ = [
    "PageCases",
    "PreparedPage",
    "cases_from_paths",
    "check_label",
    "check_source",
    "content_hash",
    "find_element",
    "find_page",
    "page_cases",
    "parse_stored",
    "prepare_page",
    "select_elements",
    "site_id",
    "stored_table",
]


def content_hash(raw: bytes | str) -> str:
    """sha256 (hex) of the page as read (a str is hashed as UTF-8)."""
    return hashlib.sha256(raw.encode("utf-8") if isinstance(raw, str) else raw).hexdigest()


def check_label(label: str) -> None:
    """Raise :class:`CaseBaseError` unless ``label`` is one of :data:`noisecbr.result.LABELS`."""
    if label not in LABELS:
        raise CaseBaseError(f"unknown label {label!r}: use one of {', '.join(LABELS)}")


def check_source(source: str) -> None:
    """Raise :class:`CaseBaseError` unless ``source`` is one of
    :data:`casebase.models.LABEL_SOURCES`."""
    if source not in LABEL_SOURCES:
        raise CaseBaseError(f"unknown label source {source!r}: use one of "
                            f"{', '.join(LABEL_SOURCES)}")


_STORED_PARSER = lxml_html.HTMLParser(huge_tree=True, remove_comments=True, remove_pis=True)


def parse_stored(html: str | bytes) -> etree._Element:
    """The ``<body>`` of a stored page (``Page.html`` decompressed), parsed the one way every
    case of the page was built from: a case's path selects its element in this tree."""
    if isinstance(html, bytes):
        html = html.decode("utf-8")
    document = lxml_html.document_fromstring(html, parser=_STORED_PARSER)
    body = document.find("body")
    return body if body is not None else document


def stored_table(blob: bytes) -> ElementTable | None:
    """The element table of a stored page (``Page.html`` as the database holds it, compressed),
    in which each case's ``position`` and ``path`` were taken; None when the page cannot be read
    back (a damaged blob)."""
    try:
        return build_table(parse_stored(decompress_html(blob)))
    except (zlib.error, UnicodeDecodeError, ValueError, etree.LxmlError):
        return None


#: Characters of a refused path an error message shows.
_SHOWN = 80
#: What an XPath that computes gives instead of a node set, by the type lxml returns.
_COMPUTED = ((bool, "a truth value"), (float, "a number"), (str, "a string"))


def select_elements(tree: etree._ElementTree, path: str) -> list[etree._Element]:
    """The elements a label's ``path`` selects in ``tree`` (the stored page: an XPath such as
    ``//article`` or the element paths ``casebase show`` prints).

    Every caller that labels by path resolves it here, so each refuses alike a path that is no
    XPath or one that computes rather than selects (``count(//*)`` gives a number, ``string(/)``
    a string): :class:`InvalidPathError`, a usage error, not a broken case base."""
    try:
        found = tree.xpath(path)
    except (etree.XPathError, ValueError) as error:  # ValueError: a NUL or a control byte
        raise InvalidPathError(f"invalid XPath {path[:_SHOWN]!r}: {error}", path) from None
    if not isinstance(found, list):
        kind = next((name for cls, name in _COMPUTED if isinstance(found, cls)), "a value")
        raise InvalidPathError(f"path {path[:_SHOWN]!r} selects no elements: it computes "
                               f"{kind}", path)
    return [element for element in found if isinstance(element, etree._Element)]


def find_element(body: etree._Element, path: str) -> etree._Element | None:
    """The element a stored case's ``path`` names in its page's ``body`` (:func:`parse_stored`),
    None when it names none. A path that is not an element path (stored by hand or by an import
    before they were checked) is never evaluated: it could compute, not name."""
    if not is_element_path(path):
        return None
    try:
        found = body.getroottree().xpath(path)
    except etree.XPathError:  # a prefixed tag (x:y) whose prefix the page does not declare
        return None
    return found[0] if found and isinstance(found[0], etree._Element) else None


@dataclass
class PreparedPage:
    """A page tidied and tabulated, ready to be stored."""

    content_hash: str
    body: etree._Element  # the stored body parsed again (:func:`parse_stored`)
    table: ElementTable  # the element table of ``body``: one row per case
    html: bytes  # compressed tidied body (what ``Page.html`` stores)
    #: whether the page's head declared it an article (what ``Page.declared_article`` stores)
    declared_article: bool | None = None

    @property
    def paths(self) -> list[str]:
        """The path of each element of ``table``, in table order."""
        return self.table.paths()


def prepare_page(raw: bytes | str, parser: str = "lxml", digest: str | None = None
                 ) -> PreparedPage:
    """Tidy a page, serialise the tidied body (what is stored) and tabulate that serialisation
    parsed again (raises :class:`noisecbr.prepare.tidy.InputError`): see the module docstring for
    why the cases come from the stored HTML re-parsed, not from the tidied tree itself."""
    tidied = tidy(raw, parser=parser)
    serialised = lxml_html.tostring(tidied, encoding="unicode", with_tail=False)
    body = parse_stored(serialised)
    table = build_table(body)
    return PreparedPage(digest or content_hash(raw), body, table, compress_html(serialised),
                        page_declares_article(tidied))


@dataclass
class PageCases:
    """The labelled cases of one page: which elements of ``page.table`` are cases, and their
    labels."""

    page: PreparedPage
    labels: np.ndarray  # int8 per element of page.table, indices into LABELS
    indices: np.ndarray  # int64: the elements that are cases, in table order
    #: path → label map only: the paths that selected no element of the page
    unknown_paths: list[str] = field(default_factory=list)
    #: ground truth only: the labelling's shares and words (for the oracle walk)
    subtree_labels: SubtreeLabels | None = None


def page_cases(
    raw: bytes | str,
    *,
    truth: str | None = None,
    paths: Mapping[str, str] | None = None,
    parser: str = "lxml",
    digest: str | None = None,
    t_data: float = T_DATA,
    t_noise: float = T_NOISE,
    max_coverage: float = MAX_COVERAGE,
    article_body: bool = False,
) -> PageCases:
    """Prepare a page (:func:`prepare_page`) and label its cases.

    With ``paths`` (XPaths evaluated on the stored page, e.g. those ``casebase show`` prints →
    label names), each element a path selects is a case with that label; paths that select
    nothing are listed in ``unknown_paths``. Otherwise with ``truth``, every element is a case
    labelled from the ground truth by :func:`casebase.labelling.label_table` with the given
    thresholds (``article_body``: relabelled to the article-body convention, the subtrees its
    markup names furniture never content: :func:`casebase.labelling.article_furniture`). With
    neither, the page has no cases. Raises :class:`noisecbr.prepare.tidy.InputError`
    for input that is not a page, :class:`CaseBaseError` for an unknown label and
    :class:`InvalidPathError` for a path that selects no elements by its form
    (:func:`select_elements`).
    """
    page = prepare_page(raw, parser, digest)
    if paths is not None:
        return cases_from_paths(page, paths)
    if truth is not None:
        exclude = article_furniture(page.table) if article_body else None
        subtree = label_table(page.table, truth, t_data=t_data, t_noise=t_noise,
                              max_coverage=max_coverage, exclude=exclude)
        return PageCases(page, subtree.labels, np.arange(len(page.table)),
                         subtree_labels=subtree)
    return PageCases(page, np.zeros(len(page.table), dtype=np.int8), np.zeros(0, np.int64))


def cases_from_paths(page: PreparedPage, paths: Mapping[str, str]) -> PageCases:
    """The cases a path → label map selects in a prepared page (the last path to select an
    element sets its label)."""
    index = {element: i for i, element in enumerate(page.table.elements)}
    tree = page.body.getroottree()
    labels = np.zeros(len(page.table), dtype=np.int8)
    chosen: set[int] = set()
    unknown: list[str] = []
    for path, label in paths.items():
        check_label(label)
        elements = [index[e] for e in select_elements(tree, path) if e in index]
        if not elements:
            unknown.append(path)
        labels[elements] = LABELS.index(label)
        chosen.update(elements)
    return PageCases(page, labels, np.array(sorted(chosen), dtype=np.int64), unknown)


def site_id(session: Session, host: str, cache: dict[str, int] | None = None) -> int:
    """The id of the site ``host`` in ``session``'s database, created if new (``cache``:
    host → id of the sites already looked up in this transaction)."""
    if cache is not None and host in cache:
        return cache[host]
    found = session.execute(select(Site.id).where(Site.host == host)).scalar()
    if found is None:
        found = session.execute(insert(Site).values(host=host)).inserted_primary_key[0]
    if cache is not None:
        cache[host] = found
    return found


def find_page(session: Session, source: str, digest: str) -> int | None:
    """The id of the page stored for ``source`` with sha256 ``digest``, None when there is none."""
    return session.execute(
        select(Page.id).where(Page.source == source, Page.content_hash == digest)).scalar()
