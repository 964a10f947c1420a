"""What the semaphore guarantees, checked from the store, the executions and the effect log.

Why from there: the checker must not trust the code it checks. It reads the lock item
and the queue table as stored (the lease attributes ``h_*``, the counters, the waiter and
pointer items), each execution's status in the Step Functions stand-in, and the effects
the holders recorded (entering and leaving their critical section); never the runtime's
own decoding of them (``LockState``, ``leases()``).

After every step (the invariant ``callback.py`` states among them):

``limit``
    At most ``limit`` executions hold a lease on the lock item.
``count``
    ``holder_count`` equals the number of leases: a count without a lease is a slot no
    one can give back (leaked for good), a lease without a count over-admits.
``waiting``
    ``waiting`` equals the number of waiter items, and each waiter has its pointer.
``free-slot``
    No slot is free while a waiter is queued (``waiting > 0`` implies ``holder_count >=
    limit``): only then can no wake-up be lost (modules/semaphore/README.md, "Why no
    wake-up is lost").
``lease``
    An execution in its critical section holds a lease, from the step it enters to the
    step it leaves (a stopped one only with ``count_stopped_critical``, as below).
``stopped``
    A stopped execution never enters its critical section.
``critical``
    At most ``limit`` critical sections run at once. A stopped holder's critical-section
    Lambda runs on after the stop (a Lambda invocation does not stop with its execution);
    it counts with ``count_stopped_critical``, until it returns or its task's
    ``TimeoutSeconds`` (``CRITICAL_TIMEOUT``, no shorter than the function's timeout)
    has passed since it entered. Both strategies keep a stopped holder's slot until
    then: the callback strategy on the lock item, the oldest-first gate by counting
    the ended holders whose history shows that task without its end.

With ``strategy = "oldest-first"`` there is no lock item (a slot is an execution that
runs): only ``critical`` and ``stopped`` apply.

At quiescence, after one more fault-free reconciler sweep (the README's "at worst one
reconciler period"):

``leak``
    No lease and no waiter item belongs to an execution that is no longer ``RUNNING``
    (a crashed holder's execution still runs: it keeps its slot or its place), and the
    per-step invariants above still hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.protocol import Checker, RunView
from sfn_patterns_localstack.interleavings.protocols.semaphore.actors import (
    CRITICAL_TIMEOUT,
    ENTER,
    EXIT,
    short,
)
from sfn_patterns_localstack.interleavings.scheduler import Effect
from sfn_patterns_localstack.interleavings.sfn import KEY_PREFIX, RUNNING, StepFunctions
from sfn_patterns_localstack.interleavings.store import Snapshot


@dataclass(frozen=True)
class LockView:
    """The semaphore as stored: counters, leases by execution, waiters, pointers."""

    count: int
    waiting: int
    leases: dict[str, str]  # execution ARN -> lease attribute
    waiters: dict[int, str]  # ticket -> execution ARN
    pointers: dict[str, int]  # execution ARN -> ticket

    def holders(self) -> str:
        """The holders' names, for messages."""
        return ", ".join(sorted(short(arn) for arn in self.leases)) or "none"


