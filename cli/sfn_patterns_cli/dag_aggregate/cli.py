"""``sfn-patterns dag``: plan, render, simulate, draw, select, run, retry and inspect DAGs.

The planning commands print JSON on stdout (or write ``-o FILE``); ``module-data`` is
the one call modules/dag-aggregate makes per ``terraform plan``. ``run``, ``retry``
and ``status`` drive a deployed dependency-strategy DAG (boto3). Bad input (missing
directory, invalid SQL, an unresolved table, a cycle, an unknown strategy...) exits
with status 2 and one line on stderr, never a traceback, so the commands are safe
to script.
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
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.parse_cache import CACHE_ENV, default_cache_dir
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_cli.dag_aggregate.resolve import DEFAULT_SEARCH_PATH, Rules
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


# The codes AWS answers a call its policies do not allow with.
ACCESS_DENIED = ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation")


def _aws_error(err: Exception) -> str | None:
    """One line for a failed AWS call (botocore's errors), or None for any other error.

    Why: `run`, `retry` and `status` call AWS; a refusal should say which call and what
    to attach, not print botocore's traceback.
    """
    if not type(err).__module__.startswith("botocore"):
        return None
    response = getattr(err, "response", None)
    if not isinstance(response, dict):
        return f"AWS call failed: {err}"
    code = response.get("Error", {}).get("Code", "")
    message = response.get("Error", {}).get("Message", "")
    line = f"AWS refused {getattr(err, 'operation_name', 'a call')} ({code}): {message}"
    if code in ACCESS_DENIED:
        line += " (attach modules/dag-aggregate's operator_policy_json to the caller's role)"
    return line


def friendly_errors(func: F) -> F:
    """Turn planner errors and AWS's refusals into one stderr line and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PlanError as err:
            _fail(str(err).splitlines()[0])
        except OSError as err:
            _fail(f"{err.filename or ''}: {err.strerror or err}")
        except Exception as err:
            line = _aws_error(err)
            if line is None:
                raise
            _fail(line)
        return None

    return wrapper  # type: ignore[return-value]


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text.rstrip("\n"))
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


def _stack(options: list[Callable[[F], F]], func: F) -> F:
    """Apply click options so that --help lists them in the order given."""
    for option in reversed(options):
        func = option(func)
    return func


def sql_dir_option(func: F) -> F:
    """The options of every command that reads the SQL: directory, schema, resolution, cache."""
    options = [
        click.option(
            "--sql-dir",
            required=True,
            type=click.Path(path_type=Path),
            help="Directory of <table>.sql files, one aggregate task (a SELECT) per file.",
        ),
        click.option(
            "--schema",
            default="agg",
            show_default=True,
            help="Schema of the produced tables: <table>.sql writes <schema>.<table>.",
        ),
        click.option(
            "--external",
            "external",
            multiple=True,
            metavar="PATTERN",
            help="Tables the SQL may read that no task produces, e.g. 'raw.*' or "
            "'public.dim_*' (repeatable; files add their own with '-- sfn: external=').",
        ),
        click.option(
            "--search-path",
            default=",".join(DEFAULT_SEARCH_PATH),
            show_default=True,
            help="Schemas that unqualified table names resolve through, in order "
            "(Redshift's search_path; $user is --user, or skipped).",
        ),
        click.option("--user", default=None, help="The database user that $user stands for."),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help=f"Parse cache directory (default: ${CACHE_ENV}, else "
            "~/.cache/sfn-patterns/dag-parse).",
        ),
        click.option("--no-cache", is_flag=True, help="Parse every file; read no cache."),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=None,
            help="Processes that parse changed files (default: the CPUs available).",
        ),
    ]
    return _stack(options, func)


