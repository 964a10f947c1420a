"""The tracker's lifecycle, leases, fencing, retries and error history, on moto and LocalStack."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta

import pytest

from sfn_patterns.status_table import (
    PayloadMismatchError,
    StaleAttemptError,
    Status,
    TaskAlreadySucceededError,
    TaskIgnoredError,
    TaskLockedError,
    TaskNotFoundError,
    Tracker,
    payload_sha256,
)

# Runtime-library tests: also run on Python 3.9 and 3.13 (tests/tooling/test_python_versions.py).
pytestmark = pytest.mark.runtime

MakeTracker = Callable[..., Tracker]


@pytest.fixture(params=["moto", pytest.param("localstack", marks=pytest.mark.integration)])
def backend(request: pytest.FixtureRequest) -> str:
    """Every scenario runs on moto and on LocalStack's DynamoDB (issue: failure paths
    are tested against the emulator the integration tests use, not only in-process)."""
    return request.param


class Boom(Exception):
    pass


def fail_once(tracker: Tracker, task_id: str, message: str = "boom") -> None:
    with pytest.raises(Boom), tracker.start(task_id):
        raise Boom(message)


def test_pending_in_progress_succeeded(make_tracker: MakeTracker, clock) -> None:
    tracker = make_tracker(worker_id="w1")
    tracker.create_tasks(["t1"])
    assert tracker.get("t1").status is Status.PENDING
    with tracker.start("t1") as attempt:
        inside = tracker.get("t1")
        assert inside.status is Status.IN_PROGRESS
        assert (inside.attempt, inside.retry, inside.lease_owner) == (1, 0, "w1")
        assert inside.lease_expires_at == clock.now + timedelta(seconds=300)
        attempt.set_data({"invoice": "inv-1", "nested": {"n": 2}})
    done = tracker.get("t1")
    assert done.status is Status.SUCCEEDED
    assert done.lease_owner is None and done.lease_expires_at is None
    assert done.data == {"invoice": "inv-1", "nested": {"n": 2}}
    assert done.errors == ()
    assert attempt.final_status is Status.SUCCEEDED


def test_failure_increments_retry_and_keeps_error(make_tracker: MakeTracker) -> None:
    tracker = make_tracker(max_retry=3)
    tracker.create_tasks(["t1"])
    fail_once(tracker, "t1", "first")
    task = tracker.get("t1")
    assert (task.status, task.retry, task.attempt) == (Status.FAILED, 1, 1)
    assert task.lease_owner is None
    [error] = task.errors
    assert (error.error_type, error.message, error.attempt) == ("Boom", "first", 1)
    assert "raise Boom(message)" in error.traceback
    # failed -> in_progress -> succeeded on the next try
    with tracker.start("t1"):
        pass
    task = tracker.get("t1")
    assert (task.status, task.attempt, task.retry) == (Status.SUCCEEDED, 2, 1)


def test_ignored_after_max_retry(make_tracker: MakeTracker) -> None:
    tracker = make_tracker(max_retry=2)
    tracker.create_tasks(["t1"])
    fail_once(tracker, "t1")
    assert tracker.get("t1").status is Status.FAILED
    fail_once(tracker, "t1")
    task = tracker.get("t1")
    assert (task.status, task.retry) == (Status.IGNORED, 2)
    with pytest.raises(TaskIgnoredError):
        tracker.start("t1")


def test_succeeded_task_is_skipped(make_tracker: MakeTracker) -> None:
    tracker = make_tracker()
    tracker.create_tasks(["t1"])
    with tracker.start("t1"):
        pass
    with pytest.raises(TaskAlreadySucceededError) as info:
        tracker.start("t1")
    assert (info.value.use_case_id, info.value.task_id) == ("orders", "t1")
    assert tracker.get("t1").attempt == 1


def test_live_lease_locks_out_other_workers(make_tracker: MakeTracker, clock) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    a.start("t1")
    clock.advance(seconds=299)
    with pytest.raises(TaskLockedError) as info:
        b.start("t1")
    assert info.value.lease_owner == "A"
    assert info.value.lease_expires_at == clock.now + timedelta(seconds=1)
    assert a.get("t1").attempt == 1


def test_expired_lease_is_reclaimed(make_tracker: MakeTracker, clock, caplog) -> None:
    a = make_tracker(worker_id="A", max_retry=3)
    b = make_tracker(worker_id="B", max_retry=3)
    a.create_tasks(["t1"])
    a.start("t1")  # A "crashes": never leaves the block
    clock.advance(seconds=301)
    with caplog.at_level(logging.WARNING, logger="sfn_patterns.status_table"):
        attempt = b.start("t1")
    task = b.get("t1")
    assert (task.status, task.attempt, task.retry, task.lease_owner) == (
        Status.IN_PROGRESS,
        2,
        1,
        "B",
    )
    assert [e.error_type for e in task.errors] == ["LeaseExpired"]
    assert task.errors[0].attempt == 1
    assert any("reclaim orders/t1" in r.getMessage() for r in caplog.records)
    with attempt:
        pass
    assert b.get("t1").status is Status.SUCCEEDED


def test_reclaim_at_max_retry_parks_the_task(make_tracker: MakeTracker, clock) -> None:
    tracker = make_tracker(max_retry=1)
    tracker.create_tasks(["t1"])
    tracker.start("t1")
    clock.advance(seconds=301)
    with pytest.raises(TaskIgnoredError):
        tracker.start("t1")
    task = tracker.get("t1")
    assert (task.status, task.retry, task.lease_owner) == (Status.IGNORED, 1, None)


def _emf_metrics(text: str) -> list[dict]:
    """Each EMF line's metrics (name -> value) and dimensions, in order."""
    found = []
    for line in text.splitlines():
        if line.startswith('{"_aws"'):
            document = json.loads(line)
            (directive,) = document["_aws"]["CloudWatchMetrics"]
            names = [m["Name"] for m in directive["Metrics"]]
            found.append({name: document[name] for name in [*names, *directive["Dimensions"][0]]})
    return found


