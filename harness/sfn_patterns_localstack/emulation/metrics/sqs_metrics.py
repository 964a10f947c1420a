"""``AWS/SQS`` metrics through the sink, with ``ApproximateAgeOfOldestMessage``.

LocalStack 4.14.0 publishes SQS metrics in two ways, both as internal PutMetricData
requests: per call (``NumberOfMessagesSent``, ``SentMessageSize``,
``NumberOfMessagesReceived``, ``NumberOfEmptyReceives``, ``NumberOfMessagesDeleted``)
from a thread pool (``CloudwatchDispatcher.dispatch_sqs_metric``), and every
``SQS_CLOUDWATCH_METRICS_REPORT_INTERVAL`` seconds the queue gauges
``ApproximateNumberOfMessagesVisible``, ``...NotVisible`` and ``...Delayed`` of every
queue (``CloudwatchPublishWorker.publish_approximate_cloudwatch_metrics``). It leaves
out ``ApproximateAgeOfOldestMessage`` (its own TODO), the metric AWS recommends
alarming a queue on.

The patch sends both kinds to the sink (no request, no thread per call) and adds
the age, per queue (dimension ``QueueName``): seconds since the oldest message that
is still in the queue (visible or in flight, not delayed) was sent; no datum for an
empty queue, as AWS publishes none.

The gauges read the queue's own counters, which 4.14.0 names
``approximate_number_of_messages[_not_visible|_delayed]`` (4.9.2: ``approx_...``);
``apply`` checks that they are there.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

from .sink import SINK, Datum, dimensions

LOG = logging.getLogger(__name__)
NAMESPACE = "AWS/SQS"
# Each queue gauge AWS publishes, and the SqsQueue property LocalStack 4.14.0 counts it with.
GAUGES = {
    "ApproximateNumberOfMessagesVisible": "approximate_number_of_messages",
    "ApproximateNumberOfMessagesNotVisible": "approximate_number_of_messages_not_visible",
    "ApproximateNumberOfMessagesDelayed": "approximate_number_of_messages_delayed",
}


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.sqs import models, provider
    except ImportError:
        return False
    dispatcher = getattr(provider, "CloudwatchDispatcher", None)
    worker = getattr(provider, "CloudwatchPublishWorker", None)
    if (
        version.__version__ != LOCALSTACK_VERSION
        or not hasattr(dispatcher, "dispatch_sqs_metric")
        or not hasattr(worker, "publish_approximate_cloudwatch_metrics")
        or not all(hasattr(models.SqsQueue, gauge) for gauge in GAUGES.values())
    ):
        LOG.warning("sfn-patterns SQS metrics not applied (localstack %s)", version.__version__)
        return False
    if getattr(dispatcher.dispatch_sqs_metric, "_sfnp_patched", False):
        return True

    @functools.wraps(dispatcher.dispatch_sqs_metric)
    def dispatch_sqs_metric(  # noqa: PLR0917 (LocalStack's signature)
        self: Any,
        account_id: str,
        region: str,
        queue_name: str,
        metric: str,
        value: float = 1,
        unit: str = "Count",
    ) -> None:
        if self.running:
            SINK.put(account_id, region, [_datum(metric, value, queue_name, unit)])

    def publish_approximate_cloudwatch_metrics(self: Any) -> None:
        now = time.time()
        for account_id, region, store in provider.sqs_stores.iter_stores():
            data: list[Datum] = []
            for queue in list(store.queues.values()):
                data.extend(queue_data(queue, now))
            if data:
                SINK.put(account_id, region, data)

    dispatch_sqs_metric._sfnp_patched = True
    dispatcher.dispatch_sqs_metric = dispatch_sqs_metric
    worker.publish_approximate_cloudwatch_metrics = publish_approximate_cloudwatch_metrics
    return True


def queue_data(queue: Any, now: float) -> list[Datum]:
    """The gauges of one queue at ``now``."""
    data = [_datum(metric, getattr(queue, gauge), queue.name) for metric, gauge in GAUGES.items()]
    oldest = oldest_sent(queue)
    if oldest is not None:
        data.append(
            _datum("ApproximateAgeOfOldestMessage", max(now - oldest, 0.0), queue.name, "Seconds")
        )
    return data


def oldest_sent(queue: Any) -> float | None:
    """When the oldest message still in the queue was sent; None for an empty queue."""
    messages = list(getattr(queue, "inflight", ()))  # 4.14.0: a dict keyed by message
    visible = getattr(queue, "visible", None)  # a standard queue's priority queue
    if visible is not None:
        messages.extend(list(visible.queue))
    for group in list(getattr(queue, "message_groups", {}).values()):  # a FIFO queue
        messages.extend(list(group.messages))
    created = [m.created for m in messages if not m.deleted]
    return min(created) if created else None


def _datum(name: str, value: float, queue_name: str, unit: str = "Count") -> Datum:
    return Datum(NAMESPACE, name, float(value), dimensions(QueueName=queue_name), unit)
