#!/usr/bin/env python3
"""Benchmark the dag-aggregate planner and its strategies.

(a) Planner speed at warehouse scale: generated projects of N files (each a CTE over
    raw.events, one to three joins of earlier tasks, and task names in comments,
    string literals and as CTE names), planned exactly as ``terraform plan`` does: one
    ``python modules/dag-aggregate/planner.py module-data --strategy dependency``
    process (interpreter start, imports, plan, plan document, task definition).
    cold: empty parse cache; warm: nothing changed; one changed: a file edited.
(b) Transitive reduction: our bitset algorithm against networkx's, on random DAGs.
(c) Simulated makespan / lower bound of simple-level, parent-level and dependency over
    a seeded suite of random DAGs with heavy-tailed (lognormal and Pareto) durations.
    "dependency~hops" is the dependency strategy when the dispatcher knows no
    durations (every task weighs 1, so priority = remaining hops).

Every table is printed as Markdown rows. The load average of the machine is printed
with (a), whose times depend on it.

Run: .venv/bin/python scripts/bench_dag.py [--files 1000 5000 20000] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx

from sfn_patterns_cli.dag_aggregate import graph as g
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dependencies
from sfn_patterns_cli.dag_aggregate.simulate import dependency_makespan, simulate
from sfn_patterns_cli.dag_aggregate.synthetic import heavy_tailed_durations, random_dag, sql_project

PLANNER = Path(__file__).resolve().parents[1] / "modules" / "dag-aggregate" / "planner.py"
_STATS = re.compile(r"planned (\d+) files: (\d+) parsed, (\d+) from the cache")


def _timed(func, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _plan_once(sql_dir: Path, cache: Path) -> tuple[float, int]:
    """One planner process as Terraform runs it; (seconds, files parsed)."""
    command = [
        sys.executable, str(PLANNER), "module-data",
        "--sql-dir", str(sql_dir), "--strategy", "dependency",
        "--database", "dev", "--workgroup-name", "wg",
        "--task-done-arn", "arn:aws:lambda:us-east-1:123456789012:function:dag-runtime",
        "--external", "raw.*", "--cache-dir", str(cache), "--stats",
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"planner failed:\n{proc.stderr[-2000:]}")
    found = _STATS.search(proc.stderr)
    if not found:
        raise RuntimeError(f"no parse statistics in:\n{proc.stderr[-500:]}")
    return seconds, int(found.group(2))


def bench_planner(sizes: list[int], seed: int) -> None:
    """Part (a): cold, warm and one-file-changed planner runs per project size."""
    print(f"(a) planner speed, one `planner.py module-data` process (load before: {_load()})\n")
    print(
        "| files | cold (s) | cold files/s | warm (s) | warm files/s | one changed (s) "
        "| parsed cold / warm / changed |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-dag-") as tmp:
            sql_dir = Path(tmp) / "sql"
            sql_dir.mkdir()
            project = sql_project(n, seed)
            for name, (sql, _) in project.items():
                (sql_dir / f"{name}.sql").write_text(sql)
            cache = Path(tmp) / "cache"
            cold, parsed_cold = _plan_once(sql_dir, cache)
            warm, parsed_warm = _plan_once(sql_dir, cache)
            edited = sql_dir / f"{sorted(project)[n // 2]}.sql"
            edited.write_text(edited.read_text() + "-- edited\n")
            changed, parsed_changed = _plan_once(sql_dir, cache)
        print(
            f"| {n:,} | {cold:.2f} | {n / cold:,.0f} | {warm:.2f} | {n / warm:,.0f} "
            f"| {changed:.2f} | {parsed_cold:,} / {parsed_warm:,} / {parsed_changed:,} |"
        )
    print(f"\nload after: {_load()}; CPUs available: {len(os.sched_getaffinity(0))}")


def bench_reduction(sizes: list[int], seed: int) -> None:
    """Part (b): reduction and full-plan times for each size."""
    print("\n(b) transitive reduction, random DAGs (max 4 parents from the previous 200 tasks)\n")
    print("| tasks | edges | reduced | ours (s) | networkx (s) | speedup | full plan (s) | same |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for n in sizes:
        parents = random_dag(n, seed)
        full = g.build_graph(parents)
        ours, t_ours = _timed(g.transitive_reduction, full)
        theirs, t_nx = _timed(nx.transitive_reduction, full)
        _, t_plan = _timed(plan_from_dependencies, parents)
        same = set(ours.edges) == set(theirs.edges)
        print(
            f"| {n:,} | {full.number_of_edges():,} | {ours.number_of_edges():,} | {t_ours:.3f} "
            f"| {t_nx:.3f} | {t_nx / t_ours:.1f}x | {t_plan:.3f} | {same} |"
        )


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def bench_strategies(suite: int, n: int, concurrency: list[int], seed: int) -> None:
    """Part (c): makespan / lower bound distribution per strategy."""
    print(f"\n(c) makespan / lower bound over {suite} random DAGs of {n} tasks (seed {seed})\n")
    print("| durations | concurrency | strategy | median | p90 | max | parent < simple |")
    print("|---|---:|---|---:|---:|---:|---:|")
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
                won = f"{wins}/{suite}" if name == "parent-level" else ""
                print(
                    f"| {kind} | {slots} | {name} | {statistics.median(values):.3f} "
                    f"| {_quantile(values, 0.9):.3f} | {max(values):.3f} | {won} |"
                )


def main() -> None:
    """Parse options and run the three parts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--files",
        type=int,
        nargs="+",
        default=[1000, 5000, 20000],
        help="project sizes for the planner benchmark (default: 1000 5000 20000)",
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 5000],
        help="task counts for the reduction benchmark (default: 1000 5000)",
    )
    parser.add_argument("--suite", type=int, default=40, help="random DAGs per row in (c)")
    parser.add_argument("--tasks", type=int, default=200, help="tasks per DAG in (c)")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[5, 20], help="concurrency values in (c)"
    )
    parser.add_argument("--seed", type=int, default=7, help="base random seed (default: 7)")
    parser.add_argument(
        "--smoke", action="store_true", help="smallest sizes that fill every table (seconds)"
    )
    args = parser.parse_args()
    if args.smoke:
        args.files, args.sizes, args.suite, args.tasks, args.concurrency = [200], [300], 3, 40, [5]
    bench_planner(args.files, args.seed)
    bench_reduction(args.sizes, args.seed)
    bench_strategies(args.suite, args.tasks, args.concurrency, args.seed)


if __name__ == "__main__":
    main()
