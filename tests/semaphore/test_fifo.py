"""End to end: examples/semaphore with ``fairness = "fifo"`` on LocalStack.

One apply for the module (limit 1, short waits, a 20 s acquire timeout; the
empty-second-plan check lives in test_example.py, not repeated here to save a
plan). The admission order is checked against the tickets the executions drew,
and the ways a ticket is abandoned (acquire timeout, a waiter that died between drawing
and registering, a dead waiter the reconciler finds) must never leave the queue
blocked or a ticket behind.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from sfn_patterns.semaphore.lease import holder_attribute, queue_counters, waiters
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.executions import history
from tests.sfn_history import states_entered

from . import fault_run
from .support import (
    NO_ALARMS,
    deployment_fixture,
    holders,
    invoke,
    lock_item,
    max_overlap,
    records,
    start,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

LIMIT = 1
TIMEOUT = 20


# The tests invoke the reconciler themselves; the factory disables its schedule, which
# would otherwise step over a dead ticket in the middle of a test that checks the
# waiter's own skip.
deployed = deployment_fixture(
    "semf",
    strategy="dynamodb",
    fairness="fifo",
    max_concurrency=LIMIT,
    wait_min_seconds=1,
    wait_max_seconds=2,
    acquire_timeout_seconds=TIMEOUT,
    # A holder stopped in its critical section (the fault run's) keeps its slot until
    # its task's TimeoutSeconds has passed, since its Lambda runs on after the stop.
    critical_section_timeout_seconds=30,
    alarms=NO_ALARMS,
)


def _update(aws: Callable, deployed: dict, **kwargs: Any) -> dict[str, Any]:
    return aws("dynamodb").update_item(
        TableName=deployed["lock_table_name"], Key={"pk": {"S": deployed["lock_key"]}}, **kwargs
    )


def _fake_arn(deployed: dict, name: str) -> str:
    machine = deployed["embedded_state_machine_arn"]
    return machine.replace(":stateMachine:", ":execution:") + f":{name}"


class FakeHolder:
    """Fill every slot with a holder that is not an execution, so waiters must queue."""

    def __init__(self, aws: Callable, deployed: dict) -> None:
        self.aws, self.deployed = aws, deployed
        self.arn = _fake_arn(deployed, f"fake-holder-{time.monotonic_ns()}")
        self.attribute = holder_attribute(self.arn)

    def __enter__(self) -> FakeHolder:
        now = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
        _update(
            self.aws,
            self.deployed,
            UpdateExpression="SET holder_count = holder_count + :n, #h = :lease",
            ExpressionAttributeNames={"#h": self.attribute},
            ExpressionAttributeValues={
                ":n": {"N": str(LIMIT)},
                ":lease": {
                    "M": {
                        "execution_arn": {"S": self.arn},
                        "acquired_at": {"S": now},
                        "lease_seconds": {"N": "3600"},
                    }
                },
            },
        )
        return self

    def release(self) -> None:
        """Give the slots back, as the holder's own release would."""
        try:
            _update(
                self.aws,
                self.deployed,
                UpdateExpression="SET holder_count = holder_count - :n REMOVE #h",
                ConditionExpression="attribute_exists(#h)",
                ExpressionAttributeNames={"#h": self.attribute},
                ExpressionAttributeValues={":n": {"N": str(LIMIT)}},
            )
        except self.aws("dynamodb").exceptions.ConditionalCheckFailedException:
            pass

    def __exit__(self, *exc: object) -> None:
        self.release()


def tickets_drawn(events: list[dict[str, Any]]) -> list[int]:
    """The tickets an execution drew (from its Take ticket state outputs)."""
    return [
        json.loads(e["stateExitedEventDetails"]["output"])["semaphore"]["queue"]["ticket"]
        for e in events
        if e.get("stateExitedEventDetails", {}).get("name") == "Semaphore: Take ticket"
    ]


def assert_queue_empty(aws: Callable, deployed: dict) -> dict[str, Any]:
    """No holder, no registered ticket, and served caught up with next_ticket."""
    item = lock_item(aws, deployed)
    assert item["holder_count"] == {"N": "0"}, item
    assert holders(item) == {}, item
    assert waiters(item) == [], item
    served, next_ticket = queue_counters(item) or (None, None)
    assert served == next_ticket, item
    return item


