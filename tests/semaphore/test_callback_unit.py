"""Unit tests (moto DynamoDB, a recording Step Functions stub): the callback strategy's writes.

These pin the rules the module README's "no lost wake-up" argument rests on, by
interleaving the exact writes of an arriving waiter and the last releaser in
both orders. The LocalStack tests (test_callback.py) run the same code for real.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns.semaphore.callback import CallbackSemaphore, LockState

TABLE = "demo-semaphore"
QUEUE = "demo-semaphore-queue"
KEY = "semaphore"
ARN = "arn:aws:states:us-east-1:123456789012:execution:demo:"


class Sfn:
    """Records SendTaskSuccess/Failure; tokens listed in ``dead`` answer InvalidToken."""

    def __init__(self) -> None:
        self.succeeded: list[str] = []
        self.failed: list[tuple[str, str]] = []
        self.dead: set[str] = set()
        self.status: dict[str, str] = {}
        self.dead_code = "InvalidToken"

    def send_task_success(self, taskToken: str, output: str) -> dict:
        if taskToken in self.dead:
            raise ClientError(
                {"Error": {"Code": self.dead_code, "Message": "x"}}, "SendTaskSuccess"
            )
        self.succeeded.append(taskToken)
        return {}

    def send_task_failure(self, taskToken: str, error: str, cause: str) -> dict:
        self.failed.append((taskToken, error))
        return {}

    def describe_execution(self, executionArn: str, includedData: str = "ALL_DATA") -> dict:
        return {"status": self.status.get(executionArn, "RUNNING")}


@pytest.fixture
def dynamodb(dynamodb: Any) -> Any:
    """The lock table of tests/semaphore/conftest.py, plus the waiter queue and the lock item."""
    return with_queue(dynamodb)


def with_queue(dynamodb: Any) -> Any:
    """Add the waiter queue and the lock item (as Terraform creates them) to the lock table."""
    dynamodb.create_table(
        TableName=QUEUE,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "ticket", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "ticket", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    # As Terraform creates it.
    dynamodb.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": KEY},
            "holder_count": {"N": "0"},
            "next_ticket": {"N": "0"},
            "waiting": {"N": "0"},
        },
    )
    return dynamodb


def semaphore(dynamodb: Any, sfn: Sfn, limit: int = 1, **kwargs: Any) -> CallbackSemaphore:
    return CallbackSemaphore(
        dynamodb,
        sfn,
        table=TABLE,
        queue_table=QUEUE,
        lock_key=KEY,
        limit=limit,
        lease_seconds=3600,
        acquire_timeout_seconds=kwargs.pop("acquire_timeout_seconds", 600),
        **kwargs,
    )


def state(sem: CallbackSemaphore) -> LockState:
    return sem.read_lock()


def test_free_slot_then_queue_then_hand_over_in_arrival_order(dynamodb: Any) -> None:
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    assert sem.acquire(ARN + "a", "tok-a")["outcome"] == "admitted"
    assert sfn.succeeded == ["tok-a"]
    for name in ("b", "c", "d"):
        assert sem.acquire(ARN + name, f"tok-{name}")["outcome"] == "parked"
    now = state(sem)
    assert (now.count, now.waiting) == (1, 3)
    assert [w.execution_arn for w in sem.oldest_waiters(10)] == [ARN + "b", ARN + "c", ARN + "d"]

    # Each release hands the slot to the oldest waiter: the count never moves.
    for releaser, woken in (("a", "b"), ("b", "c"), ("c", "d")):
        result = sem.release(ARN + releaser)
        assert result["handed_to"] == [ARN + woken]
        assert sfn.succeeded[-1] == f"tok-{woken}"
        assert state(sem).count == 1
        assert set(state(sem).leases) == {ARN + woken}
    assert sem.release(ARN + "d")["handed_to"] == []
    final = state(sem)
    assert (final.count, final.waiting, final.leases) == (0, 0, {})
    assert sem.oldest_waiters(10) == []
    # Pointers are gone too: the queue table is empty.
    assert dynamodb.scan(TableName=QUEUE)["Items"] == []


def test_release_is_idempotent(dynamodb: Any) -> None:
    sem = semaphore(dynamodb, Sfn())
    sem.acquire(ARN + "a", "tok-a")
    assert sem.release(ARN + "a")["released"] is True
    assert sem.release(ARN + "a")["released"] is False
    assert state(sem).count == 0


def test_a_newcomer_never_overtakes_a_waiter(dynamodb: Any) -> None:
    """A slot freed by a lowered count with waiters queued goes to them, not to an arrival."""
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "b", "tok-b")
    # Simulate a lost slot: the holder's lease vanishes without a hand-over.
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": KEY}},
        UpdateExpression="SET holder_count = :zero",
        ExpressionAttributeValues={":zero": {"N": "0"}},
    )
    assert sem.acquire(ARN + "new", "tok-new")["outcome"] == "parked"
    # The repair admits the oldest waiter, not the newcomer.
    assert sem.fill_free_slots() == [ARN + "b"]
    assert sfn.succeeded[-1] == "tok-b"


def test_no_lost_wake_up_release_lands_first(dynamodb: Any) -> None:
    """Waiter's fast path failed; then the last holder gives back; then the waiter enqueues."""
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    assert sem._take_free_slot(ARN + "w") is False  # full
    sem.release(ARN + "a")  # waiting = 0: the slot goes back to the pool
    # The enqueue's condition (count >= limit OR waiting > 0) now fails...
    assert sem._enqueue(ARN + "w", "tok-w") is False
    # ...so acquire loops back to the fast path and takes the slot at once.
    assert sem.acquire(ARN + "w", "tok-w")["outcome"] == "admitted"
    assert sfn.succeeded[-1] == "tok-w"
    assert state(sem).waiting == 0