def _plan(
    *,
    sql_dir: Path,
    schema: str,
    external: tuple[str, ...],
    search_path: str,
    user: str | None,
    cache_dir: Path | None,
    no_cache: bool,
    workers: int | None,
    stats: bool = False,
    declare_with: str = "--external",
    **_: Any,
) -> Plan:
    rules = Rules(
        external=tuple(p.strip().lower() for p in external if p.strip()),
        search_path=tuple(s.strip() for s in search_path.split(",") if s.strip()),
        user=user,
        declare_with=declare_with,
    )
    for pattern in rules.external:
        if pattern.count(".") not in (1, 2):
            raise PlanError(
                f"external table pattern {pattern!r} must be schema.table or db.schema.table "
                "(wildcards * ? [] allowed), e.g. 'raw.*'"
            )
    plan = plan_from_dir(
        sql_dir,
        schema,
        rules=rules,
        cache_dir=None if no_cache else (cache_dir or default_cache_dir()),
        workers=workers,
    )
    if stats:
        counts = plan.parse_stats
        click.echo(
            f"planned {counts['files']} files: {counts['parsed']} parsed, "
            f"{counts['cached']} from the cache",
            err=True,
        )
    return plan


output_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file instead of stdout.",
)


@click.group("dag", context_settings={"help_option_names": ["-h", "--help"]})
def group() -> None:
    """Plan SQL aggregate tasks into a DAG, run them on Step Functions, select and retry.

    \b
    Each <table>.sql in --sql-dir is one task producing <schema>.<table>; a task that
    reads <schema>.<other> runs after <other>'s task. Config per task: a leading
    comment such as "-- sfn: mode=append wait=30 timeout=900 tags=daily".

    \b
    Every table a task reads must be a task or match a declared external pattern
    (--external 'raw.*', or '-- sfn: external=raw.*' in the file): a typo is an
    error naming the file, line and closest task, never a silent external source.

    \b
      sfn-patterns dag plan --sql-dir examples/dag-aggregate/sql
      sfn-patterns dag render --sql-dir ... --strategy parent-level \\
          --database dev --workgroup-name wg -o build/dag.asl.json
      sfn-patterns dag simulate --sql-dir ... --durations durations.json
      sfn-patterns dag graph --sql-dir ... -o build/dag.html
      sfn-patterns dag select --sql-dir ... --select +kpi_overview
      sfn-patterns dag run --state-machine-arn ARN --select 'daily_events+' --wait
      sfn-patterns dag retry RUN_ID --state-machine-arn ARN
      sfn-patterns dag status RUN_ID --state-machine-arn ARN
    """


stats_option = click.option(
    "--stats", is_flag=True, help="Say on stderr how many files were parsed or cached."
)


def target_options(func: F) -> F:
    """The Redshift Data API target: a database on a cluster or a serverless workgroup."""
    options = [
        click.option("--database", required=True, help="Redshift database name."),
        click.option(
            "--cluster-identifier", help="Provisioned cluster (with --db-user or --secret-arn)."
        ),
        click.option("--db-user", help="Database user for temporary cluster credentials."),
        click.option("--secret-arn", help="Secrets Manager secret with database credentials."),
        click.option(
            "--workgroup-name", help="Redshift Serverless workgroup (instead of a cluster)."
        ),
    ]
    return _stack(options, func)


def poll_options(func: F) -> F:
    """How tasks wait: initial wait, poll interval, timeout, completion mode, partition."""
    options = [
        click.option(
            "--default-wait",
            type=click.IntRange(min=0),
            default=5,
            show_default=True,
            help="Seconds before the first status poll, for tasks without 'wait='.",
        ),
        click.option(
            "--poll-interval",
            type=click.IntRange(min=1),
            default=10,
            show_default=True,
            help="Seconds between describeStatement polls.",
        ),
        click.option(
            "--default-timeout",
            type=click.IntRange(min=1),
            default=3600,
            show_default=True,
            help="Seconds before a task fails (and its statement is cancelled), "
            "without 'timeout='.",
        ),
        click.option(
            "--completion",
            type=click.Choice(["poll", "event"]),
            default="poll",
            show_default=True,
            help="How a task notices its statement's end: describeStatement polls, or the "
            "statement's status-change event (WithEvent) with a fallback describe.",
        ),
        click.option(
            "--fallback-seconds",
            type=click.IntRange(min=1),
            default=300,
            show_default=True,
            help="--completion event: seconds a task waits for its event before describing.",
        ),
        click.option(
            "--completion-function-arn",
            default=None,
            help="--completion event: ARN of the event-completion function that parks tokens.",
        ),
        click.option(
            "--partition",
            default="aws",
            show_default=True,
            help="AWS partition of the service-integration ARNs (aws-cn, aws-us-gov, ...).",
        ),
    ]
    return _stack(options, func)


