"""Typed errors, so workers can tell "skip this task" from "something is broken".

Every error carries ``use_case_id`` and ``task_id`` for logs and dashboards.
"""

from __future__ import annotations

from datetime import datetime


class StatusTableError(Exception):
    """Base class of every error this package raises on purpose."""

    def __init__(self, message: str, *, use_case_id: str = "", task_id: str = "") -> None:
        super().__init__(message)
        self.use_case_id = use_case_id
        self.task_id = task_id


class TaskNotFoundError(StatusTableError):
    """The task does not exist (``start(create=False)``): a typo must not create work."""


class TaskSkippedError(StatusTableError):
    """Base of the errors a worker should treat as "nothing to do for me": skip the task."""


class TaskLockedError(TaskSkippedError):
    """Another worker holds a live lease on the task (or won the race to acquire it)."""

    def __init__(
        self,
        message: str,
        *,
        use_case_id: str = "",
        task_id: str = "",
        lease_owner: str | None = None,
        lease_expires_at: datetime | None = None,
    ) -> None:
        super().__init__(message, use_case_id=use_case_id, task_id=task_id)
        self.lease_owner = lease_owner
        self.lease_expires_at = lease_expires_at


class TaskAlreadySucceededError(TaskSkippedError):
    """The task already succeeded: an idempotent re-run should skip it."""


class TaskIgnoredError(TaskSkippedError):
    """The task failed ``max_retry`` times and is parked until someone resets it."""


class PayloadMismatchError(StatusTableError):
    """The task was started with a different payload than the one it was created with.

    Same idea as Powertools' ``IdempotencyValidationError``: one task id reused for
    different input is a caller bug, and running it would corrupt the audit trail.
    """

    def __init__(
        self, message: str, *, use_case_id: str = "", task_id: str = "", expected: str, got: str
    ) -> None:
        super().__init__(message, use_case_id=use_case_id, task_id=task_id)
        self.expected_sha256 = expected
        self.got_sha256 = got


class StaleAttemptError(StatusTableError):
    """A write of an attempt that no longer owns the task (its lease was reclaimed).

    Raised by ``heartbeat()`` and when a successful body cannot be recorded. When the
    body itself raised, the tracker re-raises *that* exception with a note instead, so
    the real error is never masked (see :class:`~sfn_patterns.status_table.tracker.Attempt`).
    """

    def __init__(
        self,
        message: str,
        *,
        use_case_id: str = "",
        task_id: str = "",
        attempt: int = 0,
        current_attempt: int | None = None,
    ) -> None:
        super().__init__(message, use_case_id=use_case_id, task_id=task_id)
        self.attempt = attempt
        self.current_attempt = current_attempt
