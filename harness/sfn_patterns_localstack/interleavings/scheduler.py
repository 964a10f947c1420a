"""Actors as threads of which exactly one runs at a time, paused at every AWS call.

Why threads: the code under test is the runtime's real, blocking code (a ``Tracker`` making
pynamodb and botocore calls), which cannot be turned into coroutines. Each actor runs in its
own thread, but holds the turn only between two pause points; the controller (the thread
that drives the :class:`Scheduler`) holds it the rest of the time. So every run is a
sequence of atomic steps, chosen by the controller, and the same steps give the same run.

A pause point is every request an actor sends to the store (the gateway, :mod:`.gateway`,
calls :meth:`Scheduler.pause_at_call` from botocore's ``before-send`` event), a wait for
the clock (:meth:`ActorContext.wait_until`, for a worker that waits out a lease), and a wait
for something another actor does (:meth:`ActorContext.wait_for`, for a task execution that
reports only once it was started). At a call
the controller decides what happens to it (:class:`~.steps.Kind`): sent, answer lost,
throttled, or the actor crashes there. A crashed actor's thread stays parked and is only
unwound when the run is closed, by raising :class:`ActorStopped` at its pause point; from
then on every pause point of that thread raises again before the store is reached, so it
never changes the store or the side-effect log again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.steps import Kind, Step

#: Seconds the controller waits for an actor to reach its next pause point before it
#: declares the actor stuck (the runtime blocking on something other than a call).
HANDOFF_TIMEOUT = 60.0


class ActorStopped(BaseException):
    """Ends an actor's thread (a crash being unwound, or a run closed early).

    A ``BaseException``, so that the runtime's ``except Exception`` handlers (a failure
    being recorded, a throttled write retried) let it through instead of acting on it.
    """


class SchedulerError(RuntimeError):
    """The harness itself went wrong (a step that is not possible, an actor that hangs)."""


@dataclass(frozen=True)
class CallPause:
    """An actor paused before sending an AWS call.

    ``keys`` are the items the call reads or writes (None: the whole table, a Query or
    Scan); ``writes`` says whether it may change them. The reduction uses both.
    """

    operation: str
    keys: frozenset[str] | None
    writes: bool

    def __str__(self) -> str:
        where = "*" if self.keys is None else ",".join(sorted(self.keys))
        return f"{self.operation}({where})"


@dataclass(frozen=True)
class WaitPause:
    """An actor waiting for the clock to reach ``until`` (enabled once it has)."""

    until: datetime

    def __str__(self) -> str:
        return f"wait until {self.until.isoformat()}"


@dataclass(frozen=True)
class ConditionPause:
    """An actor waiting until ``ready()`` holds (enabled once it does).

    ``ready`` must be monotone: once true it stays true whatever other actors do. The
    reduction relies on it (resuming such an actor commutes with every other step), and
    so does the explorer's deadlock check (no step can make a false condition true
    except another actor's).
    """

    label: str
    ready: Callable[[], bool] = field(compare=False)

    def __str__(self) -> str:
        return f"wait for {self.label}"


Pause = CallPause | WaitPause | ConditionPause


@dataclass(frozen=True)
class Option:
    """A step that is possible now, with the pause it applies to (None for a tick)."""

    step: Step
    pause: Pause | None = None

    def independent(self, other: Option) -> bool:
        """Whether the two steps commute: run in either order, they leave the same state.

        Steps of one actor never commute, and a tick commutes with nothing (actors read
        the clock). A crash, a throttle and a resumed wait touch nothing shared. Two calls
        commute when they touch different items or both only read.
        """
        if self.step.ticks or other.step.ticks:
            return False
        if self.step.actor == other.step.actor:
            return False
        return self._touches_nothing() or other._touches_nothing() or _disjoint(self, other)

    def _touches_nothing(self) -> bool:
        return self.step.kind in (Kind.CRASH, Kind.THROTTLE) or isinstance(
            self.pause, WaitPause | ConditionPause
        )


def _disjoint(a: Option, b: Option) -> bool:
    """Two calls that cannot see each other's effect."""
    assert isinstance(a.pause, CallPause) and isinstance(b.pause, CallPause)
    if not (a.pause.writes or b.pause.writes):
        return True
    if a.pause.keys is None or b.pause.keys is None:
        return False
    return not (a.pause.keys & b.pause.keys)


# -- what a run records ---------------------------------------------------------------------


@dataclass(frozen=True)
class Write:
    """A request that changed the store: who sent it, and the items before and after.

    ``actor`` is None for the harness's own requests (setup). ``before``/``after`` map each
    item's key to its attributes (None: absent); only items that changed are listed.
    """

    step: int
    actor: int | None
    operation: str
    before: Mapping[str, Mapping[str, Any] | None]
    after: Mapping[str, Mapping[str, Any] | None]
    now: datetime


@dataclass(frozen=True)
class Effect:
    """A side effect an actor performed (the worker-provided callback), e.g. "did task t1"."""

    step: int
    actor: int
    subject: str
    now: datetime


