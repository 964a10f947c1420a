"""The demo's run of each pattern: a function of the Terraform outputs it needs.

Each runner takes a plain dict of outputs (see :data:`RUNNERS`), so it does not care
which configuration provisioned them, and returns what the report shows: a
:class:`PatternResult` (the dag-aggregate runner also its Gantt charts and picture).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns_localstack import queues
from sfn_patterns_localstack.demo.progress import Progress
from sfn_patterns_localstack.demo.report import (
    DagRun,
    ExecutionSummary,
    PatternResult,
    TaskSpan,
)
from sfn_patterns_localstack.executions import count_transitions, history, peak_overlap

Aws = Callable[[str], Any]


def _seconds(described: dict[str, Any]) -> float:
    stop = described.get("stopDate")
    return (stop - described["startDate"]).total_seconds() if stop else 0.0


def summarize(sfn: Any, described: dict[str, Any]) -> ExecutionSummary:
    """The report's line for one finished execution."""
    return ExecutionSummary(
        name=described.get("name") or described["executionArn"].rsplit(":", 1)[-1],
        status=described["status"],
        seconds=_seconds(described),
        transitions=count_transitions(history(sfn, described["executionArn"])),
    )


def _start(sfn: Any, arn: str, payload: dict[str, Any], name: str | None = None) -> str:
    kwargs: dict[str, Any] = {"stateMachineArn": arn, "input": json.dumps(payload)}
    if name:
        kwargs["name"] = name
    return sfn.start_execution(**kwargs)["executionArn"]


def _result(
    pattern: str,
    started: float,
    executions: list[ExecutionSummary],
    ok: bool,
    detail: str,
) -> PatternResult:
    failed = [e for e in executions if e.status != "SUCCEEDED"]
    if failed:
        detail = f"{detail}; not succeeded: " + ", ".join(f"{e.name} {e.status}" for e in failed)
    return PatternResult(
        pattern=pattern,
        status="SUCCEEDED" if ok and not failed else "FAILED",
        seconds=time.monotonic() - started,
        transitions=sum(e.transitions for e in executions),
        detail=detail,
        executions=executions,
    )


# --- the five patterns -------------------------------------------------------------------


def run_job_poller(outputs: dict[str, Any], aws: Aws, progress: Progress) -> PatternResult:
    """One 3-second sample job: run it, wait, poll until it succeeds.

    Outputs: ``state_machine_arn`` (the job-poller state machine).
    """
    sfn = aws("stepfunctions")
    started = time.monotonic()
    arn = _start(
        sfn, outputs["state_machine_arn"], {"job": {"duration_seconds": 3, "outcome": "succeed"}}
    )
    described = progress.wait_executions(sfn, [arn], "job-poller execution")
    events = history(sfn, arn)
    waits = sum(1 for e in events if e["type"] == "WaitStateEntered")
    return _result(
        "job-poller",
        started,
        [summarize(sfn, d) for d in described],
        True,
        f"a 3 s sample job, polled to completion ({waits} waits)",
    )


def _exists(sfn: Any, execution_arn: str) -> bool:
    try:
        sfn.describe_execution(executionArn=execution_arn)
    except ClientError as error:
        if error.response["Error"]["Code"] == "ExecutionDoesNotExist":
            return False
        raise
    return True