def test_lease_expiries_exhausted_retries_and_backlog_age_are_pattern_metrics(
    make_tracker: MakeTracker, clock, capsys, monkeypatch
) -> None:
    """The tracker prints the pattern's metrics where the module's variables are set."""
    monkeypatch.setenv("SFN_PATTERNS_METRICS_NAMESPACE", "sfn-patterns")
    monkeypatch.setenv("SFN_PATTERNS_MODULE", "orders-tasks")
    tracker = make_tracker(max_retry=2)
    tracker.create_tasks(["crashes", "fails", "waits"])
    capsys.readouterr()
    # A crashed attempt's lease expires; the next start reclaims it (one expiry) ...
    tracker.start("crashes")
    clock.advance(seconds=301)
    tracker.start("crashes")
    # ... and the one after that has used up the retries: parked (expiry, exhausted).
    clock.advance(seconds=301)
    with pytest.raises(TaskIgnoredError):
        tracker.start("crashes")
    # A task that fails max_retry times is exhausted once, on its last failure.
    fail_once(tracker, "fails")
    fail_once(tracker, "fails")
    dims = {"Module": "orders-tasks", "Pattern": "status-table"}
    assert _emf_metrics(capsys.readouterr().out) == [
        {"LeaseExpiries": 1, **dims},
        {"LeaseExpiries": 1, "RetriesExhausted": 1, **dims},
        {"RetriesExhausted": 1, **dims},
    ]
    # "waits" has been pending since it was created, 602 s of the clock ago.
    assert tracker.emit_backlog_metrics() == pytest.approx(602)
    assert _emf_metrics(capsys.readouterr().out) == [{"OldestPendingAge": 602, **dims}]
    with tracker.start("waits"):
        pass
    assert tracker.emit_backlog_metrics() is None
    assert capsys.readouterr().out == ""


