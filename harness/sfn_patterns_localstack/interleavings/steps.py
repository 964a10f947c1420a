"""Schedule steps and their compact text form, so that any run can be written down and replayed.

A run is fully determined by its protocol, its options and its list of steps: the actors
only ever run one at a time, and only when a step hands them the turn. A step is one of:

* ``3``  - actor 3 sends the AWS call it is paused at, and runs on to its next pause;
* ``3L`` - the call takes effect in the store, but its answer is lost (``ReadTimeoutError``);
* ``3T`` - the call is throttled (``ProvisionedThroughputExceededException``), not applied;
* ``3X`` - actor 3 crashes here: its thread never runs another line of its code;
* ``+``  - the clock moves on by the protocol's tick (one lease), expiring leases on cue;
* ``3+``, ``3L+``, ``3T+`` - as ``3``, ``3L``, ``3T``, and the clock moves on as soon as
  the answer (or the error) is back, before actor 3 runs another line.

Why both kinds of tick: an actor reads the clock in the code between two calls, so a
``+`` between two steps falls after that read (the actor sends a time read before the
clock moved: a stale read), while ``3+`` falls before it (the actor was slow to go on).

A schedule is those tokens separated by spaces (commas are accepted too), e.g. ``0 0+ 1 1L 0``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum


class Kind(Enum):
    """What a step does; the value is the token's suffix (a tick is ``+`` alone)."""

    RUN = ""
    LOSE = "L"
    THROTTLE = "T"
    CRASH = "X"
    TICK = "+"


#: The step kinds that are faults (they count against a strategy's fault budget).
FAULTS: frozenset[Kind] = frozenset({Kind.LOSE, Kind.THROTTLE, Kind.CRASH})

_TOKEN = re.compile(r"^(?:(?P<actor>\d+)(?P<kind>[LTX]?)(?P<then>\+?)|(?P<tick>\+))$")


@dataclass(frozen=True, order=True)
class Step:
    """One choice of the scheduler.

    Attributes:
        kind: What happens.
        actor: The actor it applies to (None for a tick on its own).
        tick: The clock moves on once the call's answer is back (``3+``).

    """

    kind: Kind
    actor: int | None = None
    tick: bool = False

    def __post_init__(self) -> None:
        if (self.kind is Kind.TICK) != (self.actor is None):
            raise ValueError(f"a tick has no actor and every other step has one: {self!r}")
        if self.tick and self.kind in (Kind.TICK, Kind.CRASH):
            raise ValueError(f"only a call that is answered can be followed by a tick: {self!r}")

    def __str__(self) -> str:
        if self.kind is Kind.TICK:
            return "+"
        return f"{self.actor}{self.kind.value}{'+' if self.tick else ''}"

    @property
    def ticks(self) -> bool:
        """Whether the step moves the clock (on its own or after its call)."""
        return self.tick or self.kind is Kind.TICK

    @classmethod
    def parse(cls, token: str) -> Step:
        """The step a token stands for (``ValueError`` naming the token when it is not one)."""
        match = _TOKEN.match(token.strip())
        if match is None or (match["kind"] == "X" and match["then"]):
            raise ValueError(
                f"not a schedule step: {token!r} (expected N, NL, NT, NX, N+, NL+, NT+ for "
                "actor N, or +)"
            )
        if match["tick"]:
            return cls(Kind.TICK)
        return cls(Kind(match["kind"]), int(match["actor"]), bool(match["then"]))


def parse_schedule(text: str) -> list[Step]:
    """Steps from their text form (tokens separated by spaces or commas)."""
    return [Step.parse(token) for token in re.split(r"[\s,]+", text.strip()) if token]


def format_schedule(steps: Iterable[Step]) -> str:
    """The text form of ``steps``: what a failure prints and ``replay --schedule`` reads."""
    return " ".join(str(step) for step in steps)


def count(steps: Sequence[Step], kind: Kind) -> int:
    """How many of ``steps`` are of ``kind``; for TICK, how many move the clock."""
    if kind is Kind.TICK:
        return sum(1 for step in steps if step.ticks)
    return sum(1 for step in steps if step.kind is kind)
