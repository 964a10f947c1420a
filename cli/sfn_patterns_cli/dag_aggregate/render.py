"""Render a plan into an Amazon States Language definition from the Jinja templates.

Design (details in README.md): one Map state per stage; Map items are task ids (the
Map adds the index), never SQL, so the 256 KB payload limit does not grow with the
SQL. Inside the iterator a Choice on the index jumps to a per-task Pass state whose
``Result`` holds that task's SQL as a plain JSON string.

Why not ``States.ArrayGetItem(States.Array('sql', ...), $.index)``: intrinsic string
literals need ``'{}\\`` escaped, and LocalStack 4.14.0 keeps the backslash of ``\\'``
when it evaluates such literals (AWS drops it), so any SQL with a string literal would
reach Redshift differently on LocalStack and on AWS. JSON strings are exact on both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jinja2

from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.history import check_level_strategy
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, task_limits
from sfn_patterns_cli.dag_aggregate.planner import Plan
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES
from sfn_patterns_cli.templating import render_tftpl, retrier, retry_policy, templates_root

MAX_DEFINITION_BYTES = 1_048_576
MAX_STATE_NAME = 80
TEMPLATE = "state_machine.asl.json.j2"


def default_templates_dir() -> Path:
    """``templates/dag-aggregate`` (package data; override with SFN_PATTERNS_DAG_TEMPLATES)."""
    override = os.environ.get("SFN_PATTERNS_DAG_TEMPLATES")
    if override:
        return Path(override)
    return templates_root() / "dag-aggregate"


def poll_loop_template(completion: str = "poll") -> Path:
    """The job-poller's wait every task uses: its poll loop, or its event-completed wait."""
    name = "poll-event-sdk.asl.json.tftpl" if completion == "event" else "poll-loop.asl.json.tftpl"
    return templates_root() / "job-poller" / name


# Redshift Data API statement statuses, as the poll loop's Choice sees them. A
# "Redshift Data Statement Status Change" event carries the same values in ``state``.
STATEMENT_STATUSES = {
    "succeeded": ["FINISHED"],
    "failed": ["FAILED", "ABORTED"],
    "running": ["SUBMITTED", "PICKED", "STARTED"],
}
POLL_PATH = "$.poll"
# Data API errors worth another describe besides throttling (templates/retry/policy.json).
DESCRIBE_RETRY_ERRORS = [
    "RedshiftData.ActiveStatementsExceededException",
    "RedshiftData.InternalServerException",
]


# A crashed or timed-out invoke of the park (Runtime.ExitError, Sandbox.Timedout).
PARK_CRASHES = ["Runtime.ExitError", "Sandbox.Timedout"]


def poll_loop_states(prefix: str, options: RenderOptions) -> str:
    """The job-poller's wait for one task's statement, as JSON members (no outer braces).

    Limits come from each task's Pass state or input (``$.task.wait``,
    ``$.task.max_polls``), so one wait serves tasks with different waits and
    timeouts. ``completion = "poll"``: the poll loop (initial wait, then a
    describeStatement every poll interval). ``completion = "event"``: the statement
    runs WithEvent, the task parks on a token (the event-completion function) until
    its status-change event resumes it, with a describeStatement every
    ``fallback_seconds`` in case the event is lost. Exits: FINISHED succeeds;
    FAILED/ABORTED go to a Choice that reports the statement's Error (after one
    describeStatement in event mode, as the event carries no message); running past
    the limit cancels the statement; any other status fails.
    """

    def rules(statuses: list[str]) -> str:
        return json.dumps(
            [{"Variable": f"{POLL_PATH}.status.status", "StringEquals": s} for s in statuses]
        )

    policy = retry_policy()
    # The park is an invoke of the event-completion function; the status check a Data
    # API describe: each retries what AWS recommends, with the options' budget. The park
    # also retries its process dying or timing out: it registers the token and reads a
    # recorded end, both safe to repeat (a repeated park counts one check more).
    await_retrier = retrier(policy["lambda"] + PARK_CRASHES, options.retry)
    describe_retrier = retrier(
        policy["throttling"]["aws-sdk:redshiftdata"] + DESCRIBE_RETRY_ERRORS, options.retry
    )
    event = options.completion == "event"
    variables: dict[str, object] = {
        "name": f"{prefix} Poll",
        "state_path": POLL_PATH,
        "loop_limits": '"max_wait_count.$": "$.task.max_polls", '
        '"initial_wait_seconds.$": "$.task.wait"',
        "poll_interval_seconds": options.poll_interval,
        "fallback_seconds": options.fallback_seconds,
        "await_resource": f"arn:{options.partition}:states:::lambda:invoke.waitForTaskToken",
        "await_parameters": json.dumps(
            {
                "FunctionName": options.completion_function_arn,
                "Payload": {
                    "action": "park",
                    "job_id.$": "$.statement.id",
                    "token.$": "$$.Task.Token",
                    "execution.$": "$$.Execution.Id",
                    "max_checks.$": "$.task.max_polls",
                },
            }
        ),
        "await_retriers": json.dumps(await_retrier),
        "get_status_resource": (
            f"arn:{options.partition}:states:::aws-sdk:redshiftdata:describeStatement"
        ),
        "get_status_parameters": json.dumps({"Id.$": "$.statement.id"}),
        # The whole response is kept: Error is present only when a statement failed.
        "get_status_result_selector": json.dumps({"status.$": "$.Status", "detail.$": "$"}),
        "get_status_retriers": json.dumps(describe_retrier),
        "succeeded_rules": rules(STATEMENT_STATUSES["succeeded"]),
        "failed_rules": rules(STATEMENT_STATUSES["failed"]),
        "running_rules": rules(STATEMENT_STATUSES["running"]),
        "succeeded_next": f"{prefix} Finished",
        "failed_next": f"{prefix} Failure detail" if event else f"{prefix} Statement ended?",
        "timeout_next": f"{prefix} Cancel",
        "unknown_next": f"{prefix} Unexpected status",
        "error_next": f"{prefix} Poll error",
    }
    text = render_tftpl(poll_loop_template(options.completion), variables)
    return text.strip()[1:-1].strip()


