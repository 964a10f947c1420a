"""Unit tests (a Step Functions stub): the oldest-first gate counts stopped holders' running work.

A stopped, failed or timed-out holder is no longer RUNNING, but its critical section's
Lambda runs on: the gate counts it as long as its history shows a task without its end
whose deadline has not passed, for at most ``SEMAPHORE_LEASE_SECONDS`` after its stop.
The histories are written as ``GetExecutionHistory`` answers them (``id``,
``previousEventId``, the state's ``TaskStateEntered``), and the listings as
``ListExecutions`` pages them (newest first, ``statusFilter``).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns.semaphore import oldest_first

from .test_inflight_unit import at

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:holder"
WRAPPER = "arn:aws:states:us-east-1:123456789012:stateMachine:demo-wrapper"
TARGET = "arn:aws:states:us-east-1:123456789012:stateMachine:target"
GATE = oldest_first.DEFAULT_GATE_STATE
NOW = at(1000)


def arn(name: str, machine: str = MACHINE) -> str:
    return machine.replace(":stateMachine:", ":execution:") + ":" + name


def entered(event_id: int, state: str, when: float) -> dict[str, Any]:
    return {
        "id": event_id,
        "previousEventId": event_id - 1,
        "type": "TaskStateEntered",
        "timestamp": at(when),
        "stateEnteredEventDetails": {"name": state},
    }


def task(
    first: int,
    state: str,
    when: float,
    *,
    timeout: int | None = None,
    resource: str = "invoke",
    ended: str | None = None,
) -> list[dict[str, Any]]:
    """A Task state's events from id ``first``: entered, scheduled, started, ``ended``."""
    details: dict[str, Any] = {"resourceType": "lambda", "resource": resource}
    if timeout is not None:
        details["timeoutInSeconds"] = timeout
    events = [
        entered(first, state, when),
        {
            "id": first + 1,
            "previousEventId": first,
            "type": "TaskScheduled",
            "timestamp": at(when),
            "taskScheduledEventDetails": details,
        },
        {
            "id": first + 2,
            "previousEventId": first + 1,
            "type": "TaskStarted",
            "timestamp": at(when),
        },
    ]
    if ended is not None:
        events.append(
            {"id": first + 3, "previousEventId": first + 2, "type": ended, "timestamp": at(when)}
        )
    return events


class Sfn:
    """``ListExecutions`` (paged, newest first) and ``GetExecutionHistory`` of fixed executions.

    ``calls`` records each call as (operation, state machine or execution, status filter).
    """

    def __init__(self) -> None:
        self.executions: list[dict[str, Any]] = []
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.history_errors: dict[str, str] = {}
        self.calls: list[tuple[str, str, str | None]] = []

    def add(
        self,
        name: str,
        status: str,
        started: float,
        *,
        stopped: float | None = None,
        events: list[dict[str, Any]] | None = None,
        machine: str = MACHINE,
    ) -> str:
        execution: dict[str, Any] = {
            "executionArn": arn(name, machine),
            "stateMachineArn": machine,
            "name": name,
            "status": status,
            "startDate": at(started),
        }
        if stopped is not None:
            execution["stopDate"] = at(stopped)
        self.executions.append(execution)
        start = {"id": 1, "previousEventId": 0, "type": "ExecutionStarted", "timestamp": at(0)}
        body = [start, *(events or [])]
        end = {"id": len(body) + 1, "previousEventId": len(body), "type": "ExecutionAborted"}
        self.histories[execution["executionArn"]] = [*body, {**end, "timestamp": at(stopped or 0)}]
        return str(execution["executionArn"])

    def get_paginator(self, operation: str) -> Any:
        assert operation == "list_executions"
        return self

    def paginate(
        self, stateMachineArn: str, statusFilter: str, PaginationConfig: Any = None
    ) -> list[dict[str, Any]]:
        self.calls.append(("ListExecutions", stateMachineArn, statusFilter))
        found = [
            e
            for e in self.executions
            if e["stateMachineArn"] == stateMachineArn and e["status"] == statusFilter
        ]
        found.sort(key=lambda e: e["startDate"], reverse=True)
        return [{"executions": found[i : i + 2]} for i in range(0, len(found), 2)] or [
            {"executions": []}
        ]

    def get_execution_history(self, executionArn: str, **_: Any) -> dict[str, Any]:
        self.calls.append(("GetExecutionHistory", executionArn, None))
        if executionArn in self.history_errors:
            error = {"Error": {"Code": self.history_errors[executionArn], "Message": "no"}}
            raise ClientError(error, "GetExecutionHistory")
        return {"events": list(reversed(self.histories[executionArn]))}

    def histories_read(self) -> list[str]:
        return [name.rsplit(":", 1)[-1] for op, name, _ in self.calls if op.startswith("GetExec")]


