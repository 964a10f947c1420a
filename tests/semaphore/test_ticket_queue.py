"""Unit tests (moto): the Lambdas' side of the FIFO ticket queue.

The ASL draws, registers and serves tickets; the cleanup and the reconciler
remove the tickets of executions that ended and step ``served`` over abandoned
tickets. These tests pin the rules that keep a live waiter's turn: only a run
of unregistered tickets at the head that stays so across the grace period is
skipped, and a registration that lands in between wins.
"""

from __future__ import annotations

from typing import Any

import pytest

from sfn_patterns.semaphore import reconciler
from sfn_patterns.semaphore.lease import (
    abandoned_head,
    holder_attribute,
    queue_counters,
    skip_abandoned_tickets,
    ticket_attribute,
    waiters,
)

TABLE = "demo-semaphore"
KEY = "semaphore"
ARN = "arn:aws:states:us-east-1:123456789012:execution:demo:"


def waiter(ticket: int, name: str, enqueued_at: str = "2030-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "M": {
            "execution_arn": {"S": ARN + name},
            "enqueued_at": {"S": enqueued_at},
            "ticket": {"N": str(ticket)},
            "lease_seconds": {"N": "60"},
        }
    }


def put_lock(client: Any, served: int, next_ticket: int, **tickets: dict[str, Any]) -> None:
    client.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": KEY},
            "holder_count": {"N": "1"},
            "served": {"N": str(served)},
            "next_ticket": {"N": str(next_ticket)},
            **tickets,
        },
    )


def item(client: Any) -> dict[str, Any]:
    return client.get_item(TableName=TABLE, Key={"pk": {"S": KEY}}, ConsistentRead=True)["Item"]


def test_abandoned_head_is_the_unregistered_run_from_served() -> None:
    lock = {"served": {"N": "3"}, "next_ticket": {"N": "8"}, "t_5": waiter(5, "e"), "t_7": {}}
    assert abandoned_head(lock) == [3, 4]
    assert abandoned_head({"served": {"N": "5"}, "next_ticket": {"N": "8"}, "t_5": {}}) == []
    assert abandoned_head({"served": {"N": "8"}, "next_ticket": {"N": "8"}}) == []
    assert abandoned_head({"holder_count": {"N": "0"}}) == []  # no queue (fairness none)


def test_skip_steps_over_the_abandoned_run_only(dynamodb: Any) -> None:
    put_lock(dynamodb, 2, 6, t_4=waiter(4, "live"), t_5=waiter(5, "later"))
    assert skip_abandoned_tickets(dynamodb, TABLE, KEY, sleep=lambda _: None) == [2, 3]
    assert queue_counters(item(dynamodb)) == (4, 6)
    # The head is registered now: nothing more to skip.
    assert skip_abandoned_tickets(dynamodb, TABLE, KEY, sleep=lambda _: None) == []
    assert queue_counters(item(dynamodb)) == (4, 6)


def test_a_registration_during_the_grace_period_keeps_its_turn(dynamodb: Any) -> None:
    put_lock(dynamodb, 0, 2)

    def late_registration(_: float) -> None:
        # Ticket 0's waiter was between drawing and registering.
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": KEY}},
            UpdateExpression="SET #t = :w",
            ExpressionAttributeNames={"#t": ticket_attribute(0)},
            ExpressionAttributeValues={":w": waiter(0, "slow")},
        )

    assert skip_abandoned_tickets(dynamodb, TABLE, KEY, sleep=late_registration) == []
    assert queue_counters(item(dynamodb)) == (0, 2)


def test_skip_does_nothing_when_the_head_moved(dynamodb: Any) -> None:
    put_lock(dynamodb, 0, 3)

    def head_served(_: float) -> None:
        put_lock(dynamodb, 1, 3)

    assert skip_abandoned_tickets(dynamodb, TABLE, KEY, sleep=head_served) == []
    assert queue_counters(item(dynamodb)) == (1, 3)


