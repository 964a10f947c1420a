"""Bulk operations: idempotent creation and resets of parked tasks.

DynamoDB's BatchWriteItem cannot carry conditions, and one failed condition cancels
a whole TransactWriteItems, so creation is BatchGetItem (to skip known tasks cheaply)
followed by one conditional PutItem per missing task; the condition keeps a
concurrent creator from being overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sfn_patterns.status_table.model import TaskModel, payload_sha256
from sfn_patterns.status_table.statuses import RESETTABLE, Status, parse_status
from sfn_patterns.status_table.store import ConditionFailed, TaskStore

log = logging.getLogger("sfn_patterns.status_table")


@dataclass
class BulkResult:
    """What ``create_tasks`` did, so a re-run can be told apart from a first run.

    Attributes:
        created: Task ids that did not exist and are now pending.
        existing: Task ids that already existed (left untouched, whatever their status).
        mismatched: The subset of ``existing`` whose stored payload hash differs from
            the payload given now: probably a reused id, worth an alarm.

    """

    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)


def create_tasks(
    store: TaskStore,
    task_ids: Iterable[str],
    payloads: Mapping[str, Any] | None,
    now: datetime,
) -> BulkResult:
    """Create each task as pending unless it exists; see :class:`BulkResult`."""
    payloads = payloads or {}
    ids = list(dict.fromkeys(task_ids))  # de-duplicate, keep order
    hashes = {tid: payload_sha256(payloads[tid]) for tid in ids if tid in payloads}
    found = {item.task_id: item for item in store.batch_get(ids)}
    result = BulkResult()
    for tid in ids:
        item: TaskModel | None = found.get(tid)
        if item is None:
            try:
                store.create(store.new_item(tid, now, hashes.get(tid)))
            except ConditionFailed as lost:  # created since the batch read
                item = lost.item
            else:
                result.created.append(tid)
                continue
        result.existing.append(tid)
        stored = item.payload_sha256 if item is not None else None
        if tid in hashes and stored and stored != hashes[tid]:
            result.mismatched.append(tid)
    log.info(
        "create_tasks %s: %d created, %d existing (%d payload mismatches)",
        store.use_case_id,
        len(result.created),
        len(result.existing),
        len(result.mismatched),
    )
    return result


def reset_tasks(
    store: TaskStore,
    statuses: Iterable[Status | str],
    task_ids: Iterable[str] | None,
    clock: Callable[[], datetime],
    *,
    dry_run: bool = False,
) -> int:
    """Set matching failed/ignored tasks to pending with retry 0; returns how many.

    Each write is conditioned on the status and attempt that were read, so a task a
    worker picked up in the meantime is skipped rather than yanked back to pending.
    ``task_ids`` restricts the reset to those tasks (still only in ``statuses``).
    """
    wanted = {parse_status(s) for s in statuses}
    bad = wanted - RESETTABLE
    if bad:
        raise ValueError(
            f"cannot reset tasks in {sorted(s.value for s in bad)}: only failed and ignored"
        )
    if task_ids is not None:
        candidates: Iterable[TaskModel] = store.batch_get(dict.fromkeys(task_ids))
    else:
        candidates = (item for status in sorted(wanted) for item in list(store.iter_status(status)))
    count = 0
    for item in candidates:
        if Status(item.status) not in wanted:
            continue
        if dry_run:
            count += 1
            continue
        try:
            store.reset(item, clock())
        except ConditionFailed:  # a worker took it meanwhile
            continue
        count += 1
    log.info(
        "reset %s: %d task(s) %s pending (statuses %s)",
        store.use_case_id,
        count,
        "would go back to" if dry_run else "back to",
        ",".join(sorted(s.value for s in wanted)),
    )
    return count
