"""Producer helper: put one start request on the throttle's FIFO queue.

    from sfn_patterns.sqs_throttle.producer import enqueue

    enqueue(queue_url, {"order": 7}, request_id="order-7", group_id="tenant-a")

The message body is the execution input (JSON). The request id (message attribute
``request_id``) names the execution, so a request sent twice, even with different
SQS deduplication ids or after the 5-minute SQS deduplication window, starts one
execution (Standard execution names stay unique for 90 days). Messages of one
``group_id`` start in order; different groups do not block each other.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sfn_patterns import clients

REQUEST_ID_ATTRIBUTE = "request_id"
MAX_BODY_BYTES = 256 * 1024  # the SQS message limit (execution input allows 256 KiB too)
_ID_MAX = 128  # SQS MessageDeduplicationId / MessageGroupId limit


def _canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _valid_id(value: str) -> bool:
    return 0 < len(value) <= _ID_MAX and all(33 <= ord(c) <= 126 for c in value)


def _check_id(kind: str, value: str) -> None:
    if not _valid_id(value):
        raise ValueError(f"{kind} must be 1-{_ID_MAX} printable ASCII characters without spaces")


def build_message(
    payload: Any,
    *,
    dedup_id: str | None = None,
    group_id: str = "default",
    request_id: str | None = None,
) -> dict[str, Any]:
    """The SendMessage arguments (without QueueUrl) for one request.

    ``request_id`` names the execution. ``dedup_id`` defaults to the request id, or,
    when neither is given, to the SHA-256 of the canonical JSON payload (so the same
    payload sent twice is one request); ``request_id`` defaults to ``dedup_id``.
    """
    body = _canonical(payload)
    if len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise ValueError(f"payload is larger than {MAX_BODY_BYTES} bytes once serialized")
    if dedup_id is None:
        if request_id is not None and _valid_id(request_id):
            dedup_id = request_id
        else:
            dedup_id = hashlib.sha256((request_id or body).encode("utf-8")).hexdigest()
    request_id = request_id or dedup_id
    _check_id("dedup_id", dedup_id)
    _check_id("group_id", group_id)
    if len(request_id) > 1024:
        raise ValueError("request_id must be at most 1024 characters")
    return {
        "MessageBody": body,
        "MessageDeduplicationId": dedup_id,
        "MessageGroupId": group_id,
        "MessageAttributes": {
            REQUEST_ID_ATTRIBUTE: {"DataType": "String", "StringValue": request_id}
        },
    }


def enqueue(
    queue_url: str,
    payload: Any,
    *,
    dedup_id: str | None = None,
    group_id: str = "default",
    request_id: str | None = None,
    client: Any = None,
) -> str:
    """Send one request to the throttle queue and return the SQS message id."""
    if client is None:
        client = clients.client("sqs")
    message = build_message(payload, dedup_id=dedup_id, group_id=group_id, request_id=request_id)
    return client.send_message(QueueUrl=queue_url, **message)["MessageId"]
