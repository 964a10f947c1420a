"""The status table's data access: every key, read and write of one use case's tasks.

Following Powertools' idempotency layer (one persistence class owns the table's
expressions; the logic above it decides), :class:`TaskStore` holds every condition and
update expression, and is the only caller of the GSI queries in :mod:`.queries`. The
tracker and the bulk operations ask it for reads and transitions, so neither needs the
other.

A lost race costs one request. Every conditional write asks DynamoDB for the item as
the condition saw it (``ReturnValuesOnConditionCheckFailure=ALL_OLD``) and
:class:`ConditionFailed` carries it, so the loser learns the winner's status, attempt
and lease from the rejection itself instead of reading the item again (the throttle
ledger and the DAG ``RunStore`` do the same).

pynamodb builds every request (conditions, update expressions, serialisation), but
``Model.update`` and ``Model.save`` do not forward ``ReturnValuesOnConditionCheckFailure``,
and pynamodb's connection drops the returned ``Item`` from the error. So single-item
writes are built with pynamodb's operation-kwargs builders and sent by the botocore
client of the model's own pynamodb connection (same endpoint, credentials and retry
configuration); the chain's transaction goes through pynamodb's ``TransactWrite``, which
does carry the item (``CancellationReason.raw_item``). Errors other than a failed
condition are raised as pynamodb's ``PutError``/``UpdateError``, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PutError, TransactWriteError, UpdateError
from pynamodb.transactions import TransactWrite

from sfn_patterns import clients
from sfn_patterns.status_table import queries
from sfn_patterns.status_table.model import (
    ErrorRecord,
    TaskModel,
    TaskRecord,
    make_model,
    status_key,
    task_pk,
)
from sfn_patterns.status_table.statuses import Status

_CONDITION_FAILED = "ConditionalCheckFailedException"
_ALL_OLD = "ALL_OLD"
# DynamoDB's answers that say nothing about the write: it may be tried again.
_TRANSIENT_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def is_transient(error: BaseException) -> bool:
    """Whether a failed request (pynamodb's PutError/UpdateError/...) may simply be retried.

    Throttling and 5xx answers, and errors that never reached DynamoDB, once the SDK's
    own retries are used up: the write may or may not have landed, and a fenced
    write sent again either lands or reports what is there.
    """
    cause = getattr(error, "cause", None)
    if isinstance(cause, BotoCoreError):
        return True
    code = getattr(cause, "response", {}).get("Error", {}).get("Code")
    return code in _TRANSIENT_CODES


class ConditionFailed(Exception):
    """A conditional write lost its race; ``item`` is the task it found (None: missing)."""

    def __init__(self, item: TaskModel | None) -> None:
        super().__init__("conditional write lost")
        self.item = item


class TaskStore:
    """Reads and conditional writes of one use case's tasks in a shared table.

    Args:
        table_name: The DynamoDB table.
        use_case_id: The use case whose tasks this store reads and writes.
        n_shards: GSI shards per status (fixed for the table's lifetime).
        region: AWS region (default: botocore's resolution).
        host: Endpoint URL, e.g. LocalStack's.
        expire_after: When set, new tasks get ``expire_at = create_time + expire_after``.

    """

    def __init__(
        self,
        table_name: str,
        use_case_id: str,
        *,
        n_shards: int,
        region: str | None = None,
        host: str | None = None,
        expire_after: timedelta | None = None,
    ) -> None:
        self.use_case_id = use_case_id
        self.n_shards = n_shards
        self.expire_after = expire_after
        self.model: type[TaskModel] = make_model(table_name, region, host)

    # -- keys --------------------------------------------------------------------------------

    def key(self, task_id: str, use_case_id: str | None = None) -> str:
        """The table hash key of a task of this (or another, for chains) use case."""
        return task_pk(use_case_id or self.use_case_id, task_id)

    def status_key(self, status: Status, task_id: str, use_case_id: str | None = None) -> str:
        """The GSI hash key of ``task_id`` in ``status``."""
        return status_key(use_case_id or self.use_case_id, status, task_id, self.n_shards)

    # -- table -------------------------------------------------------------------------------

    def table_exists(self) -> bool:
        """Whether the table exists."""
        return bool(self.model.exists())

    def create_table(self) -> None:
        """Create the table (on-demand, with the GSI and TTL) unless it exists."""
        if not self.model.exists():
            self.model.create_table(wait=True, ignore_update_ttl_errors=True)

    # -- reads -------------------------------------------------------------------------------

    def get(self, task_id: str, use_case_id: str | None = None) -> TaskModel | None:
        """The task (consistent read), or None when it does not exist."""
        try:
            return self.model.get(self.key(task_id, use_case_id), consistent_read=True)
        except self.model.DoesNotExist:
            return None

    def batch_get(self, task_ids: Iterable[str]) -> list[TaskModel]:
        """The tasks that exist among ``task_ids`` (BatchGetItem), in no particular order."""
        return list(self.model.batch_get([self.key(tid) for tid in task_ids]))

    def iter_status(
        self,
        status: Status | str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = False,
    ) -> Iterator[TaskModel]:
        """Tasks of one status in update_time order, via the GSI (see :mod:`.queries`)."""
        return queries.iter_tasks(
            self.model,
            self.use_case_id,
            status,
            self.n_shards,
            since=since,
            until=until,
            newest_first=newest_first,
        )

    def query(
        self,
        status: Status | str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[TaskRecord]:
        """Snapshots of the tasks of one status in [since, until] (see :mod:`.queries`)."""
        return queries.query_tasks(
            self.model,
            self.use_case_id,
            status,
            self.n_shards,
            since=since,
            until=until,
            limit=limit,
            newest_first=newest_first,
        )

    def claimable(self, now: datetime, *, limit: int | None = None) -> list[TaskRecord]:
        """Pending, failed, and in_progress-with-expired-lease tasks (see :mod:`.queries`)."""
        return queries.claimable_tasks(
            self.model, self.use_case_id, self.n_shards, now, limit=limit
        )

    # -- writes ------------------------------------------------------------------------------

    def new_item(
        self, task_id: str, now: datetime, payload_hash: str | None, use_case_id: str | None = None
    ) -> TaskModel:
        """A fresh pending task item (not yet saved)."""
        use_case = use_case_id or self.use_case_id
        return self.model(
            self.key(task_id, use_case),
            use_case_id=use_case,
            task_id=task_id,
            status=Status.PENDING.value,
            status_key=self.status_key(Status.PENDING, task_id, use_case),
            attempt=0,
            retry=0,
            create_time=now,
            update_time=now,
            payload_sha256=payload_hash,
            expire_at=now + self.expire_after if self.expire_after else None,
        )

    def create(self, item: TaskModel) -> None:
        """Save a new task unless its key exists (a concurrent creator is never overwritten).

        Raises:
            ConditionFailed: the task exists (``item``: as it is now).

        """
        kwargs = item.get_save_kwargs_from_instance(
            condition=self.model.pk.does_not_exist(),
            return_values_on_condition_failure=_ALL_OLD,
        )
        self._send("put_item", kwargs, PutError)

    def claim_startable(
        self,
        task_id: str,
        *,
        owner: str,
        expires_at: datetime,
        now: datetime,
        payload_hash: str | None,
    ) -> TaskModel:
        """Take a pending or failed task blindly: ``ADD attempt 1``, one UpdateItem.

        The condition ``status IN (pending, failed)`` (and a matching or absent payload
        hash) lets one worker win. Any other task (missing, locked, expired, succeeded,
        another payload) fails it, and :class:`ConditionFailed` carries the task as it
        is (None: missing) for the caller to tell the cases apart.
        """
        m = self.model
        item = m(self.key(task_id))
        actions = [
            m.status.set(Status.IN_PROGRESS.value),
            m.status_key.set(self.status_key(Status.IN_PROGRESS, task_id)),
            m.attempt.add(1),
            m.lease_owner.set(owner),
            m.lease_expires_at.set(expires_at),
            m.update_time.set(now),
        ]
        condition = m.pk.exists() & m.status.is_in(Status.PENDING.value, Status.FAILED.value)
        if payload_hash:
            actions.append(m.payload_sha256.set(m.payload_sha256 | payload_hash))
            condition &= m.payload_sha256.does_not_exist() | (m.payload_sha256 == payload_hash)
        self._update(item, actions, condition)
        return item

    def claim_observed(
        self,
        item: TaskModel,
        *,
        owner: str,
        expires_at: datetime,
        now: datetime,
        retry: int,
        reclaim_errors: list[ErrorRecord] | None,
        payload_hash: str | None,
    ) -> None:
        """Start the next attempt of the task as it was read (``item``, updated in place).

        The write is conditioned on the observed attempt and status, so exactly one
        worker wins each attempt number (the fencing token). ``reclaim_errors`` is given
        when the observed task is ``in_progress`` with an expired lease (the errors with
        the lost attempt's record); the lease must then still be expired, so a heartbeat
        since the read fails the condition. ``payload_hash`` is stored when the task has
        none yet.
        """
        m = self.model
        reclaim = reclaim_errors is not None
        actions = [
            m.status.set(Status.IN_PROGRESS.value),
            m.status_key.set(self.status_key(Status.IN_PROGRESS, item.task_id)),
            m.attempt.set(int(item.attempt) + 1),
            m.retry.set(retry),
            m.lease_owner.set(owner),
            m.lease_expires_at.set(expires_at),
            m.update_time.set(now),
        ]
        if reclaim_errors is not None:
            actions.append(m.errors.set(reclaim_errors))
        if payload_hash and not item.payload_sha256:
            actions.append(m.payload_sha256.set(payload_hash))
        self._update(item, actions, self._observed(item, now, reclaim))

    def park_expired(
        self, item: TaskModel, *, retry: int, errors: list[ErrorRecord], now: datetime
    ) -> None:
        """Set an expired ``in_progress`` task that used up its retries to ``ignored``.

        Conditioned like a reclaim: the observed attempt, status and an expired lease.
        """
        m = self.model
        actions = [
            m.status.set(Status.IGNORED.value),
            m.status_key.set(self.status_key(Status.IGNORED, item.task_id)),
            m.retry.set(retry),
            m.errors.set(errors),
            m.update_time.set(now),
            m.lease_owner.remove(),
            m.lease_expires_at.remove(),
        ]
        self._update(item, actions, self._observed(item, now, reclaim=True))

    def heartbeat(self, item: TaskModel, attempt: int, expires_at: datetime) -> None:
        """Move the lease of ``attempt`` to ``expires_at``; fenced on the attempt."""
        m = self.model
        self._update(item, [m.lease_expires_at.set(expires_at)], self._fence(attempt))

    def finish(
        self,
        item: TaskModel,
        attempt: int,
        status: Status,
        now: datetime,
        *,
        data: Mapping[str, Any] | None = None,
        retry: int | None = None,
        errors: list[ErrorRecord] | None = None,
    ) -> None:
        """Record the outcome of ``attempt`` (succeeded, failed, ignored); fenced on it."""
        m = self.model
        actions = self._finish_actions(item, status, now, data)
        if retry is not None:
            actions.append(m.retry.set(retry))
        if errors is not None:
            actions.append(m.errors.set(errors))
        self._update(item, actions, self._fence(attempt))

    def succeed_and_chain(
        self,
        item: TaskModel,
        attempt: int,
        now: datetime,
        *,
        data: Mapping[str, Any] | None,
        next_use_case_id: str,
        next_payload_hash: str | None,
    ) -> None:
        """Success here and ``pending`` in the next use case, atomically (TransactWriteItems).

        The next task is written with ``if_not_exists`` on every attribute, so a task
        that already exists there (created by an earlier run) is left exactly as it is,
        and the transaction can only fail on this attempt's own fence.
        """
        m = self.model
        template = self.new_item(item.task_id, now, next_payload_hash, next_use_case_id)
        nxt = m(template.pk)
        next_actions = [
            m.use_case_id.set(m.use_case_id | next_use_case_id),
            m.task_id.set(m.task_id | item.task_id),
            m.status.set(m.status | Status.PENDING.value),
            m.status_key.set(m.status_key | template.status_key),
            m.attempt.set(m.attempt | 0),
            m.retry.set(m.retry | 0),
            m.create_time.set(m.create_time | now),
            m.update_time.set(m.update_time | now),
        ]
        if next_payload_hash:
            next_actions.append(m.payload_sha256.set(m.payload_sha256 | next_payload_hash))
        if template.expire_at is not None:
            next_actions.append(m.expire_at.set(m.expire_at | template.expire_at))
        try:
            with TransactWrite(connection=self._connection()) as transaction:
                transaction.update(
                    item,
                    actions=self._finish_actions(item, Status.SUCCEEDED, now, data),
                    condition=self._fence(attempt),
                    return_values=_ALL_OLD,
                )
                transaction.update(nxt, actions=next_actions)
        except TransactWriteError as exc:
            reasons = exc.cancellation_reasons
            mine = reasons[0] if reasons else None
            if mine is not None and mine.code == "ConditionalCheckFailed":
                raw = mine.raw_item
                raise ConditionFailed(m.from_raw_data(raw) if raw else None) from None
            raise

    def reset(self, item: TaskModel, now: datetime) -> None:
        """Send a failed or ignored task back to pending with retry 0.

        The write is conditioned on the status and attempt that were read, so a task a
        worker picked up in the meantime is not yanked back to pending.

        Raises:
            ConditionFailed: the task changed since it was read.

        """
        m = self.model
        actions = [
            m.status.set(Status.PENDING.value),
            m.status_key.set(self.status_key(Status.PENDING, item.task_id)),
            m.retry.set(0),
            m.update_time.set(now),
            m.lease_owner.remove(),
            m.lease_expires_at.remove(),
        ]
        self._update(item, actions, (m.status == item.status) & (m.attempt == item.attempt))

    # -- expressions and sending ---------------------------------------------------------------

    def _fence(self, attempt: int) -> Any:
        """Only the attempt that owns the task may write: ``attempt = :mine AND in_progress``."""
        m = self.model
        return (m.attempt == attempt) & (m.status == Status.IN_PROGRESS.value)

    def _observed(self, item: TaskModel, now: datetime, reclaim: bool) -> Any:
        """The task is still as read (attempt, status), and for a reclaim still expired."""
        m = self.model
        condition = (m.attempt == int(item.attempt)) & (m.status == item.status)
        if reclaim and item.lease_expires_at is not None:
            condition &= m.lease_expires_at <= now
        return condition

    def _finish_actions(
        self, item: TaskModel, status: Status, now: datetime, data: Mapping[str, Any] | None
    ) -> list[Any]:
        m = self.model
        actions = [
            m.status.set(status.value),
            m.status_key.set(self.status_key(status, item.task_id)),
            m.update_time.set(now),
            m.lease_owner.remove(),
            m.lease_expires_at.remove(),
        ]
        if data is not None:
            actions.append(m.data.set(dict(data)))
        return actions

    def _update(self, item: TaskModel, actions: list[Any], condition: Any) -> None:
        """UpdateItem; ``item`` takes the new values (as ``Model.update`` does)."""
        kwargs = item.get_update_kwargs_from_instance(
            actions=actions, condition=condition, return_values_on_condition_failure=_ALL_OLD
        )
        kwargs["ReturnValues"] = "ALL_NEW"
        item.deserialize(self._send("update_item", kwargs, UpdateError)["Attributes"])

    def _connection(self) -> Any:
        """The model's pynamodb connection, its botocore client resending conflicted calls.

        pynamodb builds that client itself (and again after losing its credentials), so
        the runtime's transaction-conflict retry (:func:`sfn_patterns.clients.retry_conflicts`)
        is put on it here, before each request; registering twice is a no-op.
        """
        connection = self.model._get_connection().connection
        clients.retry_conflicts(connection.client)
        return connection

    def _send(self, operation: str, kwargs: dict[str, Any], error: type[Exception]) -> Any:
        """One request; a failed condition raises :class:`ConditionFailed` with the old item."""
        client = self._connection().client
        try:
            return getattr(client, operation)(**kwargs)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == _CONDITION_FAILED:
                raw = exc.response.get("Item")
                raise ConditionFailed(self.model.from_raw_data(raw) if raw else None) from None
            raise error(f"{operation} failed: {exc}", exc) from exc
        except BotoCoreError as exc:
            raise error(f"{operation} failed: {exc}", exc) from exc
