"""How the next step is chosen: a seeded random walk, depth-first search, or a given schedule.

Every strategy explores a bounded prefix of a run (``depth`` steps, within a budget of
faults and ticks), and every run is then finished by :func:`completion`: the lowest-numbered
actor that can move sends its call unharmed, and the clock ticks only when every live actor
is waiting for it. That continuation is fair and fault-free, so each run ends at quiescence
(every actor finished or crashed), where the exactly-once invariants are checked; and it is
a function of the state, so two prefixes that reach the same state finish alike.

Depth-first search is stateless: threads cannot be snapshotted, so each schedule is run
from the start, forcing the prefix chosen so far. It prunes with sleep sets (Godefroid):
after the subtree of step ``a`` is explored, a sibling's subtree skips ``a`` for as long
as the steps taken commute with it (:meth:`~.scheduler.Option.independent`), because a
schedule that takes ``a`` there only reorders independent steps of one already explored.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sfn_patterns_localstack.interleavings.scheduler import Option, SchedulerError
from sfn_patterns_localstack.interleavings.steps import Kind, Step, count


class Chooser(Protocol):
    """Picks each step of one run (None: abandon the run, it only repeats explored ones)."""

    def choose(self, taken: Sequence[Step], options: Sequence[Option]) -> Step | None:
        """The next step, given the steps taken so far and the possible ones."""
        ...


@dataclass(frozen=True)
class Budget:
    """At most this many ticks and faults of each kind in an explored prefix."""

    ticks: int = 2
    crashes: int = 1
    lost: int = 1
    throttles: int = 1

    def allows(self, taken: Sequence[Step], step: Step) -> bool:
        """Whether ``step`` may follow ``taken`` within the budget."""
        if step.ticks and count(taken, Kind.TICK) >= self.ticks:
            return False
        limit = {
            Kind.CRASH: self.crashes,
            Kind.LOSE: self.lost,
            Kind.THROTTLE: self.throttles,
        }.get(step.kind)
        return limit is None or count(taken, step.kind) < limit

    def __str__(self) -> str:
        return (
            f"ticks<={self.ticks} crashes<={self.crashes} lost<={self.lost} "
            f"throttles<={self.throttles}"
        )


def completion(options: Sequence[Option]) -> Step | None:
    """The fair, fault-free continuation: the lowest actor that can move; else a tick."""
    runs = [o.step for o in options if o.step.kind is Kind.RUN and not o.step.tick]
    if runs:
        return min(runs, key=lambda step: step.actor or 0)
    ticks = [o.step for o in options if o.step.kind is Kind.TICK]
    return ticks[0] if ticks else None


class Replay:
    """Take the given steps, then complete the run."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)

    def choose(self, taken: Sequence[Step], options: Sequence[Option]) -> Step | None:
        """The next given step (the scheduler rejects one that is not possible), then completion."""
        if len(taken) < len(self.steps):
            return self.steps[len(taken)]
        return completion(options)


class RandomWalk:
    """Runs whose prefixes are random walks, each seeded by (seed, run number).

    Args:
        seed: The walk's seed; run ``i`` uses ``random.Random(f"{seed}/{i}")``, so any
            run can be redone alone.
        depth: Steps chosen at random before the run is completed.
        budget: Faults and ticks allowed in a prefix.
        tick_weight: Weight of a tick against 1 for each actor's plain step.
        fault_weight: Weight of each fault (lose, throttle, crash) of each actor.

    """

    def __init__(
        self,
        seed: int,
        *,
        depth: int = 16,
        budget: Budget | None = None,
        tick_weight: float = 0.3,
        fault_weight: float = 0.1,
    ) -> None:
        self.seed = seed
        self.depth = depth
        self.budget = budget or Budget()
        self.tick_weight = tick_weight
        self.fault_weight = fault_weight

    def label(self, run: int) -> str:
        """Where a run came from, for failure messages."""
        return f"random walk, seed {self.seed}, run {run}"

    def choosers(self) -> Iterator[Chooser]:
        """One chooser per run, without end (the explorer's budget stops it)."""
        run = 0
        while True:
            yield _Walk(self, random.Random(f"{self.seed}/{run}"))
            run += 1


