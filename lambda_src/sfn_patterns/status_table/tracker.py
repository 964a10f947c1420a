"""The tracker: acquire a task with a fenced lease, run one attempt, record the outcome.

One attempt, step by step (:meth:`Tracker.start`, then the ``with`` block):

1. Fast path: one UpdateItem ``ADD attempt 1`` on condition ``status IN (pending,
   failed)`` (and a matching payload hash). Only one worker can win it.
2. Otherwise decide on the task as the rejection returned it (ALL_OLD, no GetItem):
   succeeded -> skip, ignored -> skip, in_progress with a live lease -> locked,
   in_progress with an expired lease -> reclaim (the lost attempt counts as one
   failure), missing -> not found (or create). The write is conditioned on
   ``attempt = :observed AND status = :observed_status`` (plus ``lease_expires_at <=
   :now`` for a reclaim). The attempt number is a fencing token: exactly one worker
   wins each number; a loser decides again on the item its rejection returned.
3. Run the body. Every later write of this worker (heartbeat, success, failure) is
   conditioned on ``attempt = :mine AND status = in_progress``; once another worker
   has reclaimed the task, those writes are rejected instead of overwriting the new
   owner's state, and the rejection names the attempt that owns it now.

Every expression lives in :class:`~sfn_patterns.status_table.store.TaskStore`; this
module decides.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from types import TracebackType
from typing import Any, Protocol

from sfn_patterns import metrics
from sfn_patterns.status_table import bulk
from sfn_patterns.status_table.errors import (
    PayloadMismatchError,
    StaleAttemptError,
    TaskAlreadySucceededError,
    TaskIgnoredError,
    TaskLockedError,
    TaskNotFoundError,
)
from sfn_patterns.status_table.model import (
    ErrorRecord,
    TaskModel,
    TaskRecord,
    payload_sha256,
    plain,
    to_record,
)
from sfn_patterns.status_table.statuses import Status
from sfn_patterns.status_table.store import ConditionFailed, TaskStore, is_transient


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)`` (PEP 678) on Python 3.11+; the same ``__notes__`` list before."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]


log = logging.getLogger("sfn_patterns.status_table")
# The pattern's metrics (EMF lines, :mod:`sfn_patterns.metrics`): printed only where
# the module's metrics variables are set (``metrics_environment`` of modules/status-table).
PATTERN = "status-table"

Clock = Callable[[], datetime]
# Lost acquisition races are re-evaluated this often before giving up as "locked".
_ACQUIRE_ROUNDS = 3
_MAX_MESSAGE = 2000
_MAX_TRACEBACK = 8000
# Backoff (seconds, full jitter) of a final write throttled past the SDK's own retries.
_FIRST_BACKOFF = 0.1
_MAX_BACKOFF = 5.0


class LambdaContext(Protocol):
    """The one method of the Lambda context object the tracker needs."""

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds before Lambda stops the invocation."""
        ...


def utc_now() -> datetime:
    """The default clock: timezone-aware UTC, because naive datetimes compare wrongly."""
    return datetime.now(timezone.utc)