class FakeSfn:
    """DescribeExecution from a fixed table of statuses (ExecutionDoesNotExist otherwise).

    ``errors`` maps an execution to the error code its DescribeExecution raises.
    """

    def __init__(self, statuses: dict[str, str], errors: dict[str, str] | None = None) -> None:
        self.statuses = statuses
        self.errors = errors or {}

    def describe_execution(
        self, executionArn: str, includedData: str = "ALL_DATA"
    ) -> dict[str, str]:
        from botocore.exceptions import ClientError

        code = self.errors.get(executionArn)
        if code is None and executionArn not in self.statuses:
            code = "ExecutionDoesNotExist"
        if code is not None:
            raise ClientError({"Error": {"Code": code, "Message": "no"}}, "DescribeExecution")
        return {"status": self.statuses[executionArn]}

    def get_execution_history(self, executionArn: str, **_: Any) -> dict[str, Any]:
        """No task events: a listed execution ran none; an unlisted one is gone."""
        self.describe_execution(executionArn)
        return {"events": []}


def test_reconcile_removes_dead_waiters_and_skips_their_tickets(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMAPHORE_SKIP_GRACE_SECONDS", "0")
    put_lock(
        dynamodb,
        0,
        4,
        t_0=waiter(0, "aborted"),
        t_1=waiter(1, "gone", enqueued_at="2000-01-01T00:00:00Z"),
        t_2=waiter(2, "running"),
        t_3=waiter(3, "unknown-recent"),
    )
    sfn = FakeSfn({ARN + "aborted": "ABORTED", ARN + "running": "RUNNING"})
    report = reconciler.reconcile(dynamodb, sfn, TABLE, KEY)
    assert [w["ticket"] for w in report["waiters_removed"]] == [0, 1]
    assert report["waiters_kept"] == [ARN + "running", ARN + "unknown-recent"]
    assert report["tickets_skipped"] == [0, 1]
    lock = item(dynamodb)
    assert queue_counters(lock) == (2, 4)
    assert [w.ticket for w in waiters(lock)] == [2, 3]


def test_leave_queue_removes_only_that_executions_ticket(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMAPHORE_SKIP_GRACE_SECONDS", "0")
    put_lock(dynamodb, 5, 7, t_5=waiter(5, "stopped"), t_6=waiter(6, "next"))
    assert reconciler.leave_queue(dynamodb, TABLE, KEY, ARN + "stopped") == {
        "tickets_removed": [5],
        "tickets_skipped": [5],
    }
    lock = item(dynamodb)
    assert queue_counters(lock) == (6, 7)
    assert [w.execution_arn for w in waiters(lock)] == [ARN + "next"]
    # A redelivered event changes nothing.
    assert reconciler.leave_queue(dynamodb, TABLE, KEY, ARN + "stopped") == {
        "tickets_removed": [],
        "tickets_skipped": [],
    }


def test_reconcile_keeps_a_waiter_and_a_holder_it_cannot_describe_for_now(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A throttled DescribeExecution is no answer: a live waiter keeps its place, a holder its slot.

    Both have waited or held longer than lease_seconds (normal for a waiter:
    the acquire timeout is usually longer). Treating the error as "cannot be
    described" removed the ticket of an execution still waiting (it lost its
    place) and released the slot of a RUNNING holder (a second execution entered).
    """
    monkeypatch.setenv("SEMAPHORE_SKIP_GRACE_SECONDS", "0")
    old = "2000-01-01T00:00:00Z"
    holder = ARN + "long-holder"
    dynamodb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": KEY},
            "holder_count": {"N": "1"},
            "served": {"N": "0"},
            "next_ticket": {"N": "1"},
            holder_attribute(holder): {
                "M": {
                    "execution_arn": {"S": holder},
                    "acquired_at": {"S": old},
                    "lease_seconds": {"N": "60"},
                }
            },
            "t_0": waiter(0, "long-waiter", enqueued_at=old),
        },
    )
    throttled = {ARN + "long-waiter": "ThrottlingException", holder: "ThrottlingException"}
    report = reconciler.reconcile(dynamodb, FakeSfn({}, throttled), TABLE, KEY)
    assert report["released"] == [] and report["waiters_removed"] == [], report
    assert report["tickets_skipped"] == []
    lock = item(dynamodb)
    assert lock["holder_count"] == {"N": "1"}
    assert [w.execution_arn for w in waiters(lock)] == [ARN + "long-waiter"]
    assert queue_counters(lock) == (0, 1)
    # Once DescribeExecution says the executions are gone, both are cleaned up.
    report = reconciler.reconcile(dynamodb, FakeSfn({}), TABLE, KEY)
    assert [r["execution_arn"] for r in report["released"]] == [holder]
    assert [w["ticket"] for w in report["waiters_removed"]] == [0]
    assert queue_counters(item(dynamodb)) == (1, 1)
