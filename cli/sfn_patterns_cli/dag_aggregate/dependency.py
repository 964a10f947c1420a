"""The ``dependency`` strategy at plan time: the plan document and the task state machine.

No stages: the runtime (``dag_aggregate.runtime``) starts each task as soon as its
parents have succeeded, at most ``max_concurrency`` at a time, the ready task with the
longest remaining path first. What it needs is computed here, once, at plan time:

* the **plan document** (JSON, stored by Terraform in S3 because it holds every
  task's SQL and grows past the 256 KB payload and 1 MB definition limits at a few
  hundred tasks): per task its parents, children, estimated duration, priority
  (longest remaining path by estimated duration, the task's own included) and the
  ``task`` object the task state machine runs (SQL, optional DELETE, wait, polls);
* the **task state machine** definition: one execution per task, so no execution
  history grows with the DAG. It runs the statement through the Redshift Data API,
  waits for its end with the job-poller's wait (its status-change event, or polls),
  and reports the outcome to the ``task_done`` Lambda.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

import jinja2
import networkx as nx

from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.history import check_task_executions
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, task_limits
from sfn_patterns_cli.dag_aggregate.planner import Plan
from sfn_patterns_cli.dag_aggregate.render import (
    MAX_DEFINITION_BYTES,
    default_templates_dir,
    poll_loop_states,
    statements,
)
from sfn_patterns_cli.dag_aggregate.simulate import remaining_path
from sfn_patterns_cli.templating import retry_policy

TASK_TEMPLATE = "dependency_task.asl.json.j2"
DEFAULT_DURATION = 1.0
PLAN_VERSION = 2  # 2: per-task tags (selection); the runtime reads 1 too
# A task execution may outlive its statement's timeout by Data API retries (throttling
# backoff) and its report's retries; past this margin it is stuck and is stopped.
TASK_TIMEOUT_MARGIN = 600


def priorities(graph: nx.DiGraph, durations: Mapping[str, float]) -> dict[str, float]:
    """Longest remaining path of each task: its duration plus its longest child chain.

    Critical-path list scheduling starts the ready task with the largest value first;
    with unit durations this is the number of tasks on the longest chain below it.
    The simulator uses the same function, so simulated and real dispatch agree.
    """
    return {task: round(value, 6) for task, value in remaining_path(graph, durations).items()}


def plan_document(plan: Plan, options: RenderOptions) -> dict[str, object]:
    """The JSON document the runtime Lambdas read; edges are the transitively reduced ones.

    Reduced edges suffice: a task whose reduced parents all succeeded has every
    transitive ancestor succeeded too, and fewer edges mean fewer DynamoDB updates.
    """
    if not plan.level:
        raise RenderError("nothing to render: the plan has no tasks")
    missing = sorted(set(plan.level) - set(plan.tasks))
    if missing:
        raise RenderError(f"no SQL for task(s) {', '.join(missing[:5])}; plan from a SQL dir")
    graph = plan.reduced
    durations = {
        name: (spec.duration_seconds if spec.duration_seconds is not None else DEFAULT_DURATION)
        for name, spec in plan.tasks.items()
    }
    priority = priorities(graph, durations)
    tasks: dict[str, object] = {}
    for name in sorted(plan.level):
        spec = plan.tasks[name]
        pre_sql, sql = statements(plan, name)
        wait, polls = task_limits(plan, name, options)
        task: dict[str, object] = {"sql": sql, "wait": wait}
        if pre_sql is not None:
            task["pre_sql"] = pre_sql
        task["max_polls"] = polls
        tasks[name] = {
            "parents": sorted(graph.predecessors(name)),
            "children": sorted(graph.successors(name)),
            "duration": durations[name],
            "priority": priority[name],
            "tags": sorted(set(spec.tags)),
            "task": task,
        }
    check_task_executions(plan, options)
    return {
        "version": PLAN_VERSION,
        "schema": plan.schema,
        "critical_path": max(priority.values()),
        "total_work": round(sum(durations.values()), 6),
        "tasks": tasks,
    }


def document_json(document: Mapping[str, object]) -> str:
    """Canonical JSON of the plan document (sorted keys, compact): stable bytes, stable hash."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def document_sha256(text: str) -> str:
    """Hex SHA-256 of the document text: names the S3 object, so a new plan is a new key."""
    return hashlib.sha256(text.encode()).hexdigest()


def task_execution_timeout(plan: Plan, options: RenderOptions) -> int:
    """Seconds a task execution may run: the longest task's wait + polls, plus a margin.

    The wait gives up on a statement first (and cancels it); this bound only
    ends an execution that is stuck elsewhere, which the runtime then hears about as
    TIMED_OUT (EventBridge) and records as the task's failure.
    """
    longest = 0
    for name in plan.tasks:
        wait, polls = task_limits(plan, name, options)
        if options.completion == "event":  # parked from the start, a check per period
            longest = max(longest, polls * options.fallback_seconds)
        else:
            longest = max(longest, wait + polls * options.poll_interval)
    return longest + TASK_TIMEOUT_MARGIN


def render_task_machine(
    options: RenderOptions,
    task_done_arn: str,
    templates_dir: Path | None = None,
    timeout_seconds: int | None = None,
) -> str:
    """The task state machine's ASL: execute, poll, report to ``task_done``.

    The execution input is ``{"run_id", "task_id", "attempt", "task": {...},
    "statement": {"id": null}, "result": {"rows": null}}`` where ``task`` is the plan
    document's per-task object, so one definition serves every task and the
    definition size does not grow with the DAG. ``timeout_seconds`` becomes the
    definition's ``TimeoutSeconds`` (see :func:`task_execution_timeout`).
    """
    options.validate()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir or default_templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
    try:
        text = env.get_template(TASK_TEMPLATE).render(
            target=options.target.parameters(),
            retry=options.retry,
            retry_policy=retry_policy(),
            task_done_arn=task_done_arn,
            completion=options.completion,
            partition=options.partition,
            poll_loop=poll_loop_states("Task", options),
        )
    except jinja2.TemplateNotFound as err:
        raise RenderError(
            f"template {err.name} not found (set SFN_PATTERNS_DAG_TEMPLATES)"
        ) from None
    definition = json.loads(text)
    if timeout_seconds is not None:
        definition["TimeoutSeconds"] = int(timeout_seconds)
    if options.compact:
        out = json.dumps(definition, separators=(",", ":"), ensure_ascii=False)
    else:
        out = json.dumps(definition, indent=2, ensure_ascii=False)
    if len(out.encode()) > MAX_DEFINITION_BYTES:  # pragma: no cover - fixed-size template
        raise RenderError("task state machine definition is over the 1 MB limit")
    return out