def stopped(sfn: Sfn, lease_seconds: int = 900) -> list[str]:
    found = oldest_first.stopped_holders(sfn, [MACHINE], NOW, lease_seconds, GATE)
    return [e["name"] for e in found]


def test_a_holder_ended_in_its_critical_section_counts_until_its_task_timed_out() -> None:
    sfn = Sfn()
    admitted = task(2, GATE, 0, ended="TaskSucceeded")
    for status in ("ABORTED", "FAILED", "TIMED_OUT"):
        sfn.add(
            status,
            status,
            0,
            stopped=990,
            events=[*admitted, *task(6, "Critical section", 950, timeout=60)],
        )
    assert stopped(sfn) == ["ABORTED", "FAILED", "TIMED_OUT"]
    late = oldest_first.stopped_holders(sfn, [MACHINE], at(1010), 900, GATE)
    assert late == []  # 950 + 60 s: every Lambda of theirs has ended


def test_a_holder_whose_tasks_ended_or_a_waiter_stopped_at_the_gate_counts_for_nothing() -> None:
    sfn = Sfn()
    gate = task(2, GATE, 0, ended="TaskSucceeded")
    section = task(6, "Critical section", 950, ended="TaskSucceeded")
    sfn.add("done", "ABORTED", 0, stopped=990, events=[*gate, *section])
    # Stopped while the gate ran, and while the gate's Retry ran (the attempt follows the
    # failure of the first, whose chain leads back to the state's entry).
    sfn.add("asking", "ABORTED", 0, stopped=990, events=task(2, GATE, 980))
    failed_once = task(2, GATE, 970, ended="TaskFailed")
    retried = {**task(6, GATE, 980)[1], "id": 6, "previousEventId": 5}
    sfn.add("retrying", "ABORTED", 0, stopped=990, events=[*failed_once, retried])
    assert stopped(sfn) == []
    assert sorted(sfn.histories_read()) == ["asking", "done", "retrying"]


def test_a_task_whose_state_is_unknown_counts() -> None:
    """A scheduled event that follows no state entry (nor a failed attempt) is counted."""
    sfn = Sfn()
    orphan = {**task(2, GATE, 980)[1], "previousEventId": 1}
    sfn.add("unknown", "ABORTED", 0, stopped=990, events=[orphan])
    assert stopped(sfn) == ["unknown"]


def test_only_executions_stopped_within_the_lease_are_read() -> None:
    """A stop before ``now - lease`` is not looked at (its history is not read)."""
    sfn = Sfn()
    section = task(2, "Critical section", 50, resource="invoke.waitForTaskToken")
    sfn.add("old", "ABORTED", 0, stopped=99, events=section)  # stopped 901 s ago
    sfn.add("recent", "ABORTED", 0, stopped=500, events=section)
    assert stopped(sfn) == ["recent"]
    assert sfn.histories_read() == ["recent"]


def test_work_without_a_known_end_or_an_unreadable_history_counts_until_the_lease() -> None:
    sfn = Sfn()
    sync = task(2, "Critical section", 50, resource="startExecution.sync:2")
    sfn.add("sync", "ABORTED", 0, stopped=500, events=sync)
    gone = sfn.add("gone", "ABORTED", 0, stopped=500)
    sfn.history_errors[gone] = "ExecutionDoesNotExist"
    assert stopped(sfn, lease_seconds=600) == ["gone", "sync"]
    assert oldest_first.stopped_holders(sfn, [MACHINE], at(1100), 600, GATE) == []


