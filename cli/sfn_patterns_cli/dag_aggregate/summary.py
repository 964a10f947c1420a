"""``dag plan``'s default output: the plan as a person reads it, not as a program does.

Why a second form: the JSON (``--json``) is for scripts and is a stable interface; a
person checking what a change to the SQL did wants the shape at a glance: how many
tasks and levels, which tasks each one waits for, what each strategy's stages are, and
which outside tables are read. Everything here is derived from :meth:`Plan.to_json`,
so the two forms never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _names(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown}, ... ({len(names) - limit} more)"


def plan_summary(plan: Mapping[str, Any], *, max_tasks: int = 200) -> str:
    """The plan in lines of text: totals, levels, each task's parents, stages, externals.

    Args:
        plan: The plan as :meth:`Plan.to_json` returns it.
        max_tasks: List each task's parents only up to this many tasks (a 5,000-task
            DAG would print 5,000 lines); the totals and levels are always printed.

    """
    tasks: list[str] = plan["tasks"]
    levels: Mapping[str, int] = plan["levels"]
    parents: dict[str, list[str]] = {task: [] for task in tasks}
    for parent, child in plan["edges"]:
        parents[child].append(parent)
    depth = max(levels.values(), default=0)
    lines = [
        f"{_plural(len(tasks), 'task')} in schema {plan['schema']}, "
        f"{_plural(depth, 'level')}, {_plural(len(plan['edges']), 'edge')} "
        "after transitive reduction"
    ]
    lines.append("")
    for level in range(1, depth + 1):
        on_level = sorted(task for task in tasks if levels[task] == level)
        lines.append(f"level {level} ({len(on_level)}): {_names(on_level)}")
    if len(tasks) <= max_tasks:
        lines += ["", "each task waits for:"]
        width = max((len(task) for task in tasks), default=0)
        for task in sorted(tasks, key=lambda name: (levels[name], name)):
            waits = ", ".join(sorted(parents[task])) or "(nothing: a root)"
            lines.append(f"  {task:<{width}}  <- {waits}")
    lines += ["", "stages (one Map state each, run in order):"]
    for strategy, stages in plan["stages"].items():
        sizes = " + ".join(str(len(stage)) for stage in stages)
        lines.append(f"  {strategy}: {_plural(len(stages), 'stage')} ({sizes} tasks)")
    lines += ["", "external tables read:"]
    externals: Mapping[str, list[str]] = plan["external_sources"]
    if not externals:
        lines.append("  (none)")
    for table, readers in sorted(externals.items()):
        lines.append(f"  {table} <- {_names(sorted(readers))}")
    lines.append("")
    lines.append("(--json prints the full plan as JSON: edges, levels, groups, stages)")
    return "\n".join(lines) + "\n"
