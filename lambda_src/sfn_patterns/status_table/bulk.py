"""Bulk operations: idempotent creation and resets of parked tasks.

DynamoDB's BatchWriteItem cannot carry conditions, and one failed condition cancels
a whole TransactWriteItems, so creation is BatchGetItem (to skip known tasks cheaply)
followed by one conditional PutItem per missing task; the condition keeps a
concurrent creator from being overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pynamodb.exceptions import PutError, UpdateError

from sfn_patterns.status_table.errors import is_conditional_failure
from sfn_patterns.status_table.model import payload_sha256, task_pk
from sfn_patterns.status_table.queries import iter_tasks
from sfn_patterns.status_table.statuses import RESETTABLE, Status, parse_status

if TYPE_CHECKING:
    from sfn_patterns.status_table.tracker import Tracker

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
    tracker: Tracker, task_ids: Iterable[str], payloads: Mapping[str, Any] | None = None
) -> BulkResult:
    """Create each task as pending unless it exists; see :class:`BulkResult`."""
    payloads = payloads or {}
    ids = list(dict.fromkeys(task_ids))  # de-duplicate, keep order
    model = tracker.model
    hashes = {tid: payload_sha256(payloads[tid]) for tid in ids if tid in payloads}
    found = {
        item.task_id: item
        for item in model.batch_get([task_pk(tracker.use_case_id, tid) for tid in ids])
    }
    result = BulkResult()
    now = tracker.now()
    for tid in ids:
        item = found.get(tid)
        if item is None:
            try:
                tracker.new_item(tid, now, hashes.get(tid)).save(
                    condition=model.pk.does_not_exist()
                )
            except PutError as exc:
                if not is_conditional_failure(exc):
                    raise
                item = tracker._get_item(tid)
            else:
                result.created.append(tid)
                continue
        result.existing.append(tid)
        stored = item.payload_sha256 if item is not None else None
        if tid in hashes and stored and stored != hashes[tid]:
            result.mismatched.append(tid)
    log.info(
        "create_tasks %s: %d created, %d existing (%d payload mismatches)",
        tracker.use_case_id,
        len(result.created),
        len(result.existing),
        len(result.mismatched),
    )
    return result


def reset_tasks(
    tracker: Tracker,
    statuses: Iterable[Status | str],
    task_ids: Iterable[str] | None = None,
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
    model = tracker.model
    if task_ids is not None:
        keys = [task_pk(tracker.use_case_id, tid) for tid in dict.fromkeys(task_ids)]
        candidates: Iterable[Any] = list(model.batch_get(keys))
    else:
        candidates = (
            item
            for status in sorted(wanted)
            for item in list(iter_tasks(model, tracker.use_case_id, status, tracker.n_shards))
        )
    count = 0
    for item in candidates:
        status = Status(item.status)
        if status not in wanted:
            continue
        if dry_run:
            count += 1
            continue
        now = tracker.now()
        try:
            item.update(
                actions=[
                    model.status.set(Status.PENDING.value),
                    model.status_key.set(tracker.status_key(Status.PENDING, item.task_id)),
                    model.retry.set(0),
                    model.update_time.set(now),
                    model.lease_owner.remove(),
                    model.lease_expires_at.remove(),
                ],
                condition=(model.status == status.value) & (model.attempt == item.attempt),
            )
        except UpdateError as exc:
            if is_conditional_failure(exc):
                continue
            raise
        count += 1
    log.info(
        "reset %s: %d task(s) %s pending (statuses %s)",
        tracker.use_case_id,
        count,
        "would go back to" if dry_run else "back to",
        ",".join(sorted(s.value for s in wanted)),
    )
    return count
