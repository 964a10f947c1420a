"""Seeded random workloads for tests and benchmarks: layered DAGs and heavy-tailed durations.

Kept in the package (not the tests) so the benchmark and the tests share one generator.
"""

from __future__ import annotations

import random


def random_dag(n: int, seed: int, max_parents: int = 4, window: int = 200) -> dict[str, set[str]]:
    """``task -> parents`` for ``n`` tasks; parents come from the previous ``window`` tasks.

    The window keeps dependencies local, which gives many levels (like real pipelines)
    and plenty of transitively redundant edges for the reduction to remove.
    """
    rng = random.Random(seed)
    names = [f"t{i:05d}" for i in range(n)]
    parents: dict[str, set[str]] = {}
    for i, name in enumerate(names):
        lo = max(0, i - window)
        k = min(i - lo, rng.randint(0, max_parents))
        parents[name] = {names[j] for j in rng.sample(range(lo, i), k)} if k else set()
    return parents


def heavy_tailed_durations(
    tasks: list[str], seed: int, kind: str = "lognormal"
) -> dict[str, float]:
    """Task durations in seconds: lognormal (median ~60 s) or Pareto (alpha 1.5, min 20 s)."""
    rng = random.Random(seed)
    if kind == "lognormal":
        return {t: round(rng.lognormvariate(4.1, 1.0), 3) for t in tasks}
    if kind == "pareto":
        return {t: round(20 * rng.paretovariate(1.5), 3) for t in tasks}
    raise ValueError(f"unknown duration kind {kind!r} (lognormal | pareto)")
