"""Nearest stored cases from an approximate index on disk, for case bases of millions of cases.

The exact search (:class:`casebase.retrieve.CaseIndex`) holds every case's embedding in memory
(32 float32 values in the default model's first hidden layer: 480 MB at the 3.7 million cases
of the development pages) and multiplies each query by all of them. :class:`ApproximateIndex`
keeps them in a `faiss <https://github.com/facebookresearch/faiss>`_ inverted-file index: the
embeddings, as 16-bit floats, in lists by their nearest of a few thousand centroids, in one
file read memory-mapped. A query scores the cases of the :data:`NPROBE` lists nearest it: the
process maps only the lists it reads and holds nothing per case.

The index follows the case base without being rebuilt for every change:

* built once for a model and a vector schema, streaming the cases page by page
  (:meth:`~casebase.arrays.ArraysMixin.iter_arrays`, the embeddings spooled to disk: memory
  bounded by a batch of pages and the index's codes);
* opened, it compares itself with the case base: cases added since (an import, a correction)
  are embedded and searched exactly beside it (the *delta*), cases gone (deleted, merged by
  dedupe) are masked; past :data:`REBUILD_SHARE` of it, it is rebuilt;
* labels are never in it: a neighbour's label is read from the case base when it is shown, so
  a relabel reaches the next explanation at once.

    index = ApproximateIndex.open(casebase, model, "casebase.sqlite.index")
    case_ids, similarity = index.nearest_cases(vectors, k=3)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sqlalchemy import text

from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA
from noisecbr.score.model import Model

from .errors import CaseBaseError
from .retrieve import STALE_PAGES, CaseIndex, _unit, model_digest
from .store import CaseBase

__all__ = ["EXACT_UP_TO", "NPROBE", "REBUILD_SHARE", "ApproximateIndex", "index_directory",
           "model_digest", "open_index"]

#: Inverted lists scored per query. Measured on the 3.7 million cases of the development pages
#: (3 858 lists, 1 000 queries near stored cases): a neighbour found is as near as the exact
#: third for 97.8 % of them at 16 lists (99.6 % within 0.001 of it), 98.2 % at 32; 160 queries
#: (one page) took 11 ms at 16, 18 ms at 32. Codes of 8 bits instead of 16 halve the file but
#: reorder near ties: 65 % (94 % within 0.001).
NPROBE = 16
#: FAISS threads for a search. A page's ~160 queries searched on one thread took less time
#: than on two (the machine's two cores; in process, 40 wcxb-dev pages against all development
#: pages, three alternating runs: 70–86 ms a page against 82–103 ms): the threads' start and
#: wait cost more than half a search saves. Building the index keeps every core.
SEARCH_THREADS = 1
#: Lists: twice the square root of the cases (faiss's rule of thumb is 4–16×; fewer, larger
#: lists keep the recall at a small NPROBE), at least 16, at most 16 384.
LISTS_PER_SQRT = 2
#: Embeddings the centroids are trained on: 64 per list (faiss warns below 39).
TRAIN_PER_LIST = 64
#: The delta (cases added or changed since the index was built) and the masked cases, as a
#: share of the index, past which opening rebuilds it: the delta is searched exactly.
REBUILD_SHARE = 0.10
#: Up to this many cases ``open_index`` searches exactly (:class:`~casebase.retrieve.CaseIndex`):
#: every embedding in memory (13 MB here) and no file to keep; the exact search of one page's
#: ~150 subtrees then takes a few milliseconds. Above it, the approximate index.
EXACT_UP_TO = 100_000
#: Embeddings added to the index at a time while it is built.
_ADD_CHUNK = 262_144
_INDEX = "cases.faiss"
_META = "meta.json"
_IDS = "ids.npy"


def _width(model: Model) -> int:
    return model.hidden(np.zeros((1, len(FEATURE_NAMES)), np.float32)).shape[1]


class ApproximateIndex:
    """Stored cases' embeddings in a memory-mapped inverted-file index, plus the delta of cases
    added since it was built (an exact :class:`~casebase.retrieve.CaseIndex`) and the mask of
    cases gone."""

    def __init__(self, model: Model, casebase: CaseBase, index, masked: np.ndarray,
                 delta: CaseIndex) -> None:
        self.model, self.casebase = model, casebase
        self.index = index  # the faiss index (read memory-mapped), ids = case ids
        self.masked = masked  # sorted ids of the index's cases that are gone
        self.delta = delta  # the cases it does not hold, searched exactly

    def __len__(self) -> int:
        return int(self.index.ntotal - len(self.masked) + len(self.delta))

    # -- opening and building ------------------------------------------------------------------
    @classmethod
    def open(cls, casebase: CaseBase, model: Model, directory: str | Path, *,
             rebuild: bool = False, build: bool = True, progress: bool = False
             ) -> ApproximateIndex:
        """The index kept in ``directory`` for ``model``, brought up to date with the case
        base; built (or rebuilt) there when it is missing, of another model, schema or case
        base, or when its delta has grown past :data:`REBUILD_SHARE`. With ``build`` false
        (the service: a request must not spend a minute building) a missing index raises
        :class:`CaseBaseError` and a grown delta is searched as it is. One process builds at
        a time (a lock file beside the directory); the others wait, then read its index."""
        directory = Path(directory)
        index = None if rebuild else cls._load(casebase, model, directory, grown=not build)
        if index is not None:
            return index
        if not build:
            raise CaseBaseError(f"no nearest-case index of this model in {directory}: build "
                                "it with `casebase index` (a minute a few million cases)")
        with _building(directory):
            index = None if rebuild else cls._load(casebase, model, directory, grown=False)
            if index is None:  # nobody built it while this one waited
                cls.build(casebase, model, directory, progress=progress)
                index = cls._load(casebase, model, directory, grown=True)
        if index is None:
            raise CaseBaseError(f"the index built in {directory} cannot be read back")
        return index

    @classmethod
    def build(cls, casebase: CaseBase, model: Model, directory: str | Path, *,
              progress: bool = False) -> int:
        """Embed every case of the current schema into a new index in ``directory`` (written
        beside, then moved in place: a reader never sees half). Returns the number of cases.

        The embeddings are spooled to a file first (the centroids are trained on a sample of
        all of them, then every one is added), so memory holds one batch of pages, the sample
        and the index's 16-bit codes (64 bytes a case), never the float32 embeddings."""
        import faiss
        from tqdm import tqdm

        directory = Path(directory)
        _remove_abandoned(directory)
        partial = directory.with_name(f"{directory.name}.{os.getpid()}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            state = _state(casebase)  # what the cases were when the index was read from them
            bar = tqdm(unit="case", disable=not progress, desc="embed", dynamic_ncols=True)
            spool, ids = _spool(casebase, model, partial / "embeddings.f32", bar,
                                state["largest_id"])
            bar.close()
            n, width = len(ids), _width(model)
            lists = int(min(16_384, max(16, LISTS_PER_SQRT * np.sqrt(max(n, 1)))))
            lists = max(1, min(lists, n))
            index = faiss.IndexIVFScalarQuantizer(
                faiss.IndexFlatIP(width), width, lists, faiss.ScalarQuantizer.QT_fp16,
                faiss.METRIC_INNER_PRODUCT)
            if n:
                rng = np.random.default_rng(0)
                sample = np.sort(rng.choice(n, min(n, TRAIN_PER_LIST * lists), replace=False))
                index.train(np.ascontiguousarray(spool[sample]))
                for start in range(0, n, _ADD_CHUNK):
                    index.add_with_ids(np.ascontiguousarray(spool[start:start + _ADD_CHUNK]),
                                       ids[start:start + _ADD_CHUNK])
            del spool
            (partial / "embeddings.f32").unlink()
            faiss.write_index(index, str(partial / _INDEX))
            np.save(partial / _IDS, np.sort(ids))
            (partial / _META).write_text(json.dumps({
                "digest": model_digest(model), "cases": n, "lists": lists, **state}))
            shutil.rmtree(directory, ignore_errors=True)
            os.replace(partial, directory)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        return n

    @classmethod
    def _load(cls, casebase: CaseBase, model: Model, directory: Path, *, grown: bool
              ) -> ApproximateIndex | None:
        """The index in ``directory`` with its delta and mask against the case base now; None
        when there is none for this model, schema and case base (nothing is unpickled), or,
        unless ``grown``, when its changes have passed :data:`REBUILD_SHARE` (it is to be
        rebuilt: its delta is not embedded for nothing)."""
        import faiss

        try:
            meta = json.loads((directory / _META).read_text())
            if (meta.get("digest") != model_digest(model)
                    or meta.get("identity") != _identity(casebase)):
                return None
            index = faiss.read_index(str(directory / _INDEX),
                                     faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        except (OSError, ValueError, RuntimeError):
            return None
        if index.ntotal != meta.get("cases"):
            return None
        masked, added = _changes(casebase, directory, int(meta["base_cases"]),
                                 int(meta["largest_id"]), int(meta.get("stale_pages", 0)))
        if not grown and len(masked) + len(added) > REBUILD_SHARE * max(index.ntotal, 1):
            return None
        return cls(model, casebase, index, masked, _exact(casebase, model, added))

    # -- searching -----------------------------------------------------------------------------
    def nearest_cases(self, vectors: np.ndarray, k: int = 3, *,
                      exclude_site: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the ``k`` stored cases most similar to each vector (rows: queries, best
        first; -1 where there are fewer), and their cosine similarities in the hidden layer
        (from 16-bit codes: within about 0.001 of the exact ones). ``exclude_site`` leaves out
        the cases of one site."""
        import faiss

        if k < 1:
            raise ValueError("k must be at least 1")
        queries = _unit(self.model.hidden(vectors))
        out_ids = np.full((len(queries), k), -1, dtype=np.int64)
        out_sim = np.full((len(queries), k), -np.inf, dtype=np.float32)
        if not len(queries):
            return out_ids, out_sim
        left_out = self.masked
        if exclude_site is not None:
            left_out = np.union1d(left_out, self._site_cases(exclude_site))
        # Kept referenced until the search is done: faiss's selectors do not own each other.
        batch = faiss.IDSelectorBatch(left_out) if len(left_out) else None
        selector = faiss.IDSelectorNot(batch) if batch is not None else None
        params = faiss.SearchParametersIVF(sel=selector, nprobe=NPROBE)
        if self.index.ntotal:
            with _faiss_threads(SEARCH_THREADS):
                similarity, ids = self.index.search(queries, k, params=params)
            found = ids >= 0
            out_ids[found], out_sim[found] = ids[found], similarity[found]
        if len(self.delta):
            ids, scores = self.delta.nearest_cases(vectors, k, exclude_site=exclude_site)
            both_ids = np.concatenate([out_ids, ids], axis=1)
            both_sim = np.concatenate([out_sim, scores], axis=1)
            order = np.argsort(-both_sim, axis=1, kind="stable")[:, :k]
            out_ids = np.take_along_axis(both_ids, order, 1)
            out_sim = np.take_along_axis(both_sim, order, 1)
        out_ids[~np.isfinite(out_sim)] = -1
        return out_ids, out_sim

    def _site_cases(self, site: str) -> np.ndarray:
        """The ids of the stored cases of ``site`` (sorted)."""
        with self.casebase.engine.connect() as connection:
            found = connection.execute(text(
                "SELECT c.id FROM cases c JOIN pages p ON p.id = c.page_id "
                "JOIN sites s ON s.id = p.site_id WHERE s.host = :h ORDER BY c.id"),
                {"h": site}).scalars().all()
        return np.array(found, dtype=np.int64)

    def similarity_to(self, vectors: np.ndarray, case_ids: Sequence[Sequence[int]]
                      ) -> list[list[float]]:
        """Cosine in the hidden layer between each vector and the stored cases
        ``case_ids[row]`` (NaN for a case the case base does not hold), exact: their vectors
        are read from their pages, and compared as the exact search compares them."""
        wanted = np.unique(np.array([i for ids in case_ids for i in ids], dtype=np.int64))
        if not len(wanted):
            return [[] for _ in case_ids]
        return _exact(self.casebase, self.model, wanted).similarity_to(vectors, case_ids)


def _spool(casebase: CaseBase, model: Model, path: Path, bar, largest: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The unit embedding of every case up to id ``largest`` (a case added while the index is
    built is the delta's), written to ``path`` a batch of pages at a time and read back
    memory-mapped, and the case ids in the same order."""
    ids = []
    with path.open("wb") as handle:
        for batch in casebase.iter_arrays(VECTOR_SCHEMA):
            keep = batch.case_ids <= largest
            handle.write(_unit(model.hidden(batch.X[keep])).tobytes())
            ids.append(batch.case_ids[keep])
            bar.update(int(keep.sum()))
    case_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    width = _width(model)
    if not len(case_ids):
        return np.zeros((0, width), np.float32), case_ids
    return np.memmap(path, dtype=np.float32, mode="r", shape=(len(case_ids), width)), case_ids


def _identity(casebase: CaseBase) -> str:
    """Which case base this is: its first page's id, hash and time (a file replaced by another
    case base at the same path is another)."""
    with casebase.engine.connect() as connection:
        first = connection.execute(text(
            "SELECT id, content_hash, created_at FROM pages ORDER BY id LIMIT 1")).first()
    return "" if first is None else ":".join(map(str, first))


def _state(casebase: CaseBase) -> dict:
    """The largest case id and how many cases there are up to it, read in one snapshot, the
    pages of another schema (their cases are not indexed) and the case base's identity: what
    :func:`_changes` compares with later."""
    with casebase.engine.connect() as connection:
        largest = connection.execute(text("SELECT MAX(id) FROM cases")).scalar() or 0
        base = connection.execute(text("SELECT COUNT(*) FROM cases WHERE id <= :m"),
                                  {"m": largest}).scalar_one()
        stale = connection.execute(text(STALE_PAGES), {"v": VECTOR_SCHEMA}).scalar_one()
    return {"largest_id": int(largest), "base_cases": int(base), "stale_pages": int(stale),
            "identity": _identity(casebase)}


def _changes(casebase: CaseBase, directory: Path, base_cases: int, largest: int,
             stale_then: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the index's cases gone from the case base, and of the cases of the current
    schema it does not hold. Ids only grow (never reused: AUTOINCREMENT on SQLite, a sequence
    elsewhere), so when every page was and is of the current schema and the cases up to the
    largest id indexed are as many as then, nothing was deleted and the new cases are those
    above it: counts read from indexes. Otherwise (pages of another schema then or now:
    revectorize keeps their case ids) every id is read, and the index's own (kept beside it,
    memory-mapped)."""
    current = "FROM cases c JOIN pages p ON p.id = c.page_id WHERE p.vector_schema = :v"
    with casebase.engine.connect() as connection:
        stale = connection.execute(text(STALE_PAGES), {"v": VECTOR_SCHEMA}).scalar_one()
        added = np.array(connection.execute(text(
            "SELECT id FROM cases WHERE id > :m ORDER BY id"), {"m": largest}).scalars().all(),
            dtype=np.int64)
        total = connection.execute(text("SELECT COUNT(*) FROM cases")).scalar_one()
        if not stale and not stale_then and total - len(added) == base_cases:
            return np.zeros(0, np.int64), added
        now = np.array(connection.execute(text(f"SELECT c.id {current} ORDER BY c.id"),
                                          {"v": VECTOR_SCHEMA}).scalars().all(), dtype=np.int64)
    indexed = np.load(directory / _IDS, mmap_mode="r")  # sorted at build
    gone = np.setdiff1d(indexed, now, assume_unique=True)
    return gone, np.setdiff1d(now, indexed, assume_unique=True)


@contextmanager
def _faiss_threads(threads: int):
    """FAISS's OpenMP threads set to ``threads`` for the block, and set back after it (the
    setting is the calling thread's, in the OpenMP that faiss-cpu ships: other threads keep
    theirs)."""
    import faiss

    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


@contextmanager
def _building(directory: Path):
    """Hold the lock of ``directory``'s builders (a file beside it) while in the block."""
    lock = directory.with_name(directory.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: builders are not serialised
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_abandoned(directory: Path) -> None:
    """Remove the partial builds of processes that are gone (killed while building)."""
    for partial in directory.parent.glob(f"{directory.name}.*.partial"):
        pid = partial.name[len(directory.name) + 1:-len(".partial")]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exact(casebase: CaseBase, model: Model, case_ids: np.ndarray) -> CaseIndex:
    """The exact index of the cases ``case_ids`` (those that have a vector), their vectors
    read from their pages."""
    parts = list(casebase.iter_arrays(VECTOR_SCHEMA, only=case_ids)) if len(case_ids) else []
    if not parts:
        return CaseIndex(model, np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, str),
                         np.zeros((0, _width(model)), np.float32))
    return CaseIndex(model, np.concatenate([p.case_ids for p in parts]),
                     np.concatenate([p.y for p in parts]),
                     np.concatenate([p.sites for p in parts]),
                     np.concatenate([_unit(model.hidden(p.X)) for p in parts]))


def index_directory(casebase: CaseBase) -> Path:
    """Where a case base's approximate index is kept: beside a SQLite file (``DB.index``),
    else in the user's cache folder, by a digest of the database URL."""
    database = casebase.sqlite_path
    if database is not None:
        return database.with_name(database.name + ".index")
    from platformdirs import user_cache_dir

    digest = hashlib.sha256(str(casebase.url).encode("utf-8")).hexdigest()[:16]
    return Path(user_cache_dir("noisecbr")) / f"index-{digest}"


def open_index(casebase: CaseBase, model: Model, *, mode: str = "auto", cache: bool = True,
               build: bool = True, progress: bool = False):
    """The nearest-case index explanations read: ``exact`` (every embedding in memory, kept
    beside a SQLite file as ``DB.explain-index.npz`` unless ``cache`` is false),
    ``approximate`` (:class:`ApproximateIndex`, kept in :func:`index_directory`), or ``auto``:
    exact up to :data:`EXACT_UP_TO` cases. ``build`` false: the approximate index must exist
    (:meth:`ApproximateIndex.open`)."""
    if mode not in ("auto", "exact", "approximate"):
        raise ValueError(f"unknown index mode {mode!r}: auto, exact or approximate")
    if mode == "auto":
        with casebase.engine.connect() as connection:
            count = connection.execute(text("SELECT COUNT(*) FROM cases")).scalar_one()
        mode = "exact" if count <= EXACT_UP_TO else "approximate"
    if mode == "approximate":
        return ApproximateIndex.open(casebase, model, index_directory(casebase), build=build,
                                     progress=progress)
    database = casebase.sqlite_path if cache else None
    npz = database.with_name(database.name + ".explain-index.npz") if database else None
    return CaseIndex.build(casebase, model, cache=npz)
