"""strategy = "callback": blocked executions park on a task token; a release hands the slot over.

Layout (the lock item is the one the ``dynamodb`` strategy uses, plus two counters):

* lock item in the lock table, ``pk`` = lock key: ``holder_count``, one lease per
  holder (``h_<md5 of the execution ARN>``, see :mod:`lease`), ``next_ticket``
  (tickets handed out) and ``waiting`` (waiters queued and not yet admitted);
* queue table (``pk`` S, ``ticket`` N), two small items per waiter, so no item
  grows with the number of waiters:

  * the waiter, ``pk = <lock key>#queue``, ``ticket = t``:
    ``{execution_arn, task_token, enqueued_at, lease_seconds}``; a Query on
    ``<lock key>#queue`` in ticket order finds the oldest waiter in one read;
  * its pointer, ``pk = <lock key>#waiter#<execution ARN>``, ``ticket = 0``:
    ``{queue_ticket: t, enqueued_at}``, so a waiter that re-checks (fallback)
    or leaves finds its place without scanning.

Invariant kept by every write below: ``waiting`` equals the number of waiter
items, because every write that changes one changes the other in the same
transaction; and while ``waiting > 0`` no slot is free (``holder_count >=
limit``), because a slot is only given back to the pool when ``waiting = 0``
(otherwise it passes to the oldest waiter in the same write that removes the
releaser's lease). The module README states the "no lost wake-up" argument on
these exact conditions.

Every DynamoDB expression of this strategy lives in :class:`CallbackSemaphore`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Callable

from botocore.exceptions import ClientError

from sfn_patterns import clients, metrics
from sfn_patterns.semaphore.lease import COUNT_ATTRIBUTE, Lease, holder_attribute, leases

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

NEXT_TICKET_ATTRIBUTE = "next_ticket"
WAITING_ATTRIBUTE = "waiting"
ACQUIRE_TIMEOUT_ERROR = "Semaphore.AcquireTimeout"
# Dead-token errors of SendTaskSuccess: the waiter's execution has ended (InvalidToken)
# or its parked task has timed out (TaskTimedOut; the waiter then re-checks on its own).
DEAD_TOKEN_ERRORS = {"InvalidToken", "TaskTimedOut", "TaskDoesNotExist"}
# DescribeExecution errors that mean the execution cannot be described at all (deleted,
# its history expired, no permission, or, for a machine encrypted with its owner's
# customer managed key, a key that does not let this role decrypt or is disabled); any
# other error (throttling, KmsThrottlingException, 5xx) is transient.
UNDESCRIBABLE_ERRORS = {
    "ExecutionDoesNotExist",
    "AccessDeniedException",
    "InvalidArn",
    "KmsAccessDeniedException",
    "KmsInvalidStateException",
}
UNKNOWN = "UNKNOWN"
# Bound on the optimistic loops (each turn is one lost race on the lock item).
MAX_ROUNDS = 100


def utcnow() -> dt.datetime:
    """Now, timezone-aware (datetime.UTC is 3.11+; this library supports 3.9)."""
    return dt.datetime.now(dt.timezone.utc)


def iso(moment: dt.datetime) -> str:
    """Step Functions' timestamp format (milliseconds, Z)."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso(value: str) -> dt.datetime:
    """Parse ``2024-01-02T03:04:05.678Z``."""
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Waiter:
    """One queued execution (its waiter item)."""

    ticket: int
    execution_arn: str
    task_token: str
    enqueued_at: str
    lease_seconds: int

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Waiter:
        """Decode a waiter item."""
        return cls(
            ticket=int(item["ticket"]["N"]),
            execution_arn=item["execution_arn"]["S"],
            task_token=item["task_token"]["S"],
            enqueued_at=item["enqueued_at"]["S"],
            lease_seconds=int(item["lease_seconds"]["N"]),
        )


@dataclass(frozen=True)
class LockState:
    """What one consistent read of the lock item says."""

    count: int
    waiting: int
    leases: dict[str, Lease]

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> LockState:
        """Decode the lock item (missing counters read as 0)."""
        return cls(
            count=int(item.get(COUNT_ATTRIBUTE, {}).get("N", "0")),
            waiting=int(item.get(WAITING_ATTRIBUTE, {}).get("N", "0")),
            leases={lease.execution_arn: lease for lease in leases(item)},
        )