def test_stale_worker_failure_is_fenced_and_keeps_original_error(
    make_tracker: MakeTracker, clock, caplog
) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    attempt_a = a.start("t1")
    clock.advance(seconds=301)
    attempt_b = b.start("t1")
    with (
        caplog.at_level(logging.ERROR, logger="sfn_patterns.status_table"),
        pytest.raises(Boom, match="the real error") as info,
        attempt_a,
    ):
        raise Boom("the real error")
    assert any("not recorded" in note for note in info.value.__notes__)
    assert isinstance(attempt_a.stale_error, StaleAttemptError)
    assert (attempt_a.stale_error.attempt, attempt_a.stale_error.current_attempt) == (1, 2)
    assert any("stale orders/t1" in r.getMessage() for r in caplog.records)
    # A's rejected write left B's attempt untouched.
    task = b.get("t1")
    assert (task.status, task.attempt, task.retry, task.lease_owner) == (
        Status.IN_PROGRESS,
        2,
        1,
        "B",
    )
    with attempt_b:
        pass
    assert b.get("t1").status is Status.SUCCEEDED


def test_stale_worker_success_raises_stale_attempt(make_tracker: MakeTracker, clock) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    attempt_a = a.start("t1")
    clock.advance(seconds=301)
    with b.start("t1"):
        pass
    with pytest.raises(StaleAttemptError), attempt_a:
        attempt_a.set_data({"from": "A"})
    task = b.get("t1")
    assert (task.status, task.attempt, task.data) == (Status.SUCCEEDED, 2, {})


def test_heartbeat_extends_lease_and_is_fenced(make_tracker: MakeTracker, clock) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    attempt = a.start("t1")
    clock.advance(seconds=250)
    expires = attempt.heartbeat()
    assert expires == clock.now + timedelta(seconds=300)
    assert a.get("t1").lease_expires_at == expires
    clock.advance(seconds=100)  # past the original lease, inside the extended one
    with pytest.raises(TaskLockedError):
        b.start("t1")
    clock.advance(seconds=201)
    b.start("t1")
    with pytest.raises(StaleAttemptError):
        attempt.heartbeat()


def test_lease_from_lambda_context(make_tracker: MakeTracker, clock) -> None:
    class Context:
        def get_remaining_time_in_millis(self) -> int:
            return 30_000

    tracker = make_tracker(lease_margin_seconds=2)
    tracker.create_tasks(["t1", "t2"])
    tracker.start("t1", context=Context())
    assert tracker.get("t1").lease_expires_at == clock.now + timedelta(seconds=32)
    tracker.start("t2", context=Context(), lease_seconds=7)
    assert tracker.get("t2").lease_expires_at == clock.now + timedelta(seconds=7)


def test_payload_hash_is_stored_and_checked(make_tracker: MakeTracker) -> None:
    tracker = make_tracker()
    tracker.create_tasks(["t1", "t2"], payloads={"t1": {"a": 1, "b": [1, 2]}})
    assert tracker.get("t1").payload_sha256 == payload_sha256({"b": [1, 2], "a": 1})
    with pytest.raises(PayloadMismatchError) as info:
        tracker.start("t1", payload={"a": 2, "b": [1, 2]})
    assert info.value.expected_sha256 == payload_sha256({"a": 1, "b": [1, 2]})
    assert tracker.get("t1").status is Status.PENDING  # nothing was acquired
    with tracker.start("t1", payload={"b": [1, 2], "a": 1}):  # key order does not matter
        pass
    # t2 had no payload: the first start stores it, later starts must match it.
    fail_once_with_payload = tracker.start("t2", payload={"x": 1})
    with pytest.raises(Boom), fail_once_with_payload:
        raise Boom("x")
    assert tracker.get("t2").payload_sha256 == payload_sha256({"x": 1})
    with pytest.raises(PayloadMismatchError):
        tracker.start("t2", payload={"x": 2})


