"""Lambda entry point of the dependency strategy: start, task_done, ended executions.

One function serves three callers, because they need the same table, plan and
permissions:

* the coordinator state machine (``lambda:invoke.waitForTaskToken``):
  ``{"action": "start", "input": <execution input>, "execution", "token",
  "retry_count"}``, where the input may hold ``run_id``, ``select``, ``exclude`` and
  ``retry``, and ``retry_count`` is the Run state's (which of its attempts this is);
* the task state machine: ``{"action": "task_done", "run_id", "task_id", "attempt",
  "ok", "error"?, "cause"?, "statement_id"?, "rows"?, "started_at"?, "finished_at"?}``
  (the last four feed the run artifact; reports without them still count);
* EventBridge, for task executions that ended FAILED, TIMED_OUT or ABORTED (for
  example aborted by hand or past the task machine's timeout, so they never
  reported): reported as a failure of that attempt, which is a no-op when the
  execution had already reported.

Configuration (environment): TABLE_NAME, PLAN_BUCKET, PLAN_KEY, TASK_STATE_MACHINE_ARN,
MAX_CONCURRENCY; RUN_RESULTS_BUCKET (default: PLAN_BUCKET) for the run documents.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns import clients
from sfn_patterns.dag_aggregate.runtime.artifacts import ArtifactWriter
from sfn_patterns.dag_aggregate.runtime.dispatch import (
    Plan,
    Scheduler,
    StartRequest,
    epoch_ms_iso,
    outcome_from_report,
)
from sfn_patterns.dag_aggregate.runtime.store import Outcome, RunStore

log = logging.getLogger("sfn_patterns.dag_aggregate.runtime")
log.setLevel(logging.INFO)

_PLANS: dict[tuple[str, str], Plan] = {}
# A token that no longer waits (timed out, aborted) must not fail a task_done forever.
_GONE_TOKEN_ERRORS = {"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"}


class StepFunctionsLauncher:
    """The Launcher of ``dispatch.Scheduler`` on a boto3 Step Functions client."""

    def __init__(self, client: Any, task_state_machine_arn: str) -> None:
        self.client = client
        self.task_state_machine_arn = task_state_machine_arn

    def start_task(self, name: str, payload: Mapping[str, Any]) -> None:
        """StartExecution by deterministic name; already started (or ended) counts as done."""
        try:
            self.client.start_execution(
                stateMachineArn=self.task_state_machine_arn,
                name=name,
                input=json.dumps(payload, sort_keys=True),
            )
        except ClientError as err:
            if err.response["Error"]["Code"] != "ExecutionAlreadyExists":
                raise

    def send_success(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess, ignoring a token that no longer waits."""
        try:
            self.client.send_task_success(taskToken=token, output=json.dumps(output))
        except ClientError as err:
            if err.response["Error"]["Code"] not in _GONE_TOKEN_ERRORS:
                raise

    def send_failure(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure, ignoring a token that no longer waits."""
        try:
            self.client.send_task_failure(taskToken=token, error=error, cause=cause)
        except ClientError as err:
            if err.response["Error"]["Code"] not in _GONE_TOKEN_ERRORS:
                raise

    def execution_running(self, execution_arn: str) -> bool:
        """Whether the coordinator execution that owns a run id still runs."""
        if not execution_arn:
            return False
        try:
            status = clients.execution_status(self.client, execution_arn)
        except ClientError as err:
            if err.response["Error"]["Code"] == "ExecutionDoesNotExist":
                return False
            raise
        return status == "RUNNING"


def load_plan(bucket: str, key: str, s3: Any | None = None) -> Plan:
    """The plan document from S3, cached per container (the key names its content hash)."""
    cached = _PLANS.get((bucket, key))
    if cached is None:
        body = (s3 or clients.client("s3")).get_object(Bucket=bucket, Key=key)["Body"].read()
        cached = Plan.from_document(json.loads(body), key=key)
        _PLANS[(bucket, key)] = cached
    return cached


_SCHEDULER: list[Scheduler] = []


def scheduler_from_env() -> Scheduler:
    """A Scheduler configured from the function's environment, built once per container.

    boto3 clients take tens of milliseconds of CPU to build; every task_done reuses them.
    """
    if not _SCHEDULER:
        env = os.environ
        s3 = clients.client("s3")
        _SCHEDULER.append(
            Scheduler(
                store=RunStore(clients.client("dynamodb"), env["TABLE_NAME"]),
                plan=load_plan(env["PLAN_BUCKET"], env["PLAN_KEY"], s3),
                max_concurrency=int(env["MAX_CONCURRENCY"]),
                launcher=StepFunctionsLauncher(
                    clients.client("stepfunctions"), env["TASK_STATE_MACHINE_ARN"]
                ),
                artifacts=ArtifactWriter(s3, env.get("RUN_RESULTS_BUCKET") or env["PLAN_BUCKET"]),
            )
        )
    return _SCHEDULER[0]


def route(event: Mapping[str, Any], scheduler: Scheduler) -> dict[str, Any]:
    """Dispatch one event to the scheduler; returns a small summary for the logs."""
    if event.get("source") == "aws.states":
        detail = event["detail"]
        payload = json.loads(detail.get("input") or "{}")
        if not {"run_id", "task_id", "attempt"} <= payload.keys():
            return {"ignored": detail.get("executionArn")}
        status = detail.get("status", "FAILED")
        scheduler.task_done(
            payload["run_id"],
            payload["task_id"],
            int(payload["attempt"]),
            Outcome(
                ok=False,
                error=detail.get("error") or f"DagAggregate.Task{status.title().replace('_', '')}",
                cause=detail.get("cause")
                or f"task execution {detail.get('executionArn')} {status}",
                started_at=epoch_ms_iso(detail.get("startDate")),
                finished_at=epoch_ms_iso(detail.get("stopDate")),
            ),
        )
        return {"reported": detail.get("executionArn"), "status": status}
    action = event.get("action")
    if action == "start":
        request = StartRequest.from_event(event)
        scheduler.start(request)
        return {"started": request.run_id}
    if action == "task_done":
        outcome = outcome_from_report(event)
        scheduler.task_done(event["run_id"], event["task_id"], int(event["attempt"]), outcome)
        return {"recorded": event["task_id"], "ok": outcome.ok}
    raise ValueError(f"unknown event: {sorted(event)}")


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda handler: one JSON log line per call, with its DynamoDB requests by operation."""
    begin = time.monotonic()
    scheduler = scheduler_from_env()
    scheduler.store.requests.clear()
    result = route(event, scheduler)
    result["seconds"] = round(time.monotonic() - begin, 3)
    result["dynamodb_requests"] = dict(scheduler.store.requests)
    log.info("%s", json.dumps(result))
    return result
