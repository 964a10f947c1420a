"""``sfn-patterns dag``: plan, render, simulate and draw dag-aggregate state machines.

Every command prints JSON on stdout (or writes ``-o FILE``). Bad input (missing
directory, invalid SQL, a cycle, an unknown strategy...) exits with status 2 and one
line on stderr, never a traceback, so the commands are safe to script.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from sfn_patterns_cli.dag_aggregate.errors import PlanError
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def friendly_errors(func: F) -> F:
    """Turn planner errors into one stderr line and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PlanError as err:
            _fail(str(err).splitlines()[0])
        except OSError as err:
            _fail(f"{err.filename or ''}: {err.strerror or err}")
        return None

    return wrapper  # type: ignore[return-value]


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text.rstrip("\n"))
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


def sql_dir_option(func: F) -> F:
    """The ``--sql-dir`` / ``--schema`` pair every command takes."""
    func = click.option(
        "--schema",
        default="agg",
        show_default=True,
        help="Schema of the produced tables: <table>.sql writes <schema>.<table>.",
    )(func)
    return click.option(
        "--sql-dir",
        required=True,
        type=click.Path(path_type=Path),
        help="Directory of <table>.sql files, one aggregate task (a SELECT) per file.",
    )(func)


output_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file instead of stdout.",
)


def completion_options(func: F) -> F:
    """--completion/--fallback-seconds/--completion-function-arn/--partition."""
    func = click.option(
        "--partition",
        default="aws",
        show_default=True,
        help="AWS partition of the service-integration ARNs (aws-cn, aws-us-gov, ...).",
    )(func)
    func = click.option(
        "--completion-function-arn",
        default=None,
        help="--completion event: ARN of the event-completion function that parks tokens.",
    )(func)
    func = click.option(
        "--fallback-seconds",
        type=click.IntRange(min=1),
        default=300,
        show_default=True,
        help="--completion event: seconds a task waits for its event before describing.",
    )(func)
    return click.option(
        "--completion",
        type=click.Choice(["poll", "event"]),
        default="poll",
        show_default=True,
        help="How a task notices its statement's end: describeStatement polls, or the "
        "statement's status-change event (WithEvent) with a fallback describe.",
    )(func)


def _plan(sql_dir: Path, schema: str) -> Plan:
    return plan_from_dir(sql_dir, schema)


@click.group("dag", context_settings={"help_option_names": ["-h", "--help"]})
def group() -> None:
    """Plan SQL aggregate tasks into a DAG and run them as Step Functions Map stages.

    \b
    Each <table>.sql in --sql-dir is one task producing <schema>.<table>; a task that
    reads <schema>.<other> runs after <other>'s task. Config per task: a leading
    comment such as "-- sfn: mode=append wait=30 timeout=900" (mode: reload|append).

    \b
      sfn-patterns dag plan --sql-dir examples/dag-aggregate/sql
      sfn-patterns dag render --sql-dir ... --strategy parent-level \\
          --database dev --workgroup-name wg -o build/dag.asl.json
      sfn-patterns dag simulate --sql-dir ... --durations durations.json
      sfn-patterns dag graph --sql-dir ... -o build/dag.html
    """


@group.command("plan")
@sql_dir_option
@output_option
@friendly_errors
def plan_cmd(sql_dir: Path, schema: str, output: Path | None) -> None:
    """Print the plan: tasks, reduced edges, levels, L_ij groups, stages, external sources.

    \b
    edges: [parent, child] pairs after transitive reduction (child reads parent).
    levels: 1 + longest path from a root. groups: "L_ij" = level i, earliest child
    on level j ("E": no task reads it). stages: per strategy, the task lists run by
    one Map state each, in order. external_sources: table -> tasks reading it.
    """
    _emit(json.dumps(_plan(sql_dir, schema).to_json(), indent=2), output)


