"""Runs schedules of a protocol against the store, checks invariants after every step, reports.

Why one place: every run, whichever strategy chose its steps, goes through :meth:`Explorer.run`:
restore the store, start fresh actors, take steps until quiescence, check after each one.
A failure carries everything needed to see it again: the strategy and seed it came from,
the schedule (every step, the completion included) and the one command that replays it.

Inside :class:`Explorer` (a context manager) the process is set up for exploring: moto's
``mock_aws`` (fake credentials, empty backends), the runtime's clock (and moto's SQS, when
the protocol reads a queue) pointed at the run's fake clock, instant sleeps in actor
threads, the runtime's loggers quiet, and the mutant, if one was asked for, applied to the
real runtime class.

moto parses every condition and update expression several times per request, and copies
each table a transaction names (and each item it updates) to roll it back: most of a
run's CPU. The harness's own fixes for those (``emulation/fixes/moto_expression_cache.py``,
``moto_transaction_copy.py``, ``moto_update_copy.py``, ``moto_dispatch.py``, each tested
to answer as moto does, and applied wherever the harness runs LocalStack) are applied too
unless ``fast_moto=False``. They patch moto for the rest of the process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from typing import Protocol as TypingProtocol

from sfn_patterns_localstack.interleavings import scheduler as scheduling
from sfn_patterns_localstack.interleavings.clock import FakeClock, instant_sleeps
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.protocol import Checker, Protocol, RunView
from sfn_patterns_localstack.interleavings.scheduler import (
    Effect,
    Event,
    Note,
    Scheduler,
    Write,
)
from sfn_patterns_localstack.interleavings.sfn import StepFunctions
from sfn_patterns_localstack.interleavings.sqs import MotoQueue, queue_time
from sfn_patterns_localstack.interleavings.steps import Step, format_schedule
from sfn_patterns_localstack.interleavings.store import MotoStore
from sfn_patterns_localstack.interleavings.strategies import Chooser

#: A run that has not reached quiescence after this many steps is reported (a livelock).
MAX_STEPS = 400
_QUIET_LOGGERS = ("sfn_patterns", "pynamodb", "botocore")
_ENV_CLEARED = ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")


class Strategy(TypingProtocol):
    """Where runs come from (:mod:`.strategies`)."""

    def label(self, run: int) -> str:
        """Where run ``run`` came from."""
        ...

    def choosers(self) -> Iterator[Chooser]:
        """One chooser per run."""
        ...


@dataclass
class RunResult:
    """One run: every step taken, what broke (if anything) and how it ended."""

    schedule: list[Step]
    violations: list[str]
    events: list[Event]
    quiescent: bool = False
    pruned: bool = False
    trace: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Whether an invariant broke."""
        return bool(self.violations)


@dataclass
class Failure:
    """An invariant broken in one run, with the way to replay it."""

    protocol: str
    arguments: list[str]
    mutant: str | None
    origin: str
    schedule: list[Step]
    violations: list[str]

    def command(self) -> str:
        """The one command that replays this run and prints its trace."""
        words = [_python(), "-m", "sfn_patterns_localstack.interleavings", "replay"]
        words += ["--protocol", self.protocol, *self.arguments]
        if self.mutant:
            words += ["--mutant", self.mutant]
        words += ["--schedule", format_schedule(self.schedule)]
        return shlex.join(words)

    def __str__(self) -> str:
        mutant = f" (mutant {self.mutant})" if self.mutant else ""
        lines = [f"{self.protocol}{mutant}: invariant broken in {self.origin}:"]
        lines += [f"  {violation}" for violation in self.violations]
        lines.append(f"  schedule: {format_schedule(self.schedule)}")
        lines.append(f"  replay:   {self.command()}")
        return "\n".join(lines)


@dataclass
class Report:
    """What an exploration did: runs, steps, failures, and whether the space was covered."""

    runs: int = 0
    steps: int = 0
    pruned: int = 0
    failures: list[Failure] = field(default_factory=list)
    exhausted: bool = False
    cpu_seconds: float = 0.0

    def summary(self) -> str:
        """One line for people."""
        status = f"{len(self.failures)} failing" if self.failures else "no invariant broken"
        covered = ", bounded space covered" if self.exhausted else ""
        return (
            f"{self.runs} runs, {self.steps} steps, {self.pruned} pruned, {status}{covered} "
            f"({self.cpu_seconds:.1f} CPU-s)"
        )


