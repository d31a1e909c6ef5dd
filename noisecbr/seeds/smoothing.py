"""Regularised tree isotonic smoothing (Chakrabarti, Kumar & Punera, WWW 2007, section 4).

Given a tree (``parents[i]`` is the index of node ``i``'s parent, ``-1`` for a root), scores
``x_i`` and penalties ``γ_i >= 0``, find labels ``y`` minimising

    Σ_i |x_i - y_i|  +  Σ_i γ_i · [i is a root  or  y_i ≠ y_parent(i)]

subject to ``y_parent(i) <= y_i``: a node is never scored higher than any of its children, so
smoothing never invents a high score for a container of low-scoring parts. The optimum takes its
values among the ``x_i`` (the paper's Lemma 3), so an exact dynamic programme over
(node, candidate value) solves it.

For node ``i`` and candidate ``v`` let ``C_i(v)`` be the best cost of ``i``'s subtree when
``y_i = v`` (its own penalty excluded). A child ``c`` either keeps the parent's value (no
penalty) or jumps to some ``w > v`` and pays ``γ_c``:

    F_c(v) = min(C_c(v), γ_c + min_{w >= v} C_c(w))       (w = v with γ_c is never better)
    C_i(v) = |x_i - v| + Σ_children F_c(v)

Each node costs O(k) numpy work for ``k`` distinct scores (a running minimum over the values
at or above each candidate), so the whole programme is O(n·k) time, against the paper's
O(n² log n): 0.3–0.9 s for n = k = 5 000 on a shared 2-core machine
(``benchmarks/bench_smoothing.py``).

Memory is what needs care: one float vector per node would be n·k floats (200 MB for
n = k = 5 000). The nodes are therefore processed in a post-order that visits each node's
largest child subtree first, and a child's vector is folded into its parent's accumulator as
soon as the child is done. An accumulator is open only while one of its later (so smaller than
half the parent's) subtrees is being processed, hence at most O(log n) vectors are alive at
once. For the way back only what a child's choice depends on is kept: a packed bit mask "jumps
away from the parent's value" (k/8 bytes) and the sorted distinct jump targets (a handful in
practice, at most k).

Everything is iterative: pages can be 100 000 levels deep.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["isotonic_smooth", "objective", "subtree_penalties"]

def _children_of(parents: Sequence[int]) -> tuple[list[int], list[list[int]], list[int]]:
    """Parents as plain ints, children lists and roots, after checking every parent index."""
    n = len(parents)
    clean: list[int] = []
    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for i, p in enumerate(parents):
        try:
            whole = int(p)
        except (TypeError, ValueError):
            whole = None
        if whole is None or whole != p:
            raise ValueError(f"parents[{i}] = {p!r} is not an integer")
        p = whole
        clean.append(p)
        if p == -1:
            roots.append(i)
        elif p == i:
            raise ValueError(f"node {i} is its own parent")
        elif 0 <= p < n:
            children[p].append(i)
        else:
            raise ValueError(f"parents[{i}] = {p} is not -1 or a node index in [0, {n})")
    if n and not roots:
        raise ValueError("the parent array has no root (-1): it contains a cycle")
    return clean, children, roots


def _preorder(children: list[list[int]], roots: list[int], n: int) -> list[int]:
    """Pre-order from the roots; raises if some node is unreachable (it lies on a cycle)."""
    order: list[int] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(children[node])
    if len(order) != n:
        raise ValueError(f"{n - len(order)} node(s) are not reachable from a root: "
                         "the parent array contains a cycle")
    return order


def _subtree_sizes(parents: Sequence[int], order: list[int]) -> list[int]:
    sizes = [1] * len(parents)
    for node in reversed(order):  # children come after their parent in a pre-order
        p = parents[node]
        if p >= 0:
            sizes[p] += sizes[node]
    return sizes


def _validate(
    parents: Sequence[int], scores: Sequence[float], penalty: float | Sequence[float]
) -> tuple[list[int], np.ndarray, np.ndarray, list[list[int]], list[int], list[int]]:
    n = len(parents)
    if len(scores) != n:
        raise ValueError(f"scores has {len(scores)} values for {n} nodes")
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    if x.size != n or not np.all(np.isfinite(x)):
        raise ValueError("scores must be finite numbers")
    if np.ndim(penalty) == 0:
        gamma = np.full(n, float(penalty))  # type: ignore[arg-type]
    else:
        gamma = np.asarray(penalty, dtype=np.float64).reshape(-1)
        if gamma.size != n:
            raise ValueError(f"penalty has {gamma.size} values for {n} nodes")
    # A negative penalty would reward changing value, and the recurrence's "staying is never
    # worse than jumping to the same value" step would no longer hold.
    if not np.all(np.isfinite(gamma)) or np.any(gamma < 0):
        raise ValueError("penalties must be finite and >= 0")
    clean, children, roots = _children_of(parents)
    order = _preorder(children, roots, n)
    return clean, x, gamma, children, roots, order


def objective(
    parents: Sequence[int],
    scores: Sequence[float],
    penalty: float | Sequence[float],
    y: Sequence[float],
) -> float:
    """The smoothing objective of labels ``y``; ``math.inf`` if ``y`` breaks parent <= child."""
    parents, x, gamma, _, _, _ = _validate(parents, scores, penalty)
    labels = np.asarray(y, dtype=np.float64).reshape(-1)
    if labels.size != x.size:
        raise ValueError(f"y has {labels.size} values for {x.size} nodes")
    total = float(np.abs(x - labels).sum())
    for i, p in enumerate(parents):
        if p < 0:
            total += float(gamma[i])
        elif labels[p] > labels[i]:
            return math.inf
        elif labels[p] != labels[i]:
            total += float(gamma[i])
    return total


def isotonic_smooth(
    parents: Sequence[int],
    scores: Sequence[float],
    penalty: float | Sequence[float],
) -> list[float]:
    """Exact minimiser of the regularised tree isotonic objective (see the module docstring).

    ``parents`` may describe a forest (several ``-1`` roots); each tree is smoothed on its own.
    ``penalty`` is one γ for every node or one per node (see :func:`subtree_penalties`).
    Ties are broken towards keeping the parent's value (up to floating-point rounding).
    """
    parents, x, gamma, children, roots, order = _validate(parents, scores, penalty)
    n = x.size
    if n == 0:
        return []
    # The candidate set (Lemma 3), kept in *descending* order so that "every w >= v" is a
    # prefix and the inner step is a contiguous prefix minimum.
    values = np.unique(x)[::-1].copy()
    k = values.size
    positions = np.arange(k)

    post = _largest_first_post_order(children, roots, _subtree_sizes(parents, order))

    accumulators: dict[int, np.ndarray] = {}
    jump_masks: list[np.ndarray | None] = [None] * n   # packed bits: leaves the parent's value
    jump_targets: list[np.ndarray | None] = [None] * n  # ascending candidate indices jumped to
    root_choice: dict[int, int] = {}

    for node in post:
        cost = np.abs(values - x[node])
        below = accumulators.pop(node, None)
        if below is not None:
            cost += below
        parent = parents[node]
        if parent < 0:
            root_choice[node] = int(np.argmin(cost))
            continue
        best_at_or_above = np.minimum.accumulate(cost)
        jump_cost = best_at_or_above + gamma[node]
        # Strictly cheaper only: a tie (up to rounding) keeps the parent's value.
        jumps = jump_cost < cost
        if jumps.any():
            # Where the jump lands: the nearest position at or before j (the smallest value
            # >= v) whose cost equals the prefix minimum, the only places it is attained.
            attains = np.where(cost == best_at_or_above, positions, -1)
            landing = np.maximum.accumulate(attains)[jumps]  # non-decreasing
            distinct = np.empty(landing.size, dtype=bool)
            distinct[0] = True
            np.not_equal(landing[1:], landing[:-1], out=distinct[1:])
            jump_masks[node] = np.packbits(jumps)
            jump_targets[node] = landing[distinct]
            contribution = np.minimum(cost, jump_cost, out=jump_cost)
        else:
            contribution = cost
        into = accumulators.get(parent)
        if into is None:
            accumulators[parent] = contribution
        else:
            into += contribution

    chosen = _choose_top_down(parents, order, root_choice, jump_masks, jump_targets)
    return values[chosen].tolist()


def _largest_first_post_order(children, roots, sizes) -> list[int]:
    """Pre-order visiting smaller subtrees first; reversed, it is a post-order in which every
    node's largest subtree is finished first (see the memory note in the module docstring)."""
    post: list[int] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        post.append(node)
        # Pushed largest first, so the smallest child is popped (visited) first.
        stack.extend(sorted(children[node], key=sizes.__getitem__, reverse=True))
    post.reverse()
    return post


