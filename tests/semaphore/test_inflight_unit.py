"""Unit tests (moto DynamoDB, a history stub): an ended holder's slot waits for its tasks.

A Lambda invocation does not stop when its execution is stopped, fails or times out, so
the slot of an ended holder goes back only once no task of its execution can still run:
each has its end event in the history, or its deadline has passed. The histories here
are written as ``GetExecutionHistory`` answers them (``id``, ``previousEventId``, the
scheduled event's ``timeoutInSeconds``), newest first and paged.
"""

from __future__ import annotations

import datetime as dt
import time
import types
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns.semaphore import inflight, reconciler
from sfn_patterns.semaphore.callback import CallbackSemaphore, iso
from sfn_patterns.semaphore.lease import holder_attribute

from .test_callback_unit import ARN, KEY, TABLE, Sfn, semaphore, with_queue

T0 = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
HOLDER = ARN + "holder"


@pytest.fixture
def db(dynamodb: Any) -> Any:
    """The callback tests' tables on moto (the lock table, the queue, the lock item)."""
    return with_queue(dynamodb)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


class History:
    """``GetExecutionHistory`` of fixed histories, two events a page; ``errors`` by execution."""

    def __init__(self, errors: dict[str, str] | None = None, **histories: list[dict]) -> None:
        self.histories = {ARN + name: events for name, events in histories.items()}
        self.errors = errors or {}
        self.calls = 0

    def get_execution_history(
        self, executionArn: str, reverseOrder: bool, nextToken: str = "0", **_: Any
    ) -> dict[str, Any]:
        self.calls += 1
        if executionArn in self.errors:
            error = {"Error": {"Code": self.errors[executionArn], "Message": "no"}}
            raise ClientError(error, "GetExecutionHistory")
        events = list(self.histories.get(executionArn, []))
        if reverseOrder:
            events.reverse()
        start = int(nextToken)
        page: dict[str, Any] = {"events": events[start : start + 2]}
        if start + 2 < len(events):
            page["nextToken"] = str(start + 2)
        return page


class Both(Sfn, History):
    """The callback tests' recording stub, with histories and every execution ABORTED."""

    def __init__(self, **histories: list[dict]) -> None:
        Sfn.__init__(self)
        History.__init__(self, **histories)

    def describe_execution(self, executionArn: str, includedData: str = "ALL_DATA") -> dict:
        return {"status": self.status.get(executionArn, "ABORTED")}


def task(
    first: int,
    scheduled: float,
    *,
    kind: str = "Task",
    resource: str = "invoke",
    timeout: int | None = None,
    ended: str | None = None,
    previous: int | None = None,
) -> list[dict[str, Any]]:
    """One task's events from id ``first``: scheduled and started, then ``ended`` if given."""
    details: dict[str, Any] = {"resourceType": "lambda", "resource": resource}
    if timeout is not None:
        details["timeoutInSeconds"] = timeout
    key = {
        "Task": "taskScheduledEventDetails",
        "LambdaFunction": "lambdaFunctionScheduledEventDetails",
        "Activity": "activityScheduledEventDetails",
    }[kind]
    events = [
        {
            "id": first,
            "previousEventId": first - 1 if previous is None else previous,
            "type": f"{kind}Scheduled",
            "timestamp": at(scheduled),
            key: details,
        },
        {"id": first + 1, "previousEventId": first, "type": f"{kind}Started", "timestamp": at(1)},
    ]
    if ended is not None:
        events.append(
            {"id": first + 2, "previousEventId": first + 1, "type": ended, "timestamp": at(2)}
        )
    return events


STARTED = [{"id": 1, "previousEventId": 0, "type": "ExecutionStarted", "timestamp": at(0)}]
ABORTED = {"type": "ExecutionAborted", "timestamp": at(30)}