def run_sqs_throttle(outputs: dict[str, Any], aws: Aws, progress: Progress) -> PatternResult:
    """Enqueue requests, let the starter Lambda admit them, check the concurrency bound.

    Outputs: ``queue_url``, ``starter_function_name``, ``max_concurrency`` and
    ``target_state_machine_arn`` (the workflow the throttle admits). The starter is
    invoked directly rather than waiting for its schedule, as the tests do.
    """
    from sfn_patterns.sqs_throttle import enqueue, execution_arn, execution_name

    sfn, sqs, lam = aws("stepfunctions"), aws("sqs"), aws("lambda")
    limit = int(outputs["max_concurrency"])
    count = limit * 2 + 1
    run_id = uuid.uuid4().hex[:6]
    request_ids = [f"demo-{run_id}-{i:02d}" for i in range(count)]
    started = time.monotonic()
    for i, request_id in enumerate(request_ids):
        enqueue(
            outputs["queue_url"],
            {"seconds": 2, "i": i},
            request_id=request_id,
            group_id=f"g{i % 3}",
            client=sqs,
        )
    progress.log(f"enqueued {count} requests; invoking the starter until the queue is empty")
    deadline = time.monotonic() + 120
    while queues.depth(sqs, outputs["queue_url"]) and time.monotonic() < deadline:
        try:
            response = lam.invoke(
                FunctionName=outputs["starter_function_name"],
                Payload=json.dumps({"max_seconds": 10}).encode(),
            )
        except ClientError as error:  # reserved concurrency 1: the scheduled run is going
            if error.response["Error"]["Code"] != "TooManyRequestsException":
                raise
            time.sleep(1)
            continue
        if "FunctionError" in response:
            raise RuntimeError(f"starter failed: {response['Payload'].read()!r}")
    # Admitted requests were started under their deterministic names (by these
    # invocations or by the starter's own schedule): wait for all of them.
    arns = [
        execution_arn(outputs["target_state_machine_arn"], execution_name(r)) for r in request_ids
    ]
    existing = [arn for arn in arns if _exists(sfn, arn)]
    missing = len(arns) - len(existing)
    described = progress.wait_executions(sfn, existing, "throttled executions")
    executions = [summarize(sfn, d) for d in described]
    peak = peak_overlap(
        [
            (d["startDate"].timestamp(), d["stopDate"].timestamp())
            for d in described
            if d.get("stopDate")
        ]
    )
    ok = not missing and peak <= limit
    detail = f"{count} requests, at most {peak} running at once (limit {limit})"
    if missing:
        detail += f"; {missing} never started"
    return _result("sqs-throttle", started, executions, ok, detail)


def _executions_of_run(sfn: Any, state_machine_arn: str, run_id: str) -> list[dict[str, Any]]:
    """Descriptions of the executions of a state machine whose input carries ``run_id``."""
    found = []
    for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=state_machine_arn):
        for item in page["executions"]:
            described = sfn.describe_execution(executionArn=item["executionArn"])
            try:
                if json.loads(described.get("input") or "{}").get("demo_run") == run_id:
                    found.append(described)
            except (AttributeError, ValueError):
                continue
    return found


def run_semaphore(outputs: dict[str, Any], aws: Aws, progress: Progress) -> PatternResult:
    """Start twice the semaphore's limit of wrapper executions; check the target's overlap.

    Outputs: ``wrapper_state_machine_arn``, ``target_state_machine_arn`` (the critical
    work the wrapper runs while it holds a slot) and ``max_concurrency``. The bound is
    read from the target executions' own start and stop times.
    """
    sfn = aws("stepfunctions")
    limit = int(outputs["max_concurrency"])
    count = limit * 2
    run_id = uuid.uuid4().hex[:8]
    started = time.monotonic()
    arns = [
        _start(
            sfn, outputs["wrapper_state_machine_arn"], {"seconds": 2, "demo_run": run_id, "n": i}
        )
        for i in range(count)
    ]
    described = progress.wait_executions(sfn, arns, "semaphore wrapper executions")
    targets = _executions_of_run(sfn, outputs["target_state_machine_arn"], run_id)
    executions = [summarize(sfn, d) for d in described + targets]
    peak = peak_overlap(
        [
            (d["startDate"].timestamp(), d["stopDate"].timestamp())
            for d in targets
            if d.get("stopDate")
        ]
    )
    ok = len(targets) == count and peak <= limit
    detail = f"{count} executions, at most {peak} in the critical section at once (limit {limit})"
    if len(targets) != count:
        detail += f"; {len(targets)} of {count} reached the critical section"
    return _result("semaphore", started, executions, ok, detail)


def run_status_table(outputs: dict[str, Any], aws: Aws, progress: Progress) -> PatternResult:
    """Track five tasks (one of which fails) in the table Terraform created.

    Outputs: ``table_name``. The tracker runs in this process, as a worker would.
    """
    import os

    from sfn_patterns.status_table import Status, Tracker

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    use_case = f"demo-orders-{uuid.uuid4().hex[:6]}"
    tracker = Tracker(
        table_name=outputs["table_name"],
        use_case_id=use_case,
        host=aws("dynamodb").meta.endpoint_url,
        region="us-east-1",
    )
    started = time.monotonic()
    task_ids = [f"order-{n}" for n in range(1, 6)]
    tracker.create_tasks(task_ids)
    executions = []
    for task_id in task_ids:
        begun = time.monotonic()
        try:
            with tracker.start(task_id):
                if task_id == "order-3":
                    raise ValueError("card declined")
            status = "SUCCEEDED"
        except ValueError:
            status = "FAILED"
        executions.append(ExecutionSummary(task_id, status, time.monotonic() - begun))
    failed = [task.task_id for task in tracker.query(status=Status.FAILED)]
    succeeded = tracker.query(status=Status.SUCCEEDED)
    progress.log(f"use case {use_case}: {len(succeeded)} succeeded, failed {failed}")
    # order-3 is meant to fail: the pattern succeeds when the table says exactly that.
    ok = failed == ["order-3"] and len(succeeded) == 4
    result = _result(
        "status-table",
        started,
        [],
        ok,
        f"{len(succeeded)} tasks succeeded, 1 failed on purpose (GSI query finds: "
        f"{', '.join(failed) or 'none'})",
    )
    result.executions = executions
    return result


