"""What the status table guarantees, checked from the store's history and the side-effect log.

Why from the history: the checker must not trust the code it checks. It reads only what
the run recorded, the items before and after each write (attributed to the actor whose
thread sent it, by the gateway), the side effects actors performed, and the fake clock.
From those it keeps its own account of who acquired which attempt of which task:

* an acquisition is a write that raises a task's ``attempt`` by one; its sender owns the
  new attempt. It is legal from pending or failed, or from ``in_progress`` once the lease
  stored there has expired by the clock (a reclaim: the old attempt was taken over);
* every other write to a task must come from the owner of its current attempt, and
  nothing may change a succeeded task.

The invariants (README.md, "Guarantees"; modules/status-table/README.md):

``fencing``
    A stale attempt's write never lands: a write that is not an acquisition comes from
    the actor that acquired the task's current attempt (or parks, as ignored, an attempt
    whose lease has expired: the reclaim of a task whose retries are used up).
``lease``
    No live lease is taken: an attempt starts only from pending or failed, or after the
    previous attempt's lease expired; never on a succeeded or ignored task.
``at-most-once``
    Each task is done at most once (counted from the side-effect log), except the case the
    README documents: an attempt whose lease expired and was reclaimed may have done the
    work too (the stale worker is told by ``StaleAttemptError``). An effect must come from
    an actor holding an attempt of the task, and no attempt does it twice.
``exactly-once``
    At quiescence, unless a crashed worker's attempt still holds the task (a crash that
    nobody reclaimed) or it was parked after ``max_retry`` failed attempts, every task is
    succeeded, and the attempt whose success was recorded did the work.
``outcomes`` (optional, :attr:`StatusTableChecker.outcomes`)
    What a worker is told agrees with the store: ``StaleAttemptError`` only for an attempt
    that was really taken over, and ``TaskLockedError`` never for the worker's own lease.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sfn_patterns_localstack.interleavings.protocol import Checker, RunView
from sfn_patterns_localstack.interleavings.scheduler import ActorState, Effect, Event, Note, Write

# How pynamodb's UTCDateTimeAttribute stores a time (always UTC).
_STORED_TIME = "%Y-%m-%dT%H:%M:%S.%f+0000"

SUCCEEDED, IN_PROGRESS, IGNORED = "succeeded", "in_progress", "ignored"


@dataclass(frozen=True)
class TaskView:
    """The attributes of a stored task the invariants read."""

    status: str
    attempt: int
    lease_expires_at: datetime | None

    @classmethod
    def of(cls, item: Mapping[str, Any]) -> TaskView:
        """Read a stored item (plain values, as :meth:`MotoStore.snapshot` gives them)."""
        expires = item.get("lease_expires_at")
        return cls(
            status=str(item.get("status")),
            attempt=int(item.get("attempt") or 0),
            lease_expires_at=(
                datetime.strptime(expires, _STORED_TIME).replace(tzinfo=UTC) if expires else None
            ),
        )


class StatusTableChecker(Checker):
    """The status table's invariants over one run.

    Args:
        tasks: Store key -> task id, for every task of the scenario.
        max_retry: The trackers' ``max_retry`` (a task may be parked after that many attempts).
        outcomes: Also check what workers are told (see the module docstring).

    """

    def __init__(self, tasks: Mapping[str, str], max_retry: int, *, outcomes: bool = False):
        self.tasks = dict(tasks)
        self.max_retry = max_retry
        self.outcomes = outcomes
        self.owner: dict[tuple[str, int], int] = {}  # (task, attempt) -> actor
        self.taken_over: set[tuple[str, int]] = set()  # attempts reclaimed after expiry
        self.succeeded: dict[str, int] = {}  # task -> attempt whose success landed
        self.effects: dict[str, list[tuple[int, int]]] = {}  # task -> [(attempt, actor)]
        self._seen = 0

    def after_step(self, view: RunView) -> list[str]:
        """Account for each new event in order; the invariants they break."""
        broken: list[str] = []
        events: Sequence[Event] = view.events
        for event in events[self._seen :]:
            if isinstance(event, Write) and event.actor is not None:
                broken += self._write(event)
            elif isinstance(event, Effect):
                broken += self._effect(event)
            elif isinstance(event, Note) and self.outcomes:
                broken += self._note(event)
        self._seen = len(events)
        return broken

    def at_quiescence(self, view: RunView) -> list[str]:
        """Every task done exactly once, unless a crashed worker holds it or it was parked."""
        broken: list[str] = []
        items = view.store.snapshot()
        crashed = {a.index for a in view.actors if a.state is ActorState.CRASHED}
        for key, task in self.tasks.items():
            item = items.get(key)
            if item is None:
                broken.append(f"exactly-once: {task} is gone from the table")
                continue
            now = TaskView.of(item)
            if now.status == IN_PROGRESS:
                holder = self.owner.get((key, now.attempt))
                if holder not in crashed:
                    broken.append(
                        f"exactly-once: {task} left in_progress at attempt {now.attempt} by "
                        f"actor {holder}, which did not crash"
                    )
            elif now.status == IGNORED:
                if now.attempt < self.max_retry:
                    broken.append(
                        f"exactly-once: {task} parked as ignored after {now.attempt} attempts "
                        f"(max_retry {self.max_retry})"
                    )
            elif now.status != SUCCEEDED:
                if len(crashed) < len(view.actors):
                    broken.append(
                        f"exactly-once: {task} is still {now.status} at quiescence, though "
                        "a worker finished"
                    )
            else:
                attempt = self.succeeded.get(key)
                doers = [a for a, _ in self.effects.get(key, [])]
                if attempt is None or attempt not in doers:
                    broken.append(
                        f"exactly-once: {task} succeeded (attempt {attempt}) but that attempt "
                        f"never did the work (work done by attempts {doers or 'none'})"
                    )
        return broken

    # -- accounting ---------------------------------------------------------------------------

    def _write(self, write: Write) -> list[str]:
        broken = []
        actor = write.actor
        assert actor is not None
        for key, old in write.before.items():
            new = write.after.get(key)
            task = self.tasks.get(key, key)
            if old is None:
                continue  # created (by a worker with create=True): nothing owned yet
            if new is None:
                broken.append(f"fencing: actor {actor} deleted {task}")
                continue
            before, after = TaskView.of(old), TaskView.of(new)
            label = f"actor {actor} {write.operation} on {task} ({before.status}->{after.status})"
            if after.attempt == before.attempt + 1:
                broken += self._acquisition(key, actor, before, write.now, label=label)
            elif after.attempt == before.attempt:
                holder = self.owner.get((key, before.attempt))
                if holder != actor and self._parks_expired(before, after, write.now):
                    self.taken_over.add((key, before.attempt))
                elif holder != actor:
                    who = "nobody acquired" if holder is None else f"actor {holder} owns"
                    broken.append(
                        f"fencing: a stale write landed: {label} at attempt "
                        f"{before.attempt}, which {who}"
                    )
                if before.status == SUCCEEDED:
                    broken.append(f"fencing: a succeeded task changed: {label}")
                if after.status == SUCCEEDED:
                    self.succeeded[key] = after.attempt
            else:
                broken.append(f"fencing: {label} moved attempt {before.attempt} -> {after.attempt}")
        return broken

    @staticmethod
    def _parks_expired(before: TaskView, after: TaskView, now: datetime) -> bool:
        """An expired attempt ended by another worker: parked once its retries are used up."""
        expires = before.lease_expires_at
        return (
            before.status == IN_PROGRESS
            and after.status == IGNORED
            and expires is not None
            and expires <= now
        )

    def _acquisition(
        self, key: str, actor: int, before: TaskView, now: datetime, *, label: str
    ) -> list[str]:
        attempt = before.attempt + 1
        broken = []
        if before.status in (SUCCEEDED, IGNORED):
            broken.append(f"lease: {label}: attempt {attempt} started on a {before.status} task")
        elif before.status == IN_PROGRESS:
            expires = before.lease_expires_at
            if expires is not None and expires > now:
                holder = self.owner.get((key, before.attempt))
                broken.append(
                    f"lease: {label}: attempt {attempt} took the live lease of attempt "
                    f"{before.attempt} (actor {holder}, until {expires.isoformat()}; now "
                    f"{now.isoformat()})"
                )
            self.taken_over.add((key, before.attempt))
        self.owner[(key, attempt)] = actor
        return broken

    def _effect(self, effect: Effect) -> list[str]:
        key = next((k for k, t in self.tasks.items() if t == effect.subject), effect.subject)
        held = [n for (k, n), owner in self.owner.items() if k == key and owner == effect.actor]
        if not held:
            return [f"at-most-once: actor {effect.actor} did {effect.subject} holding no attempt"]
        attempt = max(held)
        broken = []
        for earlier, by in self.effects.get(key, []):
            first = min(earlier, attempt)
            if earlier == attempt:
                broken.append(
                    f"at-most-once: attempt {attempt} did {effect.subject} twice (actor {by})"
                )
            elif (key, first) not in self.taken_over:
                broken.append(
                    f"at-most-once: {effect.subject} done twice, by attempt {earlier} (actor "
                    f"{by}) and attempt {attempt} (actor {effect.actor}), though attempt "
                    f"{first} was never taken over after its lease expired"
                )
        self.effects.setdefault(key, []).append((attempt, effect.actor))
        return broken

    def _note(self, note: Note) -> list[str]:
        data = note.data
        key = next((k for k, t in self.tasks.items() if t == data.get("task")), None)
        if key is None:
            return []
        if data.get("outcome") == "stale":
            attempt = int(data["attempt"])
            superseded = any(k == key and n > attempt for k, n in self.owner)
            if not superseded:
                return [
                    f"outcomes: actor {note.actor} was told attempt {attempt} of {data['task']} "
                    "is stale, but no later attempt was ever acquired"
                ]
        if data.get("outcome") == "locked":
            held = [n for (k, n), o in self.owner.items() if k == key and o == note.actor]
            current = max((n for k, n in self.owner if k == key), default=0)
            if held and max(held) == current:
                return [
                    f"outcomes: actor {note.actor} was locked out of {data['task']} by its "
                    f"own attempt {current}"
                ]
        return []
