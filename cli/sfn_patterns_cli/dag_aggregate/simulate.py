"""Makespan of each strategy, simulated with the same task durations.

Staged strategies run the way Step Functions runs Map states: a Map starts its items
in order, at most ``max_concurrency`` at a time, starts the next item the moment a slot
frees, and finishes when its slowest item does; the next stage (Map) only starts then.
``max_concurrency=0`` means unlimited, as in ASL.

The ``dependency`` strategy has no stages: a task becomes ready when its last parent
finishes, and whenever a slot is free the ready task with the longest remaining path
starts (list scheduling with critical-path priority, which is what its dispatcher does).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

import networkx as nx

from sfn_patterns_cli.dag_aggregate.errors import PlanError
from sfn_patterns_cli.dag_aggregate.strategies import Stage


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


def remaining_path(graph: nx.DiGraph, weights: Mapping[str, float]) -> dict[str, float]:
    """Per task: its own weight plus the heaviest chain of descendants after it.

    This is the dispatch priority of the ``dependency`` strategy: starting the task at
    the head of the longest remaining chain first keeps the critical path moving.
    """
    rest: dict[str, float] = {}
    for node in reversed(list(nx.topological_sort(graph))):
        rest[node] = weights[node] + max((rest[c] for c in graph.successors(node)), default=0.0)
    return rest


def dependency_makespan(
    graph: nx.DiGraph,
    durations: Mapping[str, float],
    max_concurrency: int,
    estimates: Mapping[str, float] | None = None,
) -> float:
    """Wall time when each task starts as soon as its parents are done and a slot is free.

    ``estimates`` are what the dispatcher believes the durations are (its priorities);
    by default the true ``durations``. Ties break by task name, as the dispatcher does.
    """
    if max_concurrency < 0:
        raise ValueError("max_concurrency must be >= 0 (0 = unlimited)")
    priority = remaining_path(graph, estimates if estimates is not None else durations)
    waiting = {n: graph.in_degree(n) for n in graph.nodes}
    ready = [(-priority[n], n) for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    running: list[tuple[float, str]] = []  # (finish time, task)
    now = finish = 0.0
    slots = max_concurrency or len(waiting) or 1
    while ready or running:
        while ready and len(running) < slots:
            _, task = heapq.heappop(ready)
            heapq.heappush(running, (now + durations[task], task))
        now, done = heapq.heappop(running)
        finish = max(finish, now)
        for child in graph.successors(done):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (-priority[child], child))
    return finish


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
    spans = {
        name: makespan(plan_stages, durations, max_concurrency)
        for name, plan_stages in stages.items()
    }
    spans["dependency"] = dependency_makespan(graph, durations, max_concurrency)
    return {"lower_bound": lower_bound(graph, durations, max_concurrency), "makespan": spans}
