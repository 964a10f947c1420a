"""The dag-aggregate dispatcher (``sfn_patterns.dag_aggregate.runtime``) as a protocol.

Why this shape: the dependency strategy's promises are about the runtime Lambda's
concurrent callers (claim, report, replayed report, coordinator start and takeover),
so each actor is one such call running the real ``dispatch.Scheduler`` and ``RunStore``
on its own DynamoDB client (:mod:`.actors`), against the runs table's real layout
(``pk`` = run id, ``sk`` = ``run`` | ``task#<name>`` | ``ready#<rank>#<name>``). The
DAGs are small (3-4 tasks) so that every interleaving of a few steps can be run.

How a run begins (``--dag-start``):

* ``setup`` (default): the coordinator ``c1`` started the run before the explored part
  (the real ``start``, in setup): the roots hold their slots and their executions run;
* ``actor``: ``c1``'s start is an actor, racing nothing but its own tasks' reports;
* ``retried``: ``c1``'s start is two actors, the first attempt and the one Step Functions
  sent when it took the first for failed (two tokens; the Run state waits on the second);
* ``takeover``: as ``setup``, then ``c1`` stopped, and a second coordinator ``c2`` with
  the same run id adopts the run while the tasks report.

Time: the runtime's ``time.time()`` (a claim's age, ``LAUNCH_GRACE``) and its timestamps
read the run's fake clock, and its random choices (the spread after a lost claim) come
from a generator seeded per run; a tick is ``LAUNCH_GRACE`` and a second, so one tick
makes an unlaunched claim old enough for any dispatcher to start it.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from sfn_patterns import clients
from sfn_patterns.dag_aggregate.runtime import dispatch
from sfn_patterns.dag_aggregate.runtime import store as runtime_store
from sfn_patterns.dag_aggregate.runtime.dispatch import Plan, Scheduler, StartRequest
from sfn_patterns.dag_aggregate.runtime.store import READY_PREFIX, RUN_SK, TASK_PREFIX, RunStore
from sfn_patterns_localstack.interleavings.clock import FakeClock, patched
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.protocol import Checker, Mutant, Protocol, all_of
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate.actors import (
    Launcher,
    Redelivery,
    Report,
    Start,
    StepFunctions,
)
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate.invariants import DagChecker
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate.mutants import MUTANTS
from sfn_patterns_localstack.interleavings.scheduler import Body, Event, Write
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST

RUN_ID = "r1"
EXECUTION_PREFIX = "arn:aws:states:us-east-1:123456789012:execution:dag:"

#: The DAGs, by name: each task's parents.
SHAPES: dict[str, dict[str, frozenset[str]]] = {
    # two roots that both feed one task: the last parent to succeed queues it
    "join": {"a": frozenset(), "b": frozenset(), "c": frozenset({"a", "b"})},
    # one root, two branches that race for the slots, joined again
    "diamond": {
        "a": frozenset(),
        "b": frozenset({"a"}),
        "c": frozenset({"a"}),
        "d": frozenset({"b", "c"}),
    },
    "chain": {"a": frozenset(), "b": frozenset({"a"}), "c": frozenset({"b"})},
}
STARTS = ("setup", "actor", "retried", "takeover")


@dataclass(frozen=True)
class Scenario:
    """One configuration of a run.

    Attributes:
        shape: The DAG (:data:`SHAPES`).
        max_concurrency: The runtime's N.
        start: How the run begins (see the module docstring).
        duplicates: Tasks whose report is delivered twice, concurrently.
        failing: A task whose execution fails (its descendants are skipped).

    """

    shape: str = "join"
    max_concurrency: int = 2
    start: str = "setup"
    duplicates: tuple[str, ...] = ("a",)
    failing: str | None = None

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"--dag-shape {self.shape!r}: expected one of {', '.join(SHAPES)}")
        if self.start not in STARTS:
            raise ValueError(f"--dag-start {self.start!r}: expected one of {', '.join(STARTS)}")
        if self.max_concurrency < 1:
            raise ValueError("--dag-max-concurrency must be at least 1")
        tasks = SHAPES[self.shape]
        named = [("--dag-duplicates", t) for t in self.duplicates]
        named += [("--dag-failing", self.failing)] if self.failing else []
        for flag, task in named:
            if task not in tasks:
                raise ValueError(
                    f"{flag}: no task {task!r} in the {self.shape} DAG; its tasks are "
                    f"{', '.join(tasks)}"
                )


def plan_of(parents: dict[str, frozenset[str]]) -> Plan:
    """The plan document's runtime view: children, and priority = longest remaining path."""
    children = {task: sorted(c for c, ps in parents.items() if task in ps) for task in parents}
    remaining: dict[str, float] = {}

    def priority(task: str) -> float:
        if task not in remaining:
            remaining[task] = 1.0 + max((priority(c) for c in children[task]), default=0.0)
        return remaining[task]

    return Plan.from_document(
        {
            "tasks": {
                task: {
                    "parents": sorted(parents[task]),
                    "children": children[task],
                    "priority": priority(task),
                    "tags": [],
                    "task": {"sql": f"INSERT INTO agg.{task} SELECT 1"},
                }
                for task in parents
            }
        }
    )


