"""The semaphore's DynamoDB layout, shared by the reconciler and the event cleanup.

One lock item per semaphore (``pk`` = the lock key), created by Terraform:

* ``holder_count`` (N): slots taken; the acquire condition is ``holder_count < limit``;
* one attribute per holder, named ``h_`` + MD5 hex of the holder's execution ARN
  (the ASL computes it with ``States.Hash($$.Execution.Id, 'MD5')``), whose value
  is the lease ``{execution_arn: S, acquired_at: S (ISO 8601), lease_seconds: N}``:
  the lease expires at ``acquired_at + lease_seconds``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any

HOLDER_PREFIX = "h_"
COUNT_ATTRIBUTE = "holder_count"


def holder_attribute(execution_arn: str) -> str:
    """The holder attribute name of an execution, as the ASL computes it."""
    return HOLDER_PREFIX + hashlib.md5(execution_arn.encode(), usedforsecurity=False).hexdigest()


def parse_timestamp(value: str) -> dt.datetime:
    """Parse a Step Functions ISO 8601 timestamp (``2024-01-02T03:04:05.678Z``)."""
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Lease:
    """One holder's lease as stored on the lock item."""

    attribute: str
    execution_arn: str
    acquired_at: str
    lease_seconds: int

    @classmethod
    def from_item(cls, attribute: str, value: dict[str, Any]) -> Lease | None:
        """Decode a holder attribute; None when it is not a well-formed lease."""
        lease = value.get("M")
        if not isinstance(lease, dict):
            return None
        try:
            return cls(
                attribute=attribute,
                execution_arn=lease["execution_arn"]["S"],
                acquired_at=lease["acquired_at"]["S"],
                lease_seconds=int(lease["lease_seconds"]["N"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def expires_at(self) -> dt.datetime:
        """When the lease expires."""
        return parse_timestamp(self.acquired_at) + dt.timedelta(seconds=self.lease_seconds)


def leases(item: dict[str, Any]) -> list[Lease]:
    """Every well-formed holder lease on a lock item."""
    found = []
    for name, value in item.items():
        if name.startswith(HOLDER_PREFIX):
            lease = Lease.from_item(name, value)
            if lease is not None:
                found.append(lease)
    return sorted(found, key=lambda lease: lease.acquired_at)


def release_lease(dynamodb: Any, table: str, lock_key: str, lease: Lease) -> bool:
    """Remove exactly this lease and decrement the count; False if it is already gone.

    The condition names the lease's own stored values (execution ARN and acquire
    time), so a release that races the holder's own release, a redelivered event
    or a second reconciler never decrements twice, and never removes a newer lease.
    """
    try:
        dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": lock_key}},
            UpdateExpression="SET #count = #count - :one REMOVE #holder",
            ConditionExpression=("#holder.#arn = :arn AND #holder.#at = :at AND #count >= :one"),
            ExpressionAttributeNames={
                "#count": COUNT_ATTRIBUTE,
                "#holder": lease.attribute,
                "#arn": "execution_arn",
                "#at": "acquired_at",
            },
            ExpressionAttributeValues={
                ":one": {"N": "1"},
                ":arn": {"S": lease.execution_arn},
                ":at": {"S": lease.acquired_at},
            },
        )
    except dynamodb.exceptions.ConditionalCheckFailedException:
        return False
    return True
