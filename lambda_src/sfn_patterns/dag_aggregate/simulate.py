"""Makespan of a staged plan, simulated the way Step Functions runs Map states.

A Map state starts its items in order, at most ``max_concurrency`` at a time, starts
the next item the moment a slot frees, and finishes when its slowest item does; the
next stage (Map) only starts then. ``max_concurrency=0`` means unlimited, as in ASL.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

import networkx as nx

from sfn_patterns.dag_aggregate.errors import PlanError
from sfn_patterns.dag_aggregate.strategies import Stage


def map_makespan(durations: Sequence[float], max_concurrency: int) -> float:
    """Wall time of one Map state over items with these durations, in this order."""
    if max_concurrency < 0:
        raise ValueError("max_concurrency must be >= 0 (0 = unlimited)")
    if not durations:
        return 0.0
    if max_concurrency == 0 or max_concurrency >= len(durations):
        return float(max(durations))
    slots = [0.0] * max_concurrency  # finish time of each running item
    finish = 0.0
    for duration in durations:
        start = heapq.heappop(slots)
        end = start + duration
        finish = max(finish, end)
        heapq.heappush(slots, end)
    return finish


def makespan(
    stages: Sequence[Stage], durations: Mapping[str, float], max_concurrency: int
) -> float:
    """Total wall time: stages run one after another."""
    return sum(
        map_makespan([durations[t] for t in stage.tasks], max_concurrency) for stage in stages
    )


def critical_path(graph: nx.DiGraph, durations: Mapping[str, float]) -> float:
    """Longest chain of task durations (no schedule can beat it)."""
    finish: dict[str, float] = {}
    for node in nx.topological_sort(graph):
        ready = max((finish[p] for p in graph.predecessors(node)), default=0.0)
        finish[node] = ready + durations[node]
    return max(finish.values(), default=0.0)


def lower_bound(graph: nx.DiGraph, durations: Mapping[str, float], max_concurrency: int) -> float:
    """max(critical path, total work / slots): a bound for any schedule, staged or not."""
    cp = critical_path(graph, durations)
    if max_concurrency == 0:
        return cp
    return max(cp, sum(durations[n] for n in graph.nodes) / max_concurrency)


def simulate(
    graph: nx.DiGraph,
    stages: Mapping[str, Sequence[Stage]],
    durations: Mapping[str, float],
    max_concurrency: int,
) -> dict[str, object]:
    """The ``simulate`` command's document: lower bound and makespan per strategy."""
    missing = sorted(set(graph.nodes) - set(durations))
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise PlanError(f"durations missing for {len(missing)} task(s): {shown}")
    negative = sorted(n for n in graph.nodes if not durations[n] >= 0)
    if negative:
        raise PlanError(f"durations must be numbers >= 0; bad for: {', '.join(negative[:5])}")
    return {
        "lower_bound": lower_bound(graph, durations, max_concurrency),
        "makespan": {
            name: makespan(plan_stages, durations, max_concurrency)
            for name, plan_stages in stages.items()
        },
    }