@group.command("render")
@sql_dir_option
@click.option(
    "--strategy",
    required=True,
    metavar="|".join(STRATEGIES),
    help="simple-level: one Map per level. parent-level: one Map per earliest-child level.",
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="MaxConcurrency of every Map state (0 = unlimited).",
)
@click.option("--database", required=True, help="Redshift database name.")
@click.option("--cluster-identifier", help="Provisioned cluster (with --db-user or --secret-arn).")
@click.option("--db-user", help="Database user for temporary cluster credentials.")
@click.option("--secret-arn", help="Secrets Manager secret with database credentials.")
@click.option("--workgroup-name", help="Redshift Serverless workgroup (instead of a cluster).")
@click.option(
    "--default-wait",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Seconds before the first status poll, for tasks without 'wait='.",
)
@click.option(
    "--poll-interval",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Seconds between describeStatement polls.",
)
@click.option(
    "--default-timeout",
    type=click.IntRange(min=1),
    default=3600,
    show_default=True,
    help="Seconds before a task fails (and its statement is cancelled), without 'timeout='.",
)
@click.option("--compact", is_flag=True, help="Minified JSON (smaller; the limit is 1 MB).")
@click.option(
    "--templates-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory with state_machine.asl.json.j2 (default: the packaged ones).",
)
@completion_options
@output_option
@friendly_errors
def render_cmd(
    *,
    sql_dir: Path,
    schema: str,
    strategy: str,
    max_concurrency: int,
    database: str,
    cluster_identifier: str | None,
    db_user: str | None,
    secret_arn: str | None,
    workgroup_name: str | None,
    default_wait: int,
    poll_interval: int,
    default_timeout: int,
    compact: bool,
    templates_dir: Path | None,
    completion: str,
    fallback_seconds: int,
    completion_function_arn: str | None,
    partition: str,
    output: Path | None,
) -> None:
    """Render the Amazon States Language definition for one strategy.

    One Map state per stage; items are task ids, the SQL stays in the definition.
    Each task runs through the Redshift Data API and polls describeStatement.
    """
    from sfn_patterns_cli.dag_aggregate.render import RenderOptions, Target, render

    if strategy not in STRATEGIES:
        raise PlanError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    target = Target(
        database=database,
        cluster_identifier=cluster_identifier,
        db_user=db_user,
        secret_arn=secret_arn,
        workgroup_name=workgroup_name,
    )
    target.parameters()  # validate before parsing any SQL
    options = RenderOptions(
        target=target,
        max_concurrency=max_concurrency,
        default_wait=default_wait,
        poll_interval=poll_interval,
        default_timeout=default_timeout,
        compact=compact,
        completion=completion,
        fallback_seconds=fallback_seconds,
        completion_function_arn=completion_function_arn,
        partition=partition,
    )
    options.validate()
    _emit(render(_plan(sql_dir, schema), strategy, options, templates_dir), output)


def _target_and_options(
    *,
    database: str,
    cluster_identifier: str | None,
    db_user: str | None,
    secret_arn: str | None,
    workgroup_name: str | None,
    default_wait: int,
    poll_interval: int,
    default_timeout: int,
    completion: str = "poll",
    fallback_seconds: int = 300,
    completion_function_arn: str | None = None,
    partition: str = "aws",
    compact: bool = True,
) -> Any:
    from sfn_patterns_cli.dag_aggregate.render import RenderOptions, Target

    target = Target(
        database=database,
        cluster_identifier=cluster_identifier,
        db_user=db_user,
        secret_arn=secret_arn,
        workgroup_name=workgroup_name,
    )
    target.parameters()  # validate before parsing any SQL
    options = RenderOptions(
        target=target,
        default_wait=default_wait,
        poll_interval=poll_interval,
        default_timeout=default_timeout,
        completion=completion,
        fallback_seconds=fallback_seconds,
        completion_function_arn=completion_function_arn,
        partition=partition,
        compact=compact,
    )
    options.validate()
    return options


def poll_options(func: F) -> F:
    """--default-wait/--poll-interval/--default-timeout, as ``render`` takes them."""
    func = click.option(
        "--default-timeout",
        type=click.IntRange(min=1),
        default=3600,
        show_default=True,
        help="Seconds before a task fails (and its statement is cancelled), without 'timeout='.",
    )(func)
    func = click.option(
        "--poll-interval",
        type=click.IntRange(min=1),
        default=10,
        show_default=True,
        help="Seconds between describeStatement polls.",
    )(func)
    return click.option(
        "--default-wait",
        type=click.IntRange(min=0),
        default=5,
        show_default=True,
        help="Seconds before the first status poll, for tasks without 'wait='.",
    )(func)


@group.command("dependency-plan")
@sql_dir_option
@poll_options
@completion_options
@output_option
@friendly_errors
def dependency_plan_cmd(
    *,
    sql_dir: Path,
    schema: str,
    default_wait: int,
    poll_interval: int,
    default_timeout: int,
    completion: str,
    fallback_seconds: int,
    completion_function_arn: str | None,
    partition: str,
    output: Path | None,
) -> None:
    """Print the dependency strategy's plan document (JSON, with its sha256).

    \b
    {"sha256": ..., "document": "<canonical JSON>"}: per task its parents, children,
    estimated duration ('duration=' config, default 1), priority (longest remaining
    path) and SQL. Terraform stores the document in S3 for the runtime Lambda.
    """
    from sfn_patterns_cli.dag_aggregate.dependency import (
        document_json,
        document_sha256,
        plan_document,
    )
    from sfn_patterns_cli.dag_aggregate.render import RenderOptions, Target

    options = RenderOptions(
        target=Target(database="-", workgroup_name="-"),
        default_wait=default_wait,
        poll_interval=poll_interval,
        default_timeout=default_timeout,
        completion=completion,
        fallback_seconds=fallback_seconds,
        completion_function_arn=completion_function_arn,
        partition=partition,
    )
    text = document_json(plan_document(_plan(sql_dir, schema), options))
    _emit(json.dumps({"sha256": document_sha256(text), "document": text}), output)


