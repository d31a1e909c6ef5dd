"""The nearest-case index kept up to date by the commands that change the case base.

``casebase explain`` reads one of two indexes (:func:`casebase.neighbours.open_index`): up to
:data:`~casebase.neighbours.EXACT_UP_TO` cases the exact search's embeddings, saved beside a
SQLite case base (``DB.explain-index.npz``), above it the approximate index (``DB.index/``).
Built by the first explanation after a change, it made that one slow (9 s after importing
400 wcxb-dev pages, 310 000 cases, against 1 s for the next). Now every command that adds,
changes or removes cases brings it up to date once its write is committed (:func:`follow`):

* the approximate index: built when there is none (or one of another case base); the cases
  added since are embedded and added to its lists and the cases gone removed from them, its
  centroids kept, until the changes since it was trained pass
  :data:`~casebase.neighbours.REBUILD_SHARE` of it: then it is trained and built anew. Fewer
  than :data:`FOLD_FROM` new cases stay beside it, searched exactly, as before. An index of
  another model (``casebase index --model``) is left as it is: ``casebase index`` replaces it;
* the exact search's file, from :data:`EXACT_SAVED_FROM` cases: saved anew after cases are
  added or removed; after relabels only, its labels are refreshed.

The index is derived data: the caller has committed its write, and a failure here loses none
of it (the next explanation builds the index, or searches exactly: :func:`open_for_explain`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import text

from noisecbr.result import LABELS
from noisecbr.score.model import Model

from . import neighbours
from .errors import CaseBaseError
from .retrieve import CaseIndex, index_fingerprint, model_digest
from .store import CaseBase

__all__ = ["EXACT_SAVED_FROM", "FOLD_FROM", "Followed", "follow", "open_for_explain",
           "update_approximate"]

#: Cases from which a write saves the exact search's embeddings for the next explanation.
#: Below it that explanation embeds them itself in at most ~0.15 s (measured on the 309 872
#: cases of 400 wcxb-dev pages: 6.4–8.5 µs a case, against 0.08 s to read them all back
#: saved), and a small case base (the tests', a user's first pages) gets no extra file.
EXACT_SAVED_FROM = 20_000
#: New (or gone) cases from which a write folds them into the approximate index; fewer stay
#: beside it, embedded by each explanation (measured: 24 ms for 1 000 new cases, 140 ms for
#: 5 000), since folding reads and writes the whole index file (0.04 s at 309 872 cases,
#: 64 bytes a case: 240 MB at 3.7 million).
FOLD_FROM = 1_000

Say = Callable[[str], None]


@dataclass(frozen=True)
class Followed:
    """What :func:`follow` did: ``kind`` of index (``approximate``, ``exact``, or ``""`` for
    none: a small case base), ``action`` (``built``, ``updated``, ``relabelled``, ``current``,
    ``kept`` for an index of another model, ``none``), its cases, the seconds it took and
    where it is kept."""

    kind: str
    action: str
    cases: int = 0
    seconds: float = 0.0
    where: Path | None = None

    def describe(self) -> str:
        """One line for the command's output."""
        if self.action == "kept":
            return (f"nearest-case index in {self.where} is of another model: left as it is "
                    "(`casebase index` rebuilds it for the default model)")
        name = "approximate index" if self.kind == "approximate" else "exact-search index"
        return (f"nearest-case {name} {self.action}: {self.cases:,} cases in "
                f"{self.seconds:.1f} s ({self.where})")


def follow(casebase: CaseBase, model: Model | None = None, *, progress: bool = False,
           say: Say | None = None) -> Followed:
    """Bring the index ``casebase explain`` reads for ``model`` (the default model) up to date
    with the case base, after a committed write. ``say`` is told before a long step."""
    if model is None:
        from noisecbr.cleaner import default_model

        model = default_model()
    with casebase.engine.connect() as connection:
        count = connection.execute(text("SELECT COUNT(*) FROM cases")).scalar_one()
    if count > neighbours.EXACT_UP_TO:
        return update_approximate(casebase, model, neighbours.index_directory(casebase),
                                  replace=False, progress=progress, say=say)
    database = casebase.sqlite_path
    if database is None or count < EXACT_SAVED_FROM:
        return Followed("", "none", count)
    return _follow_exact(casebase, model, database.with_name(database.name
                                                             + ".explain-index.npz"), say)