class CallbackSemaphore:
    """Every read and conditional write of the callback strategy (one data-access class)."""

    def __init__(
        self,
        dynamodb: Any,
        sfn: Any,
        *,
        table: str,
        queue_table: str,
        lock_key: str,
        limit: int,
        lease_seconds: int,
        acquire_timeout_seconds: int,
        now: Callable[[], dt.datetime] = utcnow,
        describe: Callable[[str], str] | None = None,
    ) -> None:
        self.dynamodb = dynamodb
        self.sfn = sfn
        self.table = table
        self.queue_table = queue_table
        self.lock_key = lock_key
        self.limit = limit
        self.lease_seconds = lease_seconds
        self.acquire_timeout_seconds = acquire_timeout_seconds
        self.now = now
        # Status of an execution (RUNNING, ...); injectable for cross-account holders.
        self.describe = describe or self._describe

    # --- keys and reads ------------------------------------------------------------

    @property
    def lock_key_item(self) -> dict[str, Any]:
        """Key of the lock item."""
        return {"pk": {"S": self.lock_key}}

    @property
    def queue_pk(self) -> str:
        """Partition of the waiter items (one per waiter, sorted by ticket)."""
        return f"{self.lock_key}#queue"

    def waiter_key(self, ticket: int) -> dict[str, Any]:
        """Key of the waiter item of a ticket."""
        return {"pk": {"S": self.queue_pk}, "ticket": {"N": str(ticket)}}

    def pointer_key(self, execution_arn: str) -> dict[str, Any]:
        """Key of a queued execution's pointer item (execution ARN -> ticket)."""
        return {"pk": {"S": f"{self.lock_key}#waiter#{execution_arn}"}, "ticket": {"N": "0"}}

    def read_lock(self) -> LockState:
        """Consistent read of the lock item."""
        item = self.dynamodb.get_item(
            TableName=self.table, Key=self.lock_key_item, ConsistentRead=True
        ).get("Item")
        if item is None:
            raise RuntimeError(f"lock item {self.lock_key!r} is missing from table {self.table}")
        return LockState.from_item(item)

    def pointer(self, execution_arn: str) -> dict[str, Any] | None:
        """The pointer item of a queued execution (None when it is not queued)."""
        return self.dynamodb.get_item(
            TableName=self.queue_table, Key=self.pointer_key(execution_arn), ConsistentRead=True
        ).get("Item")

    def oldest_waiters(self, limit: int = 1) -> list[Waiter]:
        """The ``limit`` oldest waiters: one Query, however long the queue is."""
        items = self.dynamodb.query(
            TableName=self.queue_table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": self.queue_pk}},
            ScanIndexForward=True,
            ConsistentRead=True,
            Limit=limit,
        )["Items"]
        return [Waiter.from_item(item) for item in items]

    def queue_length(self) -> int:
        """Waiter items (paginated COUNT; for the reconciler's report)."""
        total, kwargs = 0, {}
        while True:
            page = self.dynamodb.query(
                TableName=self.queue_table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": self.queue_pk}},
                Select="COUNT",
                ConsistentRead=True,
                **kwargs,
            )
            total += page["Count"]
            if "LastEvaluatedKey" not in page:
                return total
            kwargs = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

    def _lease_value(self, execution_arn: str) -> dict[str, Any]:
        return {
            "M": {
                "execution_arn": {"S": execution_arn},
                "acquired_at": {"S": iso(self.now())},
                "lease_seconds": {"N": str(self.lease_seconds)},
            }
        }

    # --- acquire ---------------------------------------------------------------------

    def acquire(self, execution_arn: str, task_token: str) -> dict[str, Any]:
        """Admit now (SendTaskSuccess on the caller's own token) or park it in the queue.

        Called on the first attempt and on every fallback re-check (the parked task
        timed out): a re-check finds its pointer, is admitted if a release already
        handed it a slot, leaves with ``Semaphore.AcquireTimeout`` once
        ``acquire_timeout_seconds`` have passed since it queued, or else parks again
        under its new token.
        """
        for _ in range(MAX_ROUNDS):
            state = self.read_lock()
            if execution_arn in state.leases:
                return self._admit(execution_arn, task_token, "held")
            pointer = self.pointer(execution_arn)
            if pointer is not None:
                outcome = self._recheck(execution_arn, task_token, pointer, state)
                if outcome is not None:
                    return outcome
                continue
            if self._take_free_slot(execution_arn):
                return self._admit(execution_arn, task_token, "free slot")
            if self._enqueue(execution_arn, task_token):
                return {"outcome": "parked", "execution_arn": execution_arn}
        raise RuntimeError(f"acquire of {execution_arn} lost {MAX_ROUNDS} races in a row")

    def _take_free_slot(self, execution_arn: str) -> bool:
        """Fast path: a free slot, and nobody queued (so an arrival never overtakes a waiter)."""
        try:
            self.dynamodb.update_item(
                TableName=self.table,
                Key=self.lock_key_item,
                UpdateExpression="SET #count = #count + :one, #holder = :lease",
                ConditionExpression=(
                    "attribute_exists(#count) AND #count < :limit AND attribute_not_exists(#holder)"
                    " AND (attribute_not_exists(#waiting) OR #waiting = :zero)"
                ),
                ExpressionAttributeNames={
                    "#count": COUNT_ATTRIBUTE,
                    "#waiting": WAITING_ATTRIBUTE,
                    "#holder": holder_attribute(execution_arn),
                },
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":zero": {"N": "0"},
                    ":limit": {"N": str(self.limit)},
                    ":lease": self._lease_value(execution_arn),
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self.dynamodb.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def _draw_ticket(self) -> int:
        attributes = self.dynamodb.update_item(
            TableName=self.table,
            Key=self.lock_key_item,
            UpdateExpression="SET #next = if_not_exists(#next, :zero) + :one",
            ExpressionAttributeNames={"#next": NEXT_TICKET_ATTRIBUTE},
            ExpressionAttributeValues={":one": {"N": "1"}, ":zero": {"N": "0"}},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]
        return int(attributes[NEXT_TICKET_ATTRIBUTE]["N"]) - 1

    def _enqueue(self, execution_arn: str, task_token: str) -> bool:
        """Queue the waiter, in one transaction with ``waiting + 1``; False: a slot came free.

        The lock-item part is conditional on "no slot can be taken by the fast path"
        (``holder_count >= limit OR waiting > 0``). This condition and the plain
        release's ``waiting = 0`` are what make a wake-up impossible to lose. It is
        also conditional on the caller holding no lease: a re-check that read the
        lock just before a release handed it the slot must not queue a second time
        (its stale ticket would be the oldest waiter, and no hand-over to an
        execution that already holds a lease can succeed).
        """
        ticket = self._draw_ticket()
        enqueued_at = iso(self.now())
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": self.lock_key_item,
                            "UpdateExpression": (
                                "SET #waiting = if_not_exists(#waiting, :zero) + :one"
                            ),
                            "ConditionExpression": (
                                "(#count >= :limit OR #waiting > :zero)"
                                " AND attribute_not_exists(#holder)"
                            ),
                            "ExpressionAttributeNames": {
                                "#count": COUNT_ATTRIBUTE,
                                "#waiting": WAITING_ATTRIBUTE,
                                "#holder": holder_attribute(execution_arn),
                            },
                            "ExpressionAttributeValues": {
                                ":one": {"N": "1"},
                                ":zero": {"N": "0"},
                                ":limit": {"N": str(self.limit)},
                            },
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.queue_table,
                            "Item": {
                                **self.waiter_key(ticket),
                                "execution_arn": {"S": execution_arn},
                                "task_token": {"S": task_token},
                                "enqueued_at": {"S": enqueued_at},
                                "lease_seconds": {"N": str(self.lease_seconds)},
                            },
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.queue_table,
                            "Item": {
                                **self.pointer_key(execution_arn),
                                "queue_ticket": {"N": str(ticket)},
                                "enqueued_at": {"S": enqueued_at},
                            },
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        except self.dynamodb.exceptions.TransactionCanceledException:
            return False
        LOG.info("queued %s with ticket %s", execution_arn, ticket)
        return True

    def _recheck(
        self, execution_arn: str, task_token: str, pointer: dict[str, Any], state: LockState
    ) -> dict[str, Any] | None:
        """A queued execution calls again (its parked task timed out). None: read again."""
        ticket = int(pointer["queue_ticket"]["N"])
        enqueued_at = parse_iso(pointer["enqueued_at"]["S"])
        if (self.now() - enqueued_at).total_seconds() >= self.acquire_timeout_seconds:
            if not self.leave(execution_arn):
                return None  # admitted or removed meanwhile: look again
            self._send_failure(
                task_token,
                ACQUIRE_TIMEOUT_ERROR,
                f"No slot of semaphore {self.lock_key} (limit {self.limit}) within "
                f"{self.acquire_timeout_seconds} s of waiting (queued {iso(enqueued_at)}).",
            )
            return {"outcome": "timed out", "execution_arn": execution_arn}
        try:
            self.dynamodb.update_item(
                TableName=self.queue_table,
                Key=self.waiter_key(ticket),
                UpdateExpression="SET task_token = :token",
                ConditionExpression="execution_arn = :arn",
                ExpressionAttributeValues={
                    ":token": {"S": task_token},
                    ":arn": {"S": execution_arn},
                },
            )
        except self.dynamodb.exceptions.ConditionalCheckFailedException:
            return None  # handed a slot (or removed) between the reads and this write
        # The fallback also repairs: a slot left free while waiters are parked (a
        # releaser that crashed between its writes) is handed to the oldest now.
        if state.count < self.limit and state.waiting > 0:
            self.fill_free_slots()
        return {"outcome": "parked again", "execution_arn": execution_arn, "ticket": ticket}

    def leave(self, execution_arn: str) -> bool:
        """Remove a queued execution (acquire timeout, ended); False if it is not queued."""
        pointer = self.pointer(execution_arn)
        if pointer is None:
            return False
        ticket = int(pointer["queue_ticket"]["N"])
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    self._waiting_minus_one(),
                    {
                        "Delete": {
                            "TableName": self.queue_table,
                            "Key": self.waiter_key(ticket),
                            "ConditionExpression": "execution_arn = :arn",
                            "ExpressionAttributeValues": {":arn": {"S": execution_arn}},
                        }
                    },
                    self._delete_pointer(execution_arn),
                ]
            )
        except self.dynamodb.exceptions.TransactionCanceledException:
            return False
        LOG.info("%s left the queue (ticket %s)", execution_arn, ticket)
        return True

    # --- release and hand-over ----------------------------------------------------------

    def release(self, execution_arn: str) -> dict[str, Any]:
        """Give this execution's slot to the oldest waiter, or back to the pool if none waits.

        Idempotent: an execution that holds no lease releases nothing. When the
        waiter's token is dead because its execution has ended, that waiter's new
        lease is passed on at once, to the next one.
        """
        handed: list[str] = []
        current = execution_arn
        for _ in range(MAX_ROUNDS):
            state = self.read_lock()
            lease = state.leases.get(current)
            if lease is None:
                return {
                    "execution_arn": execution_arn,
                    "released": bool(handed),
                    "handed_to": handed,
                }
            if state.waiting > 0 and state.count <= self.limit:
                waiters = self.oldest_waiters()
                if not waiters:
                    # Counter and queue disagree (a manual edit): correct, then give back.
                    self._give_back(lease, fix_waiting=state.waiting)
                    continue
                waiter = waiters[0]
                if waiter.execution_arn in state.leases:
                    # A queued execution that already holds a slot (a ticket left by a
                    # deployment whose re-check could race) can take no hand-over: drop
                    # its ticket.
                    self.leave(waiter.execution_arn)
                    continue
                if not self._hand_over(lease, waiter):
                    continue
                handed.append(waiter.execution_arn)
                if self._wake(waiter):
                    return {"execution_arn": execution_arn, "released": True, "handed_to": handed}
                current = waiter.execution_arn  # dead waiter: pass its slot on
                continue
            if self._give_back(lease):
                return {
                    "execution_arn": execution_arn,
                    "released": True,
                    "handed_to": handed,
                }
        raise RuntimeError(f"release of {execution_arn} lost {MAX_ROUNDS} races in a row")

    def _lease_condition(self, lease: Lease) -> tuple[str, dict[str, str], dict[str, Any]]:
        return (
            "#holder.#arn = :holder_arn AND #holder.#at = :holder_at",
            {"#holder": lease.attribute, "#arn": "execution_arn", "#at": "acquired_at"},
            {":holder_arn": {"S": lease.execution_arn}, ":holder_at": {"S": lease.acquired_at}},
        )

    def _give_back(self, lease: Lease, fix_waiting: int | None = None) -> bool:
        """Plain release, only while nobody waits (or the limit was lowered)."""
        condition, names, values = self._lease_condition(lease)
        update = "SET #count = #count - :one REMOVE #holder"
        values = {
            **values,
            ":one": {"N": "1"},
            ":zero": {"N": "0"},
            ":limit": {"N": str(self.limit)},
        }
        if fix_waiting is not None:
            condition += " AND #waiting = :seen"
            update = "SET #count = #count - :one, #waiting = :zero REMOVE #holder"
            values[":seen"] = {"N": str(fix_waiting)}
        else:
            condition += (
                " AND (attribute_not_exists(#waiting) OR #waiting = :zero OR #count > :limit)"
            )
        try:
            self.dynamodb.update_item(
                TableName=self.table,
                Key=self.lock_key_item,
                UpdateExpression=update,
                ConditionExpression=condition + " AND #count >= :one",
                ExpressionAttributeNames={
                    **names,
                    "#count": COUNT_ATTRIBUTE,
                    "#waiting": WAITING_ATTRIBUTE,
                },
                ExpressionAttributeValues=values,
            )
        except self.dynamodb.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def _waiting_minus_one(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        update = {
            "TableName": self.table,
            "Key": self.lock_key_item,
            "UpdateExpression": "SET #waiting = #waiting - :one",
            "ConditionExpression": "#waiting >= :one",
            "ExpressionAttributeNames": {"#waiting": WAITING_ATTRIBUTE},
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
        for key, value in (extra or {}).items():
            if isinstance(value, dict):
                update[key] = {**update.get(key, {}), **value}
            else:
                update[key] = value
        return {"Update": update}

    def _delete_pointer(self, execution_arn: str) -> dict[str, Any]:
        return {"Delete": {"TableName": self.queue_table, "Key": self.pointer_key(execution_arn)}}

    def _take_waiter(self, waiter: Waiter) -> dict[str, Any]:
        """Remove the waiter item, only if it still carries the token we will send."""
        return {
            "Delete": {
                "TableName": self.queue_table,
                "Key": self.waiter_key(waiter.ticket),
                "ConditionExpression": "task_token = :token",
                "ExpressionAttributeValues": {":token": {"S": waiter.task_token}},
            }
        }

    def _hand_over(self, lease: Lease, waiter: Waiter) -> bool:
        """One transaction: the lease passes to the waiter, and the waiter leaves the queue."""
        condition, names, values = self._lease_condition(lease)
        lock_update = self._waiting_minus_one(
            {
                "UpdateExpression": "SET #waiting = #waiting - :one, #new = :lease REMOVE #holder",
                "ConditionExpression": (
                    f"#waiting >= :one AND {condition} AND attribute_not_exists(#new)"
                ),
                "ExpressionAttributeNames": {
                    **names,
                    "#new": holder_attribute(waiter.execution_arn),
                },
                "ExpressionAttributeValues": {
                    **values,
                    ":lease": self._lease_value(waiter.execution_arn),
                },
            }
        )
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    lock_update,
                    self._take_waiter(waiter),
                    self._delete_pointer(waiter.execution_arn),
                ]
            )
        except self.dynamodb.exceptions.TransactionCanceledException:
            return False
        LOG.info("slot of %s handed to %s", lease.execution_arn, waiter.execution_arn)
        return True

    def fill_free_slots(self) -> list[str]:
        """Admit the oldest waiters into slots that are free while they wait (repair path)."""
        admitted: list[str] = []
        for _ in range(MAX_ROUNDS):
            state = self.read_lock()
            if state.count >= self.limit or state.waiting <= 0:
                return admitted
            waiters = self.oldest_waiters()
            if not waiters:
                return admitted
            waiter = waiters[0]
            lock_update = self._waiting_minus_one(
                {
                    "UpdateExpression": (
                        "SET #waiting = #waiting - :one, #count = #count + :one, #new = :lease"
                    ),
                    "ConditionExpression": (
                        "#waiting >= :one AND #count < :limit AND attribute_not_exists(#new)"
                    ),
                    "ExpressionAttributeNames": {
                        "#count": COUNT_ATTRIBUTE,
                        "#new": holder_attribute(waiter.execution_arn),
                    },
                    "ExpressionAttributeValues": {
                        ":limit": {"N": str(self.limit)},
                        ":lease": self._lease_value(waiter.execution_arn),
                    },
                }
            )
            try:
                self.dynamodb.transact_write_items(
                    TransactItems=[
                        lock_update,
                        self._take_waiter(waiter),
                        self._delete_pointer(waiter.execution_arn),
                    ]
                )
            except self.dynamodb.exceptions.TransactionCanceledException:
                continue
            admitted.append(waiter.execution_arn)
            if not self._wake(waiter):
                self.release(waiter.execution_arn)
        return admitted

    # --- tokens -------------------------------------------------------------------------

    def _wake(self, waiter: Waiter) -> bool:
        """SendTaskSuccess to a waiter that now holds a slot; False when its execution is gone.

        A token that timed out belongs to an execution that is re-checking (it will
        find its lease) unless the execution itself has ended: only then is the
        slot passed on.
        """
        try:
            self.sfn.send_task_success(
                taskToken=waiter.task_token,
                output=json.dumps({"semaphore": "admitted", "lock_key": self.lock_key}),
            )
            return True
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code not in DEAD_TOKEN_ERRORS:
                raise
            LOG.info("token of %s is dead (%s)", waiter.execution_arn, code)
        return self.describe(waiter.execution_arn) == "RUNNING"

    def _admit(self, execution_arn: str, task_token: str, why: str) -> dict[str, Any]:
        """Resume the calling execution, which holds a lease."""
        try:
            self.sfn.send_task_success(
                taskToken=task_token,
                output=json.dumps({"semaphore": "admitted", "lock_key": self.lock_key}),
            )
        except ClientError as error:
            live_token = error.response["Error"]["Code"] not in DEAD_TOKEN_ERRORS
            # A denied, throttled or failed call leaves the token live: the Lambda fails
            # and Step Functions retries the acquire, which finds this lease. But an
            # execution stopped while the call ran retries nothing, and the cleanup its
            # end triggered may have run before the lease was taken: the lease goes
            # back now, or it is held until the reconciler's sweep.
            status = self.describe(execution_arn)
            if live_token and status in ("RUNNING", UNKNOWN):
                raise
            if status != "RUNNING":
                self.release(execution_arn)
                return {"outcome": "gone", "execution_arn": execution_arn}
        return {"outcome": "admitted", "why": why, "execution_arn": execution_arn}

    def _send_failure(self, task_token: str, error: str, cause: str) -> None:
        try:
            self.sfn.send_task_failure(taskToken=task_token, error=error, cause=cause)
        except ClientError as failure:
            if failure.response["Error"]["Code"] not in DEAD_TOKEN_ERRORS:
                raise

    def _describe(self, execution_arn: str) -> str:
        """The execution's status; UNKNOWN only when it cannot be described at all.

        A throttled or failed DescribeExecution says nothing about the execution, so it
        raises (the Lambda fails and Step Functions retries the idempotent call): read
        as "not RUNNING", it made a release pass on the slot of a waiter that was
        re-checking and entering its critical section, over-admitting.
        """
        try:
            return clients.execution_status(self.sfn, execution_arn)
        except ClientError as error:
            code = error.response["Error"]["Code"]
            LOG.warning("cannot describe %s: %s", execution_arn, code)
            if code in UNDESCRIBABLE_ERRORS:
                return UNKNOWN
            raise


