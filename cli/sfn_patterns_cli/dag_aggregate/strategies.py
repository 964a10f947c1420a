"""Execution strategies: how tasks are cut into stages (one Map state per stage).

* ``simple-level``: stage i = all tasks of level i. Correct because every parent has a
  strictly lower level than its child.
* ``parent-level``: stage k = every task whose earliest child is on level k (the union
  over i of L_ik), stages ordered by k, then the E group (tasks nobody reads) last.
  Each task thus runs as late as its first reader allows, which groups work by the
  moment it is needed.

Why parent-level obeys every dependency (checked by :func:`check_order` in tests):
for an edge p -> u, p's earliest child level is at most level(u), and u's earliest
child level is strictly greater than level(u) (or E, which is last). So
stage(p) <= level(u) < stage(u): the naive reading needs no fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import networkx as nx

from sfn_patterns_cli.dag_aggregate.graph import END

STRATEGIES = ("simple-level", "parent-level")


@dataclass(frozen=True)
class Stage:
    """One Map state's worth of tasks; ``label`` explains where the stage comes from."""

    label: str
    tasks: tuple[str, ...]


def simple_level(level: Mapping[str, int]) -> list[Stage]:
    """One stage per level, in level order; tasks sorted by name inside a stage."""
    by_level: dict[int, list[str]] = {}
    for node, depth in level.items():
        by_level.setdefault(depth, []).append(node)
    return [Stage(f"level {d}", tuple(sorted(by_level[d]))) for d in sorted(by_level)]


def parent_level(child_level: Mapping[str, int | str]) -> list[Stage]:
    """One stage per earliest-child level k (union over i of L_ik), E group last."""
    by_k: dict[int | str, list[str]] = {}
    for node, k in child_level.items():
        by_k.setdefault(k, []).append(node)
    numeric = sorted(k for k in by_k if isinstance(k, int))
    keys: list[int | str] = [*numeric, *([END] if END in by_k else [])]
    return [Stage(f"L_*{k}", tuple(sorted(by_k[k]))) for k in keys]


def stages_for(
    strategy: str, level: Mapping[str, int], child_level: Mapping[str, int | str]
) -> list[Stage]:
    """Stages of one named strategy."""
    if strategy == "simple-level":
        return simple_level(level)
    if strategy == "parent-level":
        return parent_level(child_level)
    raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")


def check_order(graph: nx.DiGraph, stages: list[Stage]) -> list[tuple[str, str]]:
    """Edges whose child is not in a strictly later stage than its parent (empty = valid).

    Also fails (returns every node as a pseudo-edge to itself) when a task is missing or
    appears twice, since such a plan is wrong even if the edges look fine.
    """
    stage_of: dict[str, int] = {}
    duplicates: list[tuple[str, str]] = []
    for index, stage in enumerate(stages):
        for task in stage.tasks:
            if task in stage_of:
                duplicates.append((task, task))
            stage_of[task] = index
    missing = [(n, n) for n in graph.nodes if n not in stage_of]
    bad = [(p, c) for p, c in graph.edges if stage_of.get(p, -1) >= stage_of.get(c, -1)]
    return duplicates + missing + bad