class _Walk:
    def __init__(self, walk: RandomWalk, rng: random.Random) -> None:
        self.walk = walk
        self.rng = rng

    def choose(self, taken: Sequence[Step], options: Sequence[Option]) -> Step | None:
        if len(taken) >= self.walk.depth:
            return completion(options)
        allowed = [o.step for o in options if self.walk.budget.allows(taken, o.step)]
        if not allowed:  # only a tick is possible, and the budget has none left
            return completion(options)
        weights = [self._weight(step) for step in allowed]
        return self.rng.choices(allowed, weights)[0]

    def _weight(self, step: Step) -> float:
        weight = {Kind.RUN: 1.0, Kind.TICK: self.walk.tick_weight}.get(
            step.kind, self.walk.fault_weight
        )
        return weight * self.walk.tick_weight if step.tick else weight


@dataclass
class _Frame:
    """One node on the current DFS path: its options, the one taken, those done, its sleep set."""

    options: list[Option]
    chosen: Option
    sleep: list[Option]
    done: list[Option] = field(default_factory=list)

    def asleep(self, option: Option) -> bool:
        return any(o.step == option.step for o in self.sleep)

    def explored(self, option: Option) -> bool:
        return any(o.step == option.step for o in self.done)

    def child_sleep(self) -> list[Option]:
        """The sleep set of the node reached by ``chosen``: what still commutes with it."""
        return [o for o in [*self.sleep, *self.done] if o.independent(self.chosen)]


class DepthFirst:
    """Every schedule prefix of up to ``depth`` steps within ``budget`` (sleep-set reduced).

    Args:
        depth: Steps explored before each run is completed.
        budget: Faults and ticks allowed in a prefix.
        reduce: Use sleep sets (off: every interleaving, for comparison and tests).

    After the generator of :meth:`choosers` ends, :attr:`exhausted` says whether the whole
    bounded space was covered (rather than the explorer stopping early).

    """

    def __init__(self, *, depth: int = 8, budget: Budget | None = None, reduce: bool = True):
        self.depth = depth
        self.budget = budget or Budget()
        self.reduce = reduce
        self.exhausted = False
        self.pruned = 0
        self._frames: list[_Frame] = []

    def label(self, run: int) -> str:
        """Where a run came from, for failure messages."""
        return f"depth-first search (depth {self.depth}, {self.budget}), run {run}"

    def choosers(self) -> Iterator[Chooser]:
        """One chooser per schedule, until the bounded space is covered."""
        while True:
            path = _Path(self)
            yield path
            del self._frames[path.reached :]  # a run stopped early never took the rest
            if not self._backtrack():
                self.exhausted = True
                return

    def _backtrack(self) -> bool:
        while self._frames:
            frame = self._frames[-1]
            frame.done.append(frame.chosen)
            for option in frame.options:
                if not frame.explored(option) and not (self.reduce and frame.asleep(option)):
                    frame.chosen = option
                    return True
            self._frames.pop()
        return False

    def _extend(self, taken: Sequence[Step], options: Sequence[Option]) -> Step | None:
        """A new frame at the end of the path and its first step (None: all asleep)."""
        sleep = self._frames[-1].child_sleep() if self._frames and self.reduce else []
        allowed = [o for o in options if self.budget.allows(taken, o.step)]
        awake = [o for o in allowed if not any(s.step == o.step for s in sleep)]
        if not awake:
            self.pruned += 1
            return None
        self._frames.append(_Frame(allowed, awake[0], sleep))
        return awake[0].step


class _Path:
    def __init__(self, search: DepthFirst) -> None:
        self.search = search
        self.reached = 0
        self.completing = False

    def choose(self, taken: Sequence[Step], options: Sequence[Option]) -> Step | None:
        frames = self.search._frames
        depth = len(taken)
        if depth < len(frames):
            frame = frames[depth]
            expected = [o.step for o in frame.options]
            possible = {o.step for o in options}
            if not set(expected) <= possible:
                raise SchedulerError(
                    f"run is not deterministic: at step {depth} the options were "
                    f"{expected}, now {sorted(possible)}"
                )
            self.reached = depth + 1
            return frame.chosen.step
        if self.completing or depth >= self.search.depth:
            return completion(options)
        if not any(self.search.budget.allows(taken, o.step) for o in options):
            self.completing = True  # only a tick is possible, and the budget has none left
            return completion(options)
        step = self.search._extend(taken, options)
        if step is not None:
            self.reached = depth + 1
        return step