class DagAggregate(Protocol):
    """Starts and task reports racing on one run of the dependency strategy."""

    name = "dag-aggregate"
    table_name = "interleavings-dag-runs"
    hash_key = "pk"
    range_key = "sk"

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.parents = SHAPES[self.scenario.shape]
        self.plan = plan_of(self.parents)
        self._clients: dict[int, Any] = {}
        self._clock: FakeClock | None = None
        self._random = random.Random(0)
        self._initial = StepFunctions()
        self._sfn = StepFunctions()

    @property
    def tick(self) -> timedelta:
        """Past the launch grace: an unlaunched claim is anybody's to start after one tick."""
        return timedelta(seconds=dispatch.LAUNCH_GRACE + 1)

    # -- the runtime, as the Lambda builds it ---------------------------------------------------

    def _client(self, key: int | str, gateway: Gateway) -> Any:
        """A DynamoDB client per actor (a Lambda container's), built once and kept."""
        client = self._clients.get(key)
        if client is None:
            client = clients.client(
                "dynamodb",
                region_name=self.region,
                endpoint_url=f"http://{key}.interleavings.invalid"
                if key != "setup"
                else RUNTIME_HOST,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            )
            self._clients[key] = client
        gateway.attach(client)
        return client

    def _runtime(self, client: Any, launcher: Launcher) -> Scheduler:
        """``handler.scheduler_from_env``'s Scheduler (no run documents: no S3 here)."""
        return Scheduler(
            store=RunStore(client, self.table_name),
            plan=self.plan,
            max_concurrency=self.scenario.max_concurrency,
            launcher=launcher,
            clock=self._now_iso,
            pause=_sleep,
        )

    def _now_iso(self) -> str:
        assert self._clock is not None
        return self._clock.now.isoformat(timespec="milliseconds")

    def _execution(self, name: str) -> str:
        return EXECUTION_PREFIX + name

    # -- Protocol -------------------------------------------------------------------------------

    def setup(self, gateway: Gateway) -> None:
        """The runs table (dependency.tf's layout); with ``setup``/``takeover``, the run opened."""
        client = self._client("setup", gateway)
        client.create_table(
            TableName=self.table_name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        )
        initial = StepFunctions()
        if self.scenario.start in ("setup", "takeover"):
            c1 = self._execution("c1")
            initial.running.add(c1)
            initial.waited[c1] = "c1-token-1"
            runtime = self._runtime(client, Launcher(initial, None))
            runtime.start(
                StartRequest.from_event(
                    {"execution": c1, "token": "c1-token-1", "input": {"run_id": RUN_ID}}
                )
            )
            if self.scenario.start == "takeover":
                initial.running.discard(c1)  # stopped; its tasks still run and report
        self._initial = initial

    def actors(self, gateway: Gateway) -> list[tuple[str, Body]]:
        """Starters, one report per task (two for duplicates), and the retries of crashes.

        Every call Step Functions would retry after a crash gets a retry actor: the start
        it waits on and each task's report (a superseded start attempt has none).
        """
        self._random.seed(0)
        sfn = self._sfn = self._initial.copy()
        calls = self._calls()
        bodies: list[tuple[str, Body]] = []
        for index, (name, what, _) in enumerate(calls):
            bodies.append((name, self._body(what, self._runtime_for(index, gateway), sfn)))
        for index, (name, what, retried) in enumerate(calls):
            if retried:
                runtime = self._runtime_for(len(bodies), gateway)
                again = self._body(what, runtime, sfn, retry=True)
                bodies.append((f"{name} (retry)", Redelivery(index, again)))
        return bodies

    def _calls(self) -> list[tuple[str, Any, bool]]:
        """(name, what it does, whether a crash of it is retried) for each first call."""
        calls: list[tuple[str, Any, bool]] = []
        start = self.scenario.start
        if start == "actor":
            calls.append(("start c1", ("c1", 0, True), True))
        elif start == "retried":
            calls.append(("start c1, first attempt", ("c1", 0, False), False))
            calls.append(("start c1, its retry", ("c1", 1, True), True))
        elif start == "takeover":
            calls.append(("start c2", ("c2", 0, True), True))
        calls += [(f"report {task}", task, True) for task in self.parents]
        calls += [(f"report {task} again", task, False) for task in self.scenario.duplicates]
        return calls

    def _runtime_for(self, index: int, gateway: Gateway) -> Any:
        client = self._client(index, gateway)
        return lambda ctx, launcher: self._runtime(client, launcher)

    def _body(self, what: Any, runtime: Any, sfn: StepFunctions, *, retry: bool = False) -> Any:
        if isinstance(what, tuple):
            execution, attempt, waited = what
            attempt += retry  # Step Functions' retry of a crashed attempt: the next one
            token = f"{execution}-token-{attempt + 1}"
            arn = self._execution(execution)
            return Start(runtime, sfn, RUN_ID, arn, token, waited, attempt)
        report = Report(runtime, sfn, RUN_ID, what, ok=what != self.scenario.failing)
        return report.deliver if retry else report

    def checker(self) -> Checker:
        """The dispatcher's invariants (:mod:`.invariants`)."""
        calls = self._calls()
        retried = [index for index, (_, _, again) in enumerate(calls) if again]
        sfn = self._sfn
        return DagChecker(
            RUN_ID,
            self.parents,
            self.scenario.max_concurrency,
            started=[task for task, _ in self._initial.executions.values()],
            failing=frozenset([self.scenario.failing] if self.scenario.failing else []),
            waited=lambda: _waited(sfn, self.scenario.start),
            retried={index: len(calls) + n for n, index in enumerate(retried)},
        )

    @contextlib.contextmanager
    def _runtime_time(self, clock: FakeClock) -> Iterator[None]:
        self._clock = clock

        def epoch() -> float:
            return clock.now.timestamp()

        fake_time = types.SimpleNamespace(time=epoch, sleep=_sleep)
        with all_of(
            patched(dispatch, "time", fake_time),
            patched(runtime_store, "time", fake_time),
            patched(dispatch, "random", self._random),
        ):
            yield

    def runtime_clock(self, clock: FakeClock) -> contextlib.AbstractContextManager[Any]:
        """The runtime's ``time.time()`` and timestamps on ``clock``; its random choices seeded."""
        return self._runtime_time(clock)

    def mutants(self) -> dict[str, Mutant]:
        """See :mod:`.mutants`."""
        return MUTANTS

    def describe_event(self, event: Event) -> str | None:
        """Writes as the run item's slots and queue, and task status changes."""
        if not isinstance(event, Write):
            return None
        parts = []
        for key, old in event.before.items():
            new = event.after.get(key)
            sk = key.split("/", 1)[-1]
            if sk == RUN_SK:
                parts.append(_run_change(old, new))
            elif sk.startswith(READY_PREFIX):
                task = sk.rsplit("#", 1)[-1]
                parts.append(f"ready {task} {'queued' if new is not None else 'dequeued'}")
            elif sk.startswith(TASK_PREFIX) and new is not None:
                task = sk[len(TASK_PREFIX) :]
                was = "-" if old is None else f"{old.get('status')}"
                waiting = sorted(new.get("waiting_on") or [])
                parts.append(
                    f"{task}: {was}->{new.get('status')} attempt {new.get('attempt')}"
                    + (f" waiting on {waiting}" if waiting else "")
                )
        who = "setup" if event.actor is None else f"actor {event.actor}"
        return f"{who} {event.operation} landed: {'; '.join(parts)}"

    # -- command line -------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The scenario's options (``--dag-*``; used with ``--protocol dag-aggregate``)."""
        default = Scenario()
        group = parser.add_argument_group("dag-aggregate scenario")
        group.add_argument(
            "--dag-shape", choices=sorted(SHAPES), default=default.shape, help="the DAG"
        )
        group.add_argument(
            "--dag-max-concurrency",
            type=int,
            default=default.max_concurrency,
            help=f"the runtime's max_concurrency (default {default.max_concurrency})",
        )
        group.add_argument(
            "--dag-start", choices=STARTS, default=default.start, help="how the run begins"
        )
        group.add_argument(
            "--dag-duplicates",
            default=",".join(default.duplicates),
            help="tasks whose report is delivered twice, comma-separated ('' for none)",
        )
        group.add_argument("--dag-failing", default=None, help="a task whose execution fails")

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> DagAggregate:
        """The protocol configured by parsed options."""
        return cls(
            Scenario(
                shape=args.dag_shape,
                max_concurrency=args.dag_max_concurrency,
                start=args.dag_start,
                duplicates=tuple(t for t in args.dag_duplicates.split(",") if t),
                failing=args.dag_failing or None,
            )
        )

    def arguments(self) -> list[str]:
        """The options that configure this instance (for a replay command)."""
        words: list[str] = []
        default = Scenario()
        for item in fields(Scenario):
            value = getattr(self.scenario, item.name)
            if value == getattr(default, item.name):
                continue
            flag = "--dag-" + item.name.replace("_", "-")
            words += [flag, ",".join(value) if isinstance(value, tuple) else str(value)]
        return words


def _sleep(seconds: float) -> None:
    """``time.sleep`` looked up when called: instant in actor threads (:mod:`...clock`)."""
    time.sleep(seconds)


def _waited(sfn: StepFunctions, start: str) -> str | None:
    """The token the coordinator that owns the run waits on (the newest coordinator's)."""
    execution = EXECUTION_PREFIX + ("c2" if start == "takeover" else "c1")
    return sfn.waited.get(execution)


def _run_change(old: Any, new: Any) -> str:
    if new is None:
        return "run item deleted"
    active = ",".join(sorted(new.get("active") or {})) or "-"
    parts = [
        f"run {new.get('status')}",
        f"active [{active}]",
        f"ready_count {new.get('ready_count')}",
    ]
    if old is None or old.get("token") != new.get("token"):
        parts.append(f"token {new.get('token')}")
    return " ".join(parts)
