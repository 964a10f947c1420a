"""What the explorer needs from a protocol: its actors, its store, its invariants, its mutants.

Why an interface: the scheduler, the strategies and the replay command are the same for
every protocol; a protocol (:mod:`.protocols`) only says how to set its table up, which
actors run the runtime's real code, how the runtime reads time, and what must hold after
every step and at quiescence. Invariants are computed from what the run recorded (the
store's items before and after each write, attributed to the actor that sent it; the
side effects actors reported) and from the store itself, never from the code under test's
own view of things.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.scheduler import Actor, Body, Event
from sfn_patterns_localstack.interleavings.sfn import StepFunctions
from sfn_patterns_localstack.interleavings.sqs import MotoQueue
from sfn_patterns_localstack.interleavings.store import MotoStore


@dataclass(frozen=True)
class RunView:
    """What a checker may look at: the events, actors, clock, store, Step Functions and queue."""

    events: Sequence[Event]
    actors: Sequence[Actor]
    clock: FakeClock
    store: MotoStore
    sfn: StepFunctions | None = None
    queue: MotoQueue | None = None


class Checker(abc.ABC):
    """The invariants of one run; called after every step and once at quiescence."""

    @abc.abstractmethod
    def after_step(self, view: RunView) -> list[str]:
        """The invariants broken by the events since the last call (empty: all hold)."""

    @abc.abstractmethod
    def at_quiescence(self, view: RunView) -> list[str]:
        """The invariants broken once no actor has a step left."""


@dataclass(frozen=True)
class Mutant:
    """A realistic mistake, applied to the real runtime class for the duration of a context."""

    name: str
    description: str
    apply: Callable[[], contextlib.AbstractContextManager[Any]]


class Protocol(abc.ABC):
    """A protocol under exploration (one instance: one configuration of it)."""

    #: The name on the command line (``--protocol``).
    name: ClassVar[str]
    #: The table the protocol's runtime uses, its region and hash key attribute.
    table_name: ClassVar[str]
    region: ClassVar[str] = "us-east-1"
    hash_key: ClassVar[str]
    #: The table's range key attribute, if it has one (pauses then name items by both keys).
    range_key: ClassVar[str | None] = None
    #: Other tables the runtime uses (their items in snapshots as ``<table>:<key>``).
    more_tables: ClassVar[tuple[str, ...]] = ()
    #: The SQS queue the runtime reads, if any (moto's SQS on the run's clock, ``gateway.queue``).
    queue_name: ClassVar[str | None] = None

    @property
    @abc.abstractmethod
    def tick(self) -> timedelta:
        """How far a ``+`` step moves the clock (for leases: one lease length)."""

    @abc.abstractmethod
    def setup(self, gateway: Gateway) -> None:
        """Create tables, items, executions (``gateway.sfn``) once; each run restores them."""

    @abc.abstractmethod
    def actors(self, gateway: Gateway) -> list[tuple[str, Body]]:
        """Fresh actor bodies for one run (their clients attached to ``gateway``)."""

    @abc.abstractmethod
    def checker(self) -> Checker:
        """A fresh checker for one run."""

    @abc.abstractmethod
    def runtime_clock(self, clock: FakeClock) -> contextlib.AbstractContextManager[Any]:
        """Point the runtime's own time function at ``clock`` for the duration."""

    def mutants(self) -> dict[str, Mutant]:
        """The named mutants of this protocol's runtime (``--mutant``)."""
        return {}

    def describe_event(self, event: Event) -> str | None:
        """One trace line for an event (None: the generic form)."""
        return None

    # -- command line -------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add the protocol's own options (a scenario) to ``parser``."""
        del parser  # a protocol without options adds none

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Protocol:
        """The protocol configured by parsed options."""
        return cls()

    def arguments(self) -> list[str]:
        """The options that configure this instance (for a replay command)."""
        return []


def protocol_registry(*protocols: type[Protocol]) -> dict[str, type[Protocol]]:
    """Protocols by name, checking the names are unique."""
    registry: dict[str, type[Protocol]] = {}
    for protocol in protocols:
        if protocol.name in registry:
            raise ValueError(f"two protocols named {protocol.name!r}")
        registry[protocol.name] = protocol
    return registry


@contextlib.contextmanager
def all_of(*contexts: contextlib.AbstractContextManager[Any]) -> Iterator[None]:
    """Enter several context managers as one (used by mutants that patch several places)."""
    with contextlib.ExitStack() as stack:
        for context in contexts:
            stack.enter_context(context)
        yield
