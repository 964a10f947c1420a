"""Unit tests (moto): the FIFO acquire's races, one interleaving at a time.

``fairness = "fifo"`` waiters hold no token: they poll the lock item, so a
release wakes nobody and there is no wake-up to lose. The callback strategy's
race has other shapes here: a waiter that never becomes head, a dead ticket
blocking the queue, a newcomer or a non-head taking a slot, a holder that keeps
a ticket. These tests run the rendered templates (``asl_steps``) against moto and
put the competing step between two writes of another execution, as
test_callback_unit.py does for the callback strategy; the module README's "Why
no wake-up is lost" gives the argument these interleavings check.

Oracles, independent of the tickets the code computes: after every step the
count equals the leases, stays within the limit, and every execution in its
critical section holds a lease; an execution that registered before another
drew its first ticket is admitted first (by step numbers); every execution
finishes (none starves); the queue ends empty.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sfn_patterns.semaphore import reconciler

from .asl_steps import KEY, PREFIX, TABLE, Execution, Scenario, tickets

ACQUIRE, TAKE, JOIN, READ = (
    PREFIX + s for s in ("Acquire", "Take ticket", "Join queue", "Read queue")
)


def inside(execution: Execution) -> bool:
    return execution.in_critical_section


def waiting(execution: Execution) -> bool:
    return execution.waits > 0


def at(state: str) -> Callable[[Execution], bool]:
    return lambda execution: execution.state == state


def assert_queue_empty(scenario: Scenario) -> None:
    item = scenario.item()
    assert item["holder_count"] == {"N": "0"}, item
    assert tickets(item) == {}, item
    assert item["served"] == item["next_ticket"], item


def test_release_between_a_full_fast_path_and_the_ticket_admits_the_waiter_at_once(
    dynamodb: Any,
) -> None:
    """The callback strategy's race: W finds the semaphore full, then the last holder leaves.

    Nothing wakes W, and nothing has to: W draws the ticket that is being served,
    reads a free slot and takes it without a single wait.
    """
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    w = s.start("w")
    s.run("holder", inside)
    assert s.step("w") == ACQUIRE and w.outcome == "DynamoDB.ConditionalCheckFailedException"
    s.step("holder")  # Release: the slot is free, nobody is queued.
    s.run("w", inside, limit=6)
    assert w.waits == 0
    assert s.admitted == ["holder", "w"]
    s.finish()
    assert_queue_empty(s)


def test_an_arrival_never_overtakes_a_ticket_drawn_but_not_yet_registered(dynamodb: Any) -> None:
    """Between W's Take ticket and Join queue the slot frees; a newcomer X must queue behind W."""
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    w, x = s.start("w"), s.start("x")
    s.run("holder", inside)
    s.run("w", at(JOIN))  # W drew ticket 0, not yet registered.
    s.step("holder")  # Release.
    assert s.step("x") == ACQUIRE
    assert x.outcome == "DynamoDB.ConditionalCheckFailedException"  # served 0 != next_ticket 1
    s.finish()
    assert s.admitted == ["holder", "w", "x"]
    assert w.waits == 0
    s.check_order()
    assert_queue_empty(s)


def test_a_skip_that_wins_against_a_late_registration_sends_it_to_the_back(
    dynamodb: Any,
) -> None:
    """W1 drew the head ticket but registers late; W2 skipped it meanwhile.

    The late Join queue is refused (served <= ticket fails) and W1 draws a new
    ticket: it loses its place, never the limit, and no dead ticket stays behind.
    """
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    w1, w2 = s.start("w1"), s.start("w2")
    s.run("holder", inside)
    s.run("w1", at(JOIN))  # ticket 0, slow to register
    s.run("w2", lambda e: e.waits >= 2)  # ticket 1: saw head 0 unmoved for a whole wait
    assert PREFIX + "Skip abandoned ticket" in w2.entered
    assert int(s.item()["served"]["N"]) == 1
    assert s.step("w1") == JOIN and w1.outcome == "DynamoDB.ConditionalCheckFailedException"
    s.finish()
    assert s.admitted == ["holder", "w2", "w1"]
    assert w1.entered.count(TAKE) == 2
    assert_queue_empty(s)


def test_a_registered_head_is_never_skipped(dynamodb: Any) -> None:
    """W2 sees the head unmoved for many waits while the semaphore is full: its skips all fail."""
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    s.start("w1")
    w2 = s.start("w2")
    s.run("holder", inside)
    s.run("w1", waiting)
    s.run("w2", lambda e: e.entered.count(PREFIX + "Skip abandoned ticket") >= 3)
    assert int(s.item()["served"]["N"]) == 0
    assert w2.outcome == "DynamoDB.ConditionalCheckFailedException"
    s.finish()
    assert s.admitted == ["holder", "w1", "w2"]
    s.check_order()
    assert_queue_empty(s)


def test_a_fast_path_write_whose_response_was_lost_keeps_no_ticket(dynamodb: Any) -> None:
    """The fast path lands but Step Functions sees an error and retries the state.

    The retry fails its condition (the lease is there), the execution draws and
    registers a ticket, then finds its lease and removes the ticket (Leave queue,
    held): one slot, no stale ticket (the callback livelock's analogue). The
    ticket it drew is stepped over by the next waiter.
    """
    s = Scenario(dynamodb, limit=1)
    w = s.start("w")
    w.lose_response_of.add(ACQUIRE)
    s.step("w")  # the write lands, the response is lost
    s.run("w", inside, limit=6)
    assert PREFIX + "Leave queue, held" in w.entered
    item = s.item()
    assert item["holder_count"] == {"N": "1"} and tickets(item) == {}, item
    s.start("x")
    s.finish()
    assert s.admitted == ["w", "x"]
    assert_queue_empty(s)