def test_admission_follows_ticket_order(aws: Callable, deployed: dict) -> None:
    assert deployed["fairness"] == "fifo"
    sfn = aws("stepfunctions")
    arns = []
    for i in range(6):
        arns.append(
            start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0.5, "n": i})
        )
        time.sleep(0.3)
    done = wait_done(sfn, arns, timeout=180)
    assert {d["status"] for d in done.values()} == {"SUCCEEDED"}, done

    recorded = records(aws, deployed, arns)
    assert max_overlap(list(recorded.values())) <= LIMIT
    tickets = {arn: tickets_drawn(history(sfn, arn)) for arn in arns}
    queued = [arn for arn in arns if tickets[arn]]
    # Only an arrival that found the semaphore free and nobody queued skips the queue.
    assert len(queued) >= len(arns) - LIMIT, tickets
    by_admission = sorted(queued, key=lambda arn: recorded[arn][0])
    by_ticket = sorted(queued, key=lambda arn: tickets[arn][-1])
    print(
        "\nadmission order (ticket):",
        [tickets[arn][-1] for arn in by_admission],
        "start order (ticket):",
        [tickets[arn][-1] for arn in queued],
    )
    assert by_admission == by_ticket
    # Fast-path admissions come before every queued one (nobody was overtaken).
    fast = [arn for arn in arns if not tickets[arn]]
    assert all(recorded[f][0] < recorded[by_admission[0]][0] for f in fast)
    assert_queue_empty(aws, deployed)


def test_acquire_timeout_fails_and_leaves_no_ticket(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    with FakeHolder(aws, deployed) as fake:
        arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0})
        described = wait_done(sfn, [arn], timeout=TIMEOUT * 4)[arn]
        assert described["status"] == "FAILED", described
        assert described["error"] == "Semaphore.AcquireTimeout", described
        entered = states_entered(history(sfn, arn))
        assert "Semaphore: Leave queue, timed out" in entered
        assert "Critical section" not in entered
        item = lock_item(aws, deployed)
        # Its ticket is gone; the only holder is still the fake one.
        assert waiters(item) == [], item
        assert holders(item) == {fake.attribute: fake.arn}, item
        assert item["holder_count"] == {"N": str(LIMIT)}, item
        # The cleanup (FAILED event) steps the queue over the abandoned ticket.
        wait_until(
            lambda: len(set(queue_counters(lock_item(aws, deployed)) or (0, 1))) == 1,
            30,
            "served to catch up with next_ticket",
        )
    assert_queue_empty(aws, deployed)


def test_waiter_steps_over_a_ticket_abandoned_before_registering(
    aws: Callable, deployed: dict
) -> None:
    """A waiter that died between drawing and registering must not block the queue."""
    sfn = aws("stepfunctions")
    with FakeHolder(aws, deployed) as fake:
        drawn = _update(
            aws,
            deployed,
            UpdateExpression="ADD next_ticket :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        dead_ticket = int(drawn["Attributes"]["next_ticket"]["N"]) - 1
        arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0})
        wait_until(
            lambda: [w.execution_arn for w in waiters(lock_item(aws, deployed))] == [arn],
            30,
            "the waiter to register its ticket",
        )
        fake.release()
        described = wait_done(sfn, [arn], timeout=60)[arn]
    assert described["status"] == "SUCCEEDED", described
    events = history(sfn, arn)
    assert tickets_drawn(events) == [dead_ticket + 1]
    assert "Semaphore: Skip abandoned ticket" in states_entered(events)
    assert_queue_empty(aws, deployed)


def test_an_execution_named_acquired_at_waits_for_a_slot(aws: Callable, deployed: dict) -> None:
    """My turn? must not read a queued ticket as a lease because the name holds the field name.

    The read projects this execution's lease and ticket, both of which hold its
    ARN; before the fix a name containing ``acquired_at`` matched ``*acquired_at*``
    and entered the critical section without a slot while the semaphore was full.
    """
    sfn = aws("stepfunctions")
    with FakeHolder(aws, deployed) as fake:
        arn = sfn.start_execution(
            stateMachineArn=deployed["embedded_state_machine_arn"],
            name=f"report-acquired_at-{time.monotonic_ns()}",
            input=json.dumps({"sleep_seconds": 0}),
        )["executionArn"]

        def read_twice_or_entered() -> list[str]:
            names = states_entered(history(sfn, arn))
            done = names.count("Semaphore: Read queue") >= 2 or "Critical section" in names
            return names if done else []

        # Two reads of the queue (waits are 1-2 s) with the semaphore full: still waiting.
        entered = wait_until(read_twice_or_entered, 30, "two reads of the queue")
        assert "Critical section" not in entered, entered
        item = lock_item(aws, deployed)
        assert holders(item) == {fake.attribute: fake.arn}, item
        assert [w.execution_arn for w in waiters(item)] == [arn], item
        fake.release()
        described = wait_done(sfn, [arn], timeout=60)[arn]
    assert described["status"] == "SUCCEEDED", described
    entered = states_entered(history(sfn, arn))
    assert "Semaphore: Acquire in turn" in entered, entered
    assert "Semaphore: Leave queue, held" not in entered, entered
    assert_queue_empty(aws, deployed)


