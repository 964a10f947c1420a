"""Actors as threads of which exactly one runs at a time, paused at every AWS call.

Why threads: the code under test is the runtime's real, blocking code (a ``Tracker`` making
pynamodb and botocore calls), which cannot be turned into coroutines. Each actor runs in its
own thread, but holds the turn only between two pause points; the controller (the thread
that drives the :class:`Scheduler`) holds it the rest of the time. So every run is a
sequence of atomic steps, chosen by the controller, and the same steps give the same run.

A pause point is every request an actor sends to the store (the gateway, :mod:`.gateway`,
calls :meth:`Scheduler.pause_at_call` from botocore's ``before-send`` event), and a wait for
the clock (:meth:`ActorContext.wait_until`, for a worker that waits out a lease) or for a
condition (:meth:`ActorContext.wait_for`, for an execution parked on its task token). At a call
the controller decides what happens to it (:class:`~.steps.Kind`): sent, answer lost,
throttled, or the actor crashes there. A crashed actor's thread stays parked and is only
unwound when the run is closed, by raising :class:`ActorStopped` at its pause point; from
then on every pause point of that thread raises again before the store is reached, so it
never changes the store or the side-effect log again. An actor that plays Lambda
invocations has each killed at its timeout the same way (:meth:`ActorContext.invocation`),
and goes on to its next one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
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


class InvocationKilled(BaseException):
    """Ends an actor's current invocation: the clock passed its deadline (a Lambda's timeout).

    Raised at the first pause point the invocation reaches (or wakes at) once its deadline
    has passed, and again at every pause point while it unwinds, before anything is sent:
    a killed Lambda runs none of its code, so its ``finally`` blocks change nothing. The
    actor goes on after the invocation (:meth:`ActorContext.invocation`).
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
    """An actor waiting for the clock to reach ``until``, or for ``condition`` to hold.

    Enabled once either is true (a wait with neither is enabled at once: an actor that
    yields a step, e.g. a Lambda still running). ``condition`` must stay true once true
    (a task closed, an execution ended), and ``keys``/``writes`` say what the actor
    reads (and changes) when it resumes, as for a call: the reduction needs both.
    """

    until: datetime | None = None
    condition: Callable[[], bool] | None = field(default=None, compare=False)
    what: str = ""
    keys: frozenset[str] = frozenset()
    writes: bool = False

    def ready(self, now: datetime) -> bool:
        """Whether the wait is over at ``now``."""
        if self.until is None and self.condition is None:
            return True
        if self.until is not None and self.until <= now:
            return True
        return self.condition is not None and self.condition()

    def __str__(self) -> str:
        parts = [self.what] if self.what else []
        if self.until is not None:
            parts.append(f"until {self.until.isoformat()}")
        return "wait " + " ".join(parts) if parts else "wait"


Pause = CallPause | WaitPause


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
        if self.step.kind in (Kind.CRASH, Kind.THROTTLE):
            return True
        return isinstance(self.pause, WaitPause) and not self.pause.keys


def _disjoint(a: Option, b: Option) -> bool:
    """Two calls (or resumed waits) that cannot see each other's effect."""
    assert a.pause is not None and b.pause is not None
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
        #: The current invocation's deadline (:meth:`ActorContext.invocation`), and
        #: whether it was killed there.
        self.deadline: datetime | None = None
        self.killed = False

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

    @contextlib.contextmanager
    def invocation(self, timeout: timedelta) -> Iterator[None]:
        """Run the block as one invocation that is killed once ``timeout`` has passed.

        A Lambda invocation ends at its function's timeout wherever it is, so an actor
        that plays one must not go on once the clock passed it: the first pause point it
        reaches or wakes at after that raises :class:`InvocationKilled` (no call is sent),
        which this context ends, noting it; the actor goes on after the block (its next
        invocation). Without it, an actor paused across ticks runs on however late.
        """
        actor = self._actor
        actor.deadline, actor.killed = self.now() + timeout, False
        try:
            yield
        except InvocationKilled:
            actor.killed = False
            self.note(f"invocation killed at its timeout ({timeout.total_seconds():.0f} s)")
        finally:
            actor.deadline, actor.killed = None, False

    def wait_until(self, when: datetime) -> None:
        """Pause until the clock reaches ``when`` (returns at once if it has)."""
        if self._scheduler.clock.now < when:
            self._scheduler.pause(self._actor, WaitPause(when))

    def wait_for(
        self,
        condition: Callable[[], bool] | None,
        what: str,
        *,
        until: datetime | None = None,
        keys: frozenset[str] = frozenset(),
        writes: bool = False,
    ) -> None:
        """Pause until ``condition`` holds or the clock reaches ``until`` (see :class:`WaitPause`).

        Unlike :meth:`wait_until`, it always pauses, even when the wait is already over:
        the resumption is a step of its own, which the schedule places among the others
        (a Step Functions execution moving on after its token was sent, a Lambda that
        runs for a while). ``condition=None`` and ``until=None``: a step that is always
        enabled.
        """
        pause = WaitPause(until, condition, what, keys, writes)
        self._scheduler.pause(self._actor, pause)

    def ended(self, index: int) -> bool:
        """Whether actor ``index`` has finished or crashed (a monotone condition)."""
        return self._scheduler.actors[index].state in (ActorState.FINISHED, ActorState.CRASHED)

    def crashed(self, index: int) -> bool:
        """Whether actor ``index`` crashed (for a retry that follows it)."""
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
        """Every step possible now (strategies apply their own budgets)."""
        options: list[Option] = []
        for actor in self.actors:
            if not actor.live:
                continue
            pause = actor.pause
            if actor.deadline is not None and actor.deadline <= self.clock.now:
                options.append(Option(Step(Kind.RUN, actor.index), pause))  # it learns it died
            elif isinstance(pause, CallPause):
                options.extend(
                    Option(Step(kind, actor.index, tick), pause) for kind, tick in _CALL_STEPS
                )
            elif isinstance(pause, WaitPause) and pause.ready(self.clock.now):
                options.append(Option(Step(Kind.RUN, actor.index), pause))
        if any(actor.live for actor in self.actors):
            options.append(Option(Step(Kind.TICK)))
        return options

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
        """Give the turn back and wait for it; raises ActorStopped once the actor must end.

        Raises InvocationKilled instead of pausing while a killed invocation unwinds, and
        instead of returning once the invocation's deadline has passed.
        """
        if actor.stopping:
            raise ActorStopped
        if actor.killed:
            raise InvocationKilled
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
            if actor.deadline is not None and actor.deadline <= self.clock.now:
                actor.killed = True
                raise InvocationKilled
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
