"""Shared helpers of the job-poller LocalStack tests: run executions, read their history."""

from __future__ import annotations

import json
from typing import Any

from sfn_patterns_localstack.executions import history, job_starts_and_decisions, wait_stopped
from tests.sfn_history import states_entered


def start(sfn: Any, state_machine_arn: str, payload: dict[str, Any]) -> str:
    """Start one execution and return its ARN."""
    return sfn.start_execution(stateMachineArn=state_machine_arn, input=json.dumps(payload))[
        "executionArn"
    ]


# How often a wait asks whether an execution has stopped: the pollers' own step (their
# Wait states and retry intervals are whole seconds, 1 s at the least). Asking more
# often only adds calls; no test reads when the wait noticed an end (timings come from
# the execution histories and describe_execution's own dates).
WAIT_INTERVAL = 1.0


def wait_all(sfn: Any, executions: dict[str, str], timeout: float = 90) -> dict[str, dict]:
    """Wait for every execution to stop; return name -> describe_execution + ``events``."""
    stopped = wait_stopped(sfn, list(executions.values()), timeout, interval=WAIT_INTERVAL)
    pending = sorted(name for name, arn in executions.items() if arn not in stopped)
    assert not pending, f"executions still RUNNING after {timeout} s: {pending}"
    return {name: {**stopped[arn], "events": history(sfn, arn)} for name, arn in executions.items()}


def transitions(events: list[dict[str, Any]]) -> int:
    """Billed state transitions: every state entered, plus every retry of a task.

    A task state visit schedules its task once; each further TaskScheduled in the
    history is a retry, which Standard workflows bill as a transition too.
    """
    entered = sum(1 for e in events if e["type"].endswith("StateEntered"))
    scheduled = sum(1 for e in events if e["type"] == "TaskScheduled")
    task_visits = sum(1 for e in events if e["type"] == "TaskStateEntered")
    return entered + scheduled - task_visits


def count(events: list[dict[str, Any]], event_type: str, error: str | None = None) -> int:
    """How many events of a type (optionally with this error) the history holds."""
    found = 0
    for event in events:
        if event["type"] != event_type:
            continue
        details = next((v for k, v in event.items() if k.endswith("EventDetails")), {})
        if error is None or details.get("error") == error:
            found += 1
    return found


def entered_at(events: list[dict[str, Any]], state: str) -> Any:
    """When a state was first entered (a timezone-aware datetime)."""
    return next(
        e["timestamp"]
        for e in events
        if e["type"].endswith("StateEntered") and e["stateEnteredEventDetails"]["name"] == state
    )


def task_failures(events: list[dict[str, Any]]) -> list[str]:
    """Error names of failed task attempts (each one was retried or caught)."""
    return [
        e.get("taskFailedEventDetails", {}).get("error")
        for e in events
        if e["type"] in ("TaskFailed", "LambdaFunctionFailed")
    ]


def output(described: dict[str, Any]) -> dict[str, Any]:
    """The execution's output as JSON."""
    return json.loads(described["output"])


def assert_reported_once(name: str, run: dict[str, Any], *, fails: bool) -> None:
    """The job's outcome, from the history: started once, decided once, and right.

    ``run`` is ``wait_all``'s entry (describe_execution plus ``events``); ``fails`` is
    the job's own planned outcome, the oracle.
    """
    entered = states_entered(run["events"])
    expected = ("FAILED", "JobPoller.JobFailed") if fails else ("SUCCEEDED", None)
    assert (run["status"], run.get("error")) == expected, (name, entered, run.get("cause"))
    started, decided = job_starts_and_decisions(run["events"])
    assert started == 1, (name, entered)
    assert decided == 1, (name, entered)
