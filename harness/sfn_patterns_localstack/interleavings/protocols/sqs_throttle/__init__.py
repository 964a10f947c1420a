"""sqs-throttle (``sfn_patterns.sqs_throttle``) as a protocol for the explorer.

Why these actors: the throttle's promises (at most MAX executions running; each request
started once, none lost) are about starter runs racing and failing: two deployments'
schedules meeting at the run lease, a run stalled past its lease and taken over, a run
that crashed holding the lease, a message in flight, or a ledger entry without its
execution. So each actor is a starter's schedule (:mod:`.starters`) invoking the real
``Starter`` with its own clients, against one ledger table (moto's DynamoDB), one FIFO
queue (moto's SQS, :mod:`...sqs`) and the target's executions (the Step Functions
stand-in, :mod:`...sfn`). The queue starts with the scenario's requests, sent by the real
producer (``enqueue``).

Time: the starter takes ``clock=`` and ``sleep=`` (the Lambda handler leaves them to
``time``); here the clock is the run's fake clock and a sleep is a wait for it
(:meth:`~...scheduler.ActorContext.wait_until`). moto's SQS and the stand-in read the same
clock. A tick is one minute, the schedule's rate: every schedule fires again, a run
(``max_seconds_per_run``, by default 50 s) ends within it or is killed at its function's
timeout (that + 30 s), and it expires every run lease (``recheck_seconds`` 5 + 15 s). The target's executions each run two ticks, and its ``ListExecutions`` lags 90 s
behind, more than a tick, so an execution started at one schedule tick is still missing
from the list at the next: ``ListExecutions`` is eventually consistent without a
documented bound, and the throttle must not rely on one.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from sfn_patterns import clients as aws_clients
from sfn_patterns.sqs_throttle.ledger import LEDGER_KEY
from sfn_patterns.sqs_throttle.producer import enqueue
from sfn_patterns.sqs_throttle.starter import Config
from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.protocol import Checker, Mutant, Protocol
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle.invariants import (
    ThrottleChecker,
    describe_write,
)
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle.mutants import MUTANTS
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle.starters import Schedule
from sfn_patterns_localstack.interleavings.scheduler import Body, Event, Write
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST

QUEUE = "interleavings-throttle.fifo"
STATE_MACHINE = "throttled"
FUNCTION = "lambda:us-east-1:interleavings-throttle-starter"

TICK = timedelta(seconds=60)  # the schedule: rate(1 minute)
RECHECK_SECONDS = 5.0  # the run lease: 5 + 15 s, inside one tick
LAMBDA_MARGIN_SECONDS = 30  # the module's function timeout: max_seconds_per_run + 30 s
RUN_FOR = 2 * TICK  # each execution
LIST_LAG = timedelta(seconds=90)  # ListExecutions, behind by more than a tick
VISIBILITY_SECONDS = 120  # the module's default visibility timeout


@dataclass(frozen=True)
class Scenario:
    """One configuration: the starters, the requests, MAX.

    Attributes:
        starters: Starter actors (2-3 keep exhaustive search small).
        requests: Requests ``r1..rN`` queued at the start, each in its own message group.
        max_concurrent: MAX.
        duplicate: ``r1`` is also sent a second time, with another deduplication id.
        same_function: The actors are one function's schedule, each continuing it once
            the one before has ended (runs of one function take over its dead run's
            lease at once); otherwise each actor is another deployment's function.
        late: This starter's schedule first fires one tick after the others' (None: all
            fire at the start); deployments' schedules need not be aligned.
        max_seconds: The starters' ``max_seconds_per_run`` (the module's default, 50 s: a
            run ends within a tick); the function's timeout is this + 30 s.

    """

    starters: int = 2
    requests: int = 2
    max_concurrent: int = 1
    duplicate: bool = False
    same_function: bool = False
    late: int | None = None
    max_seconds: int = 50

    def __post_init__(self) -> None:
        if min(self.starters, self.requests, self.max_concurrent, self.max_seconds) < 1:
            raise ValueError("need at least one starter, one request, MAX >= 1, max_seconds >= 1")
        if self.late is not None and not 0 <= self.late < self.starters:
            raise ValueError(f"no starter {self.late} among {self.starters}")


class SqsThrottle(Protocol):
    """Starter schedules admitting queued requests under MAX, with a ledger and a run lease."""

    name = "sqs-throttle"
    table_name = "interleavings-throttle-ledger"
    hash_key = LEDGER_KEY
    queue_name = QUEUE

    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.request_ids = [f"r{i + 1}" for i in range(self.scenario.requests)]
        self.queue_url = ""
        self.state_machine_arn = ""
        self._clients: dict[str, tuple[Any, Any, Any]] = {}

    @property
    def tick(self) -> timedelta:
        """One minute: the schedule's rate, longer than a run lease, shorter than the list's lag."""
        return TICK

    def _client(self, service: str, host: str) -> Any:
        return aws_clients.client(service, region_name=self.region, endpoint_url=host)

    def setup(self, gateway: Gateway) -> None:
        """The ledger table, the queue with every request, the target, no execution yet."""
        assert gateway.sfn is not None and gateway.queue is not None
        self.state_machine_arn = gateway.sfn.add_state_machine(
            STATE_MACHINE, runs_for=RUN_FOR, list_lag=LIST_LAG
        )
        dynamodb = self._client("dynamodb", RUNTIME_HOST)
        gateway.attach(dynamodb)
        dynamodb.create_table(
            TableName=self.table_name,
            KeySchema=[{"AttributeName": LEDGER_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": LEDGER_KEY, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        sqs = self._client("sqs", RUNTIME_HOST)
        gateway.attach(sqs)
        self.queue_url = sqs.create_queue(
            QueueName=QUEUE,
            Attributes={"FifoQueue": "true", "VisibilityTimeout": str(VISIBILITY_SECONDS)},
        )["QueueUrl"]
        for request in self.request_ids:
            enqueue(
                self.queue_url,
                {"request": request},
                request_id=request,
                group_id=request,
                client=sqs,
            )
        if self.scenario.duplicate:
            first = self.request_ids[0]
            enqueue(
                self.queue_url,
                {"request": first},
                request_id=first,
                dedup_id=f"{first}-again",
                group_id=f"{first}-again",
                client=sqs,
            )

    def config(self, index: int) -> Config:
        """Actor ``index``'s starter configuration (the module's defaults, short runs)."""
        function = FUNCTION if self.scenario.same_function else f"{FUNCTION}-{index}"
        return Config(
            queue_url=self.queue_url,
            state_machine_arn=self.state_machine_arn,
            max_concurrent=self.scenario.max_concurrent,
            ledger_table=self.table_name,
            max_seconds=float(self.scenario.max_seconds),
            recheck_seconds=RECHECK_SECONDS,
            exclusive_group=function,
        )

    def actors(self, gateway: Gateway) -> list[tuple[str, Body]]:
        """One schedule per actor, each with its own three clients (a host per actor)."""
        assert gateway.queue is not None
        queue = gateway.queue
        bodies: list[tuple[str, Body]] = []
        for index in range(self.scenario.starters):
            name = f"s{index}"
            sqs, sfn, dynamodb = self._actor_clients(name)
            for client in (sqs, sfn, dynamodb):
                gateway.attach(client)
            after = index - 1 if self.scenario.same_function and index else None
            schedule = Schedule(
                self.config(index),
                (sqs, sfn, dynamodb),
                period=TICK,
                timeout=timedelta(seconds=self.scenario.max_seconds + LAMBDA_MARGIN_SECONDS),
                work_left=lambda: queue.held() > 0,
                after=after,
                late=self.scenario.late == index,
            )
            bodies.append((name, schedule))
        return bodies

    def _actor_clients(self, name: str) -> tuple[Any, Any, Any]:
        """The actor's SQS, Step Functions and DynamoDB clients, built once (a host per actor).

        Built once because building a client costs more than a run's calls; attaching a
        gateway again gives it botocore's full retry quota, so each run starts the same.
        """
        if name not in self._clients:
            host = f"http://{name}.interleavings.invalid"
            sqs, sfn, dynamodb = (
                self._client(service, host) for service in ("sqs", "stepfunctions", "dynamodb")
            )
            self._clients[name] = (sqs, sfn, dynamodb)
        return self._clients[name]

    def checker(self) -> Checker:
        """The throttle's invariants (:mod:`.invariants`)."""
        return ThrottleChecker(self.request_ids, self.scenario.max_concurrent)

    def runtime_clock(self, clock: FakeClock) -> contextlib.AbstractContextManager[Any]:
        """Nothing to patch: each ``Starter`` is given the run's clock (``clock=``, ``sleep=``)."""
        del clock
        return contextlib.nullcontext()

    def mutants(self) -> dict[str, Mutant]:
        """See :mod:`.mutants`."""
        return MUTANTS

    def describe_event(self, event: Event) -> str | None:
        """Writes as lease, ledger, message and execution changes; the rest generically."""
        return describe_write(event) if isinstance(event, Write) else None

    # -- command line -------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The scenario's options."""
        default = Scenario()
        group = parser.add_argument_group("sqs-throttle scenario")
        group.add_argument(
            "--starters", type=int, default=default.starters, help="starter schedules (default 2)"
        )
        group.add_argument(
            "--requests", type=int, default=default.requests, help="requests r1..rN (default 2)"
        )
        group.add_argument(
            "--max-concurrent",
            type=int,
            default=default.max_concurrent,
            help="MAX, the starters' max_concurrent (default 1)",
        )
        group.add_argument(
            "--duplicate-request",
            dest="duplicate",
            action="store_true",
            help="r1 is sent twice, with two deduplication ids",
        )
        group.add_argument(
            "--same-function",
            action="store_true",
            help="the starters are one function's successive runs (default: one deployment each)",
        )
        group.add_argument(
            "--max-seconds",
            type=int,
            default=default.max_seconds,
            help="the starters' max_seconds_per_run; their timeout is this + 30 s (default 50)",
        )
        group.add_argument(
            "--late-starter",
            dest="late",
            type=int,
            default=None,
            metavar="N",
            help="starter N's schedule first fires one tick after the others'",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> SqsThrottle:
        """The protocol for parsed options."""
        names = {f.name for f in fields(Scenario)}
        return cls(Scenario(**{k: v for k, v in vars(args).items() if k in names}))

    def arguments(self) -> list[str]:
        """The options that differ from the defaults, for a replay command."""
        default, scenario = Scenario(), self.scenario
        words: list[str] = []
        if scenario.starters != default.starters:
            words += ["--starters", str(scenario.starters)]
        if scenario.requests != default.requests:
            words += ["--requests", str(scenario.requests)]
        if scenario.max_concurrent != default.max_concurrent:
            words += ["--max-concurrent", str(scenario.max_concurrent)]
        if scenario.duplicate:
            words.append("--duplicate-request")
        if scenario.same_function:
            words.append("--same-function")
        if scenario.late is not None:
            words += ["--late-starter", str(scenario.late)]
        if scenario.max_seconds != default.max_seconds:
            words += ["--max-seconds", str(scenario.max_seconds)]
        return words