def test_missing_task_raises_unless_create(make_tracker: MakeTracker) -> None:
    tracker = make_tracker()
    with pytest.raises(TaskNotFoundError):
        tracker.start("nope")
    assert tracker.get("nope") is None
    with tracker.start("nope", create=True, payload={"p": 1}):
        pass
    task = tracker.get("nope")
    assert (task.status, task.attempt) == (Status.SUCCEEDED, 1)
    assert task.payload_sha256 == payload_sha256({"p": 1})


def test_errors_are_trimmed_to_last_n(make_tracker: MakeTracker) -> None:
    tracker = make_tracker(max_retry=10, keep_errors=2)
    tracker.create_tasks(["t1"])
    for n in range(1, 5):
        fail_once(tracker, "t1", f"failure {n}")
    task = tracker.get("t1")
    assert task.retry == 4
    assert [(e.attempt, e.message) for e in task.errors] == [(3, "failure 3"), (4, "failure 4")]


def test_use_cases_are_isolated(make_tracker: MakeTracker) -> None:
    orders = make_tracker("orders")
    refunds = make_tracker("refunds")
    orders.create_tasks(["t1"])
    assert refunds.get("t1") is None
    with orders.start("t1"):
        pass
    assert refunds.create_tasks(["t1"]).created == ["t1"]
    assert refunds.get("t1").status is Status.PENDING


