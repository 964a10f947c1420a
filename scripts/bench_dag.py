#!/usr/bin/env python3
"""Benchmark the dag-aggregate planner and its three strategies.

(a) Planning time on random DAGs: our bitset transitive reduction vs networkx's, side
    by side, plus the full plan (reduction + levels + groups + stages).
(b) Simulated makespan / lower bound of simple-level, parent-level and dependency over
    a seeded suite of random DAGs with heavy-tailed (lognormal and Pareto) durations.
    "dependency~hops" is the dependency strategy when the dispatcher knows no
    durations (every task weighs 1, so priority = remaining hops).

Run: .venv/bin/python scripts/bench_dag.py [--sizes 1000 5000] [--suite 40] ...
"""

from __future__ import annotations

import argparse
import statistics
import time

import networkx as nx

from sfn_patterns_cli.dag_aggregate import graph as g
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dependencies
from sfn_patterns_cli.dag_aggregate.simulate import dependency_makespan, simulate
from sfn_patterns_cli.dag_aggregate.synthetic import heavy_tailed_durations, random_dag


def _timed(func, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def bench_planning(sizes: list[int], seed: int) -> None:
    """Part (a): reduction and full-plan times for each size."""
    print("(a) planning time, random DAGs (max 4 parents from the previous 200 tasks)")
    print(
        f"{'tasks':>6} {'edges':>6} {'reduced':>7} {'ours':>8} {'networkx':>9} "
        f"{'speedup':>8} {'full plan':>9}  same"
    )
    for n in sizes:
        parents = random_dag(n, seed)
        full = g.build_graph(parents)
        ours, t_ours = _timed(g.transitive_reduction, full)
        theirs, t_nx = _timed(nx.transitive_reduction, full)
        _, t_plan = _timed(plan_from_dependencies, parents)
        same = set(ours.edges) == set(theirs.edges)
        print(
            f"{n:>6} {full.number_of_edges():>6} {ours.number_of_edges():>7} "
            f"{t_ours:>7.3f}s {t_nx:>8.3f}s {t_nx / t_ours:>7.1f}x {t_plan:>8.3f}s  {same}"
        )


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def bench_strategies(suite: int, n: int, concurrency: list[int], seed: int) -> None:
    """Part (b): makespan / lower bound distribution per strategy."""
    print(f"\n(b) makespan / lower bound over {suite} random DAGs of {n} tasks (seed {seed})")
    print(
        f"{'durations':>9} {'conc':>4} {'strategy':>15} {'median':>7} {'p90':>7} {'max':>7}"
        "  parent<simple"
    )
    for kind in ("lognormal", "pareto"):
        for slots in concurrency:
            ratios: dict[str, list[float]] = {}
            wins = 0
            for i in range(suite):
                plan = plan_from_dependencies(
                    random_dag(n, seed + i, max_parents=3, window=max(5, n // 8))
                )
                durations = heavy_tailed_durations(sorted(plan.level), seed + i, kind)
                result = simulate(plan.reduced, plan.stages, durations, slots)
                bound = result["lower_bound"]
                hops = dict.fromkeys(durations, 1.0)
                spans = {
                    **result["makespan"],
                    "dependency~hops": dependency_makespan(plan.reduced, durations, slots, hops),
                }
                for name, value in spans.items():
                    ratios.setdefault(name, []).append(value / bound)
                wins += result["makespan"]["parent-level"] < result["makespan"]["simple-level"]
            for name, values in ratios.items():
                print(
                    f"{kind:>9} {slots:>4} {name:>15} {statistics.median(values):>7.3f} "
                    f"{_quantile(values, 0.9):>7.3f} {max(values):>7.3f}"
                    + (f"  {wins}/{suite}" if name == "parent-level" else "")
                )


def main() -> None:
    """Parse options and run both parts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 5000],
        help="task counts for the planning benchmark (default: 1000 5000)",
    )
    parser.add_argument(
        "--suite",
        type=int,
        default=40,
        help="random DAGs per configuration in part (b) (default: 40)",
    )
    parser.add_argument(
        "--tasks", type=int, default=200, help="tasks per DAG in part (b) (default: 200)"
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[5, 20],
        help="Map MaxConcurrency values to simulate (default: 5 20)",
    )
    parser.add_argument("--seed", type=int, default=7, help="base random seed (default: 7)")
    parser.add_argument("--skip-planning", action="store_true", help="run part (b) only")
    args = parser.parse_args()
    if not args.skip_planning:
        bench_planning(args.sizes, args.seed)
    bench_strategies(args.suite, args.tasks, args.concurrency, args.seed)


if __name__ == "__main__":
    main()