def history(*tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events = [*STARTED, *(e for t in tasks for e in t)]
    return [*events, {**ABORTED, "id": len(events) + 1, "previousEventId": len(events)}]


# -- the rule --------------------------------------------------------------------------------


def test_a_task_whose_end_is_in_the_history_holds_nothing() -> None:
    sfn = History(holder=history(task(2, 0, timeout=600, ended="TaskSucceeded")))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) is None


def test_a_task_without_its_end_holds_until_its_timeout() -> None:
    sfn = History(holder=history(task(2, 10, timeout=300)))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) == at(310)
    assert inflight.may_still_run(sfn, HOLDER, at(309), unbounded=at(3600)) == at(310)
    assert inflight.may_still_run(sfn, HOLDER, at(310), unbounded=at(3600)) is None


@pytest.mark.parametrize(
    ("kind", "resource", "ends"),
    [
        ("Task", "invoke", at(900)),  # Lambda's largest function timeout
        ("Task", "putItem", at(900)),  # any request-response call
        ("LambdaFunction", "arn:aws:lambda:us-east-1:1:function:f", at(900)),
        ("Task", "invoke.waitForTaskToken", "unbounded"),
        ("Task", "startExecution.sync:2", "unbounded"),
        ("Activity", "arn:aws:states:us-east-1:1:activity:a", "unbounded"),
    ],
)
def test_a_task_without_a_timeout_is_bounded_by_its_kind(
    kind: str, resource: str, ends: Any
) -> None:
    sfn = History(holder=history(task(2, 0, kind=kind, resource=resource)))
    unbounded = at(3600)
    assert inflight.work_ends(sfn, HOLDER, unbounded) == (
        unbounded if ends == "unbounded" else ends
    )


def test_a_request_response_task_ends_within_lambdas_largest_timeout_whatever_its_own() -> None:
    """A TimeoutSeconds beyond 900 s does not lengthen one Lambda invocation or API call."""
    sfn = History(holder=history(task(2, 0, timeout=99999999)))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) == at(900)
    waiting = History(holder=history(task(2, 0, timeout=7200, resource="invoke.waitForTaskToken")))
    assert inflight.work_ends(waiting, HOLDER, unbounded=at(3600)) == at(7200)


def test_parallel_branches_each_end_their_own_task() -> None:
    """Two branches' tasks interleave; the end events lead back to their own scheduled one."""
    first = task(2, 0, timeout=100)  # ids 2, 3
    second = task(4, 5, timeout=500, previous=1)  # ids 4, 5
    submitted = {"id": 6, "previousEventId": 3, "type": "TaskSubmitted", "timestamp": at(6)}
    done = {"id": 7, "previousEventId": 6, "type": "TaskSucceeded", "timestamp": at(7)}
    sfn = History(holder=history(first, second, [submitted, done]))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) == at(505)
    # Ended the other way round, the first branch's task is the one left.
    done_second = {"id": 6, "previousEventId": 5, "type": "TaskFailed", "timestamp": at(6)}
    sfn = History(holder=history(first, second, [done_second]))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) == at(100)


def test_every_page_of_a_long_history_is_read() -> None:
    retried = [task(2 + 3 * i, i, timeout=60, ended="TaskFailed") for i in range(4)]
    sfn = History(holder=history(*retried, task(14, 20, timeout=60)))
    assert inflight.work_ends(sfn, HOLDER, unbounded=at(3600)) == at(80)
    assert sfn.calls > 5


def test_an_unreadable_history_keeps_the_slot_until_the_lease_expires_and_a_throttle_raises() -> (
    None
):
    gone = History(errors={HOLDER: "ExecutionDoesNotExist"})
    assert inflight.work_ends(gone, HOLDER, unbounded=at(3600)) == at(3600)
    throttled = History(errors={HOLDER: "ThrottlingException"})
    with pytest.raises(ClientError):
        inflight.work_ends(throttled, HOLDER, unbounded=at(3600))


# -- strategy dynamodb: the event cleanup and the sweep ---------------------------------------