def test_a_throttled_history_read_makes_the_gate_answer_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sfn = Sfn()
    waiter = sfn.add("waiter", "RUNNING", 10)
    throttled = sfn.add("throttled", "ABORTED", 0, stopped=990)
    sfn.history_errors[throttled] = "ThrottlingException"
    answer = _handler(monkeypatch, sfn, waiter)
    assert answer["proceed"] is False and answer["position"] is None


def _handler(
    monkeypatch: pytest.MonkeyPatch, sfn: Sfn, caller: str, **environment: str
) -> dict[str, Any]:
    class Clients:
        @staticmethod
        def client(service: str, **_: Any) -> Sfn:
            return sfn

    monkeypatch.setattr(oldest_first, "clients", Clients)
    monkeypatch.setattr(oldest_first, "utcnow", lambda: NOW)
    monkeypatch.setenv("SEMAPHORE_LIMIT", "1")
    monkeypatch.setenv("STATE_MACHINE_ARNS", ",".join([MACHINE, WRAPPER]))
    for name in ("TARGET_STATE_MACHINE_ARN", "WRAPPER_STATE_MACHINE_ARN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return oldest_first.handler({"execution_arn": caller}, None)


def test_the_gate_reads_the_running_executions_before_the_ended_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An execution that ends between the reads is then among the ended ones, counted once.

    The other order misses a holder stopped between the two reads: it is in neither list.
    """
    sfn = Sfn()
    waiter = sfn.add("waiter", "RUNNING", 10)
    holder = sfn.add("holder", "RUNNING", 0)
    paginate = sfn.paginate

    def stop_after_the_first_read(**request: Any) -> list[dict[str, Any]]:
        pages = paginate(**request)
        for e in sfn.executions:
            if e["executionArn"] == holder and e["status"] == "RUNNING":
                e.update(status="ABORTED", stopDate=at(990))
                sfn.histories[holder][1:1] = task(2, "Critical section", 950, timeout=60)
        return pages

    monkeypatch.setattr(sfn, "paginate", stop_after_the_first_read)
    answer = _handler(monkeypatch, sfn, waiter)
    assert sfn.calls[0] == ("ListExecutions", MACHINE, "RUNNING")
    assert answer == {"proceed": False, "position": 1, "running": 2, "limit": 1}


def test_a_stopped_wrapper_is_followed_through_its_target_not_its_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With its target visible, a stopped wrapper's slot is its RUNNING target's (counted
    once); the wrapper's own open ``.sync`` task would hold it until the lease."""
    sfn = Sfn()
    waiter = sfn.add("waiter", "RUNNING", 10, machine=WRAPPER)
    run_target = task(2, "Run target", 50, resource="startExecution.sync:2")
    sfn.add("w1", "ABORTED", 0, stopped=990, events=run_target, machine=WRAPPER)
    sfn.add("w1", "RUNNING", 50, machine=TARGET)
    environment = {"TARGET_STATE_MACHINE_ARN": TARGET, "WRAPPER_STATE_MACHINE_ARN": WRAPPER}
    answer = _handler(monkeypatch, sfn, waiter, **environment)
    assert answer == {"proceed": False, "position": 1, "running": 2, "limit": 1}
    assert sfn.histories_read() == []
    sfn.executions[-1]["status"] = "SUCCEEDED"  # the target ended: the slot is free
    assert _handler(monkeypatch, sfn, waiter, **environment)["proceed"] is True


def test_without_a_stopped_holder_the_oldest_running_execution_proceeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sfn = Sfn()
    first = sfn.add("first", "RUNNING", 0)
    second = sfn.add("second", "RUNNING", 10)
    sfn.add("long-ago", "ABORTED", 0, stopped=10, events=task(2, "Critical section", 5, timeout=60))
    assert _handler(monkeypatch, sfn, first)["proceed"] is True
    assert _handler(monkeypatch, sfn, second)["proceed"] is False
    assert sfn.histories_read() == []  # stopped long before the lease
