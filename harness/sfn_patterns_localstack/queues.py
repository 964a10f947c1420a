"""How many messages an SQS queue holds.

The one answer the demo, the benchmarks and the tests all ask of a throttle's queue
and its dead-letter queue.
"""

from __future__ import annotations

from typing import Any


def depth(sqs: Any, url: str) -> int:
    """Messages in the queue at ``url``, visible or in flight (SQS's approximate counts)."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )
