"""Training arrays: every case of one vector schema as numpy arrays, read page by page.

    X, y, sites, page_ids, case_ids = cb.load_arrays()
    weights = cb.load_counts(case_ids)         # how many cases dedupe merged into each
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from sqlalchemy import text

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import LABELS

from .connection import ConnectionMixin
from .derived import decode_vectors_once

__all__ = ["ArraysMixin", "CaseArrays", "PageCases"]

_LABEL_INDEX = {name: i for i, name in enumerate(LABELS)}
#: Cases per batch of :meth:`ArraysMixin.iter_arrays`: 65 536 × 221 float32 is 58 MB.
BATCH_CASES = 65_536
#: Ids written into one ``IN (…)`` list (integers only, never user text).
_IDS_PER_QUERY = 10_000
#: Ids of left-out cases a warning lists.
_SHOW_IDS = 10

log = logging.getLogger("casebase")


class CaseArrays(NamedTuple):
    """Training arrays in case-id order; unpacks as ``X, y, sites, page_ids, case_ids``."""

    X: np.ndarray  # float32 [n × d]
    y: np.ndarray  # int8 [n], indices into noisecbr.result.LABELS
    sites: np.ndarray  # str [n], the host of each case's page
    page_ids: np.ndarray  # int64 [n]
    case_ids: np.ndarray  # int64 [n]


class ArraysMixin(ConnectionMixin):
    """The training-array methods of :class:`~casebase.store.CaseBase`."""

    def load_arrays(self, schema_version: int = VECTOR_SCHEMA) -> CaseArrays:
        """All cases of pages whose vectors are of ``schema_version``, as training arrays, in
        case-id order.

        One read transaction: the cases' (id, page, position, label) in one scan, then each
        page's vectors (:mod:`casebase.derived`), decoded one page at a time into a
        preallocated float32 matrix, so memory peaks at the result plus one page.

        A case whose page's vectors cannot be read (damaged), whose position is beyond them,
        or whose vector is not finite (an extra row of an older schema,
        :func:`casebase.derived.with_extras`) is left out with a warning naming it: one bad
        case must not stop training or ``explain`` for the whole case base.
        """
        with self.engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT c.id, c.page_id, c.position, c.label FROM cases c "
                "JOIN pages p ON p.id = c.page_id WHERE p.vector_schema = :v ORDER BY c.id"),
                {"v": schema_version}).all()
            page_site = dict(connection.execute(text("SELECT id, site_id FROM pages")).all())
            hosts = dict(connection.execute(text("SELECT id, host FROM sites")).all())
            case_ids, page_ids, positions, y = _columns(rows)
            del rows
            X, usable = _fill(connection, schema_version, page_ids, positions)
        skipped = case_ids[~usable].tolist()
        if skipped:
            _warn_skipped(skipped, schema_version)
            X, y = np.ascontiguousarray(X[usable]), y[usable]
            page_ids, case_ids = page_ids[usable], case_ids[usable]
        # page id → site id → host, vectorised.
        page_keys = np.array(sorted(page_site), dtype=np.int64)
        site_of_page = np.array([page_site[k] for k in page_keys.tolist()], dtype=np.int64)
        site_keys = np.array(sorted(hosts), dtype=np.int64)
        names = np.array([hosts[k] for k in site_keys.tolist()], dtype=str)
        if len(y):
            site_ids = site_of_page[np.searchsorted(page_keys, page_ids)]
            sites = names[np.searchsorted(site_keys, site_ids)]
        else:
            sites = np.array([], dtype=str)
        return CaseArrays(X, y, sites, page_ids, case_ids)

    def iter_arrays(self, schema_version: int = VECTOR_SCHEMA, *, batch: int = BATCH_CASES,
                    only: np.ndarray | None = None) -> Iterator[CaseArrays]:
        """The cases of pages of ``schema_version`` as training arrays, a batch of whole pages
        at a time (about ``batch`` cases, never fewer than a page's), in page order: what
        streams a case base larger than memory (building the nearest-case index, dedupe).
        ``only``: just these case ids. One read transaction, so the batches are one state of
        the case base. A case without a finite vector is left out, as :meth:`load_arrays`
        leaves it out (with a warning at the end)."""
        for group in self._iter_groups(schema_version, batch, only, pages=False):
            if len(group.arrays.y):
                yield group.arrays

    def iter_pages(self, schema_version: int = VECTOR_SCHEMA, *,
                   batch: int = BATCH_CASES) -> Iterator[PageCases]:
        """Every page of ``schema_version`` that has cases, one at a time in page order, with
        its stored HTML and outline and its cases' arrays, positions and counts: what
        streams training data that needs more of a page than its vectors (its paths for the
        walk frontier, its words for the lexical fields). Read as :meth:`iter_arrays` reads,
        ``batch`` cases' pages per query, in one read transaction; a page whose cases all
        lack a finite vector is still given (with no cases)."""
        for group in self._iter_groups(schema_version, batch, None, pages=True):
            yield from _split_pages(group)

    def _iter_groups(self, schema_version: int, batch: int, only: np.ndarray | None,
                     pages: bool) -> Iterator[_Group]:
        """The groups of whole pages :meth:`iter_arrays` and :meth:`iter_pages` read, each
        with its cases (and, with ``pages``, its pages' stored HTML and outline)."""
        wanted = None if only is None else np.unique(np.asarray(only, dtype=np.int64))
        skipped: list[int] = []
        with self.engine.connect() as connection:
            keep = None if wanted is None else set(wanted.tolist())
            if wanted is None:
                per_page = connection.execute(text(
                    "SELECT c.page_id, COUNT(*) FROM cases c JOIN pages p ON p.id = c.page_id "
                    "WHERE p.vector_schema = :v GROUP BY c.page_id ORDER BY c.page_id"),
                    {"v": schema_version}).all()
            else:  # only the pages of the cases wanted: a few, read by the primary key
                counts: dict[int, int] = {}
                for start in range(0, len(wanted), _IDS_PER_QUERY):
                    chunk = ",".join(map(str, wanted[start:start + _IDS_PER_QUERY].tolist()))
                    for page_id, count in connection.execute(text(
                            f"SELECT page_id, COUNT(*) FROM cases WHERE id IN ({chunk}) "
                            "GROUP BY page_id")):
                        counts[page_id] = counts.get(page_id, 0) + count
                per_page = sorted(counts.items())
            among = ("" if wanted is None else " AND p.id IN ({})".format(
                ",".join(str(page_id) for page_id, _ in per_page) or "NULL"))
            hosts = dict(connection.execute(text(
                "SELECT p.id, s.host FROM pages p JOIN sites s ON s.id = p.site_id "
                f"WHERE p.vector_schema = :v{among}"), {"v": schema_version}).all())
            per_page = [row for row in per_page if row[0] in hosts]
            for group in _page_groups(per_page, batch):
                read = _read_group(connection, group, schema_version, hosts, keep, pages)
                skipped += read.skipped
                yield read
        if skipped:
            _warn_skipped(skipped, schema_version)

    def load_counts(self, case_ids: np.ndarray) -> np.ndarray:
        """``count`` of each case in ``case_ids`` (for weighting deduplicated cases)."""
        wanted = np.asarray(case_ids, dtype=np.int64)
        with self.engine.connect() as connection:
            found = dict(connection.execute(text("SELECT id, count FROM cases")).all())
        return np.fromiter((found.get(int(i), 0) for i in wanted), dtype=np.int64,
                           count=len(wanted))


def _columns(rows: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Case ids, page ids, positions and label indices of rows (id, page, position, label)."""
    n = len(rows)
    return (np.fromiter((r[0] for r in rows), dtype=np.int64, count=n),
            np.fromiter((r[1] for r in rows), dtype=np.int64, count=n),
            np.fromiter((r[2] for r in rows), dtype=np.int64, count=n),
            np.fromiter((_LABEL_INDEX[r[3]] for r in rows), dtype=np.int8, count=n))


def _page_groups(per_page: list, batch: int) -> Iterator[list[int]]:
    """Page ids in runs of about ``batch`` cases (a page is never split)."""
    group: list[int] = []
    size = 0
    for page_id, count in per_page:
        group.append(page_id)
        size += count
        if size >= batch:
            yield group
            group, size = [], 0
    if group:
        yield group


class _Group(NamedTuple):
    """The cases of a group of whole pages, as read for :meth:`ArraysMixin._iter_groups`."""

    pages: list[int]
    arrays: CaseArrays  # the cases with a finite vector, in page then id order
    positions: np.ndarray  # int64, of the cases in ``arrays``
    counts: np.ndarray  # int64, of the cases in ``arrays``
    skipped: list[int]  # ids of the cases left out for want of a finite vector
    blobs: dict[int, tuple[bytes | None, bytes | None]]  # page → (html, outline), if read
    hosts: dict[int, str]


class PageCases(NamedTuple):
    """One page's cases as :meth:`ArraysMixin.iter_pages` gives them."""

    page_id: int
    host: str
    html: bytes | None  # as stored (compressed): :func:`casebase.pages.stored_table` reads it
    outline: bytes | None  # as stored: :func:`casebase.derived.stored_paths` reads it
    arrays: CaseArrays  # the page's cases with a finite vector, in id order
    positions: np.ndarray  # int64: the element of the page each of them is
    counts: np.ndarray  # int64: how many identical cases each stands for (``casebase dedupe``)


def _read_group(connection, pages: list[int], schema_version: int, hosts: dict[int, str],
                wanted: set[int] | None, blobs: bool) -> _Group:
    """The cases of ``pages`` (those in ``wanted`` if given), in page then id order, and with
    ``blobs`` the pages' stored HTML and outline."""
    listed = ",".join(map(str, pages))
    rows = connection.execute(text(
        f"SELECT id, page_id, position, label, count FROM cases WHERE page_id IN ({listed}) "
        "ORDER BY page_id, id")).all()
    if wanted is not None:
        rows = [row for row in rows if row[0] in wanted]
    case_ids, page_ids, positions, y = _columns(rows)
    counts = np.fromiter((r[4] for r in rows), dtype=np.int64, count=len(rows))
    X, usable = _fill(connection, schema_version, page_ids, positions, pages)
    sites = np.array([hosts[p] for p in page_ids.tolist()], dtype=str)
    arrays = CaseArrays(np.ascontiguousarray(X[usable]), y[usable], sites[usable],
                        page_ids[usable], case_ids[usable])
    stored = {}
    if blobs:
        stored = {page_id: (html, outline) for page_id, html, outline in connection.execute(
            text(f"SELECT id, html, outline FROM pages WHERE id IN ({listed})"))}
    return _Group(pages, arrays, positions[usable], counts[usable],
                  case_ids[~usable].tolist(), stored, hosts)


def _split_pages(group: _Group) -> Iterator[PageCases]:
    """The pages of a group one at a time, in page order."""
    page_ids = group.arrays.page_ids
    bounds = np.searchsorted(page_ids, group.pages, side="left").tolist() + [len(page_ids)]
    for k, page_id in enumerate(group.pages):
        part = slice(bounds[k], bounds[k + 1])
        html, outline = group.blobs.get(page_id, (None, None))
        yield PageCases(page_id, group.hosts[page_id], html, outline,
                        CaseArrays(*(column[part] for column in group.arrays)),
                        group.positions[part], group.counts[part])


def _fill(connection, schema_version: int, page_ids: np.ndarray, positions: np.ndarray,
          pages: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The vector of each case (a row per case, in the order of ``page_ids``) from its page's
    stored vectors, read a page at a time (of ``pages`` only, if given), and whether it was
    found."""
    width = len(FEATURE_NAMES) if schema_version == VECTOR_SCHEMA else None
    X: np.ndarray | None = None if width is None else np.zeros((len(page_ids), width),
                                                              dtype=np.float32)
    usable = np.zeros(len(page_ids), dtype=bool)
    order = np.argsort(page_ids, kind="stable")
    wanted = np.unique(page_ids)
    bounds = np.searchsorted(page_ids[order], wanted, side="left").tolist() + [len(order)]
    at = {int(page): k for k, page in enumerate(wanted.tolist())}
    among = f" AND id IN ({','.join(map(str, pages))})" if pages is not None else ""
    result = connection.execute(text(
        f"SELECT id, vectors FROM pages WHERE vector_schema = :v{among} ORDER BY id")
        .execution_options(stream_results=True), {"v": schema_version})
    for page_id, blob in result:
        k = at.get(int(page_id))
        if k is None or blob is None:
            continue
        try:
            matrix = decode_vectors_once(blob)
        except ValueError:
            continue
        if X is None:  # an older schema: its width is what its first page's vectors have
            width = matrix.shape[1]
            X = np.zeros((len(page_ids), width), dtype=np.float32)
        if matrix.shape[1] != width:
            continue
        rows = order[bounds[k]:bounds[k + 1]]
        rows = rows[positions[rows] < len(matrix)]
        block = matrix[positions[rows]]
        finite = np.isfinite(block).all(axis=1)
        X[rows[finite]] = block[finite]
        usable[rows[finite]] = True
    if X is None:
        X = np.zeros((len(page_ids), width or 0), dtype=np.float32)
    return X, usable


def _warn_skipped(case_ids: list[int], schema_version: int) -> None:
    """Say which cases :meth:`ArraysMixin.load_arrays` left out, and what to do about them."""
    shown = ", ".join(map(str, case_ids[:_SHOW_IDS]))
    more = f" and {len(case_ids) - _SHOW_IDS} more" if len(case_ids) > _SHOW_IDS else ""
    log.warning("casebase: %d case(s) of vector schema %d left out, their page holds no "
                "finite vector for them (a damaged page, a position beyond it): %s%s "
                "(`casebase revectorize` recomputes pages, `casebase delete` deletes cases)",
                len(case_ids), schema_version, shown, more)
