"""The walk: class scores of every subtree → noise / data / mixture decisions → a cleaned page.

Top-down over the tidied body, in document order:

1. a subtree whose noise score reaches ``noise_threshold`` is **noise**: removed whole;
2. else one whose data score reaches ``keep_threshold`` is **data**: kept whole, not descended;
3. else it is **mixture**: its own text is kept and each child is decided in turn;
4. an element without element children is removed when its noise score reaches
   ``leaf_threshold``, kept otherwise.

Keeping every subtree the network calls *data* whole lets the noise nested inside it through,
so the walk keeps a subtree whole only on a confident data score and otherwise descends; the
thresholds are stored with the model, chosen on site-grouped validation folds (see
:mod:`training` and ``noisecbr bench --cv``).

Optionally the noise scores are smoothed over the tree first (regularised isotonic regression,
:func:`noisecbr.smoothing.isotonic_smooth`, penalty γ_i = c·A/A_i), so that a parent is never
scored noisier than its least noisy child and isolated flips are evened out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np
from lxml import etree

from .memory import SiteMemory
from .model import Model, load_model
from .render import render_html, render_text
from .result import LABELS, CleanResult, Decision
from .subtrees import ElementTable, build_table
from .tidy import Parser, drop_elements, tidy, xml_safe
from .vectors import vectorize

__all__ = ["DEFAULT_MODEL", "Cleaner", "clean", "default_model"]

DEFAULT_MODEL = "default.safetensors"
NOISE, DATA, MIXTURE = range(3)

#: Walk thresholds used when a model does not carry its own. 0.5 / 0.9 / 0.5: remove what the
#: network more likely than not calls noise, keep whole only what it is sure is data.
DEFAULT_THRESHOLDS = {"noise": 0.5, "keep": 0.9, "leaf": 0.5}

#: Extra evidence from outside the network (e.g. a site style tree's noisy nodes): given a page's
#: table, return the indices of the subtrees it marks as noise.
NoiseEvidence = Callable[[ElementTable], "set[int] | np.ndarray"]

_default: Model | None = None


@functools.lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def default_model() -> Model:
    """The model shipped in the package (loaded once per process)."""
    global _default
    if _default is None:
        path = resources.files("noisecbr") / "data" / DEFAULT_MODEL
        with resources.as_file(path) as file:
            _default = load_model(file)
    return _default


class Cleaner:
    """Removes the noise subtrees of pages with one model, loaded once.

    >>> cleaner = Cleaner()                     # the embedded default model
    >>> result = cleaner.clean(html, url=url)   # doctest: +SKIP
    >>> result.text, result.html, result.decisions  # doctest: +SKIP
    """

    def __init__(
        self,
        model: Model | str | Path | None = None,
        *,
        parser: Parser = "lxml",
        noise_threshold: float | None = None,
        keep_threshold: float | None = None,
        leaf_threshold: float | None = None,
        smooth: float | None = None,
        max_bytes: int | None = None,
    ) -> None:
        if model is None:
            model = default_model()
        elif not isinstance(model, Model):
            model = load_model(model)
        self.model = model
        self.parser: Parser = parser
        thresholds = {**DEFAULT_THRESHOLDS, **model.thresholds}
        self.noise_threshold = thresholds["noise"] if noise_threshold is None else noise_threshold
        self.keep_threshold = thresholds["keep"] if keep_threshold is None else keep_threshold
        self.leaf_threshold = thresholds["leaf"] if leaf_threshold is None else leaf_threshold
        self.smooth = smooth
        self.max_bytes = max_bytes

    # -- scores ------------------------------------------------------------------------------
    def scores(self, table: ElementTable) -> np.ndarray:
        """Class probabilities of every subtree of the page (rows in document order)."""
        if len(table) == 0:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        vectors = vectorize(table)
        # One BLAS thread: a page's matrices are small, and OpenBLAS's thread hand-offs cost
        # more than they save (measured 16 → 2.4 ms per page on the 2-core machine under load).
        with _blas_controller().limit(limits=1, user_api="blas"):
            proba = self.model.predict_proba(vectors)
        if self.smooth:
            proba = _smoothed(table, proba, self.smooth)
        return proba

    def predict(self, table: ElementTable, extra_noise: set[int] | None = None,
                recalled: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Decide the page: returns (decision per element: −1 undecided (inside a decided
        subtree) or a LABELS index, and the class probabilities).

        ``recalled`` (from :meth:`noisecbr.memory.SiteMemory.recall`: −1, NOISE or DATA per
        element) overrides the network where a site's stored cases agree."""
        proba = self.scores(table)
        noise_score, data_score = proba[:, NOISE], proba[:, DATA]
        is_leaf = table.n_children == 0
        # The threshold tests of the whole page at once, then a walk over plain Python lists
        # (indexing numpy arrays element by element costs more than the walk itself).
        noisy = np.where(is_leaf, _reaches(noise_score, self.leaf_threshold),
                         _reaches(noise_score, self.noise_threshold))
        keep = _reaches(data_score, self.keep_threshold)
        if recalled is not None:
            hit = recalled >= 0
            noisy = np.where(hit, recalled == NOISE, noisy)
            keep = np.where(hit, recalled == DATA, keep)
        noisy, keep = noisy.tolist(), keep.tolist()
        leaf = is_leaf.tolist()
        end = table.end.tolist()
        forced = extra_noise or set()
        n = len(table)
        decision = [-1] * n
        i = 0
        while i < n:
            if (noisy[i] or i in forced) and i > 0:
                decision[i] = NOISE
                i = end[i]
            elif keep[i] or leaf[i]:
                decision[i] = DATA
                i = end[i]
            else:
                decision[i] = MIXTURE
                i += 1
        return np.fromiter(decision, dtype=np.int8, count=n), proba

    # -- cleaning ----------------------------------------------------------------------------
    def clean_body(self, body: etree._Element, url: str | None = None,
                   extra_noise: NoiseEvidence | None = None,
                   memory: SiteMemory | None = None) -> CleanResult:
        table = build_table(body)
        forced = None
        if extra_noise is not None:
            forced = {int(i) for i in extra_noise(table)}
        recalled, stored = (memory.lookup(table) if memory is not None and len(memory)
                            else (None, None))
        decision, proba = self.predict(table, forced, recalled)
        decided = np.flatnonzero(decision >= 0)
        removed_index = decided[decision[decided] == NOISE]
        elements = table.elements
        removed = {elements[i] for i in removed_index.tolist()}
        # Control characters the parser left in the text (from raw bytes or references such
        # as &#1;) are not text, and would reach a terminal as they are.
        text = xml_safe(render_text(body, removed))

        def decisions() -> list[Decision]:
            # Paths from the table: still those of the tidied page after the noise is detached.
            chars = table.subtree(table.piece_chars)[decided]
            all_paths = table.paths()
            paths = [all_paths[i] for i in decided]
            return [
                Decision(path=path, tag=table.tags[i], label=LABELS[decision[i]],
                         probabilities=tuple(round(float(p), 4) for p in proba[i]),
                         text_length=int(length),
                         **({"source": "memory", "cases": stored[i]}
                            if recalled is not None and recalled[i] >= 0 else {}))
                for path, i, length in zip(paths, decided, chars)
            ]

        def cleaned_html() -> str:
            drop_elements(removed)
            return render_html(body)

        return CleanResult(html=cleaned_html, text=text, decisions=decisions, url=url)

    def clean(self, html: str | bytes, url: str | None = None, *,
              extra_noise: NoiseEvidence | None = None,
              memory: SiteMemory | None = None) -> CleanResult:
        """Clean one page. Raises :class:`noisecbr.tidy.InputError` for input that is not HTML.

        ``memory``: the labelled pages of the page's site (:class:`noisecbr.memory.SiteMemory`);
        where their subtrees of the same signature agree on noise or data, that label decides."""
        kwargs = {} if self.max_bytes is None else {"max_bytes": self.max_bytes}
        body = tidy(html, parser=self.parser, **kwargs)
        return self.clean_body(body, url=url, extra_noise=extra_noise, memory=memory)