class Explorer:
    """Explore one protocol configuration (optionally mutated); use as a context manager.

    Args:
        protocol: The configured protocol.
        mutant: The name of one of ``protocol.mutants()`` to apply, or None.
        max_steps: Steps after which a run that is still going is reported as a livelock.
        quiet: Silence the runtime's loggers (exploring); replay may keep them.
        fast_moto: Apply the harness's moto speed-ups (see the module docstring).

    """

    def __init__(
        self,
        protocol: Protocol,
        *,
        mutant: str | None = None,
        max_steps: int = MAX_STEPS,
        quiet: bool = True,
        fast_moto: bool = True,
    ) -> None:
        mutants = protocol.mutants()
        if mutant is not None and mutant not in mutants:
            raise ValueError(
                f"no mutant {mutant!r} of {protocol.name}; known: {', '.join(sorted(mutants))}"
            )
        self.protocol = protocol
        self.mutant = mutant
        self.max_steps = max_steps
        self.quiet = quiet
        self.fast_moto = fast_moto
        self.clock = FakeClock()
        self.store = MotoStore(
            protocol.table_name, protocol.region, more_tables=protocol.more_tables
        )
        self.sfn = StepFunctions(self.clock, protocol.region)
        queue = protocol.queue_name
        self.queue = MotoQueue(queue, protocol.region) if queue is not None else None
        self.gateway = Gateway(
            self.store,
            protocol.hash_key,
            sfn=self.sfn,
            queue=self.queue,
            range_key=protocol.range_key,
        )
        self._stack = contextlib.ExitStack()
        self._saved: Any = None

    def __enter__(self) -> Explorer:
        from moto import mock_aws

        stack = self._stack
        if self.fast_moto:
            from sfn_patterns_localstack.emulation.fixes import (
                moto_dispatch,
                moto_expression_cache,
                moto_transaction_copy,
                moto_update_copy,
            )

            moto_expression_cache.apply()
            moto_update_copy.apply()
            moto_transaction_copy.apply()
            moto_dispatch.apply()
        try:
            for name in _ENV_CLEARED:
                if name in os.environ:
                    stack.callback(os.environ.__setitem__, name, os.environ.pop(name))
            stack.enter_context(mock_aws())
            if self.quiet:
                stack.enter_context(_quiet(_QUIET_LOGGERS))
            stack.enter_context(self.protocol.runtime_clock(self.clock))
            stack.enter_context(instant_sleeps(scheduling.in_actor))
            if self.mutant is not None:
                stack.enter_context(self.protocol.mutants()[self.mutant].apply())
            self.store.drop()  # an outer explorer's table: start from the protocol's setup
            self.sfn.reset()
            if self.queue is not None:
                stack.enter_context(queue_time(self.clock))
                self.queue.drop()
            self.protocol.setup(self.gateway)
            queue = self.queue.save() if self.queue is not None else None
            self._saved = (self.store.save(), self.sfn.save(), queue)
        except BaseException:
            stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def mutated(self, name: str) -> Iterator[None]:
        """Apply the named mutant for the duration; failures name it in their replay command."""
        mutants = self.protocol.mutants()
        if name not in mutants:
            raise ValueError(f"no mutant {name!r}; known: {', '.join(sorted(mutants))}")
        previous, self.mutant = self.mutant, name
        try:
            with mutants[name].apply():
                yield
        finally:
            self.mutant = previous

    # -- runs ----------------------------------------------------------------------------------

    def run(self, chooser: Chooser, *, trace: bool = False) -> RunResult:
        """One run from the initial state, steps picked by ``chooser``, checked after each."""
        self.clock.reset()
        self.store.restore(self._saved[0])
        self.sfn.restore(self._saved[1])
        if self.queue is not None:
            self.queue.restore(self._saved[2])
        sched = Scheduler(self.protocol.actors(self.gateway), self.clock, self.protocol.tick)
        checker = self.protocol.checker()
        result = RunResult([], [], sched.events)
        seen = 0
        try:
            sched.start()
            result.violations = self._check(sched, checker)
            seen = self._trace(result, sched, None, seen, trace)
            while not result.violations:
                if sched.quiescent():
                    result.quiescent = True
                    result.violations = checker.at_quiescence(self._view(sched))
                    break
                if len(result.schedule) >= self.max_steps:
                    result.violations = [
                        f"liveness: no quiescence after {self.max_steps} steps ({sched.describe()})"
                    ]
                    break
                step = chooser.choose(result.schedule, sched.options())
                if step is None:
                    result.pruned = True
                    break
                sched.perform(step)
                result.schedule.append(step)
                result.violations = self._check(sched, checker)
                seen = self._trace(result, sched, f"{step}{sched.last_pause}", seen, trace)
        finally:
            sched.close()
        if trace and result.violations:
            result.trace += [f"BROKEN: {violation}" for violation in result.violations]
        return result

    def explore(
        self,
        strategy: Strategy,
        *,
        max_runs: int | None = None,
        cpu_seconds: float | None = None,
        stop_at_first: bool = True,
    ) -> Report:
        """Runs from ``strategy`` until it is exhausted, ``max_runs``, or ``cpu_seconds``."""
        report = Report()
        started = time.process_time()
        runs = strategy.choosers()
        for index, chooser in enumerate(runs):
            result = self.run(chooser)
            report.runs += 1
            report.steps += len(result.schedule)
            report.pruned += result.pruned
            if result.failed:
                report.failures.append(self.failure(strategy.label(index), result))
                if stop_at_first:
                    break
            spent = time.process_time() - started
            if (max_runs is not None and report.runs >= max_runs) or (
                cpu_seconds is not None and spent >= cpu_seconds
            ):
                break
        else:
            report.exhausted = bool(getattr(strategy, "exhausted", False))
        report.cpu_seconds = time.process_time() - started
        return report

    def failure(self, origin: str, result: RunResult) -> Failure:
        """A :class:`Failure` for a failed run."""
        return Failure(
            self.protocol.name,
            self.protocol.arguments(),
            self.mutant,
            origin,
            list(result.schedule),
            list(result.violations),
        )

    # -- checks and traces ---------------------------------------------------------------------

    def _view(self, sched: Scheduler) -> RunView:
        return RunView(sched.events, sched.actors, self.clock, self.store, self.sfn, self.queue)

    def _check(self, sched: Scheduler, checker: Checker) -> list[str]:
        broken = [
            f"actor {a.index} ({a.name}) raised {_exception(a.error)}"
            for a in sched.actors
            if a.error is not None
        ]
        return broken or checker.after_step(self._view(sched))

    def _trace(
        self, result: RunResult, sched: Scheduler, step: str | None, seen: int, enabled: bool
    ) -> int:
        """Trace lines for the step just taken and the events it recorded (when enabled)."""
        if not enabled:
            return len(sched.events)
        elapsed = int(self.clock.elapsed().total_seconds())
        title = "start" if step is None else f"step {len(result.schedule)}: {step}"
        result.trace.append(f"{title}  -> t+{elapsed}s")
        for event in sched.events[seen:]:
            result.trace.append(f"    {self._describe(event)}")
        result.trace.append(f"    now: {sched.describe()}")
        return len(sched.events)

    def _describe(self, event: Event) -> str:
        custom = self.protocol.describe_event(event)
        if custom is not None:
            return custom
        if isinstance(event, Write):
            return f"actor {event.actor} {event.operation} changed {sorted(event.after)}"
        if isinstance(event, Effect):
            return f"actor {event.actor} EFFECT {event.subject}"
        if isinstance(event, Note):
            return f"actor {event.actor}: {event.text}"
        return repr(event)  # pragma: no cover


def _exception(error: BaseException | None) -> str:
    if error is None:  # pragma: no cover
        return "nothing"
    return "".join(traceback.format_exception(error)).strip()


def _python() -> str:
    """The interpreter, relative to the working directory when it is under it."""
    path = sys.executable
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


@contextlib.contextmanager
def _quiet(names: Sequence[str]) -> Iterator[None]:
    """Silence the named loggers and their children (a module's logger may set its own level)."""
    known = list(logging.Logger.manager.loggerDict)
    wanted = {n for n in known if any(n == name or n.startswith(f"{name}.") for name in names)}
    loggers = [logging.getLogger(name) for name in sorted(wanted | set(names))]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
