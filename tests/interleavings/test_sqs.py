"""The explorer's SQS queue: moto's FIFO rules on the run's clock, and its calls as schedule steps.

The calls are made as the runtime makes them, through a botocore client built by
``sfn_patterns.clients`` (standard retries) attached to a gateway; the expected behaviour
is SQS's documented one (a received message is hidden for the visibility timeout, a FIFO
group with a message in flight delivers nothing else of it).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from sfn_patterns import clients
from sfn_patterns_localstack.interleavings.clock import FakeClock, instant_sleeps
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.scheduler import (
    ActorContext,
    CallPause,
    Scheduler,
    Write,
    in_actor,
)
from sfn_patterns_localstack.interleavings.sqs import MotoQueue, queue_time
from sfn_patterns_localstack.interleavings.steps import Kind, Step
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST, MotoStore

pytestmark = pytest.mark.interleavings

NAME = "q.fifo"
VISIBILITY = 120


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoQueue]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    with mock_aws(), queue_time(clock), instant_sleeps(in_actor):
        yield MotoQueue(NAME, "us-east-1")


def _gateway(queue: MotoQueue) -> Gateway:
    return Gateway(MotoStore("unused", "us-east-1"), "pk", queue=queue)


def _client(gateway: Gateway) -> Any:
    client = clients.client("sqs", region_name="us-east-1", endpoint_url=RUNTIME_HOST)
    gateway.attach(client)
    return client


@pytest.fixture
def sqs(queue: MotoQueue) -> Any:
    return _client(_gateway(queue))


@pytest.fixture
def url(sqs: Any) -> str:
    attributes = {"FifoQueue": "true", "VisibilityTimeout": str(VISIBILITY)}
    queue_url = sqs.create_queue(QueueName=NAME, Attributes=attributes)["QueueUrl"]
    for body, group in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        sqs.send_message(
            QueueUrl=queue_url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=body
        )
    return str(queue_url)


def _receive(sqs: Any, url: str) -> str | None:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1).get("Messages") or []
    return messages[0]["Body"] if messages else None


def test_a_received_message_comes_back_when_the_clock_passes_its_timeout(
    clock: FakeClock, sqs: Any, url: str
) -> None:
    assert _receive(sqs, url) == "a1"
    assert _receive(sqs, url) == "b1"  # group a is blocked behind its message in flight
    assert _receive(sqs, url) is None
    clock.advance(timedelta(seconds=VISIBILITY - 1))
    assert _receive(sqs, url) is None
    clock.advance(timedelta(seconds=2))
    assert _receive(sqs, url) == "a1"


def test_save_and_restore_give_each_run_the_same_queue(
    queue: MotoQueue, sqs: Any, url: str
) -> None:
    saved = queue.save()
    first = queue.snapshot()
    assert sorted(first) == ["sqs:a1", "sqs:a2", "sqs:b1"]
    assert _receive(sqs, url) == "a1"
    assert queue.snapshot()["sqs:a1"]["receives"] == 1
    queue.restore(saved)
    assert queue.snapshot() == first
    assert _receive(sqs, url) == "a1"  # neither in flight nor hidden any more


def test_a_call_is_a_pause_point_and_its_change_a_write(
    clock: FakeClock, queue: MotoQueue, url: str
) -> None:
    sqs = _client(_gateway(queue))
    got: list[str | None] = []

    def consumer(ctx: ActorContext) -> None:
        got.append(_receive(sqs, url))

    run = Scheduler([("c", consumer)], clock, timedelta(seconds=30))
    run.start()
    try:
        [option, *_] = run.options()
        assert option.pause == CallPause("ReceiveMessage", frozenset({f"sqs:{NAME}"}), True)
        run.perform(Step(Kind.THROTTLE, 0))  # not applied: botocore sends it again
        assert queue.snapshot()["sqs:a1"]["receives"] == 0 and run.events == []
        run.perform(Step(Kind.LOSE, 0))  # applied, the answer lost: sent again
        run.perform(Step(Kind.RUN, 0))
    finally:
        run.close()
    writes = [e for e in run.events if isinstance(e, Write)]
    assert [(w.actor, w.operation, sorted(w.after)) for w in writes] == [
        (0, "ReceiveMessage", ["sqs:a1"]),
        (0, "ReceiveMessage", ["sqs:b1"]),
    ]
    assert got == ["b1"]  # a1 went to the lost answer and stays in flight


def test_a_gateway_without_a_queue_refuses_an_sqs_client(queue: MotoQueue) -> None:
    with pytest.raises(ValueError, match="sqs only when given a queue"):
        _client(Gateway(MotoStore("unused", "us-east-1"), "pk"))