def _follow_exact(casebase: CaseBase, model: Model, path: Path, say: Say | None) -> Followed:
    """The exact search's file at ``path`` made current: left, its labels refreshed (when
    only labels changed since it was saved), or built anew."""
    started = time.perf_counter()
    fingerprint = index_fingerprint(casebase, model)
    try:
        with np.load(path, allow_pickle=False) as saved:
            before = str(saved["fingerprint"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        before = ""
    if before == fingerprint:
        return Followed("exact", "current", 0, 0.0, path)
    # The fingerprint ends with the newest label change: the rest equal, the same cases.
    index = (CaseIndex.load(path, model, before)
             if before.rpartition(":")[0] == fingerprint.rpartition(":")[0] else None)
    if index is not None:
        with casebase.engine.connect() as connection:
            labels = dict(connection.execute(text("SELECT id, label FROM cases")).all())
        now = [labels.get(i) for i in index.case_ids.tolist()]
        if None not in now:  # else a case was deleted meanwhile: built anew below
            index.labels = np.array([LABELS.index(label) for label in now], dtype=np.int8)
            index.save(path, fingerprint)
            return Followed("exact", "relabelled", len(index), time.perf_counter() - started,
                            path)
    if say is not None:
        say("embedding the cases for `casebase explain` …")
    index = CaseIndex.build(casebase, model, cache=path)
    return Followed("exact", "built", len(index), time.perf_counter() - started, path)


def update_approximate(casebase: CaseBase, model: Model, directory: str | Path, *,
                       rebuild: bool = False, replace: bool = True, fold_from: int = 0,
                       progress: bool = False, say: Say | None = None) -> Followed:
    """The approximate index in ``directory`` brought up to date: built when missing, of
    another case base or (with ``replace``) of another model, or with ``rebuild``; else the
    cases added and gone since (from ``fold_from`` of them, default :data:`FOLD_FROM`)
    folded into it, or rebuilt past its share of changes. One process at a time (the
    builders' lock)."""
    fold_from = fold_from or FOLD_FROM
    directory = Path(directory)
    started = time.perf_counter()
    digest = model_digest(model)
    with neighbours._building(directory):
        meta = _meta(directory)
        if meta is not None and meta["identity"] != neighbours._identity(casebase):
            meta = None  # of another case base once at this path
        if not rebuild and not replace and meta is not None and meta["digest"] != digest:
            return Followed("approximate", "kept", int(meta["cases"]), 0.0, directory)
        if not rebuild and meta is not None and meta["digest"] == digest:
            state = neighbours._state(casebase)
            gone, added = neighbours._changes(casebase, directory, int(meta["base_cases"]),
                                              int(meta["largest_id"]),
                                              int(meta.get("stale_pages", 0)))
            added = added[added <= state["largest_id"]]
            if len(gone) + len(added) < fold_from:
                return Followed("approximate", "current", int(meta["cases"]),
                                time.perf_counter() - started, directory)
            changed = int(meta.get("changed", 0)) + len(gone) + len(added)
            trained = int(meta.get("trained", meta["cases"]))
            if changed <= neighbours.REBUILD_SHARE * max(trained, 1):
                if say is not None:
                    say(f"updating the nearest-case index: {len(added):,} new cases, "
                        f"{len(gone):,} gone …")
                cases = _fold(casebase, model, directory, meta, state, gone, added, changed)
                if cases is not None:
                    return Followed("approximate", "updated", cases,
                                    time.perf_counter() - started, directory)
        if say is not None:
            say("building the nearest-case index for `casebase explain` …")
        cases = neighbours.ApproximateIndex.build(casebase, model, directory, progress=progress)
    return Followed("approximate", "built", cases, time.perf_counter() - started, directory)


def _meta(directory: Path) -> dict | None:
    try:
        meta = json.loads((directory / neighbours._META).read_text())
    except (OSError, ValueError):
        return None
    needed = ("digest", "cases", "base_cases", "largest_id", "identity")
    return meta if isinstance(meta, dict) and all(k in meta for k in needed) else None


def _fold(casebase: CaseBase, model: Model, directory: Path, meta: dict, state: dict,
          gone: np.ndarray, added: np.ndarray, changed: int) -> int | None:
    """Remove the cases ``gone`` from the index in ``directory`` and add the embeddings of
    the cases ``added`` (its centroids kept), written beside it and then moved in place, with
    the case base's ``state`` now. Returns the cases it holds; None, writing nothing, when
    the index does not hold the cases it lists (to be built anew)."""
    import faiss

    index = faiss.read_index(str(directory / neighbours._INDEX))  # in memory: rewritten
    if len(gone):
        index.remove_ids(faiss.IDSelectorBatch(gone))
    delta = neighbours._exact(casebase, model, added)
    if len(delta):
        index.add_with_ids(delta.embeddings, delta.case_ids)
    ids = np.load(directory / neighbours._IDS)
    ids = np.union1d(np.setdiff1d(ids, gone, assume_unique=True), delta.case_ids)
    if index.ntotal != len(ids):
        return None
    partial = directory.with_name(f"{directory.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        faiss.write_index(index, str(partial / neighbours._INDEX))
        np.save(partial / neighbours._IDS, ids)
        trained = int(meta.get("trained", meta["cases"]))
        (partial / neighbours._META).write_text(json.dumps({
            **meta, **state, "cases": int(index.ntotal), "trained": trained,
            "changed": changed}))
        shutil.rmtree(directory, ignore_errors=True)
        os.replace(partial, directory)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return int(index.ntotal)


def open_for_explain(casebase: CaseBase, model: Model, *, mode: str = "auto",
                     cache: bool = True, progress: bool = False, say: Say | None = None):
    """:func:`~casebase.neighbours.open_index` for ``casebase explain``: in ``auto`` mode an
    approximate index that cannot be built or read (a full disk, a damaged file) is reported
    to ``say`` and the cases are searched exactly instead."""
    try:
        return neighbours.open_index(casebase, model, mode=mode, cache=cache,
                                     progress=progress)
    except (OSError, RuntimeError, MemoryError, CaseBaseError) as error:
        if mode != "auto" or not _approximate(casebase):
            raise
        if say is not None:
            say(f"the nearest-case index cannot be used ({error}): searching exactly")
    return neighbours.open_index(casebase, model, mode="exact", cache=cache)


def _approximate(casebase: CaseBase) -> bool:
    """Whether ``auto`` picks the approximate index for this case base."""
    with casebase.engine.connect() as connection:
        count = connection.execute(text("SELECT COUNT(*) FROM cases")).scalar_one()
    return count > neighbours.EXACT_UP_TO