@dataclass(frozen=True)
class Layout:
    """Where the semaphore's items are in a snapshot (:meth:`~.store.MotoStore.snapshot`)."""

    lock_key: str
    queue_table: str
    limit: int

    @property
    def waiter_prefix(self) -> str:
        """Snapshot keys of waiter items: ``<queue table>:<lock key>#queue/<ticket>``."""
        return f"{self.queue_table}:{self.lock_key}#queue/"

    @property
    def pointer_prefix(self) -> str:
        """Snapshot keys of pointer items: ``<queue table>:<lock key>#waiter#<ARN>/0``."""
        return f"{self.queue_table}:{self.lock_key}#waiter#"

    def read(self, items: Snapshot) -> LockView:
        """The semaphore in ``items`` (a missing lock item reads as empty)."""
        lock = items.get(self.lock_key) or {}
        leases = {
            str(value["execution_arn"]): name
            for name, value in lock.items()
            if name.startswith("h_") and isinstance(value, Mapping) and "execution_arn" in value
        }
        waiters: dict[int, str] = {}
        pointers: dict[str, int] = {}
        for key, item in items.items():
            if key.startswith(self.waiter_prefix):
                waiters[int(item["ticket"])] = str(item["execution_arn"])
            elif key.startswith(self.pointer_prefix):
                arn = key[len(self.pointer_prefix) :].rsplit("/", 1)[0]
                pointers[arn] = int(item["queue_ticket"])
        return LockView(
            count=int(lock.get("holder_count", 0)),
            waiting=int(lock.get("waiting", 0)),
            leases=leases,
            waiters=waiters,
            pointers=pointers,
        )

    def describe_change(
        self, key: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> str:
        """One changed item, for traces."""
        if key == self.lock_key:
            a, b = self.read({key: old or {}}), self.read({key: new or {}})
            return (
                f"lock: holder_count {a.count}->{b.count}, waiting {a.waiting}->{b.waiting}, "
                f"holders [{a.holders()}] -> [{b.holders()}]"
            )
        if key.startswith(self.waiter_prefix):
            ticket = key[len(self.waiter_prefix) :]
            item = new or old or {}
            verb = "queued" if old is None else "dequeued" if new is None else "token renewed"
            return f"waiter {short(str(item.get('execution_arn')))} ticket {ticket} {verb}"
        if key.startswith(self.pointer_prefix):
            arn = key[len(self.pointer_prefix) :].rsplit("/", 1)[0]
            return f"pointer of {short(arn)} {'put' if old is None else 'deleted'}"
        if key.startswith(KEY_PREFIX):
            a, b = old or {}, new or {}
            tasks = {t: s for t, s in (b.get("tasks") or {}).items() if s != "open"}
            opened = [t for t in b.get("tasks") or {} if t not in (a.get("tasks") or {})]
            return (
                f"{short(key)}: {a.get('status')}->{b.get('status')}"
                + (f", task {', '.join(opened)} parked" if opened else "")
                + (f", tasks {tasks}" if tasks and tasks != a.get("tasks") else "")
            )
        return f"{key} changed"


def state_violations(layout: Layout, lock: LockView) -> list[str]:
    """The invariants of the stored state alone (limit, count, waiting, free-slot)."""
    broken = []
    if len(lock.leases) > layout.limit:
        broken.append(
            f"limit: {len(lock.leases)} executions hold a lease ({lock.holders()}), "
            f"limit {layout.limit}"
        )
    if lock.count != len(lock.leases):
        broken.append(
            f"count: holder_count is {lock.count} but {len(lock.leases)} leases are stored "
            f"({lock.holders()})"
        )
    if lock.waiting != len(lock.waiters):
        broken.append(
            f"waiting: waiting is {lock.waiting} but {len(lock.waiters)} waiter items are "
            f"stored ({sorted(short(a) for a in lock.waiters.values())})"
        )
    queued = {arn: ticket for ticket, arn in lock.waiters.items()}
    if queued != lock.pointers:
        broken.append(
            f"waiting: waiters {_named(queued)} and their pointers {_named(lock.pointers)} differ"
        )
    if lock.waiting > 0 and lock.count < layout.limit:
        broken.append(
            f"free-slot: {layout.limit - lock.count} slot(s) free while {lock.waiting} "
            f"waiter(s) are queued ({sorted(short(a) for a in lock.waiters.values())})"
        )
    return broken


def _named(tickets: Mapping[str, int]) -> dict[str, int]:
    return {short(arn): ticket for arn, ticket in sorted(tickets.items())}


@dataclass
class SemaphoreChecker(Checker):
    """The semaphore's invariants over one run.

    Args:
        layout: Where the items are, and the limit.
        executions: Actor index -> execution ARN, for the holder actors.
        count_stopped_critical: Count a stopped holder's running critical section.
        final_sweep: Runs one reconciler sweep at quiescence (None: none).
        slots: The strategy keeps slots on the lock item (callback): check them. Without
            (oldest-first), only ``critical`` and ``stopped`` apply.

    """

    layout: Layout
    executions: Mapping[int, str]
    count_stopped_critical: bool = False
    final_sweep: Callable[[FakeClock], None] | None = None
    slots: bool = True
    # Executions in their critical section, and when each entered it.
    inside: dict[str, datetime] = field(default_factory=dict)
    _seen: int = 0

    def after_step(self, view: RunView) -> list[str]:
        """The effects since the last step, then the stored state."""
        assert view.sfn is not None
        lock = self.layout.read(view.store.snapshot())
        broken: list[str] = []
        for event in view.events[self._seen :]:
            if isinstance(event, Effect) and event.actor in self.executions:
                broken += self._effect(event, view.sfn)
        self._seen = len(view.events)
        if self.slots:
            broken += state_violations(self.layout, lock)
        running = [
            arn
            for arn, entered in sorted(self.inside.items())
            if view.sfn.status(arn) == RUNNING
            or (self.count_stopped_critical and view.clock.now < entered + CRITICAL_TIMEOUT)
        ]
        for arn in running if self.slots else []:
            if arn not in lock.leases:
                broken.append(
                    f"lease: {short(arn)} ({view.sfn.status(arn)}) is in its critical section "
                    f"without a lease (holders: {lock.holders()})"
                )
        if len(running) > self.layout.limit:
            stopped = [short(a) for a in running if view.sfn.status(a) != RUNNING]
            note = f"; still running after their stop: {stopped}" if stopped else ""
            broken.append(
                f"critical: {len(running)} critical sections run at once "
                f"({[short(a) for a in running]}), limit {self.layout.limit}{note}"
            )
        return broken

    def _effect(self, effect: Effect, sfn: StepFunctions) -> list[str]:
        arn = self.executions[effect.actor]
        if effect.subject == EXIT:
            self.inside.pop(arn, None)
            return []
        if effect.subject != ENTER:
            return []
        self.inside[arn] = effect.now
        broken = []
        status = sfn.status(arn)
        if status != RUNNING:
            broken.append(f"stopped: {short(arn)} entered its critical section while {status}")
        return broken

    def at_quiescence(self, view: RunView) -> list[str]:
        """After one more sweep: no slot or place kept by an ended execution, state sound."""
        assert view.sfn is not None
        if not self.slots:
            return []
        if self.final_sweep is not None:
            try:
                self.final_sweep(view.clock)
            except Exception as error:
                return [f"leak: the reconciler's sweep at quiescence raised {error!r}"]
        lock = self.layout.read(view.store.snapshot())
        broken = []
        for arn in sorted(lock.leases):
            status = view.sfn.status(arn)
            if status != RUNNING:
                broken.append(
                    f"leak: {short(arn)} ({status}) still holds a slot after the cleanup and "
                    "a reconciler sweep"
                )
        for ticket, arn in sorted(lock.waiters.items()):
            status = view.sfn.status(arn)
            if status != RUNNING:
                broken.append(
                    f"leak: {short(arn)} ({status}) is still queued (ticket {ticket}) after the "
                    "cleanup and a reconciler sweep"
                )
        return broken + [f"{v} (after the sweep)" for v in state_violations(self.layout, lock)]