def from_environment(dynamodb: Any = None, sfn: Any = None) -> CallbackSemaphore:
    """The semaphore the Lambda's environment describes."""
    env = os.environ
    return CallbackSemaphore(
        dynamodb or clients.client("dynamodb"),
        sfn or clients.client("stepfunctions"),
        table=env["SEMAPHORE_TABLE"],
        queue_table=env["SEMAPHORE_QUEUE_TABLE"],
        lock_key=env["SEMAPHORE_LOCK_KEY"],
        limit=int(env["SEMAPHORE_LIMIT"]),
        lease_seconds=int(env.get("SEMAPHORE_LEASE_SECONDS", "86400")),
        acquire_timeout_seconds=int(env.get("SEMAPHORE_ACQUIRE_TIMEOUT_SECONDS", "3600")),
    )


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Step Functions entry point: ``{"action": "acquire"|"release", "execution_arn", ...}``."""
    semaphore = from_environment()
    action = event.get("action")
    if action == "acquire":
        result = semaphore.acquire(event["execution_arn"], event["task_token"])
    elif action == "release":
        result = semaphore.release(event["execution_arn"])
    else:
        raise ValueError(f"unknown action {action!r}: expected acquire or release")
    LOG.info("%s: %s", action, json.dumps(result))
    if action == "release":
        metrics.emit("semaphore", {"HandOvers": len(result["handed_to"])})
    return result