# --- dag-aggregate -------------------------------------------------------------------------


@dataclass
class DagOutcome:
    """The dag-aggregate result plus what only the report shows (Gantt charts, the DAG)."""

    result: PatternResult
    runs: list[DagRun] = field(default_factory=list)
    dag_svg: str | None = None


def spans_from_history(events: Sequence[dict[str, Any]], started: datetime) -> list[TaskSpan]:
    """Per-task start/end from a Map-per-stage execution's history.

    Each stage's Map state is entered with ``{"items": [task ids]}``; its iteration
    events name the Map state and the item index, which gives the task.
    """
    items: dict[str, list[str]] = {}
    opened: dict[tuple[str, int], datetime] = {}
    spans: list[TaskSpan] = []
    for event in events:
        kind = event["type"]
        if kind == "MapStateEntered":
            details = event["stateEnteredEventDetails"]
            try:
                items[details["name"]] = list(json.loads(details.get("input") or "{}")["items"])
            except (KeyError, TypeError, ValueError):
                items[details["name"]] = []
        elif kind == "MapIterationStarted":
            details = event["mapIterationStartedEventDetails"]
            opened[(details["name"], details["index"])] = event["timestamp"]
        elif kind in ("MapIterationSucceeded", "MapIterationFailed", "MapIterationAborted"):
            key = kind[0].lower() + kind[1:] + "EventDetails"
            details = event[key]
            name, index = details["name"], details["index"]
            begin = opened.pop((name, index), None)
            if begin is None:
                continue
            tasks = items.get(name, [])
            task = tasks[index] if index < len(tasks) else f"{name} #{index}"
            spans.append(
                TaskSpan(
                    task=task,
                    start=(begin - started).total_seconds(),
                    end=(event["timestamp"] - started).total_seconds(),
                    stage=name,
                    status="SUCCEEDED" if kind == "MapIterationSucceeded" else "FAILED",
                )
            )
    return spans


def spans_from_statements(
    redshift: Any, described: dict[str, Any], prefix: str = "sfn-dag "
) -> list[TaskSpan]:
    """Per-task start/end from the Data API statements the execution ran.

    Every strategy names its statements ``sfn-dag <task>``; this reads their
    CreatedAt/UpdatedAt within the execution's time window. The fallback for
    strategies that run tasks outside Map iterations.
    """
    begin, end = (
        described["startDate"],
        described.get("stopDate") or datetime.now(described["startDate"].tzinfo),
    )
    spans = []
    for page in redshift.get_paginator("list_statements").paginate(
        StatementName=prefix, Status="ALL"
    ):
        for statement in page["Statements"]:
            created, updated = statement["CreatedAt"], statement["UpdatedAt"]
            if created < begin or updated > end:
                continue
            spans.append(
                TaskSpan(
                    task=statement.get("StatementName", "")[len(prefix) :] or statement["Id"],
                    start=(created - begin).total_seconds(),
                    end=(updated - begin).total_seconds(),
                    stage="Data API statement",
                    status="SUCCEEDED" if statement["Status"] == "FINISHED" else "FAILED",
                )
            )
    return spans


def spans_from_run_results(document: dict[str, Any], started: datetime) -> list[TaskSpan]:
    """Per-task start/end from a dependency run's document (run_results.json, v1).

    The runtime records when each task execution started and when it reported, so
    the chart needs neither the execution history nor the Data API.
    """
    from sfn_patterns.dag_aggregate.runtime.artifacts import SCHEMA_VERSION, parse_time

    if document.get("metadata", {}).get("schema_version") != SCHEMA_VERSION:
        return []
    spans = []
    for result in document.get("results", []):
        begin, end = (
            parse_time(result.get("started_at") or ""),
            parse_time(result.get("finished_at") or ""),
        )
        if begin is None or end is None:
            continue  # skipped, or never reported
        spans.append(
            TaskSpan(
                task=result["task"],
                start=(begin - started).total_seconds(),
                end=(end - started).total_seconds(),
                stage=f"attempt {result['attempt']}",
                status="SUCCEEDED" if result["status"] == "success" else "FAILED",
            )
        )
    return spans


