"""The status table's data access: the keys, reads and writes of one use case's tasks.

Following Powertools' idempotency layer (one persistence class owns the table's
expressions; the logic above it decides), :class:`TaskStore` is what both the tracker
and the bulk operations talk to, so neither needs the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta

from pynamodb.exceptions import PutError, UpdateError

from sfn_patterns.status_table import queries
from sfn_patterns.status_table.errors import is_conditional_failure
from sfn_patterns.status_table.model import TaskModel, make_model, status_key, task_pk
from sfn_patterns.status_table.statuses import Status


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
            ConditionFailed: the task exists.

        """
        try:
            item.save(condition=self.model.pk.does_not_exist())
        except PutError as exc:
            if is_conditional_failure(exc):
                raise ConditionFailed(self.get(item.task_id, item.use_case_id)) from None
            raise

    def reset(self, item: TaskModel, now: datetime) -> None:
        """Send a failed or ignored task back to pending with retry 0.

        The write is conditioned on the status and attempt that were read, so a task a
        worker picked up in the meantime is not yanked back to pending.

        Raises:
            ConditionFailed: the task changed since it was read.

        """
        m = self.model
        try:
            item.update(
                actions=[
                    m.status.set(Status.PENDING.value),
                    m.status_key.set(self.status_key(Status.PENDING, item.task_id)),
                    m.retry.set(0),
                    m.update_time.set(now),
                    m.lease_owner.remove(),
                    m.lease_expires_at.remove(),
                ],
                condition=(m.status == item.status) & (m.attempt == item.attempt),
            )
        except UpdateError as exc:
            if is_conditional_failure(exc):
                raise ConditionFailed(None) from None
            raise