def test_no_lost_wake_up_enqueue_lands_first(dynamodb: Any) -> None:
    """The waiter's enqueue lands before the last holder's release: the release hands over."""
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    assert sem._enqueue(ARN + "w", "tok-w") is True
    lease = state(sem).leases[ARN + "a"]
    # The plain give-back's condition (waiting = 0) refuses...
    assert sem._give_back(lease) is False
    # ...so release hands the slot over and wakes the waiter.
    assert sem.release(ARN + "a")["handed_to"] == [ARN + "w"]
    assert sfn.succeeded[-1] == "tok-w"


def test_dead_waiter_is_skipped(dynamodb: Any) -> None:
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "dead", "tok-dead")
    sem.acquire(ARN + "live", "tok-live")
    sfn.dead.add("tok-dead")
    sfn.status[ARN + "dead"] = "ABORTED"
    result = sem.release(ARN + "a")
    assert result["handed_to"] == [ARN + "dead", ARN + "live"]
    assert set(state(sem).leases) == {ARN + "live"}
    assert state(sem).count == 1


@pytest.mark.parametrize("code", ["InvalidToken", "TaskTimedOut"])
def test_a_slot_handed_to_a_stopped_waiter_is_passed_on_or_given_back(
    dynamodb: Any, code: str
) -> None:
    """The module side of a stopped waiter: a hand-over to a waiter stopped meanwhile.

    AWS answers SendTaskSuccess to a stopped execution's token with TaskTimedOut
    (LocalStack: InvalidToken). The slot goes to the next live waiter, and when none
    is left, back to the pool: nothing is held by the stopped execution.
    """
    sfn = Sfn()
    sfn.dead_code = code
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "holder", "tok-holder")
    sem.acquire(ARN + "stopped", "tok-stopped")
    sfn.dead.add("tok-stopped")
    sfn.status[ARN + "stopped"] = "ABORTED"
    result = sem.release(ARN + "holder")
    assert result["handed_to"] == [ARN + "stopped"]
    after = state(sem)
    assert (after.count, after.waiting, after.leases) == (0, 0, {})
    assert sem.leave(ARN + "stopped") is False  # the cleanup finds nothing left to do