@dataclass(frozen=True)
class Note:
    """Something an actor reports for the trace (an outcome it was told, an exception)."""

    step: int
    actor: int
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)


Event = Write | Effect | Note


# -- actors ---------------------------------------------------------------------------------


class ActorState(Enum):
    """Where an actor's thread is."""

    NEW = "new"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    CRASHED = "crashed"


Body = Callable[["ActorContext"], None]


class Actor:
    """One thread of the code under test (a Lambda invocation, a worker)."""

    def __init__(self, index: int, name: str, body: Body) -> None:
        self.index = index
        self.name = name
        self.body = body
        self.state = ActorState.NEW
        self.pause: Pause | None = None
        self.error: BaseException | None = None
        self.decision = Step(Kind.RUN, index)
        self.stopping = False
        self.thread: threading.Thread | None = None

    @property
    def live(self) -> bool:
        """Paused, so it still has steps to take."""
        return self.state is ActorState.PAUSED

    def __repr__(self) -> str:
        return f"Actor({self.index}, {self.name!r}, {self.state.value}, {self.pause})"


class ActorContext:
    """What an actor's body is given: the side-effect callback, notes, waits and the clock."""

    def __init__(self, scheduler: Scheduler, actor: Actor) -> None:
        self._scheduler = scheduler
        self._actor = actor
        self.index = actor.index
        self.name = actor.name

    def now(self) -> datetime:
        """The run's clock."""
        return self._scheduler.clock.now

    def effect(self, subject: str) -> None:
        """Record that this actor performed its side effect on ``subject`` (counted by checks)."""
        if self._actor.stopping:
            raise ActorStopped
        self._scheduler.record(
            Effect(self._scheduler.step_count, self.index, subject, self._scheduler.clock.now)
        )

    def note(self, text: str, **data: Any) -> None:
        """Report an outcome for the trace (and for checks that read ``data``)."""
        if self._actor.stopping:
            raise ActorStopped
        self._scheduler.record(Note(self._scheduler.step_count, self.index, text, data))

    def wait_until(self, when: datetime) -> None:
        """Pause until the clock reaches ``when`` (returns at once if it has)."""
        if self._scheduler.clock.now < when:
            self._scheduler.pause(self._actor, WaitPause(when))

    def wait_for(self, label: str, ready: Callable[[], bool]) -> None:
        """Pause until ``ready()`` holds (returns at once if it does).

        ``ready`` must be monotone (see :class:`ConditionPause`).
        """
        if not ready():
            self._scheduler.pause(self._actor, ConditionPause(label, ready))

    def ended(self, index: int) -> bool:
        """Whether actor ``index`` has finished or crashed (for a retry that follows it)."""
        return self._scheduler.actors[index].state in (ActorState.FINISHED, ActorState.CRASHED)

    def crashed(self, index: int) -> bool:
        """Whether actor ``index`` crashed."""
        return self._scheduler.actors[index].state is ActorState.CRASHED


_local = threading.local()


def current() -> tuple[Scheduler, Actor] | None:
    """The scheduler and actor of the calling thread; None outside actor threads."""
    return getattr(_local, "binding", None)


def in_actor() -> bool:
    """Whether the calling thread is an actor's (for :func:`~.clock.instant_sleeps`)."""
    return current() is not None


