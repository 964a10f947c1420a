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


def sql_project(n: int, seed: int, window: int = 200) -> dict[str, tuple[str, set[str]]]:
    """A generated warehouse project: ``table -> (SQL text, the tasks it reads)``.

    Each file reads ``raw.events`` in a CTE, joins one to three earlier tasks
    (``random_dag`` edges, ``window`` back), and carries traps a regex would fall for:
    task names in line and block comments, in string literals, as CTE and alias
    names. The returned parents are what the generator wrote, so a test can check
    the planner against them instead of against itself. Declare ``raw.*`` external.
    """
    parents = random_dag(n, seed, max_parents=3, window=window)
    rng = random.Random(seed + 1)
    names = sorted(parents)
    project: dict[str, tuple[str, set[str]]] = {}
    for name in names:
        reads = sorted(parents[name])
        decoy = rng.choice(names)
        joins = "\n".join(
            f"JOIN agg.{parent} AS p{i} ON p{i}.id = b.id  -- not agg.{decoy}"
            for i, parent in enumerate(reads)
        )
        picked = ", ".join(f"p{i}.total AS t{i}" for i in range(len(reads))) or "0 AS t0"
        sql = (
            f"-- sfn: mode=reload tags=gen,g{int(name[1:]) % 7}\n"
            f"/* builds agg.{name}; mentions agg.{decoy} and FROM agg.{decoy} in a comment */\n"
            f"WITH {decoy} AS (\n"
            f"  SELECT e.user_id AS id, COUNT(*) AS n, 'FROM agg.{decoy} JOIN agg.x' AS note\n"
            f"  FROM raw.events AS e\n"
            f"  WHERE e.kind <> 'agg.{decoy}'\n"
            f"  GROUP BY e.user_id\n"
            f")\n"
            f"SELECT b.id, SUM(b.n) AS total, {picked}\n"
            f"FROM {decoy} AS b\n"
            f"{joins}\n"
            f"GROUP BY b.id\n"
        )
        project[name] = (sql, set(reads))
    return project