def _choose_top_down(parents, order, root_choice: dict[int, int],
                     jump_masks: list[np.ndarray | None],
                     jump_targets: list[np.ndarray | None]) -> np.ndarray:
    """Each node's candidate index, top-down: a node's choice depends only on its parent's."""
    chosen = np.empty(len(jump_masks), dtype=np.int64)
    for node in order:
        parent = parents[node]
        if parent < 0:
            chosen[node] = root_choice[node]
            continue
        j = int(chosen[parent])
        mask = jump_masks[node]
        if mask is not None and (mask[j >> 3] >> (7 - (j & 7))) & 1:
            targets = jump_targets[node]
            assert targets is not None
            # The last target at or before j (targets ascend, values descend).
            chosen[node] = targets[np.searchsorted(targets, j, side="right") - 1]
        else:
            chosen[node] = j
    return chosen


def subtree_penalties(parents: Sequence[int], c: float) -> list[float]:
    """Per-node penalties ``γ_i = c · A / A_i``, ``A_i`` being node i's subtree size in nodes.

    Small subtrees get large penalties, so smoothing prefers to give a small part the label of
    its surroundings. ``A`` is the size of the tree that holds ``i`` (in a forest, each tree is
    measured on its own, so its root always gets ``γ = c``).
    """
    if not math.isfinite(c) or c < 0:
        raise ValueError("c must be finite and >= 0")
    parents, children, roots = _children_of(parents)
    order = _preorder(children, roots, len(parents))
    sizes = _subtree_sizes(parents, order)
    tree_size = [0] * len(parents)
    for node in order:  # parents before children
        p = parents[node]
        tree_size[node] = sizes[node] if p < 0 else tree_size[p]
    return [c * tree_size[i] / sizes[i] for i in range(len(parents))]