class DeniedResume(Sfn):
    """SendTaskSuccess fails with a live token: denied (the IAM test's missing grant)."""

    def send_task_success(self, taskToken: str, output: str) -> dict:
        raise ClientError(
            {"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}},
            "SendTaskSuccess",
        )


@pytest.mark.parametrize(
    ("status", "lease_kept"), [("RUNNING", True), ("ABORTED", False), ("TIMED_OUT", False)]
)
def test_a_failed_resume_keeps_the_lease_only_for_a_running_caller(
    dynamodb: Any, status: str, *, lease_kept: bool
) -> None:
    """An acquire whose SendTaskSuccess fails with a live token (denied, throttled).

    Running, the caller's Acquire task retries: the Lambda fails and the lease stays
    for the retry to find. Stopped while the call ran, nothing retries, and the
    cleanup its end triggered may have come before the lease was taken (a CI run's
    leaked slot): the lease goes back at once.
    """
    sfn = DeniedResume()
    sfn.status[ARN + "caller"] = status
    sem = semaphore(dynamodb, sfn, limit=1)
    if lease_kept:
        with pytest.raises(ClientError, match="AccessDeniedException"):
            sem.acquire(ARN + "caller", "tok")
        assert set(state(sem).leases) == {ARN + "caller"}
        assert state(sem).count == 1
    else:
        assert sem.acquire(ARN + "caller", "tok")["outcome"] == "gone"
        assert (state(sem).count, state(sem).leases) == (0, {})


def test_recheck_parks_again_with_the_new_token_and_release_uses_it(dynamodb: Any) -> None:
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "w", "tok-w1")
    assert sem.acquire(ARN + "w", "tok-w2")["outcome"] == "parked again"
    sem.release(ARN + "a")
    assert sfn.succeeded[-1] == "tok-w2"


def test_recheck_after_a_lost_wake_up_admits(dynamodb: Any) -> None:
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "w", "tok-w1")
    sfn.dead.add("tok-w1")  # the wake-up is lost, but the execution still runs
    sem.release(ARN + "a")
    assert set(state(sem).leases) == {ARN + "w"}  # the slot is held for it
    assert sem.acquire(ARN + "w", "tok-w2")["outcome"] == "admitted"
    assert sfn.succeeded[-1] == "tok-w2"


