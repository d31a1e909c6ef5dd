"""Retrieve: the stored cases most like a page's subtrees.

The first phase of the CBR cycle, and the explanation of a decision. Next to the network's
class probabilities for a subtree, it shows the labelled subtrees of stored pages that look
most like it, with their labels, sites and text: the experience behind the decision. A case
whose label looks wrong can be corrected with ``casebase label``. The next training run then
learns from the correction.

*Looks like* means cosine similarity in the model's first hidden layer
(:meth:`noisecbr.score.model.Model.hidden`), not in the raw vectors. The hidden layer is what the
network computes from a vector before it decides, so it weighs the features as the network
learnt to weigh them. In the raw vectors, the 221 features (mostly 0/1 keyword and tag bits)
would all count the same. :class:`CaseIndex` searches exactly: the stored embeddings times a
block of queries, then the top k of each row. A large case base is searched by the approximate
index of :mod:`casebase.neighbours` (both are a :class:`Neighbourhood`; ``open_index`` picks).

    index = CaseIndex.build(casebase, model)        # reads every case of the current schema
    for item in explain_page(index, casebase, html, url=url, k=3):
        item.path, item.decision, item.neighbours[0].label
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from sqlalchemy import text

from noisecbr.cleaner import Cleaner
from noisecbr.eval.datasets import site_of
from noisecbr.features import FEATURE_NAMES, VECTOR_SCHEMA, vectorize
from noisecbr.pipeline import Decisions, Page
from noisecbr.result import LABELS, named_probabilities
from noisecbr.score.model import Model
from noisecbr.site.memory import SiteMemory

from .store import CaseBase, CaseBaseError

__all__ = ["STALE_PAGES", "CaseIndex", "Explanation", "Neighbour", "Neighbourhood",
           "agreement_summary", "explain_decided", "explain_page", "index_fingerprint",
           "model_digest"]

#: Queries scored against all stored cases at once: a block of 64 against the ~950 000 cases of
#: the modernweb-dev case base is a 240 MB similarity matrix.
QUERY_BLOCK = 64
#: Stored cases read and embedded at a time while the index is built (whole pages at a time,
#: :meth:`~casebase.arrays.ArraysMixin.iter_arrays`): bounds the float32 vectors held at once.
BUILD_CHUNK = 100_000
#: Characters of a neighbour's text that are shown.
TEXT_CHARS = 160


@dataclass(frozen=True)
class Neighbour:
    """A stored case near a subtree."""

    case_id: int
    label: str
    similarity: float
    site: str
    path: str
    text: str

    def to_dict(self) -> dict:
        """The neighbour as plain data (what ``dataclasses.asdict`` gives, without its deep
        copies: an explanation of a page holds hundreds of neighbours)."""
        return {"case_id": self.case_id, "label": self.label, "similarity": self.similarity,
                "site": self.site, "path": self.path, "text": self.text}


@dataclass(frozen=True)
class Explanation:
    """A decided subtree of the page, the cleaner's decision and the nearest stored cases."""

    path: str
    tag: str
    decision: str
    probabilities: tuple[float, ...]
    neighbours: tuple[Neighbour, ...]
    #: "model", or "memory" when the site's stored cases of the same markup decided
    source: str = "model"
    #: with a site memory: stored cases of the site whose subtree has the same signature
    #: (:mod:`noisecbr.site.memory`), with their cosine similarity in the hidden layer
    same_markup: tuple[Neighbour, ...] = ()

    @property
    def agreement(self) -> float:
        """Share of the neighbours whose label is the decision (0 when there are none)."""
        if not self.neighbours:
            return 0.0
        return sum(n.label == self.decision for n in self.neighbours) / len(self.neighbours)

    def to_dict(self) -> dict:
        """The explanation as plain data, probabilities by class name."""
        return {"path": self.path, "tag": self.tag, "decision": self.decision,
                "probabilities": named_probabilities(self.probabilities),
                "neighbours": tuple(n.to_dict() for n in self.neighbours),
                "source": self.source,
                "same_markup": tuple(n.to_dict() for n in self.same_markup),
                "agreement": self.agreement}


def _unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero: it is similar to nothing)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


