"""Subtree vectors: the paper's eq. 1 leaf-frequency shares plus the features that decide noise.

Eq. 1 (Htwe): for each leaf-node type n of a fixed vocabulary, x_n = S_n / T_n, the number of the
subtree's leaves of type n over the number of its leaves (:mod:`.tags`).

The full vector appends feature groups, each scaled to about [0, 1]:

``text``       log text length and words, link density, punctuation and stop-word rates, how much
               of the subtree's text is its root's own, its share of the page's text
``structure``  depth, position in the page, children, size
``tag``        one-hot of the subtree root's tag group (:mod:`.tags`)
``attributes`` noise/content keywords found in the root's class, id, role and aria-label
               (:mod:`.keywords`)
``context``    the same keywords on any ancestor, the ancestors' landmark tags, and the parent's
               text features
``candidate``  where the subtree lies relative to the page's *main candidate*: the element with
               the highest readability-style content score (:mod:`.quantities`)
``page``       where the subtree's text lies in the page, how often its tag + class repeats,
               its neighbours (:mod:`.page`, schema 3)
``vocabulary`` Title Case, digits, and boilerplate words in its text and its heading
               (:mod:`.tokens`, schema 3)

Every column is one row of the table in :mod:`.schema` (its name, group, transform and scales),
which both the pure path (:mod:`.vectors`) and the compiled kernel (:mod:`.compiled`) read. All
vectors of a page come from one :class:`~noisecbr.prepare.subtrees.ElementTable`: one walk, then
numpy (or C). Changing anything here changes :data:`VECTOR_SCHEMA`, so models trained on other
vectors are refused instead of silently mis-read.
"""

from __future__ import annotations

from .keywords import KEYWORDS
from .schema import FEATURE_GROUPS, FEATURE_NAMES, FEATURES, VECTOR_SCHEMA, Feature, group_slices
from .tags import LEAF_TYPES, TAG_GROUPS, leaf_counts, leaf_shares
from .vectors import vectorize

__all__ = [
    "VECTOR_SCHEMA",
    "LEAF_TYPES",
    "TAG_GROUPS",
    "KEYWORDS",
    "Feature",
    "FEATURES",
    "FEATURE_GROUPS",
    "FEATURE_NAMES",
    "group_slices",
    "leaf_counts",
    "leaf_shares",
    "vectorize",
]