def test_recheck_racing_a_hand_over_is_admitted_and_not_queued_twice(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-check reads the lock, then a release hands it the slot, then it reads its pointer.

    Seen on a loaded CI machine (slow acquire Lambdas, parked tasks timing out): the
    re-check found no lease and no pointer, failed the fast path and queued itself
    again while holding the slot. Every later release then tried to hand a slot to
    that stale ticket (its lease already existed) and gave up after MAX_ROUNDS, so
    no waiter was ever admitted again.
    """
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "a", "tok-a")
    assert sem.acquire(ARN + "w", "tok-w1")["outcome"] == "parked"
    sem.acquire(ARN + "x", "tok-x")  # the next waiter
    original_pointer = sem.pointer
    raced = []

    def pointer_after_a_hand_over(execution_arn: str) -> Any:
        if not raced:
            raced.append(sem.release(ARN + "a"))  # hands the slot to w (token w1)
        return original_pointer(execution_arn)

    monkeypatch.setattr(sem, "pointer", pointer_after_a_hand_over)
    outcome = sem.acquire(ARN + "w", "tok-w2")  # w's parked task timed out: re-check
    assert raced[0]["handed_to"] == [ARN + "w"]
    assert outcome["outcome"] == "admitted", outcome
    assert set(state(sem).leases) == {ARN + "w"}
    assert [w.execution_arn for w in sem.oldest_waiters(10)] == [ARN + "x"]
    assert state(sem).waiting == 1
    # The queue still moves: w's release admits x.
    monkeypatch.setattr(sem, "pointer", original_pointer)
    assert sem.release(ARN + "w")["handed_to"] == [ARN + "x"]
    assert sfn.succeeded[-1] == "tok-x"


def test_release_drops_the_stale_ticket_of_a_holder_and_hands_over_to_the_next(
    dynamodb: Any,
) -> None:
    """A ticket of an execution that already holds a slot never blocks the queue."""
    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=2)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "h", "tok-h")
    sem.acquire(ARN + "x", "tok-x")  # queued, ticket 0
    # The state the re-check race left before the fix: h queued ahead while holding.
    dynamodb.put_item(
        TableName=QUEUE,
        Item={
            "pk": {"S": f"{KEY}#queue"},
            "ticket": {"N": "-1"},
            "execution_arn": {"S": ARN + "h"},
            "task_token": {"S": "tok-h2"},
            "enqueued_at": {"S": "2026-01-01T00:00:00+00:00"},
            "lease_seconds": {"N": "3600"},
        },
    )
    dynamodb.put_item(
        TableName=QUEUE,
        Item={
            "pk": {"S": f"{KEY}#waiter#{ARN}h"},
            "ticket": {"N": "0"},
            "queue_ticket": {"N": "-1"},
            "enqueued_at": {"S": "2026-01-01T00:00:00+00:00"},
        },
    )
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": KEY}},
        UpdateExpression="SET waiting = waiting + :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    assert sem.oldest_waiters()[0].execution_arn == ARN + "h"
    assert sem.release(ARN + "a")["handed_to"] == [ARN + "x"]
    assert sfn.succeeded[-1] == "tok-x"
    now = state(sem)
    assert (now.count, now.waiting, set(now.leases)) == (2, 0, {ARN + "h", ARN + "x"})
    assert dynamodb.scan(TableName=QUEUE)["Items"] == []


def test_acquire_timeout_leaves_the_queue(dynamodb: Any) -> None:
    sfn = Sfn()
    clock = [dt.datetime(2030, 1, 1, tzinfo=dt.UTC)]
    sem = semaphore(dynamodb, sfn, limit=1, acquire_timeout_seconds=60, now=lambda: clock[0])
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "w", "tok-w1")
    clock[0] += dt.timedelta(seconds=61)
    assert sem.acquire(ARN + "w", "tok-w2")["outcome"] == "timed out"
    assert sfn.failed == [("tok-w2", "Semaphore.AcquireTimeout")]
    assert state(sem).waiting == 0
    assert dynamodb.scan(TableName=QUEUE)["Items"] == []
    assert sem.release(ARN + "a")["handed_to"] == []


def test_leave_of_an_ended_waiter(dynamodb: Any) -> None:
    sem = semaphore(dynamodb, Sfn(), limit=1)
    sem.acquire(ARN + "a", "tok-a")
    sem.acquire(ARN + "w", "tok-w")
    assert sem.leave(ARN + "w") is True
    assert sem.leave(ARN + "w") is False
    assert state(sem).waiting == 0


def test_no_item_grows_with_the_number_of_waiters(dynamodb: Any) -> None:
    """60 waiters: the lock item keeps its size, and a hand-over reads one waiter.

    (moto's TransactWriteItems deep-copies each table it writes as its rollback
    backup, so each enqueue costs in proportion to the waiters already queued and the
    test in their square: 120 waiters took four times as long as 60. The count is
    not the point: nothing in the writes depends on it, and 5 against 60 shows it.)
    """
    import json

    sfn = Sfn()
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "holder", "tok-holder")

    def lock_size() -> int:
        item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": KEY}})["Item"]
        return len(json.dumps(item))

    for i in range(5):
        sem.acquire(ARN + f"w{i}", f"tok-w{i}")
    small = lock_size()
    for i in range(5, 60):
        sem.acquire(ARN + f"w{i}", f"tok-w{i}")
    assert state(sem).waiting == 60
    # Only the counters' digits changed (1 -> 2 digits each).
    assert lock_size() <= small + 8
    largest = max(
        len(json.dumps(item)) for item in dynamodb.scan(TableName=QUEUE, Limit=100)["Items"]
    )
    assert largest < 400
    queried: list[int] = []
    real_query = dynamodb.query

    def counting_query(**kwargs: Any) -> Any:
        page = real_query(**kwargs)
        queried.append(len(page["Items"]))
        return page

    dynamodb.query = counting_query
    try:
        assert sem.release(ARN + "holder")["handed_to"] == [ARN + "w0"]
    finally:
        dynamodb.query = real_query
    assert queried == [1]
    assert sfn.succeeded[-1] == "tok-w0"


class FailingDescribe(Sfn):
    """DescribeExecution and GetExecutionHistory answer ``code``."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def describe_execution(self, executionArn: str, includedData: str = "ALL_DATA") -> dict:
        raise ClientError({"Error": {"Code": self.code, "Message": "x"}}, "DescribeExecution")

    def get_execution_history(self, **kwargs: Any) -> dict:
        """The same key protects the history."""
        raise ClientError({"Error": {"Code": self.code, "Message": "x"}}, "GetExecutionHistory")


def test_a_throttled_describe_never_passes_on_a_running_waiters_slot(dynamodb: Any) -> None:
    """A throttled DescribeExecution says nothing about the execution.

    The waiter's parked task timed out (its token is dead) and it is re-checking: it
    will find the lease the release handed it and enter. Read as "not RUNNING", the
    throttle made the release pass that lease on to the next waiter (or back to the
    pool) while the first entered too: one over-admission. The release must fail
    instead (Step Functions retries it) and leave the lease with the waiter.
    """
    sfn = FailingDescribe("ThrottlingException")  # the fault injector's plan, by hand
    sfn.dead_code = "TaskTimedOut"
    sem = semaphore(dynamodb, sfn, limit=1)
    sem.acquire(ARN + "holder", "tok-holder")
    sem.acquire(ARN + "w", "tok-w1")
    sem.acquire(ARN + "next", "tok-next")
    sfn.dead.add("tok-w1")
    with pytest.raises(ClientError, match="ThrottlingException"):
        sem.release(ARN + "holder")
    assert set(state(sem).leases) == {ARN + "w"}
    assert "tok-next" not in sfn.succeeded
    # The retried release finds nothing left to do; the re-check admits the waiter.
    assert sem.release(ARN + "holder")["handed_to"] == []
    assert sem.acquire(ARN + "w", "tok-w2")["outcome"] == "admitted"
    assert set(state(sem).leases) == {ARN + "w"}
    assert state(sem).count == 1


@pytest.mark.parametrize(
    ("code", "released"),
    [
        # The holder's machine is encrypted with its owner's key, which does not let the
        # reconciler's role decrypt (or is disabled): as permanent as a missing grant,
        # so the lease decides, instead of a sweep that fails on every run.
        ("KmsAccessDeniedException", True),
        ("KmsInvalidStateException", True),
        ("AccessDeniedException", True),
        # A throttled describe or key says nothing about the execution: even past its
        # lease (a long critical section), only a later sweep that can tell frees it.
        ("ThrottlingException", False),
        ("KmsThrottlingException", False),
    ],
)
def test_past_its_lease_a_holder_it_cannot_describe_is_released_only_on_a_lasting_error(
    dynamodb: Any, code: str, *, released: bool
) -> None:
    from sfn_patterns.semaphore.reconciler import reconcile_callback

    sem = semaphore(dynamodb, FailingDescribe(code), limit=1)
    sem.acquire(ARN + "holder", "tok-holder")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=2)
    report = reconcile_callback(sem, now=later)
    if released:
        assert [r["execution_arn"] for r in report["released"]] == [ARN + "holder"], report
        assert state(sem).leases == {}
    else:
        assert report["kept"] == [ARN + "holder"], report
        assert report["released"] == [], report
        assert set(state(sem).leases) == {ARN + "holder"}