class CaseIndex:
    """The stored cases' hidden-layer embeddings, for exact nearest-neighbour search."""

    def __init__(self, model: Model, case_ids: np.ndarray, labels: np.ndarray,
                 sites: np.ndarray, embeddings: np.ndarray) -> None:
        if not (len(case_ids) == len(labels) == len(sites) == len(embeddings)):
            raise ValueError("case ids, labels, sites and embeddings differ in length")
        self.model = model
        self.case_ids = np.asarray(case_ids, dtype=np.int64)
        self.labels = np.asarray(labels, dtype=np.int8)
        self.sites = np.asarray(sites)
        self.embeddings = np.asarray(embeddings, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.case_ids)

    @classmethod
    def build(cls, casebase: CaseBase, model: Model, *, cache: str | Path | None = None
              ) -> CaseIndex:
        """Embed every case of the current vector schema (one read of the case base).

        With ``cache`` (a file path), an index saved there for the same model and the same
        state of the case base is read back instead (see :func:`index_fingerprint`); otherwise
        the index is built and saved there for the next call."""
        fingerprint = index_fingerprint(casebase, model) if cache is not None else ""
        if cache is not None:
            cached = cls.load(cache, model, fingerprint)
            if cached is not None:
                return cached
        index = cls._build(casebase, model)
        if cache is not None:
            try:
                index.save(cache, fingerprint)
            except OSError:
                pass  # a read-only folder or a full disk: the index serves this call anyway
        return index

    def save(self, path: str | Path, fingerprint: str) -> None:
        """Write the index (not the model) to ``path`` atomically: a reader never sees half."""
        path = Path(path)
        # One partial file per process: two processes saving at once never mix their bytes.
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        try:
            with partial.open("wb") as handle:
                names, codes = np.unique(self.sites.astype(str), return_inverse=True)
                np.savez(handle, fingerprint=np.array(fingerprint), case_ids=self.case_ids,
                         labels=self.labels, site_names=names, site_codes=codes.astype(np.int32),
                         embeddings=self.embeddings)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | Path, model: Model, fingerprint: str) -> CaseIndex | None:
        """The index saved at ``path`` if it was saved under ``fingerprint``, else None (also
        for a missing or unreadable file: the caller rebuilds it). Nothing is unpickled."""
        try:
            with np.load(path, allow_pickle=False) as saved:
                if str(saved["fingerprint"]) != fingerprint:
                    return None
                sites = saved["site_names"][saved["site_codes"]]
                return cls(model, saved["case_ids"], saved["labels"], sites,
                           saved["embeddings"])
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None

    @classmethod
    def _build(cls, casebase: CaseBase, model: Model) -> CaseIndex:
        ids, labels, sites, parts = [], [], [], []
        for batch in casebase.iter_arrays(VECTOR_SCHEMA, batch=BUILD_CHUNK):
            ids.append(batch.case_ids)
            labels.append(batch.y)
            sites.append(batch.sites)
            parts.append(_unit(model.hidden(batch.X)).astype(np.float32))
        if not ids:
            raise CaseBaseError(f"the case base has no cases of vector schema {VECTOR_SCHEMA}: "
                                "import pages or run `casebase revectorize` first")
        case_ids = np.concatenate(ids)
        order = np.argsort(case_ids, kind="stable")  # case-id order: ties break by id
        return cls(model, case_ids[order], np.concatenate(labels)[order],
                   np.concatenate(sites)[order], np.concatenate(parts)[order])

    def nearest(self, vectors: np.ndarray, k: int = 3, *, exclude_site: str | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """Positions in the index (rows: queries, best first) of the ``k`` stored cases most
        similar to each vector, and their cosine similarities. ``exclude_site`` leaves out the
        cases of one site (e.g. the page's own, when it is stored too)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        queries = _unit(self.model.hidden(vectors))
        candidates = np.arange(len(self))
        if exclude_site is not None:
            candidates = np.flatnonzero(self.sites != exclude_site)
        k = min(k, len(candidates))
        positions = np.empty((len(queries), k), dtype=np.int64)
        similarity = np.empty((len(queries), k), dtype=np.float32)
        if k == 0:
            return positions, similarity
        stored = self.embeddings[candidates] if exclude_site is not None else self.embeddings
        for start in range(0, len(queries), QUERY_BLOCK):
            top, top_scores = _top_k(queries[start:start + QUERY_BLOCK] @ stored.T, k)
            positions[start:start + len(top)] = candidates[top]
            similarity[start:start + len(top)] = top_scores
        return positions, similarity


    def nearest_cases(self, vectors: np.ndarray, k: int = 3, *,
                      exclude_site: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the ``k`` stored cases most similar to each vector (rows: queries, best
        first; -1 where there are fewer) and their cosine similarities: the search every index
        offers (:class:`casebase.neighbours.ApproximateIndex` too)."""
        positions, similarity = self.nearest(vectors, k, exclude_site=exclude_site)
        ids = np.full((len(vectors), k), -1, dtype=np.int64)
        scores = np.full((len(vectors), k), -np.inf, dtype=np.float32)
        ids[:, :positions.shape[1]] = self.case_ids[positions]
        scores[:, :positions.shape[1]] = similarity
        return ids, scores

    def similarity_to(self, vectors: np.ndarray, case_ids: Sequence[Sequence[int]]
                      ) -> list[list[float]]:
        """Cosine in the hidden layer between each vector and the stored cases
        ``case_ids[row]`` (NaN for a case the index does not hold)."""
        if not any(case_ids):
            return [[] for _ in case_ids]
        queries = _unit(self.model.hidden(vectors))
        order = np.argsort(self.case_ids, kind="stable")
        out = []
        for query, ids in zip(queries, case_ids):
            wanted = np.asarray(ids, dtype=np.int64)
            at = np.minimum(np.searchsorted(self.case_ids, wanted, sorter=order),
                            len(order) - 1)
            found = order[at]
            held = self.case_ids[found] == wanted
            scores = self.embeddings[found] @ query
            out.append(np.where(held, scores, np.nan).tolist())
        return out


#: Up to this k, the top k of a row are found by k passes of argmax (each a fast vectorised
#: scan) rather than one argpartition: for k = 3 over the 951 523 cases of modernweb-dev,
#: argpartition took 28 ms per query, most of an explained page's time.
ARGMAX_PASSES = 16


def _top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of the ``k`` largest scores of each row, largest first (ties: lower column
    first), and those scores. ``scores`` is overwritten."""
    rows = np.arange(len(scores))
    if k <= ARGMAX_PASSES:
        top = np.empty((len(scores), k), dtype=np.int64)
        values = np.empty((len(scores), k), dtype=scores.dtype)
        for j in range(k):
            best = scores.argmax(axis=1)
            top[:, j] = best
            values[:, j] = scores[rows, best]
            scores[rows, best] = -np.inf
        return top, values
    top = np.sort(np.argpartition(scores, -k, axis=1)[:, -k:], axis=1)
    values = np.take_along_axis(scores, top, axis=1)
    order = np.argsort(-values, axis=1, kind="stable")
    return np.take_along_axis(top, order, 1), np.take_along_axis(values, order, 1)


#: How many pages' vectors are of another schema than ``:v`` (read from the index on
#: ``vector_schema``; a page without vectors, NULL, holds no case an index could hold).
STALE_PAGES = "SELECT COUNT(*) FROM pages WHERE vector_schema <> :v"


def model_digest(model: Model) -> str:
    """The model's first hidden layer, as its output on a fixed probe (any change of its
    weights or normalisation shows), and the vector schema: what embeddings depend on."""
    probe = np.random.default_rng(0).standard_normal((8, len(FEATURE_NAMES))).astype(np.float32)
    digest = hashlib.sha256(np.ascontiguousarray(model.hidden(probe), dtype="<f4").tobytes())
    return f"{digest.hexdigest()[:32]}:{VECTOR_SCHEMA}"


def index_fingerprint(casebase: CaseBase, model: Model) -> str:
    """What a saved index depends on: the model's first hidden layer (its output on a fixed
    probe, so any change of its weights or normalisation shows), the cases (their count and
    largest id: imports, deletions, dedupes), the pages of another vector schema (revectorize)
    and the newest label change (every relabel writes the history). Read from indexes only:
    a few tens of milliseconds at millions of cases."""
    with casebase.engine.connect() as connection:
        # Two statements: SQLite answers MAX(id) from the primary key alone, not beside COUNT.
        count = connection.execute(text("SELECT COUNT(*) FROM cases")).scalar_one()
        largest = connection.execute(text("SELECT MAX(id) FROM cases")).scalar()
        stale = connection.execute(text(STALE_PAGES), {"v": VECTOR_SCHEMA}).scalar_one()
        history = connection.execute(text("SELECT MAX(id) FROM label_history")).scalar()
    return f"{model_digest(model)}:{count}:{largest}:{stale}:{history}"


class Neighbourhood(Protocol):
    """What explaining needs of an index: :class:`CaseIndex` (exact) and
    :class:`casebase.neighbours.ApproximateIndex` both are one."""

    model: Model

    def __len__(self) -> int: ...

    def nearest_cases(self, vectors: np.ndarray, k: int = 3, *,
                      exclude_site: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Ids (-1 for none) and cosine similarities of the ``k`` cases nearest each vector."""

    def similarity_to(self, vectors: np.ndarray, case_ids: Sequence[Sequence[int]]
                      ) -> list[list[float]]:
        """Cosine between each vector and the stored cases ``case_ids[row]`` (NaN: none)."""


