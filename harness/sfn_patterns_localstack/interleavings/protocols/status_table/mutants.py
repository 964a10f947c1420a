"""Realistic mistakes in the status table's runtime, to show the explorer would catch them.

Why mutants: an explorer that finds nothing in correct code proves little until it is seen
to find the mistakes a reviewer could plausibly let through. Each mutant replaces one
method of the real class (``TaskStore``, ``Attempt``) for the duration of a context,
keeping everything else as the Lambdas run it, and is named so that a failure's replay
command can apply it again (``--mutant NAME``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sfn_patterns.status_table.model import TaskModel
from sfn_patterns.status_table.statuses import Status
from sfn_patterns.status_table.store import TaskStore
from sfn_patterns.status_table.tracker import Attempt
from sfn_patterns_localstack.interleavings.clock import patched
from sfn_patterns_localstack.interleavings.protocol import Mutant


def _fence_status_only(self: TaskStore, attempt: int) -> Any:
    """The fence forgets the attempt: any in-progress attempt may write."""
    return self.model.status == Status.IN_PROGRESS.value


def _observed_without_expiry(self: TaskStore, item: TaskModel, now: datetime, reclaim: bool) -> Any:
    """A reclaim trusts the expiry it read: the write no longer re-checks the lease."""
    m = self.model
    return (m.attempt == int(item.attempt)) & (m.status == item.status)


def _heartbeat_unfenced(
    self: TaskStore, item: TaskModel, attempt: int, expires_at: datetime
) -> None:
    """A heartbeat "only moves a timestamp", so it is sent without the fence."""
    m = self.model
    self._update(item, [m.lease_expires_at.set(expires_at)], m.pk.exists())


def _enter_records_success(self: Attempt) -> Attempt:
    """Success recorded when the attempt starts, "saving a round trip at the end"."""
    self.succeed()
    return self


@contextlib.contextmanager
def _replace(owner: type, name: str, function: Any) -> Iterator[None]:
    with patched(owner, name, function):
        yield


MUTANTS: dict[str, Mutant] = {
    mutant.name: mutant
    for mutant in (
        Mutant(
            "fence-status-only",
            "TaskStore._fence drops `attempt = :mine`: a stale attempt's final write lands",
            lambda: _replace(TaskStore, "_fence", _fence_status_only),
        ),
        Mutant(
            "reclaim-on-stale-read",
            "TaskStore._observed drops `lease_expires_at <= :now`: a reclaim acts on a stale "
            "read of the lease, even if a heartbeat extended it since",
            lambda: _replace(TaskStore, "_observed", _observed_without_expiry),
        ),
        Mutant(
            "heartbeat-unfenced",
            "TaskStore.heartbeat is sent without the fence: a stale worker extends the lease "
            "of the attempt that took the task over",
            lambda: _replace(TaskStore, "heartbeat", _heartbeat_unfenced),
        ),
        Mutant(
            "success-before-work",
            "Attempt.__enter__ records success before the body runs (a step moved before "
            "another): a body that never finishes leaves a task succeeded but not done",
            lambda: _replace(Attempt, "__enter__", _enter_records_success),
        ),
    )
}
