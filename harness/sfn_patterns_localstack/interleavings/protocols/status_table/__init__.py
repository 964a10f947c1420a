"""The status table (``sfn_patterns.status_table``) as a protocol for the explorer.

Why these actors: the protocol's promises are about workers racing for tasks (claim,
lease, reclaim of an expired lease, fencing of a stale attempt, retry), so each actor is
a worker running the real ``Tracker`` (:mod:`.workers`), with its own ``worker_id`` and its
own botocore client, as separate Lambda invocations would have. The table starts with the
scenario's tasks pending, created by the real ``Tracker.create_tasks``.

Time: every ``Tracker`` here is built without ``clock=``, as a Lambda builds it, so it
reads ``sfn_patterns.status_table.tracker.utc_now``; :meth:`StatusTable.runtime_clock`
monkeypatches that module-level function to the run's fake clock. A tick is one lease.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from sfn_patterns.status_table import Tracker, schema
from sfn_patterns.status_table import tracker as tracker_module
from sfn_patterns_localstack.interleavings.clock import FakeClock, patched
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.protocol import Checker, Mutant, Protocol
from sfn_patterns_localstack.interleavings.protocols.status_table.invariants import (
    StatusTableChecker,
    TaskView,
)
from sfn_patterns_localstack.interleavings.protocols.status_table.mutants import MUTANTS
from sfn_patterns_localstack.interleavings.protocols.status_table.workers import Worker
from sfn_patterns_localstack.interleavings.scheduler import Body, Event, Write
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST

USE_CASE = "orders"


@dataclass(frozen=True)
class Scenario:
    """One configuration: how many workers and tasks, and what the workers do.

    Attributes:
        workers: Worker actors (2-3 keep exhaustive search small).
        tasks: Tasks ``t1..tN``, all pending at the start.
        heartbeat: Each body extends its lease once before the work.
        failing_worker: This worker's first body fails (the failed -> retry path).
        max_retry: The trackers' ``max_retry``.
        lease_seconds: The trackers' lease (and the tick).
        outcomes: Also check what workers are told (see :mod:`.invariants`).

    """

    workers: int = 2
    tasks: int = 1
    heartbeat: bool = True
    failing_worker: int | None = None
    max_retry: int = 3
    lease_seconds: int = 60
    outcomes: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1 or self.tasks < 1:
            raise ValueError("need at least one worker and one task")
        if self.failing_worker is not None and not 0 <= self.failing_worker < self.workers:
            raise ValueError(f"no worker {self.failing_worker} among {self.workers}")


class StatusTable(Protocol):
    """Workers claiming, leasing, reclaiming and finishing tasks in one status table."""

    name = "status-table"
    table_name = "interleavings-status-table"
    hash_key = schema.TABLE_HASH_KEY

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.task_ids = [f"t{i + 1}" for i in range(self.scenario.tasks)]

    @property
    def tick(self) -> timedelta:
        """One lease: a tick expires every lease set before it."""
        return timedelta(seconds=self.scenario.lease_seconds)

    def _tracker(self, worker_id: str, host: str) -> Tracker:
        return Tracker(
            self.table_name,
            USE_CASE,
            max_retry=self.scenario.max_retry,
            lease_seconds=self.scenario.lease_seconds,
            region=self.region,
            host=host,
            worker_id=worker_id,
        )

    def setup(self, gateway: Gateway) -> None:
        """The table, and every task pending (through the real ``create_tasks``)."""
        tracker = self._tracker("setup", RUNTIME_HOST)
        gateway.attach(tracker.store._connection().client)
        tracker.create_table_if_not_exists()
        tracker.create_tasks(self.task_ids)

    def actors(self, gateway: Gateway) -> list[tuple[str, Body]]:
        """One worker per actor, each with its own client (a host per worker) and task order."""
        bodies: list[tuple[str, Body]] = []
        scenario = self.scenario
        for index in range(scenario.workers):
            name = f"w{index}"
            tracker = self._tracker(name, f"http://{name}.interleavings.invalid")
            gateway.attach(tracker.store._connection().client)
            shift = index % len(self.task_ids)
            order = self.task_ids[shift:] + self.task_ids[:shift]
            worker = Worker(
                tracker,
                order,
                heartbeat=scenario.heartbeat,
                fail_first=scenario.failing_worker == index,
            )
            bodies.append((name, worker))
        return bodies

    def checker(self) -> Checker:
        """The status table's invariants (:mod:`.invariants`)."""
        keys = {f"{USE_CASE}{schema.KEY_SEPARATOR}{t}": t for t in self.task_ids}
        return StatusTableChecker(keys, self.scenario.max_retry, outcomes=self.scenario.outcomes)

    def runtime_clock(self, clock: FakeClock) -> contextlib.AbstractContextManager[Any]:
        """Point ``tracker.utc_now`` (the default clock of every Tracker) at ``clock``."""
        return patched(tracker_module, "utc_now", clock)

    def mutants(self) -> dict[str, Mutant]:
        """See :mod:`.mutants`."""
        return MUTANTS

    def describe_event(self, event: Event) -> str | None:
        """Writes as status and attempt changes, with the lease; the rest generically."""
        if not isinstance(event, Write):
            return None
        parts = []
        for key, old in event.before.items():
            new = event.after.get(key)
            task = key.split(schema.KEY_SEPARATOR, 1)[-1]
            if old is None or new is None:
                parts.append(f"{task}: {'created' if old is None else 'deleted'}")
                continue
            a, b = TaskView.of(old), TaskView.of(new)
            lease = f", lease until {_hhmm(b.lease_expires_at)}" if b.lease_expires_at else ""
            parts.append(f"{task}: {a.status}->{b.status}, attempt {a.attempt}->{b.attempt}{lease}")
        who = "setup" if event.actor is None else f"actor {event.actor}"
        return f"{who} {event.operation} landed: {'; '.join(parts)}"

    # -- command line -------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The scenario's options."""
        default = Scenario()
        group = parser.add_argument_group("status-table scenario")
        group.add_argument(
            "--workers", type=int, default=default.workers, help="worker actors (default 2)"
        )
        group.add_argument(
            "--tasks", type=int, default=default.tasks, help="tasks t1..tN (default 1)"
        )
        group.add_argument(
            "--no-heartbeat",
            dest="heartbeat",
            action="store_false",
            help="bodies do not heartbeat before the work",
        )
        group.add_argument(
            "--failing-worker",
            type=int,
            default=None,
            metavar="N",
            help="worker N's first body fails (the retry path)",
        )
        group.add_argument(
            "--max-retry", type=int, default=default.max_retry, help="the trackers' max_retry"
        )
        group.add_argument(
            "--check-outcomes",
            dest="outcomes",
            action="store_true",
            help="also check that what workers are told agrees with the store",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> StatusTable:
        """The protocol for parsed options."""
        names = {f.name for f in fields(Scenario)}
        return cls(Scenario(**{k: v for k, v in vars(args).items() if k in names}))

    def arguments(self) -> list[str]:
        """The options that differ from the defaults, for a replay command."""
        default, scenario = Scenario(), self.scenario
        words: list[str] = []
        if scenario.workers != default.workers:
            words += ["--workers", str(scenario.workers)]
        if scenario.tasks != default.tasks:
            words += ["--tasks", str(scenario.tasks)]
        if not scenario.heartbeat:
            words.append("--no-heartbeat")
        if scenario.failing_worker is not None:
            words += ["--failing-worker", str(scenario.failing_worker)]
        if scenario.max_retry != default.max_retry:
            words += ["--max-retry", str(scenario.max_retry)]
        if scenario.outcomes:
            words.append("--check-outcomes")
        return words


def _hhmm(value: datetime | None) -> str:
    return value.strftime("%H:%M:%S") if value else "-"