def explain_page(index: Neighbourhood, casebase: CaseBase, html: str | bytes, *,
                 url: str | None = None, k: int = 3, other_sites: bool = False,
                 path_contains: str | None = None,
                 cleaner: Cleaner | None = None,
                 memory: SiteMemory | None = None) -> list[Explanation]:
    """Clean ``html`` with the index's model and explain each decided subtree (in document
    order) by its ``k`` nearest stored cases. ``other_sites`` leaves out the cases of the
    page's own site (by ``url``); ``path_contains`` keeps only the subtrees whose path
    contains it. Neighbours show the cases' current labels, as the case base holds them now.

    With the ``memory`` of the page's site (:func:`casebase.reuse.site_memory`), the page is
    cleaned as ``noisecbr clean --memory`` cleans it, and each subtree also lists the stored
    cases of the site with the same markup: for a decision by memory, its reasons."""
    cleaner = cleaner or Cleaner(index.model)
    page = cleaner.prepare(html, url=url)
    return explain_decided(index, casebase, page, cleaner.decide(page, memory=memory),
                           cleaner, url=url, k=k, other_sites=other_sites,
                           path_contains=path_contains)


def explain_decided(index: Neighbourhood, casebase: CaseBase, page: Page, decisions: Decisions,
                    cleaner: Cleaner, *, url: str | None = None, k: int = 3,
                    other_sites: bool = False, path_contains: str | None = None
                    ) -> list[Explanation]:
    """:func:`explain_page` of a page ``cleaner`` has already decided
    (:meth:`~noisecbr.cleaner.Cleaner.decide`): the review page cleans a page once and
    explains the decisions its result comes from, the fallback's included."""
    if cleaner.model is not index.model:
        raise ValueError("the cleaner must use the index's model: their hidden layers differ")
    table, decision, proba = page.table, decisions.decision, decisions.proba
    recalled = decisions.recalled
    decided = np.flatnonzero(decision >= 0)
    paths = table.paths()
    if path_contains:
        decided = np.array([i for i in decided.tolist() if path_contains in paths[i]],
                           dtype=np.int64)
    if not len(decided) or not len(index):
        return []
    exclude = site_of(url, "") if other_sites and url else None
    # The decided subtrees' vectors (the cleaner's scores do not keep theirs: a subclass may
    # score otherwise).
    vectors = vectorize(table)[decided]
    near_ids, similarity = index.nearest_cases(vectors, k, exclude_site=exclude)
    same = ([decisions.stored[i] for i in decided.tolist()] if decisions.stored is not None
            else [()] * len(decided))
    records = casebase.get_cases([i for i in near_ids.ravel().tolist() if i >= 0]
                                 + [case_id for ids in same for case_id in ids], vectors=False)
    same_similarity = index.similarity_to(vectors, same)

    def neighbour(case_id: int, score: float) -> Neighbour | None:
        case = records.get(case_id)
        if case is None:  # deleted since the index was built
            return None
        return Neighbour(case_id=case.id, label=case.label, similarity=round(float(score), 4),
                         site=case.site, path=case.path, text=case.text[:TEXT_CHARS])

    explanations = []
    for row, i in enumerate(decided.tolist()):
        near = (neighbour(case_id, s) for case_id, s in
                zip(near_ids[row].tolist(), similarity[row]) if case_id >= 0)
        markup = (neighbour(case_id, s) for case_id, s in zip(same[row], same_similarity[row]))
        explanations.append(Explanation(
            path=paths[i], tag=table.tags[i], decision=LABELS[decision[i]],
            probabilities=tuple(round(float(p), 4) for p in proba[i]),
            neighbours=tuple(n for n in near if n is not None),
            source="memory" if recalled is not None and recalled[i] >= 0 else "model",
            same_markup=tuple(n for n in markup if n is not None)))
    return explanations


def agreement_summary(explanations: Sequence[Explanation]) -> dict[str, float]:
    """Per decision label, the mean share of neighbours that carry that label."""
    out: dict[str, float] = {}
    for label in LABELS:
        chosen = [e.agreement for e in explanations if e.decision == label and e.neighbours]
        if chosen:
            out[label] = round(sum(chosen) / len(chosen), 3)
    return out
