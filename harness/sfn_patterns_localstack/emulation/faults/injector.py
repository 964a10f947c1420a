"""Decides which faults fire for a call, reproducibly, and records each one.

One ``random.Random(f"{seed}:{fault index}")`` per fault: a fault's decisions depend
only on the seed and on how many calls it matched before, not on the other faults, so
adding a fault to a plan does not reshuffle the decisions of the others, and the same
plan with the same sequence of calls injects the same faults. (Concurrent calls reach
the injector in an order the run decides; the log records each decision's call number
so a replay can be compared call by call.)

The module holds one :data:`INJECTOR` for the LocalStack process: the gateway handler,
the route, the SQS and EventBridge patches and the Lambda executor's hook share it.
"""

from __future__ import annotations

import datetime
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sfn_patterns_localstack.emulation.faults.journal import Journal
from sfn_patterns_localstack.emulation.faults.plan import Fault, Plan


@dataclass(frozen=True)
class Call:
    """What the injector knows of a call: enough to match a fault and to log it."""

    service: str
    operation: str
    caller_role: str | None = None
    caller: str | None = None
    resource: str | None = None


class Injector:
    """The loaded plan, its per-fault random generators and counters, and the journal."""

    def __init__(
        self,
        journal: Journal | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.journal = journal or Journal()
        self._clock = clock
        self._lock = threading.Lock()
        # Read without the lock on every request: the "no plan" fast path.
        self.plan: Plan | None = None
        self.stages: frozenset[str] = frozenset()
        self.wants_caller = False
        self.loaded_at = 0.0
        self.loaded_wall = ""
        self._rngs: list[random.Random] = []
        self._counts: list[int] = []

    def set_plan(self, plan: Plan) -> None:
        """Load a plan: its clock (for time windows), generators and counters start now."""
        with self._lock:
            self._rngs = [random.Random(f"{plan.seed}:{fault.index}") for fault in plan.faults]
            self._counts = [0] * len(plan.faults)
            self.loaded_at = self._clock()
            self.loaded_wall = _now_iso()
            self.journal.reset()
            self.stages = frozenset(fault.stage for fault in plan.faults)
            self.wants_caller = any(fault.caller_role for fault in plan.faults)
            self.plan = plan

    def clear(self) -> None:
        """Unload the plan (the journal is kept, so a test can read it after clearing)."""
        with self._lock:
            self.plan = None
            self.stages = frozenset()
            self.wants_caller = False

    def active(self, stage: str) -> bool:
        """Whether the loaded plan has any fault acting at ``stage`` (cheap, lock-free)."""
        return self.plan is not None and stage in self.stages

    def elapsed(self) -> float:
        """Seconds since the plan was loaded."""
        return self._clock() - self.loaded_at

    def decide(self, stage: str, call: Call) -> list[Fault]:
        """The faults injected into ``call`` at ``stage``, in plan order, each one logged.

        Every fault of the stage that matches the call, in its time window, counts it
        (so ``first`` means the first n matching calls, whatever other faults did to
        them); past its ``first`` it does not fire; with a ``probability`` it draws
        from its own generator. Of the faults that fire, every latency is injected and
        the first fault of any other kind decides the call (a call fails one way); the
        others are not injected, and not logged.
        """
        if self.plan is None:  # the lock-free fast path
            return []
        injected: list[Fault] = []
        with self._lock:
            # The plan loaded now decides, read under the lock: a plan replaced between
            # the fast path and here (a test adding a second fault while this call is
            # on its way) still has this call's fault, and a cleared one has none.
            plan = self.plan
            if plan is None:
                return []
            elapsed = self._clock() - self.loaded_at
            decided = False
            for fault in plan.faults:
                if fault.stage != stage or not fault.matches(
                    call.service, call.operation, call.caller_role, call.resource
                ):
                    continue
                if not fault.in_window(elapsed):
                    continue
                self._counts[fault.index] += 1
                number = self._counts[fault.index]
                if fault.first is not None and number > fault.first:
                    continue
                if fault.probability is not None and (
                    self._rngs[fault.index].random() >= fault.probability
                ):
                    continue
                if fault.kind != "latency":
                    if decided:
                        continue
                    decided = True
                injected.append(fault)
                self._log(fault, call, elapsed, number)
        return injected

    def _log(self, fault: Fault, call: Call, elapsed: float, number: int) -> None:
        entry: dict[str, Any] = {
            "time": _now_iso(),
            "elapsed": round(elapsed, 3),
            "service": call.service,
            "operation": call.operation,
            "caller": call.caller,
            "resource": call.resource,
            "kind": fault.kind,
            "fault": fault.index,
            "call": number,
        }
        self.journal.record(entry)

    def describe(self) -> dict[str, Any]:
        """The state the route returns: the plan document, when it was loaded, the log."""
        plan = self.plan
        return {
            "plan": None if plan is None else plan.document,
            "loaded_at": self.loaded_wall if plan is not None else None,
            "log": self.journal.entries(),
        }


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


INJECTOR = Injector(Journal(os.environ.get("SFNP_FAULTS_LOG") or None))