def test_reconciler_removes_the_ticket_of_a_dead_waiter(aws: Callable, deployed: dict) -> None:
    drawn = _update(
        aws,
        deployed,
        UpdateExpression="ADD next_ticket :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    ticket = int(drawn["Attributes"]["next_ticket"]["N"]) - 1
    dead = _fake_arn(deployed, "dead-waiter")
    _update(
        aws,
        deployed,
        UpdateExpression="SET #t = :waiter",
        ExpressionAttributeNames={"#t": f"t_{ticket}"},
        ExpressionAttributeValues={
            ":waiter": {
                "M": {
                    "execution_arn": {"S": dead},
                    "enqueued_at": {"S": "2000-01-01T00:00:00Z"},
                    "ticket": {"N": str(ticket)},
                    "lease_seconds": {"N": "60"},
                }
            }
        },
    )
    report = invoke(aws, deployed["reconciler_function_name"])
    assert report["waiters_removed"] == [
        {"execution_arn": dead, "ticket": ticket, "status": "UNKNOWN"}
    ]
    assert report["tickets_skipped"] == [ticket]
    assert_queue_empty(aws, deployed)


# The acquire side's retry budget (templates: 1 attempt + 6 retries, waits below
# 1, 2, 4, 8, 16, 20 s with full jitter): README "Limits".
ACQUIRE_ATTEMPTS = 1 + 6


def test_lock_table_throttled_past_the_acquire_budget_fails_holding_nothing(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """Every write to the lock table throttled, one attempt more than Acquire retries.

    The execution fails with DynamoDB's own throttling error before its critical
    section, and leaves nothing behind: no holder, no ticket, the count at 0.
    """
    sfn = aws("stepfunctions")
    assert_queue_empty(aws, deployed)
    with faults.applied(
        localstack_endpoint,
        {
            "seed": 28,
            "faults": [
                {
                    "service": "dynamodb",
                    "operation": "UpdateItem",
                    "kind": "throttle",
                    "resource": deployed["lock_table_name"],
                    "first": ACQUIRE_ATTEMPTS,
                }
            ],
        },
    ):
        arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0})
        described = wait_done(sfn, [arn], timeout=180)[arn]
        injected = faults.log(localstack_endpoint)
    assert len(injected) == ACQUIRE_ATTEMPTS, injected
    assert described["status"] == "FAILED", described
    assert described["error"] == "DynamoDB.ProvisionedThroughputExceededException", described
    events = history(sfn, arn)
    failures = [e["taskFailedEventDetails"]["error"] for e in events if e["type"] == "TaskFailed"]
    assert failures == ["DynamoDB.ProvisionedThroughputExceededException"] * ACQUIRE_ATTEMPTS
    assert states_entered(events) == ["Semaphore: Prepare", "Semaphore: Acquire"]
    assert_queue_empty(aws, deployed)


def test_invariants_hold_under_a_mixed_fault_plan(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """Faults injected: the acquire and release tasks' DynamoDB calls throttled, the cleanup
    Lambda crashed, its events dropped or doubled, a holder and a waiter stopped:
    peak <= limit, each execution admitted once, timed out as configured or ABORTED, nothing
    held after settling (fault_run.py checks each from the record)."""
    plan = fault_run.embedded_plan(aws, deployed)
    result = fault_run.run_under_faults(
        aws,
        localstack_endpoint,
        deployed,
        limit=LIMIT,
        plan=plan,
        executions=4,
        sleep_seconds=1,
        acquire_timeout=TIMEOUT,
    )
    assert "throttle" in result["kinds"], result["kinds"]
    assert result["peak"] == LIMIT  # some survivor was admitted: the run exercised the slot