def statements(plan: Plan, task: str) -> tuple[str | None, str]:
    """``(pre_sql, sql)`` for a task: reload = DELETE + INSERT (one batch), append = INSERT.

    DELETE, not TRUNCATE: in Redshift TRUNCATE commits the open transaction, so a failed
    INSERT after it would leave the table empty; DELETE + INSERT in one
    ``batchExecuteStatement`` is a single transaction and readers never see it empty.
    """
    spec = plan.tasks[task]
    insert = f"INSERT INTO {spec.table}\n{spec.select_sql}"
    return (f"DELETE FROM {spec.table}" if spec.mode == "reload" else None), insert


def _context(plan: Plan, strategy: str, options: RenderOptions) -> dict[str, object]:
    if strategy not in plan.stages:
        raise RenderError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    missing = sorted(set(plan.level) - set(plan.tasks))
    if missing:
        raise RenderError(f"no SQL for task(s) {', '.join(missing[:5])}; plan from a SQL dir")
    stages = []
    for number, stage in enumerate(plan.stages[strategy], start=1):
        prefix = f"S{number}"
        items = []
        for index, task in enumerate(stage.tasks):
            pre_sql, sql = statements(plan, task)
            wait, polls = task_limits(plan, task, options)
            result: dict[str, object] = {"sql": sql, "wait": wait}
            if pre_sql is not None:
                result["pre_sql"] = pre_sql
            result["max_polls"] = polls
            items.append(
                {
                    "state": f"{prefix} SQL {index}: {task}"[:MAX_STATE_NAME],
                    "result": result,
                    "batch": pre_sql is not None,
                }
            )
        stages.append(
            {
                "prefix": prefix,
                "items_state": f"Stage {number} items",
                "map_state": f"Stage {number}: {stage.label}"[:MAX_STATE_NAME],
                "task_ids": list(stage.tasks),
                "entries": items,
                "any_batch": any(i["batch"] for i in items),
                "any_single": any(not i["batch"] for i in items),
            }
        )
    return {
        "comment": (
            f"dag-aggregate {strategy}: {len(plan.level)} tasks in {len(stages)} stages "
            f"(generated by sfn-patterns dag render; do not edit)"
        ),
        "stages": stages,
        "max_concurrency": options.max_concurrency,
        "poll_interval": options.poll_interval,
        "retry": options.retry,
        "retry_policy": retry_policy(),
        "target": options.target.parameters(),
        "completion": options.completion,
        "partition": options.partition,
    }


def render(
    plan: Plan, strategy: str, options: RenderOptions, templates_dir: Path | None = None
) -> str:
    """The ASL definition as a JSON string; raises RenderError if it would be invalid."""
    if options.max_concurrency < 0:
        raise RenderError("--max-concurrency must be >= 0 (0 = unlimited)")
    options.validate()
    if not plan.level:
        raise RenderError("nothing to render: the plan has no tasks")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir or default_templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
    env.globals["poll_loop"] = lambda prefix: poll_loop_states(prefix, options)
    try:
        text = env.get_template(TEMPLATE).render(**_context(plan, strategy, options))
    except jinja2.TemplateNotFound as err:
        raise RenderError(
            f"template {err.name} not found (set SFN_PATTERNS_DAG_TEMPLATES)"
        ) from None
    definition = json.loads(text)  # a template bug must fail loudly here, not in AWS
    check_level_strategy(plan, strategy, options)
    if options.compact:
        out = json.dumps(definition, separators=(",", ":"), ensure_ascii=False)
    else:
        out = json.dumps(definition, indent=2, ensure_ascii=False)
    size = len(out.encode())
    if size > MAX_DEFINITION_BYTES:
        raise RenderError(
            f"definition is {size} bytes, over the {MAX_DEFINITION_BYTES}-byte Step Functions "
            "limit; use --compact, or split the tasks into several state machines"
        )
    return out