def default_worker_id() -> str:
    """host:pid:random, so the lease owner in a log line points at one process."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Tracker:
    """Tracks the tasks of one use case in a shared DynamoDB table.

    Args:
        table_name: The DynamoDB table (one table serves many use cases).
        use_case_id: Separates this use case's tasks from the others in the table.
        max_retry: Failures after which a task is ``ignored`` instead of ``failed``.
        lease_seconds: Lease length when :meth:`start` gets no Lambda context; a
            crashed worker blocks its task for at most this long.
        keep_errors: How many of the newest errors each task keeps (older ones drop).
        n_shards: GSI shards per status; must stay fixed for a table's lifetime
            because readers fan out over exactly this many shards.
        region: AWS region (default: botocore's resolution).
        host: Endpoint URL, e.g. LocalStack's.
        clock: Returns the current aware UTC datetime; tests inject a fake one.
        worker_id: Stored as ``lease_owner``; defaults to host:pid:random.
        next_use_case_id: Chain: when a task succeeds here, the same task id is created
            as ``pending`` in this use case, atomically with the success.
        lease_margin_seconds: Added to a Lambda context's remaining time, so a lease
            never ends while the invocation may still run.
        expire_after: When set, every new task gets ``expire_at = create_time +
            expire_after`` for a DynamoDB TTL to delete it.

    """

    def __init__(
        self,
        table_name: str,
        use_case_id: str,
        *,
        max_retry: int = 3,
        lease_seconds: float = 300.0,
        keep_errors: int = 5,
        n_shards: int = 4,
        region: str | None = None,
        host: str | None = None,
        clock: Clock | None = None,
        worker_id: str | None = None,
        next_use_case_id: str | None = None,
        lease_margin_seconds: float = 5.0,
        expire_after: timedelta | None = None,
    ) -> None:
        for name, value in (("use_case_id", use_case_id), ("next_use_case_id", next_use_case_id)):
            if value is not None and (not value or "#" in value):
                raise ValueError(f"{name} must be non-empty and must not contain '#': {value!r}")
        if max_retry < 1 or keep_errors < 0 or n_shards < 1 or n_shards > 99:
            raise ValueError("need max_retry >= 1, keep_errors >= 0 and 1 <= n_shards <= 99")
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self.table_name = table_name
        self.use_case_id = use_case_id
        self.max_retry = max_retry
        self.lease_seconds = float(lease_seconds)
        self.keep_errors = keep_errors
        self.n_shards = n_shards
        self.region = region
        self.host = host
        self.clock: Clock = clock or utc_now
        self.worker_id = worker_id or default_worker_id()
        self.next_use_case_id = next_use_case_id
        self.lease_margin_seconds = lease_margin_seconds
        self.expire_after = expire_after
        self.store = TaskStore(
            table_name,
            use_case_id,
            n_shards=n_shards,
            region=region,
            host=host,
            expire_after=expire_after,
        )
        self.model: type[TaskModel] = self.store.model

    # -- table ------------------------------------------------------------------------------

    def create_table_if_not_exists(self) -> None:
        """Create the table (on-demand, with the GSI and TTL); for tests and dev only.

        Production tables come from Terraform with the layout in
        :mod:`sfn_patterns.status_table.schema`.
        """
        self.store.create_table()

    def table_exists(self) -> bool:
        """Whether the table exists, so the CLI can name a missing table instead of a trace."""
        return self.store.table_exists()

    # -- helpers ---------------------------------------------------------------------------

    def now(self) -> datetime:
        """The injected clock's time, checked to be timezone-aware."""
        value = self.clock()
        if value.tzinfo is None:
            raise ValueError("clock() must return a timezone-aware datetime")
        return value.astimezone(timezone.utc)

    def status_key(self, status: Status, task_id: str) -> str:
        """The GSI hash key of ``task_id`` in ``status`` for this use case."""
        return self.store.status_key(status, task_id)

    def new_item(
        self, task_id: str, now: datetime, payload_hash: str | None, use_case_id: str | None = None
    ) -> TaskModel:
        """A fresh pending task item (not yet saved)."""
        return self.store.new_item(task_id, now, payload_hash, use_case_id)

    # -- reading -----------------------------------------------------------------------------

    def get(self, task_id: str) -> TaskRecord | None:
        """The task's current state (consistent read), or None when it does not exist."""
        item = self.store.get(task_id)
        return to_record(item) if item is not None else None

    def query(
        self,
        status: Status | str,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[TaskRecord]:
        """Tasks in ``status`` whose last update is in [since, until], via the GSI (a Query).

        "Failed in the last 30 days" is ``query("failed", since=now - 30 days)``.
        """
        return self.store.query(
            status,
            since=since,
            until=until,
            limit=limit,
            newest_first=newest_first,
        )

    def oldest_pending_age(self) -> float | None:
        """Seconds since the oldest pending task became pending; None when none is.

        One Query per shard of the status index (oldest first, one item each).
        """
        oldest = self.store.query(Status.PENDING, limit=1)
        if not oldest:
            return None
        return max(0.0, (self.now() - oldest[0].update_time).total_seconds())

    def emit_backlog_metrics(self) -> float | None:
        """Print ``OldestPendingAge`` (seconds) as a pattern metric; the age, or None.

        For a scheduled function of the caller's (the tracker has no schedule of its
        own): a backlog that stops moving shows as an age that keeps growing. Nothing
        is printed when no task is pending, as CloudWatch publishes no age of an
        empty queue.
        """
        age = self.oldest_pending_age()
        if age is not None:
            metrics.emit(PATTERN, {"OldestPendingAge": (age, "Seconds")})
        return age

    def claimable(self, limit: int | None = None) -> list[TaskRecord]:
        """Tasks a worker could start now: pending, failed, and in_progress with expired lease."""
        return self.store.claimable(self.now(), limit=limit)

    # -- bulk ----------------------------------------------------------------------------------

    def create_tasks(
        self, task_ids: Iterable[str], payloads: Mapping[str, Any] | None = None
    ) -> bulk.BulkResult:
        """Create pending tasks idempotently; existing tasks are reported and left untouched."""
        return bulk.create_tasks(self.store, task_ids, payloads, self.now())

    def reset(
        self,
        statuses: Iterable[Status | str] = (Status.IGNORED,),
        task_ids: Iterable[str] | None = None,
        dry_run: bool = False,
    ) -> int:
        """Send ignored (or failed) tasks back to pending with retry 0; returns how many."""
        return bulk.reset_tasks(self.store, statuses, task_ids, self.now, dry_run=dry_run)

    # -- running -------------------------------------------------------------------------------

    def start(
        self,
        task_id: str,
        *,
        payload: Any = None,
        context: LambdaContext | None = None,
        lease_seconds: float | None = None,
        create: bool = False,
    ) -> Attempt:
        """Acquire the task now and return the attempt, to be used as a context manager.

        Args:
            task_id: The task, unique within the use case.
            payload: The task's input; when given, its hash must match the stored one
                (stored at first start if the task has none yet).
            context: A Lambda context: the lease lasts its remaining time plus
                ``lease_margin_seconds``, because the invocation cannot outlive it.
            lease_seconds: Explicit lease length (overrides context and default).
            create: Create a missing task instead of raising TaskNotFoundError. Off by
                default so that a mistyped id fails loudly instead of creating work.

        Raises:
            TaskAlreadySucceededError, TaskIgnoredError, TaskLockedError: skip the task.
            PayloadMismatchError, TaskNotFoundError: caller bugs.

        """
        lease = self._lease_seconds(context, lease_seconds)
        wanted_hash = payload_sha256(payload) if payload is not None else None
        attempt, observed = self._fast_acquire(task_id, wanted_hash, lease)
        if attempt is not None:
            return attempt
        for _ in range(_ACQUIRE_ROUNDS):
            attempt, observed = self._try_acquire(task_id, observed, wanted_hash, lease, create)
            if attempt is not None:
                return attempt
        raise TaskLockedError(
            f"{self.use_case_id}/{task_id}: lost the race to acquire {_ACQUIRE_ROUNDS} times",
            use_case_id=self.use_case_id,
            task_id=task_id,
        )

    def _lease_seconds(self, context: LambdaContext | None, explicit: float | None) -> float:
        if explicit is not None:
            return float(explicit)
        if context is not None:
            remaining = context.get_remaining_time_in_millis() / 1000.0
            return max(remaining, 0.0) + self.lease_margin_seconds
        return self.lease_seconds

    def _fast_acquire(
        self, task_id: str, wanted_hash: str | None, lease: float
    ) -> tuple[Attempt | None, TaskModel | None]:
        """The common case in one blind conditional UpdateItem: a pending or failed task.

        ``ADD attempt 1`` under the condition ``status IN (pending, failed)`` can succeed
        for one worker only. Anything else (missing, locked, expired, succeeded, payload
        mismatch) fails the condition, and the rejection returns the task as it is
        (ALL_OLD; None when missing) for read-decide-write to tell the cases apart,
        without a GetItem.
        """
        now = self.now()
        expires_at = now + timedelta(seconds=lease)
        try:
            item = self.store.claim_startable(
                task_id,
                owner=self.worker_id,
                expires_at=expires_at,
                now=now,
                payload_hash=wanted_hash,
            )
        except ConditionFailed as lost:
            if not self._own_claim(lost.item, expires_at):
                return None, lost.item
            item = lost.item  # this very claim landed; only its answer was lost
        log.info(
            "start %s/%s: attempt %d by %s, lease until %s",
            self.use_case_id,
            task_id,
            int(item.attempt),
            self.worker_id,
            expires_at.isoformat(),
        )
        return Attempt(self, item, lease), item

    def _own_claim(self, item: TaskModel | None, expires_at: datetime) -> bool:
        """Whether a rejected claim's returned task is this worker's own claim, landed.

        botocore re-sends a request whose answer timed out (standard retry mode), so a
        claim that took effect is sent a second time, and the second one fails its
        condition on the first one's result. The task then carries this worker's id and
        the very lease end it wrote: nobody else writes that pair, so the attempt is ours
        and is taken as won, instead of a lock held by ourselves.
        """
        return (
            item is not None
            and item.status == Status.IN_PROGRESS.value
            and item.lease_owner == self.worker_id
            and item.lease_expires_at == expires_at
        )

    def _lost_lease_errors(
        self, item: TaskModel, errors: list[ErrorRecord], now: datetime
    ) -> list[ErrorRecord]:
        """The error list plus a LeaseExpired record for the attempt that vanished."""
        expires = item.lease_expires_at
        record = ErrorRecord(
            error_type="LeaseExpired",
            message=(
                f"attempt {int(item.attempt)} by {item.lease_owner} did not finish "
                f"before its lease expired at {expires.isoformat() if expires else '?'}"
            ),
            traceback=None,
            attempt=int(item.attempt),
            time=now,
        )
        errors = [*errors, record]
        return errors[-self.keep_errors :] if self.keep_errors else []

    def _park_expired(
        self, item: TaskModel, retry: int, errors: list[ErrorRecord], now: datetime
    ) -> None:
        """Set an expired task that used up its retries to ignored (ConditionFailed: lost)."""
        observed_attempt, owner = int(item.attempt), item.lease_owner
        self.store.park_expired(item, retry=retry, errors=errors, now=now)
        metrics.emit(PATTERN, {"LeaseExpiries": 1, "RetriesExhausted": 1})
        log.warning(
            "ignored %s/%s: lease of attempt %d (%s) expired and retry %d reached max_retry %d",
            self.use_case_id,
            item.task_id,
            observed_attempt,
            owner,
            retry,
            self.max_retry,
        )

    def _raise_if_locked(self, item: TaskModel, now: datetime) -> None:
        """TaskLockedError while another attempt's lease is live (by this worker's clock)."""
        expires = item.lease_expires_at
        if expires is not None and expires > now:
            raise TaskLockedError(
                f"{self.use_case_id}/{item.task_id}: locked by {item.lease_owner} until "
                f"{expires.isoformat()}",
                use_case_id=self.use_case_id,
                task_id=item.task_id,
                lease_owner=item.lease_owner,
                lease_expires_at=expires,
            )

    def _check_startable(self, item: TaskModel, wanted_hash: str | None) -> Status:
        """Raise the typed error for a task nobody may start; else return its status."""
        ids = {"use_case_id": self.use_case_id, "task_id": item.task_id}
        label = f"{self.use_case_id}/{item.task_id}"
        if wanted_hash and item.payload_sha256 and item.payload_sha256 != wanted_hash:
            raise PayloadMismatchError(
                f"{label}: payload sha256 {wanted_hash[:12]}... differs from the task's "
                f"{item.payload_sha256[:12]}...",
                expected=item.payload_sha256,
                got=wanted_hash,
                **ids,
            )
        status = Status(item.status)
        if status is Status.SUCCEEDED:
            raise TaskAlreadySucceededError(f"{label}: already succeeded", **ids)
        if status is Status.IGNORED:
            raise TaskIgnoredError(
                f"{label}: ignored after {item.retry} failures; reset it to retry", **ids
            )
        return status

    def _try_acquire(
        self,
        task_id: str,
        observed: TaskModel | None,
        wanted_hash: str | None,
        lease: float,
        create: bool,
    ) -> tuple[Attempt | None, TaskModel | None]:
        """One decide-write round on the task as last seen (``observed``; None: missing).

        Returns the attempt, or (None, the task as the lost write found it) for the next
        round: the rejection carries the winner's state, so no round reads the task.
        """
        ids = {"use_case_id": self.use_case_id, "task_id": task_id}
        label = f"{self.use_case_id}/{task_id}"
        item = observed
        now = self.now()
        if item is None:
            if not create:
                raise TaskNotFoundError(f"{label}: no such task", **ids)
            item = self.store.new_item(task_id, now, wanted_hash)
            try:
                self.store.create(item)
            except ConditionFailed as lost:  # another worker created it first
                return None, lost.item
        status = self._check_startable(item, wanted_hash)
        observed_attempt = int(item.attempt)
        retry = int(item.retry)
        reclaim_errors: list[ErrorRecord] | None = None
        reclaimed_from: str | None = None
        if status is Status.IN_PROGRESS:
            self._raise_if_locked(item, now)
            # Reclaim. The crashed attempt counts as a failure, so a task that kills its
            # worker every time (OOM, timeout) ends ignored instead of looping forever.
            reclaimed_from = item.lease_owner
            retry += 1
            reclaim_errors = self._lost_lease_errors(item, list(item.errors or []), now)
            if retry >= self.max_retry:
                try:
                    self._park_expired(item, retry, reclaim_errors, now)
                except ConditionFailed as lost:
                    return None, lost.item
                raise TaskIgnoredError(f"{label}: ignored after {retry} failures", **ids)
        new_attempt = observed_attempt + 1
        expires_at = now + timedelta(seconds=lease)
        try:
            self.store.claim_observed(
                item,
                owner=self.worker_id,
                expires_at=expires_at,
                now=now,
                retry=retry,
                reclaim_errors=reclaim_errors,
                payload_hash=wanted_hash,
            )
        except ConditionFailed as lost:
            if not (
                self._own_claim(lost.item, expires_at) and int(lost.item.attempt) == new_attempt
            ):
                return None, lost.item
            item = lost.item  # this very claim landed; only its answer was lost
        if reclaimed_from is not None:
            metrics.emit(PATTERN, {"LeaseExpiries": 1})
            log.warning(
                "reclaim %s: attempt %d by %s expired; attempt %d by %s (retry %d)",
                label,
                observed_attempt,
                reclaimed_from,
                new_attempt,
                self.worker_id,
                retry,
            )
        log.info(
            "start %s: attempt %d by %s, lease until %s",
            label,
            new_attempt,
            self.worker_id,
            expires_at.isoformat(),
        )
        return Attempt(self, item, lease), item


class Attempt:
    """One acquired attempt at a task; use it as a context manager.

    Leaving the ``with`` block normally records ``succeeded``; leaving it with an
    exception records ``failed`` (retry + 1, error appended) or ``ignored`` once
    ``retry`` reaches ``max_retry``, and the exception propagates.

    Fencing and error visibility: if another worker reclaimed the task meanwhile, the
    final write is rejected. After a successful body, :class:`StaleAttemptError` is
    raised (the work may have been done twice; the caller must know). After a failing
    body, the body's *own* exception is re-raised unchanged, with a note
    (PEP 678 ``__notes__``) saying the failure could not be recorded; the rejection is kept
    in :attr:`stale_error`. The real error is never replaced by a bookkeeping error.
    """

    def __init__(self, tracker: Tracker, item: TaskModel, lease_seconds: float) -> None:
        self.tracker = tracker
        self._item = item
        self.task_id: str = item.task_id
        self.attempt: int = int(item.attempt)
        self.retry: int = int(item.retry)
        self.lease_seconds = lease_seconds
        self.lease_expires_at: datetime = item.lease_expires_at
        self._errors: list[ErrorRecord] = list(item.errors or [])
        self._data: dict[str, Any] = plain(item.data) if item.data is not None else {}
        self._data_changed = False
        self._next_payload_hash: str | None = None
        self.final_status: Status | None = None
        self.stale_error: StaleAttemptError | None = None

    @property
    def label(self) -> str:
        """``use_case/task`` for messages."""
        return f"{self.tracker.use_case_id}/{self.task_id}"

    def set_data(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the task's ``data`` map; written with the final status."""
        self._data.update(values)
        self._data_changed = True

    def set_next_payload(self, payload: Any) -> None:
        """The input of the chained task (its payload hash is stored when it is created)."""
        self._next_payload_hash = payload_sha256(payload)

    def _stale(self, action: str, current: TaskModel | None) -> StaleAttemptError:
        """The error for a rejected write; ``current`` is the task the rejection returned."""
        current_attempt = int(current.attempt) if current is not None else None
        log.error(
            "stale %s: attempt %d by %s could not %s; the task is now at attempt %s",
            self.label,
            self.attempt,
            self.tracker.worker_id,
            action,
            current_attempt,
        )
        return StaleAttemptError(
            f"{self.label}: attempt {self.attempt} no longer owns the task (now attempt "
            f"{current_attempt}); could not {action}",
            use_case_id=self.tracker.use_case_id,
            task_id=self.task_id,
            attempt=self.attempt,
            current_attempt=current_attempt,
        )

    def _persist(
        self,
        action: str,
        write: Callable[[], None],
        status: Status,
        record: ErrorRecord | None = None,
    ) -> None:
        """The final write, sent again after a throttle or a 5xx while the lease lasts.

        The work is done by now: giving up on a throttled write would leave the task
        in progress until its lease ran out, and then run it a second time (seen with
        8 workers under DynamoDB throttling). A rejected write that finds its own result
        in the task had landed before (only its answer was lost, whether this loop or
        botocore's own retry re-sent it), so it counts as done, not as a stale attempt;
        :meth:`_landed` says how that result is told from another worker's.
        """
        delay = _FIRST_BACKOFF
        while True:
            try:
                write()
                return
            except ConditionFailed as lost:
                if self._landed(lost.item, status, record):
                    return
                raise self._stale(action, lost.item) from None
            except Exception as error:
                left = (self.lease_expires_at - self.tracker.now()).total_seconds()
                if not is_transient(error) or left <= delay:
                    raise
                log.warning("%s: could not %s (%s), retrying", self.label, action, error)
                time.sleep(random.uniform(0, delay))
                delay = min(delay * 2, _MAX_BACKOFF)

    def _landed(
        self, current: TaskModel | None, status: Status, record: ErrorRecord | None
    ) -> bool:
        """Whether the task as a rejection returned it holds this attempt's final write.

        Only this attempt's owner writes ``succeeded`` or ``failed`` at its attempt
        number (a reclaim moves the number on), so those two are told by the number
        alone. ``ignored`` at this number is also written by another worker parking the
        attempt after its lease expired, with a ``LeaseExpired`` record; ours ends with
        this failure's own record.
        """
        if current is None or int(current.attempt) != self.attempt:
            return False
        if current.status != status.value:
            return False
        if record is None:
            return True
        last = current.errors[-1] if current.errors else None
        return last is not None and (last.error_type, last.message, last.time) == (
            record.error_type,
            record.message,
            record.time,
        )

    def heartbeat(self, seconds: float | None = None) -> datetime:
        """Extend the lease by ``seconds`` (default: the attempt's lease) from now.

        Raises:
            StaleAttemptError: another worker took the task over; stop working on it.

        """
        expires_at = self.tracker.now() + timedelta(seconds=seconds or self.lease_seconds)
        try:
            self.tracker.store.heartbeat(self._item, self.attempt, expires_at)
        except ConditionFailed as lost:
            raise self._stale("heartbeat", lost.item) from None
        self.lease_expires_at = expires_at
        log.debug("heartbeat %s: attempt %d lease until %s", self.label, self.attempt, expires_at)
        return expires_at

    def succeed(self) -> None:
        """Record success (and create the chained task, if configured) in one write."""
        tracker = self.tracker
        now = tracker.now()
        data = self._data if self._data_changed else None

        def write() -> None:
            if tracker.next_use_case_id is None:
                tracker.store.finish(self._item, self.attempt, Status.SUCCEEDED, now, data=data)
            else:
                tracker.store.succeed_and_chain(
                    self._item,
                    self.attempt,
                    now,
                    data=data,
                    next_use_case_id=tracker.next_use_case_id,
                    next_payload_hash=self._next_payload_hash,
                )

        self._persist("record success", write, Status.SUCCEEDED)
        if tracker.next_use_case_id is not None:
            log.info(
                "chained %s -> %s/%s (pending)", self.label, tracker.next_use_case_id, self.task_id
            )
        self.final_status = Status.SUCCEEDED
        log.info("succeeded %s: attempt %d", self.label, self.attempt)

    def fail(self, exc: BaseException) -> Status:
        """Record a failure: retry + 1, the error appended (last N kept), failed or ignored."""
        tracker = self.tracker
        now = tracker.now()
        retry = self.retry + 1
        status = Status.IGNORED if retry >= tracker.max_retry else Status.FAILED
        record = ErrorRecord(
            error_type=type(exc).__qualname__,
            message=str(exc)[:_MAX_MESSAGE] or type(exc).__qualname__,
            traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[
                -_MAX_TRACEBACK:
            ],
            attempt=self.attempt,
            time=now,
        )
        errors = [*self._errors, record]
        errors = errors[-tracker.keep_errors :] if tracker.keep_errors else []
        data = self._data if self._data_changed else None
        self._persist(
            "record failure",
            lambda: tracker.store.finish(
                self._item, self.attempt, status, now, data=data, retry=retry, errors=errors
            ),
            status,
            record if errors else None,
        )
        self.final_status = status
        if status is Status.IGNORED:
            metrics.emit(PATTERN, {"RetriesExhausted": 1})
        log.log(
            logging.WARNING if status is Status.IGNORED else logging.INFO,
            "%s %s: attempt %d raised %s: %s (retry %d/%d)",
            status.value,
            self.label,
            self.attempt,
            type(exc).__qualname__,
            record.message,
            retry,
            tracker.max_retry,
        )
        return status

    def __enter__(self) -> Attempt:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if self.final_status is not None:  # finished explicitly inside the block
            return False
        if exc is None:
            self.succeed()
            return False
        try:
            self.fail(exc)
        except StaleAttemptError as stale:
            self.stale_error = stale
            add_note(exc, f"status_table: this failure was not recorded: {stale}")
        except Exception as record_exc:  # never let bookkeeping hide the real error
            log.exception("could not record the failure of %s", self.label)
            add_note(exc, f"status_table: recording this failure failed: {record_exc!r}")
        return False  # re-raise the body's exception