def hold(db: Any, arn: str = HOLDER, lease_seconds: int = 3600) -> None:
    """A lease of ``arn`` on the lock item, acquired at T0 (as the ASL writes it)."""
    lease = {
        "execution_arn": {"S": arn},
        "acquired_at": {"S": iso(T0)},
        "lease_seconds": {"N": str(lease_seconds)},
    }
    db.update_item(
        TableName=TABLE,
        Key={"pk": {"S": KEY}},
        UpdateExpression="SET holder_count = holder_count + :one, #h = :lease",
        ExpressionAttributeNames={"#h": holder_attribute(arn)},
        ExpressionAttributeValues={":one": {"N": "1"}, ":lease": {"M": lease}},
    )


def holders(db: Any) -> tuple[int, list[str]]:
    item = db.get_item(TableName=TABLE, Key={"pk": {"S": KEY}})["Item"]
    return int(item["holder_count"]["N"]), [a for a in item if a.startswith("h_")]


def test_the_cleanup_keeps_the_slot_of_a_holder_stopped_in_a_long_task(db: Any) -> None:
    hold(db)
    sfn = History(holder=history(task(2, 10, timeout=600)))
    result = reconciler.release_execution(db, TABLE, KEY, HOLDER, sfn=sfn, now=at(30))
    assert result == {
        "execution_arn": HOLDER,
        "held": True,
        "released": False,
        "work_running_until": iso(at(610)),
    }
    assert holders(db) == (1, [holder_attribute(HOLDER)])


