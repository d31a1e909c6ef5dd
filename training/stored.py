"""Training data from a case base, streamed a page at a time.

:func:`from_casebase` reads every page of the current vector schema with its cases
(:meth:`casebase.arrays.ArraysMixin.iter_pages`, one read transaction): the cases' vectors and
labels, their walk-frontier flags from the page's stored paths, and their lexical fields from
the page's stored HTML, parsed once as the import parsed it. Given a ``spool`` directory, it
writes the vectors, the token arrays and the token ranges to files there as it goes
(:mod:`training.spool`), so that neither reading nor training ever holds a case base's vectors
at once; without one, the arrays are kept in memory.

Memory, spooled: the labels, ids, sites, pages and flags of the cases stay in memory (33 bytes
a case: a site's name and a page's key are one string each, shared by its cases); a case's 221
float32 and its token ranges (980 bytes) are on disk.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.result import MIXTURE
from noisecbr.settings import LEXICAL_ANCESTORS as ANCESTORS

from .datasets import Dataset
from .lexicon import LexicalCases, cases_of_page
from .spool import Sink

__all__ = ["from_casebase"]

#: The spooled int64 arrays of the cases' lexical fields: name, shape of a row.
_RANGES = (("text_range", (2,)), ("attr_range", (1 + ANCESTORS, 2)), ("page_range", (2,)))


def from_casebase(casebase, schema_version: int = VECTOR_SCHEMA, *, frontier: bool = True,
                  spool: str | os.PathLike | None = None, progress: bool = False) -> Dataset:
    """All cases of a :class:`casebase.store.CaseBase` (or a database URL) as a Dataset, in
    page then case-id order (the case-id order of a case base imported page by page; cases
    added to a page later come with their page).

    Pages are identified by their case-base id; ``frontier`` also marks the walk frontier
    from the cases' paths. ``spool``: a directory to write the vectors and lexical fields to
    (a case base larger than memory, :mod:`training.spool`); None keeps them in memory.
    ``progress`` shows a bar of pages read on stderr.
    """
    from tqdm import tqdm

    if isinstance(casebase, (str, os.PathLike)):
        from casebase.store import CaseBase

        casebase = CaseBase.open(str(casebase))
    sink = Sink(spool)
    columns: dict[str, list[np.ndarray]] = {name: [] for name in
                                             ("y", "ids", "pages", "sites", "counts", "flags")}
    hosts: dict[str, int] = {}
    at = {"text": 0, "attr": 0}
    bar = tqdm(desc="read cases", unit="page", leave=False, file=sys.stderr,
               disable=not progress or not sys.stderr.isatty())
    try:
        for page in casebase.iter_pages(schema_version):
            bar.update()
            cases = page.arrays
            if not len(cases.y):
                continue
            sink.append("X", cases.X)
            site = hosts.setdefault(page.host, len(hosts))
            for name, values in (("y", cases.y), ("ids", cases.case_ids),
                                 ("pages", cases.page_ids), ("counts", page.counts),
                                 ("sites", np.full(len(cases.y), site, dtype=np.int32))):
                columns[name].append(values)
            if frontier:
                columns["flags"].append(_page_frontier(page))
            _spool_lexical(sink, page, at)
        return _dataset(casebase, sink, columns, hosts, frontier, schema_version)
    finally:
        bar.close()
        sink.close()


def _dataset(casebase, sink: Sink, columns: dict, hosts: dict[str, int], frontier: bool,
             schema_version: int) -> Dataset:
    """The Dataset of what :func:`from_casebase` read."""
    X = sink.finish("X", np.float32, (len(FEATURE_NAMES),))

    def joined(name, dtype):
        return np.concatenate(columns[name]).astype(dtype) if columns[name] else np.zeros(
            0, dtype)

    y, ids, page_ids = joined("y", np.int64), joined("ids", np.int64), joined("pages", np.int64)
    counts = joined("counts", np.int64)
    # A site's name and a page's key are one string each, shared by its cases (an object
    # array): numpy's fixed-width strings would take 4 bytes a character of the longest.
    names = _objects(sorted(hosts, key=hosts.get))
    keys, inverse = np.unique(page_ids, return_inverse=True)
    lexical = None
    if len(y):
        lexical = LexicalCases(sink.finish("text", np.int64), sink.finish("attr", np.int64),
                               *(sink.finish(name, np.int64, shape) for name, shape in _RANGES))
    return Dataset(X=X, y=y, sites=names[joined("sites", np.int64)],
                   pages=_objects(map(str, keys.tolist()))[inverse.reshape(-1)], case_ids=ids,
                   frontier=joined("flags", bool) if frontier and len(y) else None,
                   counts=None if np.all(counts == 1) else counts, lexical=lexical,
                   schema=schema_version,
                   meta={"source": str(getattr(casebase, "url", "") or "casebase")})


def _objects(strings) -> np.ndarray:
    """An object array of the given strings."""
    strings = list(strings)
    out = np.empty(len(strings), dtype=object)
    out[:] = strings
    return out


def _page_frontier(page) -> np.ndarray:
    """Walk-frontier flag of each case of a page from its path (the page's stored outline at
    its position; parent path = path minus a step): every case above it is mixture. Cases
    at one path are taken in id order, the last one deciding for its children."""
    from casebase.derived import stored_paths

    paths = stored_paths(page.outline)
    cases = page.arrays
    flags = np.zeros(len(cases.y), dtype=bool)
    reached: dict[str, bool] = {}
    label_at: dict[str, int] = {}
    for row in np.lexsort((cases.case_ids, page.positions)).tolist():
        position = int(page.positions[row])
        if not 0 <= position < len(paths):
            continue
        path = paths[position]
        parent = path.rsplit("/", 1)[0]
        ok = parent not in label_at or (reached[parent] and label_at[parent] == MIXTURE)
        reached[path], label_at[path], flags[row] = ok, int(cases.y[row]), ok
    return flags


def _spool_lexical(sink: Sink, page, at: dict[str, int]) -> None:
    """The token arrays of a page and the token ranges of its cases, appended to ``sink``; a
    case whose element the page as parsed now does not hold at its position (a page that no
    longer parses, or parses otherwise; an extra row) gets empty ranges, as a wordless
    element has."""
    from casebase.derived import stored_paths
    from casebase.pages import stored_table
    from noisecbr.features.lexical import lexical_inputs

    n = len(page.arrays.y)
    ranges = [np.zeros((n, *shape), np.int64) for _, shape in _RANGES]
    table = stored_table(page.html) if page.html is not None else None
    if table is not None:
        elements = cases_of_page(lexical_inputs(table))
        paths, stored = table.paths(), stored_paths(page.outline)
        limit = min(len(table), len(stored))
        found = np.array([0 <= p < limit and stored[p] == paths[p]
                          for p in page.positions.tolist()], dtype=bool)
        chosen = page.positions[found]
        for k, source in enumerate((elements.text_range, elements.attr_range,
                                    elements.page_range)):
            shift = at["attr"] if k == 1 else at["text"]
            ranges[k][found] = source[chosen] + shift
        sink.append("text", elements.text)
        sink.append("attr", elements.attr)
        at["text"] += len(elements.text)
        at["attr"] += len(elements.attr)
    for (name, _), values in zip(_RANGES, ranges):
        sink.append(name, values)
