"""The semaphore's DynamoDB layout, shared by the reconciler and the event cleanup.

One lock item per semaphore (``pk`` = the lock key), created by Terraform:

* ``holder_count`` (N): slots taken; the acquire condition is ``holder_count < limit``;
* one attribute per holder, named ``h_`` + MD5 hex of the holder's execution ARN
  (the ASL computes it with ``States.Hash($$.Execution.Id, 'MD5')``), whose value
  is the lease ``{execution_arn: S, acquired_at: S (ISO 8601), lease_seconds: N}``:
  the lease expires at ``acquired_at + lease_seconds``.

With ``fairness = "fifo"`` the item also holds a ticket queue:

* ``next_ticket`` (N): the next ticket to hand out (a waiter draws one with an
  atomic ``ADD``; its ticket is the value before the increment);
* ``served`` (N): the ticket whose turn it is; only that waiter may take a free
  slot, and taking it advances ``served`` in the same write;
* one attribute per registered waiter, ``t_<ticket>`` =
  ``{execution_arn: S, enqueued_at: S, ticket: N, lease_seconds: N}``.

A ticket without its ``t_`` attribute is abandoned (its waiter timed out, was
stopped, or died between drawing and registering): whoever sees it at the head
of the queue may step ``served`` over it (``skip_abandoned_tickets``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

HOLDER_PREFIX = "h_"
COUNT_ATTRIBUTE = "holder_count"
TICKET_PREFIX = "t_"
SERVED_ATTRIBUTE = "served"
NEXT_TICKET_ATTRIBUTE = "next_ticket"
# Most tickets one conditional write steps over (keeps the condition expression small).
MAX_SKIP_PER_WRITE = 50


def holder_attribute(execution_arn: str) -> str:
    """The holder attribute name of an execution, as the ASL computes it."""
    return HOLDER_PREFIX + hashlib.md5(execution_arn.encode(), usedforsecurity=False).hexdigest()


def parse_timestamp(value: str) -> dt.datetime:
    """Parse a Step Functions ISO 8601 timestamp (``2024-01-02T03:04:05.678Z``)."""
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


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


@dataclass(frozen=True)
class Waiter:
    """One queued execution's ticket as stored on the lock item (fairness fifo)."""

    attribute: str
    ticket: int
    execution_arn: str
    enqueued_at: str
    lease_seconds: int

    @classmethod
    def from_item(cls, attribute: str, value: dict[str, Any]) -> Waiter | None:
        """Decode a ticket attribute; None when it is not a well-formed waiter."""
        record = value.get("M")
        if not isinstance(record, dict):
            return None
        try:
            return cls(
                attribute=attribute,
                ticket=int(record["ticket"]["N"]),
                execution_arn=record["execution_arn"]["S"],
                enqueued_at=record["enqueued_at"]["S"],
                lease_seconds=int(record["lease_seconds"]["N"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def expires_at(self) -> dt.datetime:
        """When an undescribable waiter may be dropped."""
        return parse_timestamp(self.enqueued_at) + dt.timedelta(seconds=self.lease_seconds)


def ticket_attribute(ticket: int) -> str:
    """The attribute a registered ticket lives in, as the ASL names it."""
    return f"{TICKET_PREFIX}{ticket}"


def waiters(item: dict[str, Any]) -> list[Waiter]:
    """Every well-formed registered ticket on a lock item, in ticket order."""
    found = []
    for name, value in item.items():
        if name.startswith(TICKET_PREFIX):
            waiter = Waiter.from_item(name, value)
            if waiter is not None:
                found.append(waiter)
    return sorted(found, key=lambda waiter: waiter.ticket)


def queue_counters(item: dict[str, Any]) -> tuple[int, int] | None:
    """``(served, next_ticket)``, or None when the item has no ticket queue."""
    try:
        return int(item[SERVED_ATTRIBUTE]["N"]), int(item[NEXT_TICKET_ATTRIBUTE]["N"])
    except (KeyError, TypeError, ValueError):
        return None


def remove_waiter(dynamodb: Any, table: str, lock_key: str, waiter: Waiter) -> bool:
    """Remove exactly this ticket; False if it is already gone (taken a slot or removed)."""
    try:
        dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": lock_key}},
            UpdateExpression="REMOVE #ticket",
            ConditionExpression="#ticket.#arn = :arn",
            ExpressionAttributeNames={"#ticket": waiter.attribute, "#arn": "execution_arn"},
            ExpressionAttributeValues={":arn": {"S": waiter.execution_arn}},
        )
    except dynamodb.exceptions.ConditionalCheckFailedException:
        return False
    return True


def abandoned_head(item: dict[str, Any]) -> list[int]:
    """The run of unregistered tickets at the head of the queue (served, served + 1, ...)."""
    counters = queue_counters(item)
    if counters is None:
        return []
    served, next_ticket = counters
    run = []
    ticket = served
    while ticket < next_ticket and ticket_attribute(ticket) not in item:
        run.append(ticket)
        ticket += 1
    return run


def skip_abandoned_tickets(
    dynamodb: Any,
    table: str,
    lock_key: str,
    *,
    grace_seconds: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[int]:
    """Advance ``served`` over abandoned tickets at the head of the queue; return them.

    A ticket is drawn and registered by two consecutive states of its waiter, so
    a ticket missing its ``t_`` attribute may be one whose waiter is between the
    two. Only tickets seen unregistered in two reads ``grace_seconds`` apart,
    with ``served`` unchanged, are skipped, and the write's condition repeats
    ``attribute_not_exists`` for each of them: a registration that lands first
    makes it fail, one that lands later is refused by its own ``served <=
    ticket`` condition and draws a new ticket.
    """

    def read() -> dict[str, Any]:
        return (
            dynamodb.get_item(
                TableName=table, Key={"pk": {"S": lock_key}}, ConsistentRead=True
            ).get("Item")
            or {}
        )

    first = abandoned_head(read())
    if not first:
        return []
    sleep(grace_seconds)
    second = abandoned_head(read())
    run = [ticket for ticket in second if ticket in first][:MAX_SKIP_PER_WRITE]
    # The run must start at the current head, and the head must not have moved.
    if not run or run[0] != first[0] or second[0] != first[0]:
        return []
    names = {f"#t{i}": ticket_attribute(ticket) for i, ticket in enumerate(run)}
    condition = " AND ".join(
        ["#served = :head", *(f"attribute_not_exists({name})" for name in names)]
    )
    try:
        dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": lock_key}},
            UpdateExpression="SET #served = :after",
            ConditionExpression=condition,
            ExpressionAttributeNames={"#served": SERVED_ATTRIBUTE, **names},
            ExpressionAttributeValues={
                ":head": {"N": str(run[0])},
                ":after": {"N": str(run[-1] + 1)},
            },
        )
    except dynamodb.exceptions.ConditionalCheckFailedException:
        return []
    return run
