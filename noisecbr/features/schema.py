"""The feature schema: one :class:`Feature` per column of the subtree vector, in column order.

Everything else is read off this table: the names (:data:`FEATURE_NAMES`, which a model file
lists), the groups and their column ranges (:data:`FEATURE_GROUPS`, :func:`group_slices`), and
the arithmetic of both paths: the pure Python path applies each row's transform with numpy
(:mod:`noisecbr.features.vectors`), the compiled kernel reads the same rows as arrays
(:mod:`noisecbr.features.compiled`). Each path computes only the raw per-element *quantities*
a row names in ``of`` and ``per`` (counts, sizes, sums: :mod:`~noisecbr.features.quantities`,
:mod:`~noisecbr.features.page`, :mod:`~noisecbr.features.tokens`).

How a row makes its column (float64, rounded once to the vector's float32), operation by
operation as written here, so that both paths give the same bits:

============  ==================================================================================
``log``       ``log1p(of) / scale``; with a ``per``: ``log1p(of / max(per, floor)) / scale``
``share``     ``of / max(per, floor)``
``capped``    ``min(of / max(per, floor) * weight, cap)`` (a weight of 1 multiplies exactly)
``bit``       1 where ``of`` > 0, else 0
``one_hot``   1 where ``of`` == ``index``, else 0
``value``     ``of`` as it is
``at``        the column named ``of``, at the element's ``at`` (0 where it has none)
``relative``  the column named ``of`` minus its value at the element's ``at`` (0 where none)
============  ==================================================================================

A *family* quantity has a column per index (leaf types, keyword bits, vocabularies): ``of`` is
then read at ``index``. The elements an ``at`` names: ``parent``, ``previous`` and ``next``
(element siblings), ``root`` (the body) and ``first_h1`` (the page's first ``<h1>``).

Changing anything here changes :data:`VECTOR_SCHEMA`, so models trained on other vectors are
refused instead of silently mis-read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .keywords import KEYWORDS
from .tags import LANDMARKS, LEAF_TYPES, TAG_GROUPS
from .tokens import VOCABULARIES

__all__ = ["VECTOR_SCHEMA", "TRANSFORMS", "RELATIONS", "Feature", "FEATURES", "FEATURE_GROUPS",
           "FEATURE_NAMES", "group_slices"]

#: Bumped whenever a feature's definition, order or scaling changes.
VECTOR_SCHEMA = 4

LOG, SHARE, CAPPED, BIT, ONE_HOT, VALUE, AT, RELATIVE = TRANSFORMS = (
    "log", "share", "capped", "bit", "one_hot", "value", "at", "relative")
#: The elements an ``at`` or ``relative`` column reads another column at.
RELATIONS = ("parent", "previous", "next", "root", "first_h1")


@dataclass(frozen=True)
class Feature:
    """One column of the vector: how the raw quantity ``of`` becomes it (see the module
    docstring for each transform)."""

    name: str
    group: str
    transform: str
    #: The raw quantity (for ``at`` and ``relative``: the column) the value is made of.
    of: str
    #: The column of a family quantity; for ``one_hot``, the value that makes a 1.
    index: int = 0
    #: The quantity ``of`` is divided by (``share``, ``capped``, and ``log`` of a ratio).
    per: str | None = None
    #: The least divisor: ``per`` is read as ``max(per, floor)``.
    floor: float = 1.0
    #: ``log``: log1p is divided by it.
    scale: float = 1.0
    #: ``capped``: the share is multiplied by it.
    weight: float = 1.0
    #: ``capped``: the largest value.
    cap: float = 1.0
    #: ``at``, ``relative``: the element whose column is read (:data:`RELATIONS`).
    at: str | None = None


def _leaf() -> tuple[Feature, ...]:
    """Eq. 1: each leaf type's share of the subtree's leaves."""
    return tuple(Feature(f"leaf:{t}", "leaf", SHARE, "leaf_counts", index=k, per="leaves")
                 for k, t in enumerate(LEAF_TYPES))


def _text() -> tuple[Feature, ...]:
    """Log text length and words, link density, punctuation and stop-word rates, how much of
    the subtree's text is its root's own, its share of the page's text."""
    return (
        Feature("log_chars", "text", LOG, "chars", scale=12.0),
        Feature("log_words", "text", LOG, "words", scale=10.0),
        Feature("link_density", "text", SHARE, "link_chars", per="chars"),
        Feature("punct_rate", "text", CAPPED, "punct", per="words"),
        Feature("stop_share", "text", SHARE, "stop_words", per="words"),
        Feature("own_share", "text", SHARE, "own_chars", per="chars"),
        Feature("page_share", "text", SHARE, "chars", per="page_chars"),
        Feature("chars_per_element", "text", LOG, "chars", per="size", scale=8.0),
    )


def _structure() -> tuple[Feature, ...]:
    """Depth, position in the page, children, size."""
    return (
        Feature("depth", "structure", SHARE, "depth", per="max_depth"),
        Feature("log_depth", "structure", LOG, "depth", scale=5.0),
        Feature("position_start", "structure", SHARE, "index", per="elements"),
        Feature("position_end", "structure", SHARE, "end", per="elements"),
        Feature("log_children", "structure", LOG, "children", scale=6.0),
        Feature("log_size", "structure", LOG, "size", scale=9.0),
        Feature("page_size_share", "structure", SHARE, "size", per="elements"),
    )


