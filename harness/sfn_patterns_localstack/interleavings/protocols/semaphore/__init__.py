"""The semaphore (``sfn_patterns.semaphore``) as a protocol for the explorer.

Which strategies: those whose admission runs in Python. ``callback`` (the default): the
callback Lambda's ``CallbackSemaphore`` (acquire, park, release, hand-over, re-check),
with its event cleanup and reconciler (``reconciler.cleanup_handler``,
``reconcile_callback``). ``oldest-first``: the gate Lambda (``oldest_first.handler``, a
``ListExecutions`` check that also reads the histories of the executions that ended),
with the cleanup (which only stops a wrapper's target there).
The ``dynamodb`` strategy (with or without ``fairness = "fifo"``) acquires and releases
in ASL alone (``updateItem`` states in ``templates/semaphore/*.tftpl``): there is no
runtime code of its admission to run here, and a copy of its expressions would test the
copy; ``tests/semaphore/test_fifo_interleavings.py`` runs those rendered states on moto
instead. Its cleanup and sweep are Python (``reconciler.reconcile``, ``release_execution``,
``leave_queue``), but without the ASL acquire there are no holders or tickets for them
to act on here. The stand-in's ``ListExecutions`` is consistent, so the gate's documented
over-admission through a listing that lags is not explored.

The actors (:mod:`.actors`): the executions ``e0..eN-1`` of a holder state machine, all
``RUNNING`` from the start (``e0`` oldest), each acquiring, running its critical
section and releasing; a stopper that stops the scenario's executions at whatever step
the schedule puts it, each stop followed by its ``ABORTED`` event's cleanup; and the
reconciler's sweeps. The lock item starts as Terraform creates it (``holder_count``,
``next_ticket`` and ``waiting`` at 0), the queue table empty.

Time: each ``CallbackSemaphore`` is built with ``now=`` the run's clock, and the
reconciler is given the clock's time; the cleanup handler builds its semaphore with
``from_environment()``, which :meth:`Semaphore.runtime_clock` points at the stopper's
own (:func:`.actors.handler_semaphore`; and the handler's environment variables at the
protocol's tables). A tick
is one ``fallback_seconds``: a parked execution's task times out, and it re-checks.

At quiescence the checker runs one more reconciler sweep, fault-free and outside the
actors: the README promises an abort's slot back "within one event delivery, or at
worst one reconciler period", once none of the execution's tasks can still run; that
sweep is the first period's end after every task's deadline (:mod:`.invariants`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from sfn_patterns import clients
from sfn_patterns.semaphore import oldest_first, reconciler
from sfn_patterns.semaphore.callback import CallbackSemaphore
from sfn_patterns_localstack.interleavings.clock import FakeClock, patched
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.protocol import Checker, Mutant, Protocol
from sfn_patterns_localstack.interleavings.protocols.semaphore.actors import (
    Gate,
    HandlerClients,
    Holder,
    Reconciler,
    Stopper,
    handler_semaphore,
)
from sfn_patterns_localstack.interleavings.protocols.semaphore.invariants import (
    Layout,
    SemaphoreChecker,
)
from sfn_patterns_localstack.interleavings.protocols.semaphore.mutants import MUTANTS
from sfn_patterns_localstack.interleavings.scheduler import Body, Event, Write
from sfn_patterns_localstack.interleavings.sfn import StepFunctions
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST

LOCK_TABLE = "interleavings-semaphore"
QUEUE_TABLE = "interleavings-semaphore-queue"
LOCK_KEY = "semaphore"
STATE_MACHINE = "holder"
STRATEGIES = ("callback", "oldest-first")


@dataclass(frozen=True)
class Scenario:
    """One configuration of the semaphore and of who runs against it.

    Attributes:
        strategy: ``callback`` or ``oldest-first`` (the module's ``strategy``).
        limit: ``max_concurrency``.
        executions: Holder executions ``e0..eN-1`` (2-3 keep the search small).
        holding: The first this many executions hold a slot from the start (acquired by
            the real ``acquire`` in the setup; with oldest-first, admitted as the oldest
            RUNNING ones) and are in their critical section: a schedule reaches their
            release, or their stop inside it, in a few steps.
        queued: The next this many executions are parked in the queue from the start
            (queued by the real ``acquire`` in the setup, in order).
        stops: The executions the stopper stops, in order (empty: no stopper).
        deliveries: Deliveries of each stop's event to the cleanup (2: a duplicate).
        sweeps: Reconciler sweeps (0: no reconciler actor; oldest-first has none).
        fallback_seconds: The parked task's timeout, and the tick.
        acquire_timeout_seconds: A waiter fails after this long in the queue.
        lease_seconds: The lease stored with each holder (callback); with oldest-first,
            how long after its stop an ended holder may keep its slot.
        count_stopped_critical: Count a stopped holder's critical-section Lambda that is
            still running against the limit, until its task's timeout (off, the explorer
            looks past it).

    """

    strategy: str = "callback"
    limit: int = 1
    executions: int = 2
    holding: int = 0
    queued: int = 0
    stops: tuple[int, ...] = (1,)
    deliveries: int = 1
    sweeps: int = 1
    fallback_seconds: int = 300
    acquire_timeout_seconds: int = 3600
    lease_seconds: int = 3600
    count_stopped_critical: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"--semaphore-strategy {self.strategy!r}: one of {STRATEGIES}")
        if self.strategy != "callback" and self.queued:
            raise ValueError("--queued is for the callback strategy (oldest-first queues none)")
        if self.limit < 1 or self.executions < 1:
            raise ValueError("the semaphore needs a limit and an execution (at least 1 each)")
        bad = [s for s in self.stops if not 0 <= s < self.executions]
        if bad:
            raise ValueError(f"--stop names executions {bad}, not among e0..e{self.executions - 1}")
        if not 0 <= self.holding <= min(self.limit, self.executions):
            raise ValueError(
                f"--holding {self.holding}: at most the limit ({self.limit}) and the "
                f"executions ({self.executions}) can hold a slot at the start"
            )
        if self.queued < 0 or self.holding + self.queued > self.executions:
            raise ValueError(
                f"--holding {self.holding} and --queued {self.queued}: more than the "
                f"{self.executions} executions"
            )
        if self.queued and self.holding < self.limit:
            raise ValueError("--queued needs every slot held at the start (--holding = --limit)")
        if self.deliveries < 1:
            raise ValueError("--deliveries: each stop's event is delivered at least once")


class Semaphore(Protocol):
    """Executions acquiring, holding and releasing slots; stops, their cleanup, sweeps."""

    name = "semaphore"
    table_name = LOCK_TABLE
    more_tables = (QUEUE_TABLE,)
    hash_key = "pk"

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.layout = Layout(LOCK_KEY, QUEUE_TABLE, self.scenario.limit)
        self._clients: dict[tuple[str, str], Any] = {}
        self._world: StepFunctions | None = None
        self._sweeper: CallbackSemaphore | None = None
        self._parked: dict[int, str] = {}  # execution index -> token it is parked on at start

    @property
    def tick(self) -> timedelta:
        """One ``fallback_seconds``: every parked task set before it times out."""
        return timedelta(seconds=self.scenario.fallback_seconds)

    def execution_arn(self, index: int) -> str:
        """The ARN of execution ``e<index>``."""
        assert self._world is not None
        return self._world.execution_arn(self._world.state_machine_arn(STATE_MACHINE), f"e{index}")

    # -- clients and the runtime's objects ---------------------------------------------------

    def _client(self, service: str, owner: str, gateway: Gateway) -> Any:
        """A runtime client (``sfn_patterns.clients``), one per owner and service, kept across runs.

        Building a botocore client costs more CPU than a run's steps; attaching it again
        each run resets its retry quota, so runs still start equal.
        """
        client = self._clients.get((service, owner))
        if client is None:
            client = clients.client(service, region_name=self.region, endpoint_url=RUNTIME_HOST)
            self._clients[(service, owner)] = client
        gateway.attach(client)
        return client

    def _semaphore(self, owner: str, gateway: Gateway, clock: FakeClock) -> CallbackSemaphore:
        s = self.scenario
        return CallbackSemaphore(
            self._client("dynamodb", owner, gateway),
            self._client("stepfunctions", owner, gateway),
            table=LOCK_TABLE,
            queue_table=QUEUE_TABLE,
            lock_key=LOCK_KEY,
            limit=s.limit,
            lease_seconds=s.lease_seconds,
            acquire_timeout_seconds=s.acquire_timeout_seconds,
            now=clock,
        )

    # -- the protocol -------------------------------------------------------------------------

    def setup(self, gateway: Gateway) -> None:
        """Both tables, the lock item as Terraform creates it, and every execution RUNNING."""
        assert gateway.sfn is not None
        self._world = gateway.sfn
        dynamodb = self._client("dynamodb", "setup", gateway)
        for table, keys in ((LOCK_TABLE, ("pk",)), (QUEUE_TABLE, ("pk", "ticket"))):
            dynamodb.create_table(
                TableName=table,
                KeySchema=[
                    {"AttributeName": k, "KeyType": t}
                    for k, t in zip(keys, ("HASH", "RANGE"), strict=False)
                ],
                AttributeDefinitions=[
                    {"AttributeName": k, "AttributeType": "S" if k == "pk" else "N"} for k in keys
                ],
                BillingMode="PAY_PER_REQUEST",
            )
        zero = {"N": "0"}
        dynamodb.put_item(
            TableName=LOCK_TABLE,
            Item={
                "pk": {"S": LOCK_KEY},
                "holder_count": zero,
                "next_ticket": zero,
                "waiting": zero,
            },
        )
        machine = self._world.add_state_machine(STATE_MACHINE)
        for index in range(self.scenario.executions):
            self._world.start(machine, f"e{index}")
            self._world.clock.advance(timedelta(milliseconds=1))  # distinct start dates
        self._world.clock.reset()
        semaphore = self._semaphore("setup", gateway, self._world.clock)
        self._parked = {}
        s = self.scenario
        if s.strategy != "callback":  # oldest-first: the oldest RUNNING executions hold
            return
        for index in range(s.holding + s.queued):
            arn = self.execution_arn(index)
            token = self._world.park(arn, timeout=self.tick)
            outcome = semaphore.acquire(arn, token)["outcome"]
            expected = "admitted" if index < s.holding else "parked"
            if outcome != expected:
                raise RuntimeError(f"setup: {arn} was {outcome}, not {expected}")
            if index >= s.holding:
                self._parked[index] = token

    def actors(self, gateway: Gateway) -> list[tuple[str, Body]]:
        """The executions, then the stopper (if it stops any), then the reconciler (if any)."""
        world = gateway.sfn
        assert world is not None
        s = self.scenario
        clock = world.clock
        bodies: list[tuple[str, Body]] = []
        os.environ.update(self._environment())  # this run's, whichever explorer is inner
        for index in range(s.executions):
            name = f"e{index}"
            if s.strategy == "oldest-first":
                gate = Gate(
                    world,
                    self._client("stepfunctions", name, gateway),
                    self.execution_arn(index),
                    wait=self.tick,
                    acquire_timeout=timedelta(seconds=s.acquire_timeout_seconds),
                    inside=index < s.holding,
                )
                bodies.append((name, gate))
                continue
            semaphore = self._semaphore(name, gateway, clock)
            holder = Holder(
                world,
                semaphore,
                self.execution_arn(index),
                fallback=self.tick,
                lock_key=LOCK_KEY,
                inside=index < s.holding,
                parked_on=self._parked.get(index),
            )
            bodies.append((name, holder))
        if s.stops:
            cleanup = self._semaphore("cleanup", gateway, clock)
            stops = [self.execution_arn(i) for i in s.stops]
            sfn = self._client("stepfunctions", "stopper", gateway)
            bodies.append(("stop", Stopper(sfn, cleanup, stops, deliveries=s.deliveries)))
        if s.sweeps and s.strategy == "callback":  # oldest-first has no lock to reconcile
            sweep = self._semaphore("reconciler", gateway, clock)
            bodies.append(("reconciler", Reconciler(sweep, sweeps=s.sweeps)))
        self._sweeper = self._semaphore("final-sweep", gateway, clock)
        return bodies

    def checker(self) -> Checker:
        """The semaphore's invariants (:mod:`.invariants`); oldest-first keeps no slots."""
        executions = {i: self.execution_arn(i) for i in range(self.scenario.executions)}
        slots = self.scenario.strategy == "callback"
        return SemaphoreChecker(
            self.layout,
            executions,
            count_stopped_critical=self.scenario.count_stopped_critical,
            final_sweep=self._final_sweep if slots else None,
            slots=slots,
        )

    def _final_sweep(self, clock: FakeClock) -> None:
        """One more reconciler sweep after the run, outside the actors (no faults).

        It runs once every task of the run has ended or timed out: a stopped holder's slot
        is kept while its critical section's Lambda may still run, until the first sweep
        after that task's ``TimeoutSeconds``.
        """
        assert self._sweeper is not None and self._world is not None
        last = self._world.last_deadline()
        if last is not None and last > clock.now:
            clock.advance(last - clock.now)
        reconciler.reconcile_callback(self._sweeper, now=clock.now)

    def runtime_clock(self, clock: FakeClock) -> contextlib.AbstractContextManager[Any]:
        """The handlers' environment, the stopper's semaphore for the cleanup, the clock."""
        return self._handler_environment(clock)

    def _environment(self) -> dict[str, str]:
        """What the module sets in the handlers' environment, for this scenario."""
        return {
            "SEMAPHORE_TABLE": LOCK_TABLE,
            "SEMAPHORE_QUEUE_TABLE": QUEUE_TABLE,
            "SEMAPHORE_LOCK_KEY": LOCK_KEY,
            "SEMAPHORE_STRATEGY": self.scenario.strategy,
            "SEMAPHORE_LIMIT": str(self.scenario.limit),
            "STATE_MACHINE_ARNS": StepFunctions(FakeClock()).state_machine_arn(STATE_MACHINE),
            "SEMAPHORE_LEASE_SECONDS": str(self.scenario.lease_seconds),
        }

    @contextlib.contextmanager
    def _handler_environment(self, clock: FakeClock) -> Iterator[None]:
        """The environment while exploring (each run sets its own), then the original back."""
        values = self._environment()
        saved = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        try:
            with (
                patched(reconciler, "from_environment", handler_semaphore),
                patched(oldest_first, "clients", HandlerClients),
                patched(oldest_first, "utcnow", clock),
            ):
                yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def mutants(self) -> dict[str, Mutant]:
        """See :mod:`.mutants`."""
        return MUTANTS

    def describe_event(self, event: Event) -> str | None:
        """Writes as the lock item's counters and leases, the queue, and executions' statuses."""
        if not isinstance(event, Write):
            return None
        who = "setup" if event.actor is None else f"actor {event.actor}"
        parts = [
            self.layout.describe_change(key, old, event.after.get(key))
            for key, old in event.before.items()
        ]
        return f"{who} {event.operation} landed: {'; '.join(parts)}"

    # -- command line -------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The scenario's options."""
        default = Scenario()
        group = parser.add_argument_group("semaphore scenario")
        group.add_argument(
            "--semaphore-strategy",
            dest="semaphore_strategy",  # explore's --strategy is the search's
            choices=STRATEGIES,
            default=default.strategy,
            help="the module's strategy (default callback)",
        )
        group.add_argument("--limit", type=int, default=default.limit, help="max_concurrency")
        group.add_argument(
            "--executions",
            type=int,
            default=default.executions,
            help=f"holder executions e0..eN-1 (default {default.executions})",
        )
        group.add_argument(
            "--holding",
            type=int,
            default=default.holding,
            help="the first N executions hold a slot from the start, in their critical section",
        )
        group.add_argument(
            "--queued",
            type=int,
            default=default.queued,
            help="the next N executions are parked in the queue from the start",
        )
        group.add_argument(
            "--stop",
            dest="stops",
            type=_numbers,
            default=default.stops,
            metavar="N,M",
            help="executions the stopper stops, in order ('' for none; default "
            f"{','.join(map(str, default.stops))})",
        )
        group.add_argument(
            "--deliveries",
            type=int,
            default=default.deliveries,
            help="deliveries of each stop's event to the cleanup (2: duplicated)",
        )
        group.add_argument(
            "--sweeps", type=int, default=default.sweeps, help="reconciler sweeps (0: none)"
        )
        group.add_argument(
            "--acquire-timeout",
            dest="acquire_timeout_seconds",
            type=int,
            default=default.acquire_timeout_seconds,
            help="acquire_timeout_seconds (a tick is fallback_seconds, 300)",
        )
        group.add_argument(
            "--count-stopped-critical",
            dest="count_stopped_critical",
            action="store_true",
            help="count a stopped holder's still-running critical section against the limit",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Semaphore:
        """The protocol for parsed options."""
        names = {f.name for f in fields(Scenario)} - {"strategy"}
        values = {k: v for k, v in vars(args).items() if k in names}
        return cls(Scenario(strategy=args.semaphore_strategy, **values))

    def arguments(self) -> list[str]:
        """The options that differ from the defaults, for a replay command."""
        default, s = Scenario(), self.scenario
        words: list[str] = []
        for name, flag in (
            ("limit", "--limit"),
            ("executions", "--executions"),
            ("holding", "--holding"),
            ("queued", "--queued"),
            ("deliveries", "--deliveries"),
            ("sweeps", "--sweeps"),
            ("acquire_timeout_seconds", "--acquire-timeout"),
        ):
            if getattr(s, name) != getattr(default, name):
                words += [flag, str(getattr(s, name))]
        if s.strategy != default.strategy:
            words += ["--semaphore-strategy", s.strategy]
        if s.stops != default.stops:
            words += ["--stop", ",".join(map(str, s.stops))]
        if s.count_stopped_critical:
            words.append("--count-stopped-critical")
        return words


def _numbers(text: str) -> tuple[int, ...]:
    """``--stop 0,1``: execution numbers separated by commas (empty: none)."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: execution numbers separated by commas, e.g. 0,1"
        ) from None