def _run_document(aws: Aws, location: str | None, run_id: str) -> dict[str, Any] | None:
    """A dependency run's document from S3, or None (not that strategy, or not written)."""
    if not location:
        return None
    from sfn_patterns_cli.dag_aggregate.runs import RunError, read_run_results

    try:
        return read_run_results(aws("s3"), location, run_id)
    except RunError:
        return None


def _run_sql(redshift: Any, workgroup: str, database: str, sql: str) -> None:
    statement = redshift.execute_statement(WorkgroupName=workgroup, Database=database, Sql=sql)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        described = redshift.describe_statement(Id=statement["Id"])
        if described["Status"] == "FINISHED":
            return
        if described["Status"] in ("FAILED", "ABORTED"):
            raise RuntimeError(f"set-up statement failed: {described.get('Error')}\n{sql}")
        time.sleep(0.1)
    raise RuntimeError(f"set-up statement did not finish: {sql}")


def run_dag_aggregate(outputs: dict[str, Any], aws: Aws, progress: Progress) -> DagOutcome:
    """Run every strategy's state machine on a freshly set-up warehouse; time each task.

    Outputs: ``state_machines`` (strategy -> ARN), ``workgroup``, ``database``,
    ``sql_dir`` (the task SQL, for the DAG picture and the agg tables' DDL),
    ``setup_sql`` (a script creating the raw tables the tasks read) and
    ``run_results`` (strategy -> s3:// location of run documents, dependency only).
    Task timings come from the Map iterations, else the run document, else the
    Data API statements.
    """
    from sfn_patterns_cli.dag_aggregate import ddl, draw
    from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir

    sfn, redshift = aws("stepfunctions"), aws("redshift-data")
    plan = plan_from_dir(Path(outputs["sql_dir"]))
    setup = ddl.setup_statements(Path(outputs["setup_sql"]).read_text(), plan)
    workgroup, database = outputs["workgroup"], outputs.get("database", "dev")
    started = time.monotonic()
    runs: list[DagRun] = []
    executions: list[ExecutionSummary] = []
    for strategy, arn in sorted(outputs["state_machines"].items()):
        progress.log(f"strategy {strategy}: fresh warehouse ({len(setup)} set-up statements)")
        for schema in sorted({plan.schema, "raw"}):
            _run_sql(redshift, workgroup, database, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        for statement in setup:
            _run_sql(redshift, workgroup, database, statement)
        execution = _start(sfn, arn, {})
        (described,) = progress.wait_executions(sfn, [execution], f"{strategy} execution")
        events = history(sfn, execution)
        spans = spans_from_history(events, described["startDate"])
        source = "the execution history (Map iterations)"
        document = _run_document(
            aws, outputs.get("run_results", {}).get(strategy), described["name"]
        )
        if not spans and document is not None:
            spans = spans_from_run_results(document, described["startDate"])
            source = "the run document (run_results.json)"
        if not spans:
            spans = spans_from_statements(redshift, described)
            source = "Redshift Data API statements"
        summary = ExecutionSummary(
            f"{strategy}: {described['name']}",
            described["status"],
            _seconds(described),
            count_transitions(events),
        )
        executions.append(summary)
        runs.append(
            DagRun(strategy, summary.status, summary.seconds, summary.transitions, spans, source)
        )
    missing = [
        r.strategy for r in runs if r.status == "SUCCEEDED" and len(r.spans) != len(plan.tasks)
    ]
    detail = f"{len(plan.tasks)} SQL tasks; " + ", ".join(
        f"{r.strategy} {r.seconds:.1f} s" for r in runs
    )
    if missing:
        detail += f"; task timings incomplete for {', '.join(missing)}"
    result = _result("dag-aggregate", started, executions, bool(runs), detail)
    return DagOutcome(result, runs, draw.svg(plan, "dag-aggregate example DAG"))


RUNNERS: dict[str, Callable[[dict[str, Any], Aws, Progress], PatternResult | DagOutcome]] = {
    "job-poller": run_job_poller,
    "sqs-throttle": run_sqs_throttle,
    "semaphore": run_semaphore,
    "dag-aggregate": run_dag_aggregate,
    "status-table": run_status_table,
}
