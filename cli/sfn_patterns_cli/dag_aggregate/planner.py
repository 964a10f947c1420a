"""The planner facade: SQL directory or dependency map -> :class:`Plan`.

Kept separate from the pieces so callers (CLI, renderer, benchmarks) share one entry
point and one JSON shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from sfn_patterns_cli.dag_aggregate import graph as g
from sfn_patterns_cli.dag_aggregate.parse_cache import ParseCache
from sfn_patterns_cli.dag_aggregate.resolve import Rules, resolve
from sfn_patterns_cli.dag_aggregate.sql_deps import TaskSpec, load_tasks
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES, Stage, stages_for


@dataclass
class Plan:
    """Everything derived from the tasks' reads: reduced DAG, levels, groups, stages."""

    reduced: nx.DiGraph
    level: dict[str, int]
    child_level: dict[str, int | str]
    groups: dict[str, list[str]]
    stages: dict[str, list[Stage]]
    external_sources: dict[str, list[str]] = field(default_factory=dict)
    tasks: dict[str, TaskSpec] = field(default_factory=dict)
    schema: str = "agg"
    # How the SQL was read (files parsed vs taken from the parse cache); not in to_json,
    # so the plan document does not depend on the cache.
    parse_stats: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The ``plan`` command's JSON document."""
        return {
            "schema": self.schema,
            "tasks": sorted(self.level),
            "edges": sorted([p, c] for p, c in self.reduced.edges),
            "levels": {n: self.level[n] for n in sorted(self.level)},
            "groups": self.groups,
            "stages": {
                name: [list(stage.tasks) for stage in stages]
                for name, stages in self.stages.items()
            },
            "external_sources": self.external_sources,
        }


def plan_from_dependencies(parents: Mapping[str, Iterable[str]], *, fast: bool = True) -> Plan:
    """Plan from ``task -> tasks it reads``; ``fast=False`` uses networkx's reduction."""
    full = g.build_graph(parents)
    reduced = g.transitive_reduction(full) if fast else nx.transitive_reduction(full)
    level = g.levels(reduced)
    child_level = g.earliest_child_level(reduced, level)
    return Plan(
        reduced=reduced,
        level=level,
        child_level=child_level,
        groups=g.groups(level, child_level),
        stages={s: stages_for(s, level, child_level) for s in STRATEGIES},
    )


def plan_from_dir(
    sql_dir: Path,
    schema: str = "agg",
    *,
    rules: Rules | None = None,
    cache_dir: Path | None = None,
    workers: int | None = None,
) -> Plan:
    """Plan from a directory of ``<table>.sql`` files (see ``sql_deps`` and ``resolve``).

    ``cache_dir``: where parse results are kept between calls (None: parse every
    file); ``workers``: parsing processes (None: the CPUs available).
    """
    cache = ParseCache(cache_dir, sql_dir) if cache_dir is not None else None
    tasks = load_tasks(sql_dir, schema, cache=cache, workers=workers)
    resolution = resolve(tasks, rules)
    plan = plan_from_dependencies(resolution.parents)
    plan.tasks = resolution.tasks
    plan.schema = schema.lower()
    sources: dict[str, list[str]] = {}
    for task, tables in resolution.external.items():
        for table in tables:
            sources.setdefault(table, []).append(task)
    plan.external_sources = {t: sorted(sources[t]) for t in sorted(sources)}
    plan.parse_stats = {
        "files": len(tasks),
        "parsed": cache.misses if cache is not None else len(tasks),
        "cached": cache.hits if cache is not None else 0,
    }
    return plan
