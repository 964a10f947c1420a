"""The pynamodb model, built at runtime, plus the pure helpers that derive key values.

The table name, region and endpoint are runtime values (Lambda environment, CLI
options, test fixtures), and pynamodb binds them in a ``Meta`` class, so models are
made by :func:`make_model` and cached per (table, region, host).
"""

from __future__ import annotations

import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pynamodb.attributes import (
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from sfn_patterns import clients
from sfn_patterns.status_table import schema
from sfn_patterns.status_table.statuses import Status


class ErrorRecord(MapAttribute):
    """One failed attempt, kept in the task's bounded ``errors`` list."""

    error_type = UnicodeAttribute()
    message = UnicodeAttribute()
    traceback = UnicodeAttribute(null=True)
    attempt = NumberAttribute()
    time = UTCDateTimeAttribute()


class TaskModel(Model):
    """Attribute layout shared by every runtime model (``make_model`` subclasses it)."""

    class Meta:
        """Placeholder; make_model binds the real table, region and host."""

        table_name = "status-table-unbound"

    pk = UnicodeAttribute(hash_key=True, attr_name=schema.TABLE_HASH_KEY)
    use_case_id = UnicodeAttribute()
    task_id = UnicodeAttribute()
    status = UnicodeAttribute()
    status_key = UnicodeAttribute(attr_name=schema.GSI_HASH_KEY)
    attempt = NumberAttribute(default=0)
    retry = NumberAttribute(default=0)
    lease_owner = UnicodeAttribute(null=True)
    lease_expires_at = UTCDateTimeAttribute(null=True)
    create_time = UTCDateTimeAttribute()
    update_time = UTCDateTimeAttribute(attr_name=schema.GSI_RANGE_KEY)
    payload_sha256 = UnicodeAttribute(null=True)
    data = MapAttribute(null=True)
    errors = ListAttribute(of=ErrorRecord, null=True)
    expire_at = TTLAttribute(null=True, attr_name=schema.TTL_ATTRIBUTE)


@functools.cache
def make_model(table_name: str, region: str | None = None, host: str | None = None) -> type[Any]:
    """A TaskModel subclass bound to one table; cached so connections are reused."""

    class StatusIndex(GlobalSecondaryIndex):
        class Meta:
            index_name = schema.GSI_NAME
            projection = AllProjection()
            billing_mode = "PAY_PER_REQUEST"

        status_key = UnicodeAttribute(hash_key=True, attr_name=schema.GSI_HASH_KEY)
        update_time = UTCDateTimeAttribute(range_key=True, attr_name=schema.GSI_RANGE_KEY)

    # pynamodb builds its own botocore client: standard retry mode with
    # 1 + max_retry_attempts attempts, the runtime's bounded budget (sfn_patterns.clients).
    meta_attrs: dict[str, Any] = {
        "table_name": table_name,
        "billing_mode": "PAY_PER_REQUEST",
        "max_retry_attempts": clients.MAX_ATTEMPTS - 1,
    }
    if region:
        meta_attrs["region"] = region
    if host:
        meta_attrs["host"] = host
    meta = type("Meta", (), meta_attrs)
    return type(
        f"TaskModel[{table_name}]",
        (TaskModel,),
        {"Meta": meta, "status_index": StatusIndex(), "__module__": __name__},
    )


def task_pk(use_case_id: str, task_id: str) -> str:
    """The table hash key; ``#`` may appear in task ids because use case ids are checked."""
    return f"{use_case_id}{schema.KEY_SEPARATOR}{task_id}"


def shard_for(task_id: str, n_shards: int) -> int:
    """A shard that is the same in every process and Python version.

    ``zlib.crc32`` rather than ``hash()``: Python salts ``hash()`` per process, so the
    reference tracker's shards changed between workers and queries missed tasks.
    """
    return zlib.crc32(task_id.encode("utf-8")) % n_shards


def status_key(use_case_id: str, status: Status | str, task_id: str, n_shards: int) -> str:
    """The GSI hash key of a task in a status."""
    return status_key_for_shard(use_case_id, status, shard_for(task_id, n_shards))


def status_key_for_shard(use_case_id: str, status: Status | str, shard: int) -> str:
    """The GSI hash key for one shard of a status, for queries that fan out over shards."""
    return f"{use_case_id}#{Status(status).value}#{shard:02d}"


def payload_sha256(payload: Any) -> str:
    """SHA-256 of canonical JSON (sorted keys, no whitespace), so equal input hashes equally."""
    canonical = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TaskError:
    """One recorded failure (newest last in ``TaskRecord.errors``)."""

    error_type: str
    message: str
    traceback: str | None
    attempt: int
    time: datetime


@dataclass(frozen=True)
class TaskRecord:
    """A read-only snapshot of a task; callers never touch pynamodb objects."""

    use_case_id: str
    task_id: str
    status: Status
    attempt: int
    retry: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    create_time: datetime
    update_time: datetime
    payload_sha256: str | None
    data: dict[str, Any] = field(default_factory=dict)
    errors: tuple[TaskError, ...] = ()
    expire_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (ISO-8601 timestamps) for the CLI and logs."""

        def iso(value: datetime | None) -> str | None:
            return value.isoformat() if value else None

        return {
            "use_case_id": self.use_case_id,
            "task_id": self.task_id,
            "status": self.status.value,
            "attempt": self.attempt,
            "retry": self.retry,
            "lease_owner": self.lease_owner,
            "lease_expires_at": iso(self.lease_expires_at),
            "create_time": iso(self.create_time),
            "update_time": iso(self.update_time),
            "payload_sha256": self.payload_sha256,
            "data": self.data,
            "errors": [
                {
                    "error_type": e.error_type,
                    "message": e.message,
                    "traceback": e.traceback,
                    "attempt": e.attempt,
                    "time": iso(e.time),
                }
                for e in self.errors
            ],
            "expire_at": iso(self.expire_at),
        }


def plain(value: Any) -> Any:
    """Turn pynamodb's raw map values into plain dicts and lists, for callers and JSON."""
    if isinstance(value, MapAttribute):
        return {k: plain(v) for k, v in value.attribute_values.items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def to_record(item: TaskModel) -> TaskRecord:
    """Snapshot a model instance as a :class:`TaskRecord`."""
    return TaskRecord(
        use_case_id=item.use_case_id,
        task_id=item.task_id,
        status=Status(item.status),
        attempt=int(item.attempt or 0),
        retry=int(item.retry or 0),
        lease_owner=item.lease_owner,
        lease_expires_at=item.lease_expires_at,
        create_time=item.create_time,
        update_time=item.update_time,
        payload_sha256=item.payload_sha256,
        data=plain(item.data) if item.data is not None else {},
        errors=tuple(
            TaskError(e.error_type, e.message, e.traceback, int(e.attempt), e.time)
            for e in (item.errors or [])
        ),
        expire_at=item.expire_at,
    )