def _tag() -> tuple[Feature, ...]:
    """One-hot of the subtree root's tag group."""
    return tuple(Feature(f"tag:{t}", "tag", ONE_HOT, "tag_group", index=k)
                 for k, t in enumerate(TAG_GROUPS))


def _attributes() -> tuple[Feature, ...]:
    """Noise/content keywords found in the root's class, id, role and aria-label: bits of the
    root's keyword mask (:mod:`noisecbr.features.keywords`)."""
    return tuple(Feature(f"kw:{w}", "attributes", BIT, "own_masks", index=k)
                 for k, w in enumerate(KEYWORDS))


def _context() -> tuple[Feature, ...]:
    """The same keywords on any ancestor and the ancestors' landmark tags (the bits of the
    ancestors' masks OR-ed: the keywords', then the landmarks'), and the parent's text
    features."""
    return (
        *(Feature(f"anc_kw:{w}", "context", BIT, "ancestor_masks", index=k)
          for k, w in enumerate(KEYWORDS)),
        *(Feature(f"anc_tag:{t}", "context", BIT, "ancestor_masks", index=len(KEYWORDS) + k)
          for k, t in enumerate(LANDMARKS)),
        *(Feature(f"parent:{f.name}", "context", AT, f.name, at="parent") for f in _text()),
    )


def _candidate() -> tuple[Feature, ...]:
    """Where the subtree lies relative to the page's main candidate
    (:mod:`noisecbr.features.quantities`): inside it, around it, the candidate's share of its
    text, its own content score against the candidate's, and how far it is from it."""
    return (
        Feature("in_candidate", "candidate", BIT, "inside_candidate"),
        Feature("contains_candidate", "candidate", BIT, "contains_candidate"),
        Feature("candidate_text_share", "candidate", VALUE, "candidate_text_share"),
        Feature("content_score", "candidate", SHARE, "content_score", per="top_score",
                floor=1e-9),
        Feature("log_candidate_distance", "candidate", LOG, "candidate_distance", scale=4.0),
    )


def _page() -> tuple[Feature, ...]:
    """The subtree relative to its page (:mod:`noisecbr.features.page`)."""
    return (
        Feature("text_before", "page", SHARE, "words_before", per="page_words"),
        Feature("text_after", "page", SHARE, "words_after", per="page_words"),
        Feature("log_signature_count", "page", LOG, "signatures", scale=7.0),
        Feature("log_signature_siblings", "page", LOG, "signature_siblings", scale=5.0),
        Feature("signature_sibling_share", "page", SHARE, "signature_siblings", per="siblings"),
        Feature("sentence_share", "page", SHARE, "sentences", per="page_sentences"),
        Feature("log_sentences", "page", LOG, "sentences", scale=5.0),
        Feature("link_piece_share", "page", SHARE, "link_pieces", per="page_link_pieces"),
        Feature("relative_link_density", "page", RELATIVE, "link_density", at="root"),
        Feature("page_link_density", "page", AT, "link_density", at="root"),
        Feature("after_h1", "page", BIT, "after_h1"),
        Feature("contains_h1", "page", BIT, "contains_h1"),
        Feature("from_h1", "page", RELATIVE, "text_before", at="first_h1"),
        Feature("biggest_child_share", "page", SHARE, "biggest_child_words", per="words"),
        Feature("prev_log_words", "page", AT, "log_words", at="previous"),
        Feature("prev_link_density", "page", AT, "link_density", at="previous"),
        Feature("has_prev", "page", BIT, "has_previous"),
        Feature("next_log_words", "page", AT, "log_words", at="next"),
        Feature("next_link_density", "page", AT, "link_density", at="next"),
        Feature("has_next", "page", BIT, "has_next"),
        Feature("page_log_words", "page", LOG, "page_words", scale=12.0),
    )


def _vocabulary() -> tuple[Feature, ...]:
    """Title Case, digits and boilerplate words in the subtree's text and its heading
    (:mod:`noisecbr.features.tokens`). ×5, capped at 1: one boilerplate word in five already
    marks a block as furniture."""
    return (
        Feature("title_case_share", "vocabulary", SHARE, "title_tokens", per="words"),
        Feature("digit_share", "vocabulary", SHARE, "digit_tokens", per="words"),
        Feature("log_words_per_piece", "vocabulary", LOG, "words", per="pieces", scale=5.0),
        *(Feature(f"voc:{name}", "vocabulary", CAPPED, "vocabulary_tokens", index=k,
                  per="words", weight=5.0) for k, name in enumerate(VOCABULARIES)),
        *(Feature(f"head_voc:{name}", "vocabulary", BIT, "head_vocabulary_tokens", index=k)
          for k, name in enumerate(VOCABULARIES)),
    )


#: The table: every column of the vector, in order.
FEATURES: tuple[Feature, ...] = (
    *_leaf(), *_text(), *_structure(), *_tag(), *_attributes(), *_context(), *_candidate(),
    *_page(), *_vocabulary())

FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)
#: The names of each group's columns, groups in column order (each group's columns are
#: contiguous).
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    group: tuple(f.name for f in FEATURES if f.group == group)
    for group in dict.fromkeys(f.group for f in FEATURES)}


def group_slices() -> dict[str, slice]:
    """Column range of each feature group in the full vector."""
    out, start = {}, 0
    for group, names in FEATURE_GROUPS.items():
        out[group] = slice(start, start + len(names))
        start += len(names)
    return out
