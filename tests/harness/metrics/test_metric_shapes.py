"""AWS/States and AWS/SQS data are shaped as AWS documents them (no LocalStack needed)."""

from __future__ import annotations

import datetime
import heapq
from types import SimpleNamespace

from sfn_patterns_localstack.emulation.metrics import sfn_metrics, sqs_metrics

ARN = "arn:aws:states:us-east-1:000000000000:stateMachine:jobs"


def _execution(status: str, seconds: float = 0.0) -> SimpleNamespace:
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return SimpleNamespace(
        exec_status=status,
        state_machine_arn=ARN,
        start_date=start,
        stop_date=None if status == "RUNNING" else start + datetime.timedelta(seconds=seconds),
    )


def test_start_then_end_each_once() -> None:
    execution = _execution("RUNNING")
    (started,) = sfn_metrics.status_data(execution)
    assert (started.namespace, started.name, started.value, started.dimensions) == (
        "AWS/States",
        "ExecutionsStarted",
        1,
        (("StateMachineArn", ARN),),
    )
    execution.exec_status, execution.stop_date = (
        "FAILED",
        execution.start_date + datetime.timedelta(seconds=2.5),
    )
    failed, elapsed = sfn_metrics.status_data(execution)
    assert failed.name == "ExecutionsFailed" and failed.unit == "Count"
    assert (elapsed.name, elapsed.value, elapsed.unit) == ("ExecutionTime", 2500.0, "Milliseconds")
    # The StopExecution fix and the worker may both announce the end: one datum only.
    assert sfn_metrics.status_data(execution) == []


def test_every_final_status_has_its_metric() -> None:
    names = {
        status: sfn_metrics.status_data(_execution(status, 1))[0].name
        for status in ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")
    }
    assert names == {
        "SUCCEEDED": "ExecutionsSucceeded",
        "FAILED": "ExecutionsFailed",
        "TIMED_OUT": "ExecutionsTimedOut",
        "ABORTED": "ExecutionsAborted",
    }
    assert sfn_metrics.status_data(_execution("PENDING_REDRIVE")) == []


def _message(created: float, deleted: bool = False) -> SimpleNamespace:
    return SimpleNamespace(created=created, deleted=deleted)


def test_age_of_the_oldest_message_in_a_fifo_queue() -> None:
    groups = {"g1": SimpleNamespace(messages=[_message(100.0)]), "g2": SimpleNamespace(messages=[])}
    queue = SimpleNamespace(
        name="q.fifo",
        inflight=[_message(40.0, deleted=True), _message(70.0)],
        message_groups=groups,
        approx_number_of_messages=1,
        approx_number_of_messages_not_visible=1,
        approx_number_of_messages_delayed=0,
    )
    data = {d.name: d for d in sqs_metrics.queue_data(queue, now=130.0)}
    assert data["ApproximateAgeOfOldestMessage"].value == 60.0
    assert data["ApproximateAgeOfOldestMessage"].unit == "Seconds"
    assert data["ApproximateNumberOfMessagesVisible"].value == 1.0
    assert data["ApproximateNumberOfMessagesVisible"].dimensions == (("QueueName", "q.fifo"),)


def test_a_standard_queue_and_an_empty_one() -> None:
    visible = SimpleNamespace(queue=[])
    for created in (50.0, 20.0):
        heapq.heappush(visible.queue, created)
    visible.queue = [_message(c) for c in visible.queue]
    queue = SimpleNamespace(name="q", inflight=[], visible=visible)
    assert sqs_metrics.oldest_sent(queue) == 20.0
    empty = SimpleNamespace(
        name="e",
        inflight=[],
        visible=SimpleNamespace(queue=[]),
        approx_number_of_messages=0,
        approx_number_of_messages_not_visible=0,
        approx_number_of_messages_delayed=0,
    )
    assert "ApproximateAgeOfOldestMessage" not in {
        d.name for d in sqs_metrics.queue_data(empty, 1.0)
    }
