"""SNS retries a delivery to an SQS queue that failed, as AWS's delivery policy does.

LocalStack 4.14.0's ``SqsTopicPublisher._publish`` (``localstack.services.sns.publisher``,
the same as 4.9.2's) makes one ``SendMessage`` per subscription; if that internal call
fails (on a loaded machine, an internal request that waited too long for the gateway),
it logs at INFO, writes a failed delivery log, hands the message to the subscription's
dead-letter queue if it has one, and the notice is gone. AWS retries deliveries to
AWS-managed endpoints (SQS, Lambda): three immediate attempts, then more with back-off,
for up to 23 days ("Amazon SNS message delivery retries", the ``default`` policy for
AWS-managed endpoints). The suite's alarm proofs read every notice through such a
subscription (tests/alarm_check.py), and a notice lost this way failed a run now and
then with the alarm already in ALARM.

The patched method is LocalStack 4.14.0's own, with the ``SendMessage`` retried: the
three immediate attempts, then ``BACKOFF`` seconds apart (about half a minute, not
AWS's 23 days), before LocalStack's failure path (delivery log, dead-letter queue)
runs. A queue that no longer exists is not retried, as on AWS. Each failed attempt is
logged at WARNING, so a kept log shows it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
IMMEDIATE = 3
BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0)  # about half a minute in all, then given up


def attempts() -> list[float]:
    """The pause before each attempt: three at once, then the back-off."""
    return [0.0] * IMMEDIATE + list(BACKOFF)


def send_with_retries(send: Any, pause: Any = time.sleep) -> None:
    """Call ``send()`` until it returns; re-raise its last error (or a missing queue's)."""
    last: Exception | None = None
    for number, delay in enumerate(attempts(), start=1):
        if delay:
            pause(delay)
        try:
            send()
            return
        except Exception as exc:  # any failure is retried, as SNS does
            if "NonExistentQueue" in str(exc):
                raise
            last = exc
            LOG.warning("SNS delivery to SQS failed (attempt %d): %s", number, exc)
    assert last is not None
    raise last


def apply() -> bool:
    """Patch LocalStack 4.14.0's SQS publisher once; False (nothing changed) otherwise."""
    try:
        from localstack import version
        from localstack.services.sns import publisher
    except ImportError:
        return False
    cls = getattr(publisher, "SqsTopicPublisher", None)
    if version.__version__ != LOCALSTACK_VERSION or cls is None:
        LOG.warning("sfn-patterns SNS retry not applied (localstack %s)", version.__version__)
        return False
    if getattr(cls._publish, "_sfnp_patched", False):
        return True

    def _publish(self: Any, context: Any, subscriber: Any) -> None:
        message_context = context.message
        try:
            message_body = self.prepare_message(
                message_context, subscriber, topic_attributes=context.topic_attributes
            )
            kwargs = self.get_sqs_kwargs(msg_context=message_context, subscriber=subscriber)
        except Exception:
            LOG.error(
                "An internal error occurred while trying to format the message for SQS",
                exc_info=LOG.isEnabledFor(logging.DEBUG),
            )
            return
        try:
            queue_url = publisher.sqs_queue_url_for_arn(subscriber["Endpoint"])
            region = publisher.extract_region_from_arn(subscriber["Endpoint"])
            sqs_client = publisher.connect_to(region_name=region).sqs.request_metadata(
                source_arn=subscriber["TopicArn"], service_principal="sns"
            )
            send_with_retries(
                lambda: sqs_client.send_message(
                    QueueUrl=queue_url,
                    MessageBody=message_body,
                    MessageSystemAttributes=publisher.create_sqs_system_attributes(
                        context.request_headers
                    ),
                    **kwargs,
                )
            )
            publisher.store_delivery_log(
                message_context, subscriber, success=True, topic_attributes=context.topic_attributes
            )
        except Exception as exc:
            LOG.warning("Unable to forward SNS message to SQS: %s", exc)
            publisher.store_delivery_log(
                message_context,
                subscriber,
                success=False,
                topic_attributes=context.topic_attributes,
            )
            publisher.sns_error_to_dead_letter_queue(subscriber, message_body, str(exc), **kwargs)

    _publish._sfnp_patched = True  # type: ignore[attr-defined]
    cls._publish = _publish
    return True