def _reaches(scores: np.ndarray, threshold: float) -> np.ndarray:
    """``scores[i] >= threshold`` for every i, decided as the comparison of the numpy scalar
    ``scores[i]`` with ``threshold`` decides it: in the type numpy promotes the two to (float32
    for float32 scores and a Python float under NumPy 2's rules, float64 under NumPy 1's), so
    a score within rounding of a threshold goes the same way as in a scalar comparison."""
    common = (scores.dtype.type(0) + threshold).dtype
    return scores.astype(common, copy=False) >= np.asarray(threshold, dtype=common)


def _smoothed(table: ElementTable, proba: np.ndarray, c: float) -> np.ndarray:
    from .smoothing import isotonic_smooth, subtree_penalties

    parents = table.parent.tolist()
    noise = isotonic_smooth(parents, proba[:, NOISE].tolist(), subtree_penalties(parents, c))
    out = proba.copy()
    out[:, NOISE] = noise
    # Keep the row a distribution: the other classes share what noise gave up or took.
    rest = np.maximum(1.0 - out[:, NOISE], 0.0)
    others = proba[:, 1:].sum(axis=1)
    ratio = np.divide(rest, others, out=np.zeros_like(rest), where=others > 0)
    out[:, 1:] = proba[:, 1:] * ratio[:, None]
    return out


def clean(html: str | bytes, url: str | None = None, *, model: Model | str | Path | None = None,
          parser: Parser = "lxml", memory: SiteMemory | None = None,
          max_bytes: int | None = None) -> CleanResult:
    """Clean one page with the embedded default model (or ``model``), and the labelled pages
    of its site if a ``memory`` of them is given.

    Raises an :class:`noisecbr.tidy.InputError` subclass with a one-line reason for input that
    is not a page, and :class:`noisecbr.tidy.InputTooLargeError` over ``max_bytes`` bytes
    (default :data:`noisecbr.limits.DEFAULT_MAX_BYTES`) or the element limit."""
    return Cleaner(model, parser=parser, max_bytes=max_bytes).clean(html, url=url, memory=memory)
