"""status_table: track business-critical tasks in DynamoDB, safely, with many workers.

Each task of a use case (``use_case_id``; ``task_id`` unique within it) moves through
``pending -> in_progress -> succeeded | failed | ignored``; ``ignored`` means it
failed ``max_retry`` times. One table serves many use cases (key
``pk = "{use_case_id}#{task_id}"``; layout in :mod:`.schema`).

Run one attempt::

    tracker = Tracker("tasks", "orders", max_retry=3, lease_seconds=300)
    tracker.create_tasks(["o-1", "o-2"], payloads={"o-1": {...}, "o-2": {...}})
    try:
        with tracker.start("o-1", payload={...}, context=lambda_context) as attempt:
            do_business_logic()
            attempt.set_data({"invoice": "inv-9"})
            attempt.heartbeat()  # long work: extend the lease
    except TaskSkippedError:  # locked by another worker, already succeeded, ignored
        pass

Guarantees beyond the reference implementation (pynamodb_mate's tracker):

* Lease reclaim: a task left ``in_progress`` by a crashed worker is taken over by
  the next ``start()`` once its lease expires (the lost attempt counts as a failure).
* Fencing: every acquisition increments ``attempt``; all later writes are
  conditioned on it. A stale worker's write is rejected; if its body raised, its
  own exception is re-raised with a note (``StaleAttemptError`` kept in
  ``attempt.stale_error``); if its body succeeded, ``StaleAttemptError`` is raised.
* Deterministic GSI shards (``zlib.crc32``), server-side queries by status and time
  range (``tracker.query("failed", since=...)``), the last ``keep_errors`` errors
  only, payload hash checks, bulk idempotent creation and resets.
* Missing tasks: ``start()`` raises ``TaskNotFoundError`` unless ``create=True``.

Multi-step chains: step 1's ``succeeded`` is step 2's ``pending``. Create the step-1
tracker with ``next_use_case_id="step2"``; when an attempt succeeds, one
TransactWriteItems marks it succeeded *and* creates the same ``task_id`` as pending
in ``step2`` (same table, same ``n_shards``). The step-2 item is written with
``if_not_exists`` on every attribute, so a retried or duplicated success never
resets a step-2 task that already exists or has progressed. ``attempt.set_next_payload``
stores the step-2 payload hash.

Logging: logger ``sfn_patterns.status_table`` reports start, success, failure,
reclaim and stale writes.
"""

from sfn_patterns.status_table.bulk import BulkResult
from sfn_patterns.status_table.errors import (
    PayloadMismatchError,
    StaleAttemptError,
    StatusTableError,
    TaskAlreadySucceededError,
    TaskIgnoredError,
    TaskLockedError,
    TaskNotFoundError,
    TaskSkippedError,
)
from sfn_patterns.status_table.model import TaskError, TaskRecord, payload_sha256, shard_for
from sfn_patterns.status_table.schema import GSI_NAME, TTL_ATTRIBUTE, terraform_schema
from sfn_patterns.status_table.statuses import Status
from sfn_patterns.status_table.tracker import Attempt, Tracker

__all__ = [
    "GSI_NAME",
    "TTL_ATTRIBUTE",
    "Attempt",
    "BulkResult",
    "PayloadMismatchError",
    "StaleAttemptError",
    "Status",
    "StatusTableError",
    "TaskAlreadySucceededError",
    "TaskError",
    "TaskIgnoredError",
    "TaskLockedError",
    "TaskNotFoundError",
    "TaskRecord",
    "TaskSkippedError",
    "Tracker",
    "payload_sha256",
    "shard_for",
    "terraform_schema",
]