@group.command("render-task")
@click.option("--task-done-arn", required=True, help="ARN of the runtime (task_done) Lambda.")
@click.option("--database", required=True, help="Redshift database name.")
@click.option("--cluster-identifier", help="Provisioned cluster (with --db-user or --secret-arn).")
@click.option("--db-user", help="Database user for temporary cluster credentials.")
@click.option("--secret-arn", help="Secrets Manager secret with database credentials.")
@click.option("--workgroup-name", help="Redshift Serverless workgroup (instead of a cluster).")
@poll_options
@completion_options
@output_option
@friendly_errors
def render_task_cmd(
    *,
    task_done_arn: str,
    database: str,
    cluster_identifier: str | None,
    db_user: str | None,
    secret_arn: str | None,
    workgroup_name: str | None,
    default_wait: int,
    poll_interval: int,
    default_timeout: int,
    completion: str,
    fallback_seconds: int,
    completion_function_arn: str | None,
    partition: str,
    output: Path | None,
) -> None:
    """Render the dependency strategy's task state machine (one execution per task)."""
    from sfn_patterns_cli.dag_aggregate.dependency import render_task_machine

    options = _target_and_options(
        database=database,
        cluster_identifier=cluster_identifier,
        db_user=db_user,
        secret_arn=secret_arn,
        workgroup_name=workgroup_name,
        default_wait=default_wait,
        poll_interval=poll_interval,
        default_timeout=default_timeout,
        completion=completion,
        fallback_seconds=fallback_seconds,
        completion_function_arn=completion_function_arn,
        partition=partition,
    )
    _emit(render_task_machine(options, task_done_arn), output)


def _read_durations(path: Path) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise PlanError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()
    ):
        raise PlanError(f"{path}: expected a JSON object mapping task name -> seconds")
    return {str(k): float(v) for k, v in data.items()}


@group.command("simulate")
@sql_dir_option
@click.option(
    "--durations",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON object task -> seconds. Default: each task's 'duration=' config.",
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Tasks running at once to simulate (0 = unlimited).",
)
@output_option
@friendly_errors
def simulate_cmd(
    sql_dir: Path, schema: str, durations: Path | None, max_concurrency: int, output: Path | None
) -> None:
    """Estimate each strategy's makespan against a lower bound.

    \b
    Level strategies (Map semantics): items start in order, a new one as soon as a
    slot frees, and the next stage starts after the current stage's slowest item.
    dependency: a task starts when its parents are done and a slot is free, the
    ready task with the longest remaining path first.
    lower_bound = max(critical path, total work / max-concurrency).
    """
    from sfn_patterns_cli.dag_aggregate.simulate import simulate

    plan = _plan(sql_dir, schema)
    if durations is not None:
        seconds = _read_durations(durations)
    else:
        seconds = {
            name: task.duration_seconds
            for name, task in plan.tasks.items()
            if task.duration_seconds is not None
        }
    unknown = sorted(set(seconds) - set(plan.level))
    if unknown:
        raise PlanError(f"durations name unknown task(s): {', '.join(unknown[:5])}")
    result = simulate(plan.reduced, plan.stages, seconds, max_concurrency)
    _emit(json.dumps(result, indent=2), output)


@group.command("graph")
@sql_dir_option
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="FILE.svg (standalone SVG) or FILE.html (page embedding the SVG).",
)
@friendly_errors
def graph_cmd(sql_dir: Path, schema: str, output: Path) -> None:
    """Draw the reduced DAG: levels as columns, nodes coloured by L_ij group."""
    from sfn_patterns_cli.dag_aggregate import draw

    suffix = output.suffix.lower()
    if suffix not in (".svg", ".html", ".htm"):
        raise PlanError(f"{output}: output must end in .svg or .html")
    plan = _plan(sql_dir, schema)
    title = f"dag-aggregate: {sql_dir}"
    _emit(draw.svg(plan, title) if suffix == ".svg" else draw.html(plan, title), output)