strategy_option = click.option(
    "--strategy",
    required=True,
    metavar="|".join(STRATEGIES),
    help="simple-level: one Map per level. parent-level: one Map per earliest-child level.",
)
max_concurrency_option = click.option(
    "--max-concurrency",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="MaxConcurrency of every Map state (0 = unlimited).",
)

_SQL_KEYS = (
    "sql_dir", "schema", "external", "search_path", "user", "cache_dir", "no_cache", "workers",
    "stats",
)  # fmt: skip


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(options of the SQL reading, the rest)."""
    sql = {k: kwargs.pop(k) for k in _SQL_KEYS if k in kwargs}
    return sql, kwargs


def _render_options(
    *,
    database: str | None = None,
    cluster_identifier: str | None = None,
    db_user: str | None = None,
    secret_arn: str | None = None,
    workgroup_name: str | None = None,
    default_wait: int,
    poll_interval: int,
    default_timeout: int,
    completion: str = "poll",
    fallback_seconds: int = 300,
    completion_function_arn: str | None = None,
    partition: str = "aws",
    max_concurrency: int = 10,
    compact: bool = True,
    for_definition: bool = True,
) -> RenderOptions:
    """The RenderOptions of a command's options, validated before any SQL is parsed.

    ``for_definition=False`` is for a command that writes no state machine (the
    dependency plan document holds SQL and limits only): it takes no target options,
    so a placeholder workgroup stands in, and neither the target nor the
    event-completion function, which only a definition names, is checked.
    """
    target = (
        Target(
            database=database or "",
            cluster_identifier=cluster_identifier,
            db_user=db_user,
            secret_arn=secret_arn,
            workgroup_name=workgroup_name,
        )
        if for_definition
        else Target(database="-", workgroup_name="-")
    )
    options = RenderOptions(
        target=target,
        max_concurrency=max_concurrency,
        default_wait=default_wait,
        poll_interval=poll_interval,
        default_timeout=default_timeout,
        completion=completion,
        fallback_seconds=fallback_seconds,
        completion_function_arn=completion_function_arn,
        partition=partition,
        compact=compact,
    )
    if for_definition:
        target.parameters()
        options.validate()
    return options


def _check_strategy(strategy: str, allowed: tuple[str, ...]) -> None:
    if strategy not in allowed:
        raise PlanError(f"unknown strategy {strategy!r}; choose one of {', '.join(allowed)}")


@group.command("plan")
@sql_dir_option
@stats_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the plan as JSON (for scripts) instead of the summary.",
)
@output_option
@friendly_errors
def plan_cmd(output: Path | None, as_json: bool, **kwargs: Any) -> None:
    """Print the plan: tasks, levels, what each task waits for, stages, external tables.

    \b
    With --json: tasks; edges, [parent, child] pairs after transitive reduction
    (child reads parent); levels, 1 + longest path from a root; groups, "L_ij" =
    level i, earliest child on level j ("E": no task reads it); stages, per strategy
    the task lists run by one Map state each, in order; external_sources, table ->
    tasks reading it (only tables actually read).
    """
    document = _plan(**kwargs).to_json()
    if as_json:
        _emit(json.dumps(document, indent=2), output)
    else:
        from sfn_patterns_cli.dag_aggregate.summary import plan_summary

        _emit(plan_summary(document), output)


@group.command("render")
@sql_dir_option
@strategy_option
@max_concurrency_option
@target_options
@poll_options
@click.option("--compact", is_flag=True, help="Minified JSON (smaller; the limit is 1 MB).")
@click.option(
    "--templates-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory with state_machine.asl.json.j2 (default: the packaged ones).",
)
@output_option
@friendly_errors
def render_cmd(
    *, strategy: str, templates_dir: Path | None, output: Path | None, **kwargs: Any
) -> None:
    """Render the Amazon States Language definition for one strategy.

    One Map state per stage; items are task ids, the SQL stays in the definition.
    Each task runs through the Redshift Data API and waits with --completion.
    """
    from sfn_patterns_cli.dag_aggregate.render import render

    _check_strategy(strategy, STRATEGIES)
    sql, rest = _split(kwargs)
    options = _render_options(**rest)
    plan = _plan(**{**sql, "user": sql.get("user") or rest.get("db_user")})
    _emit(render(plan, strategy, options, templates_dir), output)


@group.command("module-data")
@sql_dir_option
@click.option(
    "--strategy",
    required=True,
    metavar="|".join((*STRATEGIES, "dependency")),
    help="The module's strategy: what to render besides the plan.",
)
@max_concurrency_option
@target_options
@poll_options
@click.option(
    "--task-done-arn",
    default=None,
    help="dependency: ARN of the runtime Lambda the task state machine reports to.",
)
@click.option(
    "--task-timeout",
    type=click.IntRange(min=1),
    default=None,
    help="dependency: TimeoutSeconds of the task state machine (default: the longest "
    "task's wait and polls, plus 600 s).",
)
@stats_option
@friendly_errors
def module_data_cmd(
    *, strategy: str, task_done_arn: str | None, task_timeout: int | None, **kwargs: Any
) -> None:
    """Everything modules/dag-aggregate needs, in ONE call per terraform plan.

    \b
    Prints {"plan": <the plan command's JSON>, "definition": level strategies' ASL,
    "dependency": {"sha256", "document"}, "task_definition": the task machine's ASL}
    (null where the strategy needs none). The SQL is read and parsed once.
    """
    _check_strategy(strategy, (*STRATEGIES, "dependency"))
    sql, rest = _split(kwargs)
    options = _render_options(**rest)
    if strategy == "dependency" and not task_done_arn:
        raise PlanError("--strategy dependency needs --task-done-arn")
    # Called by terraform plan: a fix names the module's variable, not the CLI's flag.
    plan = _plan(
        **{**sql, "user": sql.get("user") or rest.get("db_user")},
        declare_with="external_tables",
    )
    out: dict[str, Any] = {
        "plan": plan.to_json(),
        "definition": None,
        "dependency": None,
        "task_definition": None,
    }
    if strategy == "dependency":
        from sfn_patterns_cli.dag_aggregate.dependency import (
            document_json,
            document_sha256,
            plan_document,
            render_task_machine,
            task_execution_timeout,
        )

        text = document_json(plan_document(plan, options))
        out["dependency"] = {"sha256": document_sha256(text), "document": text}
        out["task_definition"] = render_task_machine(
            options,
            str(task_done_arn),
            timeout_seconds=task_timeout or task_execution_timeout(plan, options),
        )
    else:
        from sfn_patterns_cli.dag_aggregate.render import render

        out["definition"] = render(plan, strategy, options)
    click.echo(json.dumps(out, separators=(",", ":"), ensure_ascii=False))


@group.command("dependency-plan")
@sql_dir_option
@poll_options
@output_option
@friendly_errors
def dependency_plan_cmd(*, output: Path | None, **kwargs: Any) -> None:
    """Print the dependency strategy's plan document (JSON, with its sha256).

    \b
    {"sha256": ..., "document": "<canonical JSON>"}: per task its parents, children,
    estimated duration ('duration=' config, default 1), priority (longest remaining
    path), tags and SQL. Terraform stores the document in S3 for the runtime Lambda.
    """
    from sfn_patterns_cli.dag_aggregate.dependency import (
        document_json,
        document_sha256,
        plan_document,
    )

    sql, rest = _split(kwargs)
    options = _render_options(**rest, for_definition=False)
    text = document_json(plan_document(_plan(**sql), options))
    _emit(json.dumps({"sha256": document_sha256(text), "document": text}), output)


@group.command("render-task")
@click.option("--task-done-arn", required=True, help="ARN of the runtime (task_done) Lambda.")
@target_options
@poll_options
@click.option(
    "--task-timeout",
    type=click.IntRange(min=1),
    default=None,
    help="TimeoutSeconds of the task state machine (default: none).",
)
@output_option
@friendly_errors
def render_task_cmd(
    *, task_done_arn: str, task_timeout: int | None, output: Path | None, **kwargs: Any
) -> None:
    """Render the dependency strategy's task state machine (one execution per task)."""
    from sfn_patterns_cli.dag_aggregate.dependency import render_task_machine

    options = _render_options(**kwargs)
    _emit(render_task_machine(options, task_done_arn, timeout_seconds=task_timeout), output)


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
    durations: Path | None, max_concurrency: int, output: Path | None, **kwargs: Any
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

    plan = _plan(**kwargs)
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
def graph_cmd(output: Path, **kwargs: Any) -> None:
    """Draw the reduced DAG: levels as columns, nodes coloured by L_ij group."""
    from sfn_patterns_cli.dag_aggregate import draw

    suffix = output.suffix.lower()
    if suffix not in (".svg", ".html", ".htm"):
        raise PlanError(f"{output}: output must end in .svg or .html")
    plan = _plan(**kwargs)
    title = f"dag-aggregate: {kwargs['sql_dir']}"
    _emit(draw.svg(plan, title) if suffix == ".svg" else draw.html(plan, title), output)


# --- selection and runs (the dependency strategy) ---------------------------------------------

select_options = [
    click.option(
        "--select",
        "-s",
        "select",
        multiple=True,
        metavar="SELECTOR",
        help="Tasks to run (repeatable; space-separated in one value too): name, +name "
        "(with ancestors), name+ (descendants), +name+, @name, tag:x, globs; a,b = both.",
    ),
    click.option(
        "--exclude",
        "exclude",
        multiple=True,
        metavar="SELECTOR",
        help="Tasks to leave out of the selection (same syntax).",
    ),
]


def _selectors(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split()]


@group.command("select")
@sql_dir_option
@select_options[0]
@select_options[1]
@friendly_errors
def select_cmd(select: tuple[str, ...], exclude: tuple[str, ...], **kwargs: Any) -> None:
    """Print the tasks a selection covers, in a valid execution order, one per line.

    The same selection code as the runtime's, so this is exactly what
    `sfn-patterns dag run --select ...` (or the execution input) will run.
    """
    import networkx as nx

    from sfn_patterns.dag_aggregate.runtime import selection as sel

    plan = _plan(**kwargs)
    graph = sel.Graph(
        parents={n: list(plan.reduced.predecessors(n)) for n in plan.reduced},
        children={n: list(plan.reduced.successors(n)) for n in plan.reduced},
        tags={n: list(t.tags) for n, t in plan.tasks.items()},
    )
    try:
        chosen = sel.select(graph, _selectors(select), _selectors(exclude))
    except sel.SelectionError as err:
        raise PlanError(str(err)) from None
    for task in nx.lexicographical_topological_sort(plan.reduced):
        if task in chosen:
            click.echo(task)


def aws_options(func: F) -> F:
    """The coordinator to run, and where AWS is (LocalStack: --endpoint-url)."""
    options = [
        click.option(
            "--state-machine-arn",
            envvar="SFN_PATTERNS_DAG_STATE_MACHINE_ARN",
            required=True,
            help="The coordinator (module output state_machine_arn; env "
            "SFN_PATTERNS_DAG_STATE_MACHINE_ARN).",
        ),
        click.option(
            "--endpoint-url",
            envvar="AWS_ENDPOINT_URL",
            default=None,
            help="AWS endpoint (e.g. LocalStack's); default: boto3's.",
        ),
        click.option("--region", default=None, help="AWS region (default: boto3's)."),
    ]
    return _stack(options, func)


def _clients(endpoint_url: str | None, region: str | None) -> tuple[Any, Any]:
    import boto3

    session = boto3.session.Session(region_name=region)
    return (
        session.client("stepfunctions", endpoint_url=endpoint_url),
        session.client("s3", endpoint_url=endpoint_url),
    )


def _finish(
    sfn: Any, s3: Any, arn: str, execution: str, *, run_id: str, run_results: str | None
) -> None:
    from sfn_patterns_cli.dag_aggregate import runs

    described = runs.wait(sfn, execution, timeout=86400)
    location = run_results or runs.run_results_location(sfn, arn)
    try:
        click.echo(runs.format_status(runs.read_run_results(s3, location, run_id)))
    except runs.RunError as err:
        click.echo(f"({err})", err=True)
    if described["status"] != "SUCCEEDED":
        click.echo(
            f"error: run {run_id} ended {described['status']}: "
            f"{described.get('error', '')} {described.get('cause', '')}".rstrip(),
            err=True,
        )
        sys.exit(1)


run_results_option = click.option(
    "--run-results",
    default=None,
    metavar="S3_URI",
    help="Where run documents are (s3://bucket/prefix/; default: the coordinator's "
    "sfn-patterns:run-results tag).",
)


@group.command("run")
@aws_options
@click.option("--run-id", default=None, help="Run id (default: the execution's name).")
@select_options[0]
@select_options[1]
@click.option("--wait", "wait_", is_flag=True, help="Wait for the end and print its status.")
@run_results_option
@friendly_errors
def run_cmd(
    *,
    state_machine_arn: str,
    endpoint_url: str | None,
    region: str | None,
    run_id: str | None,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    wait_: bool,
    run_results: str | None,
) -> None:
    """Start a run of a dependency-strategy DAG, optionally over a selection.

    Prints the execution ARN. Tasks outside the selection are assumed up to date;
    selected tasks still wait for their selected ancestors.
    """
    from sfn_patterns_cli.dag_aggregate import runs

    sfn, s3 = _clients(endpoint_url, region)
    execution = runs.start_run(
        sfn,
        state_machine_arn,
        run_id=run_id,
        select=_selectors(select),
        exclude=_selectors(exclude),
    )
    click.echo(execution)
    if wait_:
        _finish(
            sfn,
            s3,
            state_machine_arn,
            execution,
            run_id=run_id or execution.rsplit(":", 1)[-1],
            run_results=run_results,
        )


@group.command("retry")
@click.argument("run_id")
@aws_options
@click.option("--wait", "wait_", is_flag=True, help="Wait for the end and print its status.")
@run_results_option
@friendly_errors
def retry_cmd(
    *,
    run_id: str,
    state_machine_arn: str,
    endpoint_url: str | None,
    region: str | None,
    wait_: bool,
    run_results: str | None,
) -> None:
    """Re-run only the tasks of RUN_ID that failed or were skipped (and so their descendants).

    Succeeded tasks are kept; the run's selection is the same. Nothing to retry
    (the run succeeded) exits 0 without starting anything.
    """
    from sfn_patterns_cli.dag_aggregate import runs

    sfn, s3 = _clients(endpoint_url, region)
    location = run_results or runs.run_results_location(sfn, state_machine_arn)
    document = runs.read_run_results(s3, location, run_id)
    if document["status"] == "RUNNING":
        raise runs.RunError(f"run {run_id!r} is still running; retry it once it has ended")
    tasks = runs.to_retry(document)
    if not tasks:
        click.echo(f"run {run_id}: nothing to retry ({document['status']})", err=True)
        return
    click.echo(f"run {run_id}: retrying {len(tasks)} task(s): {', '.join(tasks)}", err=True)
    execution = runs.start_run(sfn, state_machine_arn, run_id=run_id, retry=True)
    click.echo(execution)
    if wait_:
        _finish(sfn, s3, state_machine_arn, execution, run_id=run_id, run_results=location)


@group.command("status")
@click.argument("run_id")
@aws_options
@run_results_option
@click.option("--json", "as_json", is_flag=True, help="Print the run document as JSON.")
@friendly_errors
def status_cmd(
    *,
    run_id: str,
    state_machine_arn: str,
    endpoint_url: str | None,
    region: str | None,
    run_results: str | None,
    as_json: bool,
) -> None:
    """Show each task's state and timing in run RUN_ID (from its run document in S3)."""
    from sfn_patterns_cli.dag_aggregate import runs

    sfn, s3 = _clients(endpoint_url, region)
    location = run_results or runs.run_results_location(sfn, state_machine_arn)
    document = runs.read_run_results(s3, location, run_id)
    click.echo(json.dumps(document, indent=2) if as_json else runs.format_status(document))