class Scheduler:
    """One run: the actors' threads, the clock, and the events recorded along the way.

    Args:
        bodies: ``(name, body)`` per actor; actor ``i`` is ``bodies[i]``.
        clock: The run's clock (advanced by tick steps).
        tick: How far a tick moves the clock.
        timeout: Seconds an actor may run between two pause points.

    """

    def __init__(
        self,
        bodies: Sequence[tuple[str, Body]],
        clock: FakeClock,
        tick: timedelta,
        *,
        timeout: float = HANDOFF_TIMEOUT,
    ) -> None:
        self.actors = [Actor(i, name, body) for i, (name, body) in enumerate(bodies)]
        self.clock = clock
        self.tick = tick
        self.timeout = timeout
        self.events: list[Event] = []
        self.step_count = 0
        #: What the last step applied to, for traces (" (UpdateItem(k))", or "").
        self.last_pause = ""
        self._cv = threading.Condition()
        self._turn: int | None = None

    # -- controller side --------------------------------------------------------------------

    def start(self) -> None:
        """Start every actor and run each, in order, to its first pause point."""
        for actor in self.actors:
            actor.thread = threading.Thread(
                target=self._main, args=(actor,), name=f"actor-{actor.index}", daemon=True
            )
            actor.thread.start()
            self._hand_turn(actor)

    def options(self) -> list[Option]:
        """Every step possible now (strategies apply their own budgets).

        A tick is possible while an actor can move or waits for the clock; when every
        live actor waits for a condition that does not hold, time changes nothing.
        """
        options: list[Option] = []
        for actor in self.actors:
            if not actor.live:
                continue
            pause = actor.pause
            if isinstance(pause, CallPause):
                options.extend(
                    Option(Step(kind, actor.index, tick), pause) for kind, tick in _CALL_STEPS
                )
            elif _resumable(pause, self.clock.now):
                options.append(Option(Step(Kind.RUN, actor.index), pause))
        waiting = any(actor.live and isinstance(actor.pause, WaitPause) for actor in self.actors)
        if options or waiting:
            options.append(Option(Step(Kind.TICK)))
        return options

    def deadlocked(self) -> bool:
        """Live actors remain, and none can ever move: each waits for a false condition.

        A tick cannot help (only another actor's step makes a condition true), so the
        run can go no further: for a protocol, a liveness failure.
        """
        return not self.quiescent() and not self.options()

    def quiescent(self) -> bool:
        """No actor has a step left (each finished or crashed)."""
        return not any(actor.live for actor in self.actors)

    def perform(self, step: Step) -> None:
        """Take one step; ``SchedulerError`` if it is not possible now."""
        if step not in {option.step for option in self.options()}:
            raise SchedulerError(f"step {step} is not possible now: {self.describe()}")
        self.step_count += 1
        pause = self.actors[step.actor].pause if step.actor is not None else None
        self.last_pause = f" ({pause})" if pause is not None else ""
        if step.kind is Kind.TICK:
            self.clock.advance(self.tick)
            return
        assert step.actor is not None
        actor = self.actors[step.actor]
        if step.kind is Kind.CRASH:
            actor.state = ActorState.CRASHED
            return
        actor.decision = step
        self._hand_turn(actor)

    def close(self) -> None:
        """Unwind every thread still parked (crashed or paused) and wait for all to end."""
        for actor in self.actors:
            if actor.thread is not None and actor.thread.is_alive() and actor.state in _PARKED:
                actor.stopping = True
                self._hand_turn(actor)
        for actor in self.actors:
            if actor.thread is not None:
                actor.thread.join(self.timeout)

    def describe(self) -> str:
        """Each actor's state and pause, for error messages and traces."""
        parts = []
        for actor in self.actors:
            where = f" at {actor.pause}" if actor.pause is not None and actor.live else ""
            parts.append(f"{actor.index}:{actor.state.value}{where}")
        return "; ".join(parts)

    def record(self, event: Event) -> None:
        """Append an event of the current step (called from the turn's holder only)."""
        self.events.append(event)

    def _hand_turn(self, actor: Actor) -> None:
        with self._cv:
            self._turn = actor.index
            self._cv.notify_all()
            if not self._cv.wait_for(lambda: self._turn is None, timeout=self.timeout):
                raise SchedulerError(
                    f"actor {actor.index} ({actor.name}) neither paused nor finished within "
                    f"{self.timeout:.0f} s"
                )

    # -- actor side ---------------------------------------------------------------------------

    def pause_at_call(self, actor: Actor, call: CallPause) -> Step:
        """Called in the actor's thread before a request: the step that decides its fate."""
        return self.pause(actor, call)

    def after_answer(self, decision: Step) -> None:
        """Called in the actor's thread once its call is answered: a ``N+`` step's tick."""
        if decision.tick:
            self.clock.advance(self.tick)

    def pause(self, actor: Actor, pause: Pause) -> Step:
        """Give the turn back and wait for it; raises ActorStopped once the actor must end."""
        if actor.stopping:
            raise ActorStopped
        with self._cv:
            actor.pause = pause
            if actor.state is not ActorState.CRASHED:
                actor.state = ActorState.PAUSED
            self._turn = None
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._turn == actor.index)
            if actor.stopping:
                raise ActorStopped
            actor.state = ActorState.RUNNING
            actor.pause = None
            return actor.decision

    def _main(self, actor: Actor) -> None:
        _local.binding = (self, actor)
        with self._cv:
            self._cv.wait_for(lambda: self._turn == actor.index)
        try:
            actor.state = ActorState.RUNNING
            actor.body(ActorContext(self, actor))
        except ActorStopped:
            pass
        except BaseException as error:  # reported by the explorer: the body must not raise
            actor.error = error
        finally:
            with self._cv:
                if actor.state is not ActorState.CRASHED:
                    actor.state = ActorState.FINISHED
                actor.pause = None
                self._turn = None
                self._cv.notify_all()


def _resumable(pause: Pause | None, now: datetime) -> bool:
    """Whether a waiting actor may go on: its time has come, or its condition holds."""
    if isinstance(pause, WaitPause):
        return pause.until <= now
    return isinstance(pause, ConditionPause) and pause.ready()


_CALL_STEPS = (
    (Kind.RUN, False),
    (Kind.RUN, True),
    (Kind.LOSE, False),
    (Kind.LOSE, True),
    (Kind.THROTTLE, False),
    (Kind.THROTTLE, True),
    (Kind.CRASH, False),
)
_PARKED = (ActorState.PAUSED, ActorState.CRASHED)
