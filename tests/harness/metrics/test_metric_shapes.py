"""AWS/States, AWS/SQS, AWS/DynamoDB and AWS/Events data, shaped as AWS documents them.

No LocalStack needed: each module's data are built from plain values (one test reads
the names of LocalStack's SQS queue counters).
"""

from __future__ import annotations

import datetime
import heapq
from types import SimpleNamespace

from sfn_patterns_localstack.emulation.metrics import (
    dynamodb_metrics,
    events_metrics,
    sfn_metrics,
    sqs_metrics,
)

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
        approximate_number_of_messages=1,
        approximate_number_of_messages_not_visible=1,
        approximate_number_of_messages_delayed=0,
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
        approximate_number_of_messages=0,
        approximate_number_of_messages_not_visible=0,
        approximate_number_of_messages_delayed=0,
    )
    assert "ApproximateAgeOfOldestMessage" not in {
        d.name for d in sqs_metrics.queue_data(empty, 1.0)
    }


def test_the_gauges_are_localstacks_queue_counters() -> None:
    """``queue_data`` reads SqsQueue's own properties (4.14.0 renamed them from ``approx_*``)."""
    from localstack.services.sqs.models import SqsQueue

    for gauge in sqs_metrics.GAUGES.values():
        assert isinstance(getattr(SqsQueue, gauge, None), property), gauge


# --- AWS/DynamoDB and AWS/Events (dynamodb_metrics, events_metrics) -------------------


def _named(data: list) -> list[tuple]:
    return [(d.namespace, d.name, d.value, dict(d.dimensions)) for d in data]


def test_a_throttled_read_and_a_throttled_write() -> None:
    read = dynamodb_metrics.answer_data(
        "GetItem", {"TableName": "locks"}, 400, "ProvisionedThroughputExceededException"
    )
    assert _named(read) == [
        ("AWS/DynamoDB", "ThrottledRequests", 1, {"TableName": "locks", "Operation": "GetItem"}),
        ("AWS/DynamoDB", "ReadThrottleEvents", 1, {"TableName": "locks"}),
    ]
    write = dynamodb_metrics.answer_data(
        "UpdateItem", {"TableName": "locks"}, 400, "ThrottlingException"
    )
    assert [d.name for d in write] == ["ThrottledRequests", "WriteThrottleEvents"]


def test_a_server_error_is_a_system_error_of_its_operation() -> None:
    for status, code in ((500, "InternalServerError"), (503, "ServiceUnavailable"), (500, None)):
        data = dynamodb_metrics.answer_data("PutItem", {"TableName": "t"}, status, code)
        assert _named(data) == [
            ("AWS/DynamoDB", "SystemErrors", 1, {"TableName": "t", "Operation": "PutItem"})
        ]


def test_other_answers_and_tableless_requests_count_nothing() -> None:
    assert dynamodb_metrics.answer_data("PutItem", {"TableName": "t"}, 400, "Conditional") == []
    assert dynamodb_metrics.answer_data("ListTables", {}, 400, "ThrottlingException") == []
    # A control-plane throttle counts as a throttled request, but is no read or write.
    data = dynamodb_metrics.answer_data(
        "DescribeTable", {"TableName": "t"}, 400, "ThrottlingException"
    )
    assert [d.name for d in data] == ["ThrottledRequests"]


def test_batches_and_transactions_count_each_table_once() -> None:
    batch = {"RequestItems": {"a": {}, "b": {}}}
    assert dynamodb_metrics.table_names(batch) == ["a", "b"]
    transaction = {
        "TransactItems": [
            {"Put": {"TableName": "a"}},
            {"Update": {"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/b"}},
            {"ConditionCheck": {"TableName": "a"}},
        ]
    }
    assert dynamodb_metrics.table_names(transaction) == ["a", "b"]
    data = dynamodb_metrics.answer_data(
        "TransactWriteItems", transaction, 400, "ProvisionedThroughputExceededException"
    )
    assert [(d.name, dict(d.dimensions)["TableName"]) for d in data] == [
        ("ThrottledRequests", "a"),
        ("WriteThrottleEvents", "a"),
        ("ThrottledRequests", "b"),
        ("WriteThrottleEvents", "b"),
    ]


def test_a_failed_delivery_is_an_invocation_and_a_failed_one() -> None:
    assert _named(events_metrics.delivery_data("starter", failed=False)) == [
        ("AWS/Events", "Invocations", 1, {"RuleName": "starter"})
    ]
    assert _named(events_metrics.delivery_data("starter", failed=True)) == [
        ("AWS/Events", "Invocations", 1, {"RuleName": "starter"}),
        ("AWS/Events", "FailedInvocations", 1, {"RuleName": "starter"}),
    ]


def test_the_metric_is_execution_throttled_by_state_machine() -> None:
    datum = sfn_metrics.throttled_datum(ARN)
    assert (datum.namespace, datum.name, datum.value, datum.unit) == (
        "AWS/States",
        "ExecutionThrottled",
        1,
        "Count",
    )
    assert datum.dimensions == (("StateMachineArn", ARN),)