def test_without_a_reconciler_the_cleanup_fails_so_that_its_event_is_retried(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMAPHORE_STRATEGY", "dynamodb")
    monkeypatch.setenv("SEMAPHORE_TABLE", TABLE)
    monkeypatch.setenv("SEMAPHORE_LOCK_KEY", KEY)
    sfn = History(holder=history(task(2, 0, timeout=600)))
    monkeypatch.setattr(
        reconciler.clients, "client", lambda service, **_: db if service == "dynamodb" else sfn
    )
    hold(db)
    event = {"detail": {"executionArn": HOLDER, "status": "ABORTED"}}
    assert reconciler.cleanup_handler(event, None)["released"] is False  # the sweeps free it
    monkeypatch.setenv("SEMAPHORE_RECONCILER", "off")
    with pytest.raises(RuntimeError, match="EventBridge retries this event"):
        reconciler.cleanup_handler(event, None)
    assert holders(db) == (1, [holder_attribute(HOLDER)])


def test_the_cleanup_waits_for_a_deadline_that_is_near_then_releases(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # The reconciler's own time module only: patching time.sleep itself also recorded
    # the sleeps of any other thread in this test process (a profiler test's sampler).
    clock = types.SimpleNamespace(sleep=slept.append, monotonic=time.monotonic)
    monkeypatch.setattr(reconciler, "time", clock)
    hold(db)
    sfn = History(holder=history(task(2, 10, timeout=40)))
    result = reconciler.release_execution(db, TABLE, KEY, HOLDER, sfn=sfn, now=at(30))
    assert result["released"] is True
    assert slept == [21.0]  # to the deadline (50 s), and a second past it
    assert holders(db) == (0, [])


class Stopped(History):
    """Histories, and every execution ABORTED."""

    def describe_execution(self, executionArn: str, includedData: str = "ALL_DATA") -> dict:
        return {"status": "ABORTED"}


def test_the_sweep_keeps_the_slot_until_the_task_timed_out_then_frees_it(db: Any) -> None:
    hold(db)
    sfn = Stopped(holder=history(task(2, 10, timeout=600)))
    report = reconciler.reconcile(db, sfn, TABLE, KEY, now=at(60))
    assert report["released"] == [] and report["kept"] == [HOLDER], report
    assert report["work_running"] == [{"execution_arn": HOLDER, "until": iso(at(610))}]
    report = reconciler.reconcile(db, sfn, TABLE, KEY, now=at(610))
    assert report["released"] == [{"execution_arn": HOLDER, "status": "ABORTED"}], report
    assert holders(db) == (0, [])


def test_a_wrappers_slot_follows_its_target_not_its_own_tasks(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapper's work is its target (stopped and awaited first): its own tasks, such as a
    ``startExecution.sync`` left open by the stop, do not keep its slot."""
    machine = ARN.replace(":execution:", ":stateMachine:").rstrip(":")
    monkeypatch.setenv("WRAPPER_STATE_MACHINE_ARN", machine)
    monkeypatch.setenv("TARGET_STATE_MACHINE_ARN", machine + "-target")
    monkeypatch.setattr(reconciler, "stop_target", lambda *args, **kwargs: "NONE")
    hold(db)
    sfn = Stopped(holder=history(task(2, 10, resource="startExecution.sync:2")))
    report = reconciler.reconcile(db, sfn, TABLE, KEY, now=at(60))
    assert report["released"] == [{"execution_arn": HOLDER, "status": "ABORTED"}], report
    assert sfn.calls == 0
    monkeypatch.delenv("WRAPPER_STATE_MACHINE_ARN")  # a holder of its own: kept
    hold(db)
    report = reconciler.reconcile(db, sfn, TABLE, KEY, now=at(60))
    assert report["released"] == [] and report["kept"] == [HOLDER], report


# -- strategy callback: no hand-over while the stopped holder's task may run -------------------


def callback(db: Any, sfn: Both, monkeypatch: pytest.MonkeyPatch) -> CallbackSemaphore:
    """The semaphore at T0; the cleanup handler's environment builds this one."""
    sem = semaphore(db, sfn, limit=1, now=lambda: T0)
    monkeypatch.setattr(reconciler, "from_environment", lambda: sem)
    monkeypatch.setenv("SEMAPHORE_STRATEGY", "callback")
    monkeypatch.setenv("SEMAPHORE_TABLE", TABLE)
    monkeypatch.setenv("SEMAPHORE_LOCK_KEY", KEY)
    return sem


def test_the_callback_cleanup_hands_no_slot_over_while_the_holder_may_run(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sfn = Both(holder=history(task(2, 0, timeout=600)))
    sfn.status[ARN + "waiter"] = "RUNNING"
    sem = callback(db, sfn, monkeypatch)
    assert sem.acquire(HOLDER, "tok-holder")["outcome"] == "admitted"
    assert sem.acquire(ARN + "waiter", "tok-waiter")["outcome"] == "parked"
    event = {"detail": {"executionArn": HOLDER, "status": "ABORTED"}}
    result = reconciler.cleanup_handler(event, None)
    assert result["released"] is False and result["handed_to"] == [], result
    assert result["work_running_until"] == iso(at(600))
    assert set(sem.read_lock().leases) == {HOLDER}
    assert sfn.succeeded == ["tok-holder"]  # the waiter was not woken
    # The first sweep after the task's timeout hands the slot over.
    report = reconciler.reconcile_callback(sem, now=at(599))
    assert report["released"] == [] and report["kept"] == [HOLDER], report
    report = reconciler.reconcile_callback(sem, now=at(600))
    assert [r["handed_to"] for r in report["released"]] == [[ARN + "waiter"]], report
    assert sfn.succeeded == ["tok-holder", "tok-waiter"]


def test_the_callback_cleanup_releases_at_once_when_the_holders_tasks_ended(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sfn = Both(holder=history(task(2, 0, timeout=600, ended="TaskSucceeded")))
    sem = callback(db, sfn, monkeypatch)
    sem.acquire(HOLDER, "tok-holder")
    result = reconciler.cleanup_handler(
        {"detail": {"executionArn": HOLDER, "status": "ABORTED"}}, None
    )
    assert result["released"] is True and "work_running_until" not in result, result
    assert sem.read_lock().count == 0
