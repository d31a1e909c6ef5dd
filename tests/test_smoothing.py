"""Tree isotonic smoothing: exactness against brute force, hand examples, input checks."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from noisecbr.seeds.smoothing import isotonic_smooth, objective, subtree_penalties


def _random_forest(rng: random.Random, n: int) -> list[int]:
    parents = []
    for i in range(n):
        # Node 0 is always a root; later nodes are occasionally extra roots (a forest).
        if i == 0 or rng.random() < 0.1:
            parents.append(-1)
        else:
            parents.append(rng.randrange(i))
    # Shuffle the labels so that parents do not always precede children.
    perm = list(range(n))
    rng.shuffle(perm)
    relabelled = [0] * n
    for old, p in enumerate(parents):
        relabelled[perm[old]] = -1 if p < 0 else perm[p]
    return relabelled


def _brute_force(parents, scores, penalty, candidates) -> float:
    """Minimum of the objective over every assignment of candidate values (numpy, all at once)."""
    n = len(parents)
    grid = np.array(list(itertools.product(candidates, repeat=n)), dtype=np.float64)
    gamma = np.broadcast_to(np.asarray(penalty, dtype=np.float64), (n,))
    total = np.abs(grid - np.asarray(scores)).sum(axis=1)
    feasible = np.ones(len(grid), dtype=bool)
    for i, p in enumerate(parents):
        if p < 0:
            total += gamma[i]
        else:
            feasible &= grid[:, p] <= grid[:, i]
            total += gamma[i] * (grid[:, p] != grid[:, i])
    return float(total[feasible].min())


@pytest.mark.parametrize("seed", range(150))
def test_matches_brute_force_over_candidates(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 5)
    parents = _random_forest(rng, n)
    # Few distinct values (rounded) so that ties and shared values are exercised.
    scores = [round(rng.random(), 1) for _ in range(n)]
    if rng.random() < 0.5:
        penalty: float | list[float] = round(rng.uniform(0, 1), 2)
    else:
        penalty = [round(rng.uniform(0, 1), 2) for _ in range(n)]
    y = isotonic_smooth(parents, scores, penalty)
    for i, p in enumerate(parents):
        if p >= 0:
            assert y[p] <= y[i]
    assert set(y) <= set(scores)
    got = objective(parents, scores, penalty, y)
    # Candidate set widened with midpoints and the ends of [0, 1]: checks Lemma 3 as well.
    values = sorted(set(scores))
    extra = [(a + b) / 2 for a, b in itertools.pairwise(values)] + [0.0, 1.0]
    want = _brute_force(parents, scores, penalty, sorted(set(values + extra)))
    assert got == pytest.approx(want, abs=1e-9)


def test_seven_node_trees() -> None:
    for seed in range(20):
        rng = random.Random(1000 + seed)
        parents = _random_forest(rng, 7)
        scores = [round(rng.random(), 2) for _ in range(7)]
        penalty = rng.uniform(0, 0.5)
        y = isotonic_smooth(parents, scores, penalty)
        want = _brute_force(parents, scores, penalty, sorted(set(scores)))
        assert objective(parents, scores, penalty, y) == pytest.approx(want, abs=1e-9)


def test_hand_example() -> None:
    # Root 0 (0.2) -> node 1 (0.8) -> leaves 2, 3 (0.6 each); constraint parent <= child.
    parents = [-1, 0, 1, 1]
    scores = [0.2, 0.8, 0.6, 0.6]
    # γ = 0.05: [0.2, 0.6, 0.6, 0.6] costs |0.8-0.6| = 0.2 plus γ for the root and for node 1
    # (which differs from its parent): 0.3. Keeping node 1 at 0.8 forces the leaves up to 0.8
    # (0.4 + 0.1 = 0.5); one value everywhere costs at least 0.4 + 0.2 + 0.05 = 0.65.
    y = isotonic_smooth(parents, scores, 0.05)
    assert y == [0.2, 0.6, 0.6, 0.6]
    assert objective(parents, scores, 0.05, y) == pytest.approx(0.3)
    # γ = 0.5: one value 0.6 everywhere costs 0.4 + 0.2 + 0.5 = 1.1, less than 0.2 + 2·0.5.
    y = isotonic_smooth(parents, scores, 0.5)
    assert y == [0.6, 0.6, 0.6, 0.6]
    assert objective(parents, scores, 0.5, y) == pytest.approx(1.1)


def test_hand_example_high_child_kept_when_cheap() -> None:
    # A low container (0.1) with one clearly different child (0.9) and a big penalty only on
    # the root: the child keeps its own value.
    parents = [-1, 0, 0, 0]
    scores = [0.1, 0.1, 0.1, 0.9]
    y = isotonic_smooth(parents, scores, [5.0, 0.3, 0.3, 0.3])
    assert y == [0.1, 0.1, 0.1, 0.9]
    assert objective(parents, scores, [5.0, 0.3, 0.3, 0.3], y) == pytest.approx(5.3)
    # With a penalty larger than the 0.8 it saves, the child is pulled down to 0.1.
    y = isotonic_smooth(parents, scores, [5.0, 1.0, 1.0, 1.0])
    assert y == [0.1, 0.1, 0.1, 0.1]


def test_deep_chain_is_not_recursive() -> None:
    n = 100_000
    parents = [-1] + list(range(n - 1))
    scores = [0.0 if i < n // 2 else 1.0 for i in range(n)]
    y = isotonic_smooth(parents, scores, 0.1)
    assert y == scores  # one change of value costs 0.1, far less than any mismatch


def test_empty_and_single() -> None:
    assert isotonic_smooth([], [], 1.0) == []
    assert isotonic_smooth([-1], [0.3], 1.0) == [0.3]
    assert objective([-1], [0.3], 2.0, [0.3]) == pytest.approx(2.0)


def test_objective_flags_infeasible() -> None:
    assert objective([-1, 0], [0.5, 0.5], 1.0, [0.6, 0.5]) == math.inf


@pytest.mark.parametrize(
    "parents, scores, penalty, message",
    [
        ([-1, 0], [0.1], 1.0, "scores has 1"),
        ([-1, 5], [0.1, 0.2], 1.0, "not -1 or a node index"),
        ([-1, 1], [0.1, 0.2], 1.0, "its own parent"),
        ([1, 0], [0.1, 0.2], 1.0, "no root"),
        ([-1, 2, 1], [0.1, 0.2, 0.3], 1.0, "not reachable"),
        ([-1, 0], [0.1, float("nan")], 1.0, "finite"),
        ([-1, 0], [0.1, 0.2], -1.0, ">= 0"),
        ([-1, 0], [0.1, 0.2], [1.0], "penalty has 1"),
        ([-1, 0.5], [0.1, 0.2], 1.0, "not an integer"),
    ],
)
def test_invalid_input(parents, scores, penalty, message) -> None:
    with pytest.raises(ValueError, match=message):
        isotonic_smooth(parents, scores, penalty)


def test_subtree_penalties() -> None:
    # 0 -> {1, 2}, 1 -> {3}: sizes 4, 2, 1, 1; plus a separate root 4 of size 1.
    parents = [-1, 0, 0, 1, -1]
    assert subtree_penalties(parents, 2.0) == [2.0, 4.0, 8.0, 8.0, 2.0]
