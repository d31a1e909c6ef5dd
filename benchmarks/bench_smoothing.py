"""Time isotonic smoothing on a 5 000-node page-like tree with 5 000 distinct scores.

Run from the repository root: PYTHONPATH=. python benchmarks/bench_smoothing.py [n] [seed]
"""

from __future__ import annotations

import random
import sys
import time
import tracemalloc

from noisecbr.seeds.smoothing import isotonic_smooth, objective, subtree_penalties


def page_like_tree(n: int, rng: random.Random) -> list[int]:
    """Random tree shaped like a DOM: wrappers a few levels deep, lists with many items."""
    parents = [-1]
    open_nodes = [0]
    while len(parents) < n:
        # Prefer recent nodes (depth-first growth, like nested markup), sometimes fan out wide.
        parent = open_nodes[-1 - min(int(rng.expovariate(0.5)), len(open_nodes) - 1)]
        parents.append(parent)
        open_nodes.append(len(parents) - 1)
    return parents


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    parents = page_like_tree(n, rng)
    scores = [rng.random() for _ in range(n)]  # all distinct: k = n candidates
    # CKP's area penalties, and a small constant penalty under which many nodes change value.
    for name, penalties in (("c*A/A_i, c=0.5", subtree_penalties(parents, 0.5)),
                            ("constant 0.01", [0.01] * n)):
        run(name, parents, scores, penalties)


def run(name: str, parents: list[int], scores: list[float], penalties: list[float]) -> None:
    n = len(parents)
    # Best of three, timed without tracemalloc (which slows every numpy allocation).
    elapsed = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        y = isotonic_smooth(parents, scores, penalties)
        elapsed = min(elapsed, time.perf_counter() - start)
    tracemalloc.start()
    isotonic_smooth(parents, scores, penalties)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"n={n} k={len(set(scores))} γ={name}: {elapsed:.3f} s, peak traced memory "
          f"{peak / 1e6:.1f} MB, objective {objective(parents, scores, penalties, y):.3f}, "
          f"{len(set(y))} distinct smoothed values")


if __name__ == "__main__":
    main()