def test_invalid_configuration_is_rejected(table_name: str) -> None:
    with pytest.raises(ValueError, match="must not contain"):
        Tracker(table_name, "a#b")
    with pytest.raises(ValueError):
        Tracker(table_name, "ok", n_shards=0)
    tracker = Tracker(table_name, "ok", clock=lambda: __import__("datetime").datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        tracker.now()


def test_lifecycle_is_logged(make_tracker: MakeTracker, caplog) -> None:
    tracker = make_tracker(max_retry=1)
    tracker.create_tasks(["ok", "bad"])
    with caplog.at_level(logging.INFO, logger="sfn_patterns.status_table"):
        with tracker.start("ok"):
            pass
        fail_once(tracker, "bad", "kaput")
    messages = [r.getMessage() for r in caplog.records if r.name == "sfn_patterns.status_table"]
    assert any(m.startswith("start orders/ok: attempt 1") for m in messages)
    assert "succeeded orders/ok: attempt 1" in messages
    ignored = [r for r in caplog.records if r.getMessage().startswith("ignored orders/bad")]
    assert ignored and ignored[0].levelno == logging.WARNING
    assert "kaput" in ignored[0].getMessage()


# -- a lost race costs one request ------------------------------------------------------------
# A conditional write that loses returns the item as it found it (ALL_OLD), so the loser
# learns why (who holds the lease, which attempt owns the task) from the rejection itself.
# The oracles are the winners' own records (their Attempt objects, the test's clock),
# never the loser's error read back through the code under test.

Calls = list[tuple[str, dict]]


def names(calls: Calls) -> list[str]:
    return [name for name, _ in calls]


@pytest.fixture
def interleave(api_calls: Calls, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``interleave(n, action)``: run ``action`` (another worker's write) just before the
    n-th DynamoDB request from now, to place it inside a worker's read-decide-write."""
    from botocore.client import BaseClient

    def arm(before_request: int, action: Callable[[], object]) -> None:
        sent = BaseClient._make_api_call  # api_calls' recorder: the action is recorded too
        seen = {"requests": 0, "inside": False}

        def hooked(self: BaseClient, operation: str, params: dict) -> object:
            if self.meta.service_model.service_name == "dynamodb" and not seen["inside"]:
                seen["requests"] += 1
                if seen["requests"] == before_request:
                    seen["inside"] = True
                    try:
                        action()
                    finally:
                        seen["inside"] = False
            return sent(self, operation, params)

        monkeypatch.setattr(BaseClient, "_make_api_call", hooked)

    return arm


def test_a_claim_lost_to_a_live_lease_costs_one_request(
    make_tracker: MakeTracker, clock, api_calls: Calls
) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    a_lease_ends = clock.now + timedelta(seconds=300)
    a.start("t1")
    api_calls.clear()
    with pytest.raises(TaskLockedError) as info:
        b.start("t1")
    assert names(api_calls) == ["UpdateItem"]
    assert (info.value.lease_owner, info.value.lease_expires_at) == ("A", a_lease_ends)


def test_a_claim_of_a_task_nobody_may_start_costs_one_request(
    make_tracker: MakeTracker, api_calls: Calls
) -> None:
    tracker = make_tracker(max_retry=1)
    tracker.create_tasks(["done", "parked", "other-input"], payloads={"other-input": {"n": 1}})
    with tracker.start("done"):
        pass
    fail_once(tracker, "parked")
    cases: list[tuple[str, dict, type[Exception]]] = [
        ("done", {}, TaskAlreadySucceededError),
        ("parked", {}, TaskIgnoredError),
        ("other-input", {"payload": {"n": 2}}, PayloadMismatchError),
        ("missing", {}, TaskNotFoundError),
    ]
    for task_id, kwargs, error in cases:
        api_calls.clear()
        with pytest.raises(error):
            tracker.start(task_id, **kwargs)
        assert names(api_calls) == ["UpdateItem"], task_id


def test_a_completion_lost_to_a_reclaim_costs_one_request(
    make_tracker: MakeTracker, clock, api_calls: Calls
) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["succeeds", "fails", "beats"])
    late = {task_id: a.start(task_id) for task_id in ("succeeds", "fails", "beats")}
    clock.advance(seconds=301)
    winners = {task_id: b.start(task_id) for task_id in late}

    api_calls.clear()
    with pytest.raises(StaleAttemptError) as info, late["succeeds"]:
        pass
    assert names(api_calls) == ["UpdateItem"]
    assert info.value.current_attempt == winners["succeeds"].attempt == 2

    api_calls.clear()
    with pytest.raises(Boom), late["fails"]:
        raise Boom("late")
    assert names(api_calls) == ["UpdateItem"]
    stale = late["fails"].stale_error
    assert stale is not None and stale.current_attempt == winners["fails"].attempt

    api_calls.clear()
    with pytest.raises(StaleAttemptError) as info:
        late["beats"].heartbeat()
    assert names(api_calls) == ["UpdateItem"]
    assert info.value.current_attempt == winners["beats"].attempt


def test_a_chained_completion_lost_to_a_reclaim_costs_one_request(
    make_tracker: MakeTracker, clock, api_calls: Calls
) -> None:
    a = make_tracker(worker_id="A", next_use_case_id="step2")
    b = make_tracker(worker_id="B", next_use_case_id="step2")
    a.create_tasks(["t1"])
    late = a.start("t1")
    clock.advance(seconds=301)
    winner = b.start("t1")
    api_calls.clear()
    with pytest.raises(StaleAttemptError) as info, late:
        pass
    assert names(api_calls) == ["TransactWriteItems"]
    assert info.value.current_attempt == winner.attempt == 2
    assert make_tracker("step2").get("t1") is None  # the cancelled transaction wrote nothing


def test_a_reclaim_lost_to_a_heartbeat_reads_nothing(
    make_tracker: MakeTracker, clock, api_calls: Calls, interleave: Callable[..., None]
) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    a.create_tasks(["t1"])
    slow = a.start("t1")
    clock.advance(seconds=301)
    heartbeats: list[object] = []
    # B's blind claim fails on the expired lease and B decides to reclaim; A's heartbeat
    # lands before B's second request, so B's reclaim loses too.
    interleave(2, lambda: heartbeats.append(slow.heartbeat()))
    api_calls.clear()
    with pytest.raises(TaskLockedError) as info:
        b.start("t1")
    # B's blind claim, A's heartbeat, B's lost reclaim: no GetItem anywhere.
    assert names(api_calls) == ["UpdateItem", "UpdateItem", "UpdateItem"]
    assert heartbeats == [clock.now + timedelta(seconds=300)]
    assert (info.value.lease_owner, info.value.lease_expires_at) == ("A", heartbeats[0])
    with slow:
        pass
    assert a.get("t1").status is Status.SUCCEEDED


def test_a_creation_lost_to_another_creator_costs_one_request(
    make_tracker: MakeTracker, api_calls: Calls, interleave: Callable[..., None]
) -> None:
    a = make_tracker(worker_id="A")
    b = make_tracker(worker_id="B")
    # A creates t1 with another payload between B's batch read and B's conditional put.
    interleave(2, lambda: a.create_tasks(["t1"], payloads={"t1": {"from": "A"}}))
    api_calls.clear()
    result = b.create_tasks(["t1"], payloads={"t1": {"from": "B"}})
    assert names(api_calls) == ["BatchGetItem", "BatchGetItem", "PutItem", "PutItem"]
    assert (result.created, result.existing, result.mismatched) == ([], ["t1"], ["t1"])
    assert a.get("t1").payload_sha256 == payload_sha256({"from": "A"})


def _flaky_updates(
    monkeypatch: pytest.MonkeyPatch, tracker: Tracker, answers: list[str]
) -> list[str]:
    """The store's next UpdateItems answer, in turn: "throttle" (not written) or "lost"
    (written, then a 500 in place of the answer); later ones go through."""
    from botocore.exceptions import ClientError
    from pynamodb.exceptions import UpdateError

    store = tracker.store
    original = store._send
    seen: list[str] = []

    def send(operation: str, kwargs: dict, error: type[Exception]) -> object:
        if operation != "update_item" or not answers:
            return original(operation, kwargs, error)
        answer = answers.pop(0)
        seen.append(answer)
        if answer == "lost":
            original(operation, kwargs, error)
        code = (
            "ProvisionedThroughputExceededException"
            if answer == "throttle"
            else "InternalServerError"
        )
        raise UpdateError(
            "update_item failed", ClientError({"Error": {"Code": code}}, "UpdateItem")
        )

    monkeypatch.setattr(store, "_send", send)
    return seen


def test_a_throttled_success_is_recorded_not_left_to_run_again(
    make_tracker: MakeTracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A success write throttled past the SDK's retries is sent again.

    Given up, it left the task in progress until its lease ran out, and another worker
    then ran the task a second time (8 workers under DynamoDB throttling).
    """
    tracker = make_tracker()
    tracker.create_tasks(["t"])
    attempt = tracker.start("t")
    seen = _flaky_updates(monkeypatch, tracker, ["throttle", "throttle"])
    with attempt:
        pass
    assert seen == ["throttle", "throttle"]
    task = tracker.get("t")
    assert (task.status, task.attempt) == (Status.SUCCEEDED, 1)


def test_a_success_whose_answer_was_lost_is_not_called_stale(
    make_tracker: MakeTracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = make_tracker()
    tracker.create_tasks(["t"])
    attempt = tracker.start("t")
    _flaky_updates(monkeypatch, tracker, ["lost"])
    with attempt:
        pass
    assert attempt.final_status is Status.SUCCEEDED
    assert tracker.get("t").status is Status.SUCCEEDED


def test_a_failure_whose_attempt_was_parked_by_another_worker_is_not_called_landed(
    make_tracker: MakeTracker, clock
) -> None:
    """A parked attempt ends ``ignored`` at the same attempt number as its own last failure.

    A's body outlives its lease; B finds the lease expired at max_retry and parks the task
    ignored with a LeaseExpired record. A's failure would also write ignored at attempt 1,
    but it was never recorded: A must hear that (``stale_error``), not take B's write for
    its own.
    """
    a = make_tracker(worker_id="A", max_retry=1)
    b = make_tracker(worker_id="B", max_retry=1)
    a.create_tasks(["t1"])
    attempt = a.start("t1")
    clock.advance(seconds=301)
    with pytest.raises(TaskIgnoredError):
        b.start("t1")
    with pytest.raises(ValueError, match="body failed"), attempt:
        raise ValueError("body failed")
    assert attempt.stale_error is not None
    task = a.get("t1")
    assert (task.status, task.attempt) == (Status.IGNORED, 1)
    assert [e.error_type for e in task.errors] == ["LeaseExpired"]
