"""What the dag dispatcher guarantees, checked from the store and the executions started.

Why from the store and the side-effect log: the checker must not trust the code it
checks. It reads the run's items as the store holds them after each step (the run item,
the task items, the ready items), the executions the runtime started (each new
execution name is an actor's side effect: the task runs), and the coordinator answers
the actors noted. The invariants (modules/dag-aggregate/README.md, "Concurrency and
crashes"):

``once``
    Each task runs once: one execution per task, never a second name for it.
``order``
    A task runs after its parents: when its execution starts, every parent's task item
    says succeeded.
``limit``
    ``active <= max_concurrency``, after every write, and a task's execution starts
    only while the task holds a slot (so no more than N run).
``slot``
    A slot is held only by a pending task: a write that gives a task a slot finds the
    task pending at that attempt with all its parents done; at the end no slot is left.
``queue``
    The queue is exact once the run is open: each ready item names a task that is pending
    at that attempt, waits on no parent and holds no slot (a ready item for a task that
    ran is the 5,000-task run's "stale ready item"), and ``ready_count`` is the number of
    ready items.
``ends``
    The run ends: once no actor can move, the run item is SUCCEEDED (FAILED when a task
    failed), nothing is active or queued, every task that can run ran, and the token
    the coordinator's Run state waits on was answered with that outcome. Not checked
    when a call and its retry both crashed (Step Functions would retry again).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sfn_patterns.dag_aggregate.runtime.store import (
    PENDING,
    READY_PREFIX,
    RUN_FAILED,
    RUN_SK,
    RUN_SUCCEEDED,
    STARTING,
    SUCCEEDED,
    TASK_PREFIX,
)
from sfn_patterns_localstack.interleavings.protocol import Checker, RunView
from sfn_patterns_localstack.interleavings.scheduler import ActorState, Effect, Note, Write
from sfn_patterns_localstack.interleavings.store import Snapshot


class DagChecker(Checker):
    """The dag dispatcher's invariants over one run.

    Args:
        run_id: The run.
        parents: Each task's parents (the plan's, every task selected).
        max_concurrency: The runtime's N.
        started: Tasks whose execution setup already started.
        failing: Tasks whose execution reports a failure.
        waited: Returns the token the coordinator's Run state waits on at the end.
        retried: Actor index -> the actor that retries it after a crash (Step Functions'
            Retry); the others (a superseded start, a duplicated report) are not retried.

    """

    def __init__(
        self,
        run_id: str,
        parents: Mapping[str, frozenset[str]],
        max_concurrency: int,
        *,
        started: Sequence[str] = (),
        failing: frozenset[str] = frozenset(),
        waited: Callable[[], str | None] | None = None,
        retried: Mapping[int, int] | None = None,
    ) -> None:
        self.run_id = run_id
        self.parents = parents
        self.max_concurrency = max_concurrency
        self.failing = failing
        self.waited = waited
        self.retried = dict(retried or {})
        self.runs: dict[str, int] = dict.fromkeys(parents, 0)
        for task in started:
            self.runs[task] += 1
        self.seen = 0

    def key(self, sk: str) -> str:
        """The snapshot name of one of the run's items."""
        return _item(self.run_id, sk)

    # -- after every step ---------------------------------------------------------------------

    def after_step(self, view: RunView) -> list[str]:
        """Every invariant the new events may break (the store read once if they wrote)."""
        new = view.events[self.seen :]
        self.seen = len(view.events)
        if not new:
            return []
        items = view.store.snapshot()
        broken: list[str] = []
        for event in new:
            if isinstance(event, Effect):
                broken += self._started(event, items)
            elif isinstance(event, Write):
                broken += self._slots_given(event, items)
        if any(isinstance(event, Write) for event in new):
            broken += self._state(items)
        return broken

    def _started(self, effect: Effect, items: Snapshot) -> list[str]:
        task = effect.subject
        self.runs[task] = self.runs.get(task, 0) + 1
        broken = []
        if self.runs[task] > 1:
            broken.append(
                f"once: actor {effect.actor} started {task} again (run {self.runs[task]})"
            )
        run = items.get(self.key(RUN_SK)) or {}
        if task not in _active(run):
            broken.append(
                f"limit: actor {effect.actor} started {task} without a slot "
                f"(active: {', '.join(sorted(_active(run))) or 'none'})"
            )
        for parent in sorted(self.parents.get(task, ())):
            status = (items.get(self.key(TASK_PREFIX + parent)) or {}).get("status")
            if status != SUCCEEDED:
                broken.append(
                    f"order: actor {effect.actor} started {task} while its parent {parent} "
                    f"is {status}"
                )
        return broken

    def _slots_given(self, write: Write, items: Snapshot) -> list[str]:
        """A slot given to a task must find it pending, its parents done, at that attempt.

        The task item is read from the store after the step: a step sends one request,
        so that is the item as the write found it.
        """
        run = self.key(RUN_SK)
        if write.after.get(run) is None:
            return []
        before, after = _active(write.before.get(run)), _active(write.after[run])
        broken = []
        for task, attempt in sorted(after.items()):
            if before.get(task) != attempt:
                item = items.get(self.key(TASK_PREFIX + task)) or {}
                broken += self._held_by_pending(task, attempt, item, f"actor {write.actor}")
        return broken

    @staticmethod
    def _held_by_pending(task: str, attempt: int, item: Mapping[str, Any], who: str) -> list[str]:
        status, current = item.get("status"), int(item.get("attempt") or 0)
        if status != PENDING or current != attempt or item.get("waiting_on"):
            return [
                f"slot: {who} gave {task} a slot (attempt {attempt}) while its task item is "
                f"{status} at attempt {current}, waiting on {sorted(item.get('waiting_on') or [])}"
            ]
        return []

    def _state(self, items: Snapshot) -> list[str]:
        run = items.get(self.key(RUN_SK))
        if run is None:
            return []
        active = _active(run)
        broken = []
        if len(active) > self.max_concurrency:
            broken.append(
                f"limit: {len(active)} tasks hold slots ({', '.join(sorted(active))}), "
                f"max_concurrency {self.max_concurrency}"
            )
        if run.get("status") == STARTING:
            return broken  # the start writes the ready items, then opens the run with their count
        ready = _ready(items, self.run_id)
        count = int(run.get("ready_count") or 0)
        if count != len(ready):
            broken.append(
                f"queue: ready_count is {count} but {len(ready)} ready items are queued "
                f"({', '.join(sorted(ready)) or 'none'})"
            )
        for task, attempt in sorted(ready.items()):
            item = items.get(self.key(TASK_PREFIX + task)) or {}
            status, current = item.get("status"), int(item.get("attempt") or 0)
            if status != PENDING or current != attempt:
                broken.append(
                    f"queue: a ready item queues {task} (attempt {attempt}), which is "
                    f"{status} at attempt {current}: a stale ready item"
                )
            elif item.get("waiting_on"):
                broken.append(
                    f"queue: {task} is queued while waiting on {sorted(item['waiting_on'])}"
                )
            elif task in active:
                broken.append(f"queue: {task} is queued while it holds a slot")
        return broken

    # -- at the end ---------------------------------------------------------------------------

    def at_quiescence(self, view: RunView) -> list[str]:
        """The run ended, cleanly, and the coordinator was told (unless a crash went unretried)."""
        crashed = {a.index for a in view.actors if a.state is ActorState.CRASHED}
        if any(first in crashed and retry in crashed for first, retry in self.retried.items()):
            return []  # a call and its retry both died: nothing promises the run goes on
        items = view.store.snapshot()
        run = items.get(self.key(RUN_SK)) or {}
        expected = RUN_FAILED if self.failing else RUN_SUCCEEDED
        broken = []
        if run.get("status") != expected:
            broken.append(f"ends: the run is {run.get('status')}, not {expected}")
        active = _active(run)
        if active:
            held = ", ".join(f"{t} ({self._status(items, t)})" for t in sorted(active))
            broken.append(f"ends: slots still held by {held}")
        ready = _ready(items, self.run_id)
        if ready:
            queued = ", ".join(f"{t} ({self._status(items, t)})" for t in sorted(ready))
            broken.append(f"ends: ready items left for {queued}")
        for task, runs in sorted(self.runs.items()):
            if runs == 0 and not self._skipped(task):
                broken.append(f"ends: {task} never ran ({self._status(items, task)})")
        waited = self.waited() if self.waited is not None else None
        answers = [
            (e.data["token"], e.data["answer"])
            for e in view.events
            if isinstance(e, Note) and "answer" in e.data
        ]
        outcome = "failure" if self.failing else "success"
        if waited is not None and (waited, outcome) not in answers:
            told = ", ".join(f"{t}: {a}" for t, a in answers) or "none"
            broken.append(
                f"ends: the coordinator waits on {waited}, never answered {outcome} "
                f"(answers: {told})"
            )
        return broken

    def _skipped(self, task: str) -> bool:
        """Whether ``task`` never runs by design: an ancestor's execution failed."""
        todo, seen = list(self.parents.get(task, ())), set()
        while todo:
            parent = todo.pop()
            if parent in self.failing:
                return True
            if parent not in seen:
                seen.add(parent)
                todo += self.parents.get(parent, ())
        return False

    def _status(self, items: Snapshot, task: str) -> str:
        item = items.get(self.key(TASK_PREFIX + task)) or {}
        return f"{item.get('status')} at attempt {item.get('attempt')}"


def _item(run_id: str, sk: str) -> str:
    """How a snapshot names an item of the runs table (``<pk>/<sk>``)."""
    return f"{run_id}/{sk}"


def _active(run: Mapping[str, Any] | None) -> dict[str, int]:
    return {task: int(attempt) for task, attempt in ((run or {}).get("active") or {}).items()}


def _ready(items: Snapshot, run_id: str) -> dict[str, int]:
    """Task -> attempt of the run's ready items."""
    prefix = _item(run_id, READY_PREFIX)
    return {
        str(item["task"]): int(item.get("attempt") or 0)
        for name, item in items.items()
        if name.startswith(prefix)
    }
