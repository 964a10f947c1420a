"""An SQS queue for the explorer: moto's SQS in-process, on the run's clock, behind a pause point.

Why moto: it keeps a FIFO queue's rules (a message group with a message in flight delivers
nothing else of that group; a received message is hidden for the visibility timeout and
comes back after it; deduplication ids), which a protocol that reads a queue relies on,
and it runs in this process like the DynamoDB store (:mod:`.store`).

Why its clock is patched: moto reads the wall clock for every visibility decision, so a
message handed to a crashed consumer would come back after real seconds. Inside
:func:`queue_time` moto's SQS reads the run's fake clock instead, and a message comes
back when ``+`` steps have moved the clock past its visibility timeout.

Every request an actor sends to SQS is a pause point, like a DynamoDB request (the
gateway, :mod:`.gateway`, routes the ``sqs`` service here): sent, answer lost, throttled
(``RequestThrottled``) or crashed at. A request that changes the queue is recorded as a
:class:`~.scheduler.Write` whose items are the queue's messages, named
``sqs:<deduplication id>``.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from sfn_patterns_localstack.interleavings.clock import FakeClock, patched
from sfn_patterns_localstack.interleavings.scheduler import CallPause
from sfn_patterns_localstack.interleavings.sfn import json_response
from sfn_patterns_localstack.interleavings.store import Snapshot, moto_send

#: The SQS calls that change nothing (every other one may: a receive hides a message).
_READS = frozenset({"GetQueueAttributes", "GetQueueUrl", "ListQueues"})
#: What a throttled SQS request is answered with (botocore's standard mode retries it).
_THROTTLE = "RequestThrottled"
#: Item keys of messages in snapshots and writes (apart from DynamoDB's and Step Functions').
KEY_PREFIX = "sqs:"


class MotoQueue:
    """One queue of moto's SQS backend: apply requests, snapshot, save and restore.

    Args:
        name: The queue's name (``.fifo`` for a FIFO queue).
        region: The region of the runtime's clients.

    """

    def __init__(self, name: str, region: str) -> None:
        self.name = name
        self.region = region
        self._url = f"https://sqs.{region}.amazonaws.com/"

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """Apply one signed request through moto's dispatcher and return its HTTP answer."""
        return moto_send(request, self._url)

    def describe(self, operation: str, body: bytes | str | None) -> CallPause:
        """Every request touches the one queue; all but reads may change it."""
        keys = frozenset({f"{KEY_PREFIX}{self.name}"})
        return CallPause(operation, keys, operation not in _READS)

    def throttled(self, request: AWSPreparedRequest) -> AWSResponse:
        """SQS's answer to a throttled request (HTTP 400, nothing applied; botocore retries it)."""
        message = "Rate exceeded (injected by the explorer)."
        return json_response(request, 400, {"__type": _THROTTLE, "message": message})

    def _queue(self) -> Any:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.sqs.models import sqs_backends

        return sqs_backends[DEFAULT_ACCOUNT_ID][self.region].queues[self.name]

    def drop(self) -> None:
        """Forget the queue if it exists, so setup creates it anew."""
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.sqs.models import sqs_backends

        sqs_backends[DEFAULT_ACCOUNT_ID][self.region].queues.pop(self.name, None)

    def snapshot(self) -> Snapshot:
        """Every message still in the queue (visible or in flight), by ``sqs:<dedup id>``."""
        items: Snapshot = {}
        for message in self._queue()._messages:
            items[f"{KEY_PREFIX}{message.deduplication_id or message.id}"] = {
                "body": message.body,
                "group": message.group_id,
                "receives": message.approximate_receive_count,
                "visible_at": message.visible_at,
            }
        return items

    def held(self) -> int:
        """How many messages the queue still holds, visible or in flight."""
        return len(self._queue()._messages)

    def save(self) -> Any:
        """The queue's messages and their delivery state as they are now (for :meth:`restore`)."""
        queue = self._queue()
        return copy.deepcopy((queue._messages, queue._pending_messages, queue.deleted_messages))

    def restore(self, saved: Any) -> None:
        """Put the queue back as :meth:`save` found it (each run starts equal)."""
        queue = self._queue()
        messages, pending, deleted = copy.deepcopy(saved)  # one copy: pending stays a subset
        queue._messages, queue._pending_messages, queue.deleted_messages = (
            messages,
            pending,
            deleted,
        )


@contextlib.contextmanager
def queue_time(clock: FakeClock) -> Iterator[None]:
    """Point moto's SQS at ``clock`` for the duration (visibility timeouts, timestamps)."""
    from moto.core import utils
    from moto.sqs import models

    def unix_time(dt: Any = None) -> float:
        return utils.unix_time(dt) if dt is not None else clock.now.timestamp()

    def unix_time_millis(dt: Any = None) -> float:
        return unix_time(dt) * 1000.0

    with (
        patched(models, "unix_time", unix_time),
        patched(models, "unix_time_millis", unix_time_millis),
    ):
        yield