def test_the_head_never_takes_a_slot_past_the_limit(dynamodb: Any) -> None:
    """Between the head's read (a free slot) and its Acquire in turn, someone takes the slot.

    Within FIFO only the head may take a slot while anyone queues, so the
    competitor is an execution still running the fairness-none definition (one
    started before ``fairness`` was switched on keeps its definition). The head's
    write must then fail on ``holder_count < limit`` and wait, not over-admit.
    """
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    w = s.start("w")
    s.start("old", fairness="none")
    s.run("holder", inside)
    s.run("w", waiting)
    s.step("holder")  # Release
    assert s.step("w") == READ and w.state == PREFIX + "Acquire in turn"
    s.run("old", inside)  # no queue check: takes the free slot at once
    assert s.step("w") == PREFIX + "Acquire in turn"
    assert w.outcome == "DynamoDB.ConditionalCheckFailedException"
    s.finish()
    assert s.admitted == ["holder", "old", "w"]
    assert_queue_empty(s)


def test_an_execution_named_like_a_lease_field_waits_for_its_turn(dynamodb: Any) -> None:
    """My turn? tells "holds a slot" from "queued" by the lease's field name.

    An execution name may contain ``acquired_at``; its queued ticket (which holds
    its ARN) must not read as a lease, or it enters the critical section with no slot.
    """
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    for name in ("job-acquired_at-1", "job-enqueued_at-2"):
        s.start(name)
    s.run("holder", inside)
    s.run("job-acquired_at-1", waiting)
    s.run("job-enqueued_at-2", waiting)
    s.finish()
    assert s.admitted == ["holder", "job-acquired_at-1", "job-enqueued_at-2"]
    assert_queue_empty(s)


class Statuses:
    """DescribeExecution for the reconciler: the given statuses, RUNNING otherwise."""

    def __init__(self, statuses: dict[str, str]) -> None:
        self.statuses = statuses

    def describe_execution(
        self, executionArn: str, includedData: str = "ALL_DATA"
    ) -> dict[str, str]:
        return {"status": self.statuses.get(executionArn, "RUNNING")}


def test_a_stopped_waiters_ticket_blocks_the_queue_until_the_reconciler_removes_it(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Head-of-line blocking: the head is stopped while queued, its ticket stays registered.

    The waiters behind it cannot tell a stopped head from a slow one (they may
    skip only an unregistered ticket), so nobody is admitted, even with every slot
    free, until the event cleanup or the reconciler removes the dead ticket. This
    is why ``fairness = "fifo"`` needs the reconciler (a lost event would
    otherwise block the queue for good).
    """
    monkeypatch.setenv("SEMAPHORE_SKIP_GRACE_SECONDS", "0")
    s = Scenario(dynamodb, limit=1)
    s.start("holder")
    stopped, w2 = s.start("stopped"), s.start("w2")
    s.run("holder", inside)
    s.run("stopped", waiting)
    s.run("w2", waiting)
    stopped.failed = "ABORTED"  # StopExecution while it waits: its ticket stays
    s.run("holder", lambda e: e.done)
    for _ in range(10):
        s.step("w2")
    assert not w2.in_critical_section and w2.waits > 5
    assert s.item()["holder_count"] == {"N": "0"}  # a free slot nobody may take

    report = reconciler.reconcile(dynamodb, Statuses({stopped.arn: "ABORTED"}), TABLE, KEY)
    assert [w["execution_arn"] for w in report["waiters_removed"]] == [stopped.arn]
    assert report["tickets_skipped"] == [0]
    s.finish()
    assert s.admitted == ["holder", "w2"]
    assert_queue_empty(s)


def _run_schedule(dynamodb: Any, limit: int, names: list[str], schedule: list[str]) -> Scenario:
    """``names[0]`` holds a slot; the steps in ``schedule`` run, then everyone to the end."""
    s = Scenario(dynamodb, limit=limit, seed=len(schedule))
    for name in names:
        s.start(name)
    s.run(names[0], inside)
    for name in schedule:
        if not s.executions[name].done:
            s.step(name)
    s.finish()
    s.check_order()
    assert sorted(s.admitted) == sorted(names), s.admitted
    assert_queue_empty(s)
    return s


def _interleavings(counts: dict[str, int]) -> Iterator[list[str]]:
    """Every distinct order of the given numbers of steps per execution."""
    if not any(counts.values()):
        yield []
        return
    for name, left in counts.items():
        if left:
            for rest in _interleavings({**counts, name: left - 1}):
                yield [name, *rest]


def test_every_order_of_a_release_against_two_arrivals_first_writes(dynamodb: Any) -> None:
    """The last holder's release at every point of two arrivals' first writes.

    60 schedules: every order of the release (1 step), the first three DynamoDB
    steps of arrival a (fast path, Take ticket, Join queue) and the first two of
    arrival b (fast path, Take ticket; or whatever follows a fast path that won),
    then everyone runs to the end, holders first.
    """
    orders = list(_interleavings({"h": 1, "a": 3, "b": 2}))
    assert len(orders) == 60
    for order in orders:
        try:
            _run_schedule(dynamodb, 1, ["h", "a", "b"], order)
        except AssertionError as error:
            raise AssertionError(f"schedule {order}: {error}") from error


def test_random_schedules_of_four_executions_at_limit_two(dynamodb: Any) -> None:
    """Longer races (several waits, skips, two holders releasing), 12 seeded schedules."""
    rng = random.Random(31)
    for _ in range(12):
        order = [rng.choice("habc") for _ in range(24)]
        try:
            _run_schedule(dynamodb, 2, ["h", "a", "b", "c"], order)
        except AssertionError as error:
            raise AssertionError(f"schedule {order}: {error}") from error
