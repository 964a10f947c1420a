"""The explorer's time: a fake clock that moves only at tick steps, and sleeps that take none.

Why: a lease expires when the clock passes it, so real time would make a schedule depend
on how fast the machine is. Here the clock is a value the scheduler advances at ``+``
steps, and everything the runtime reads time with is pointed at it:

* the runtime's module-level time function is monkeypatched (for the status table,
  ``sfn_patterns.status_table.tracker.utc_now``, which every ``Tracker`` built without a
  ``clock=`` argument reads, as a Lambda's does; see :func:`patched`);
* ``time.sleep`` returns at once in actor threads (:func:`instant_sleeps`): the tracker's
  backoff before re-sending a throttled write and botocore's retry backoff are real sleeps.
  A sleep costs no simulated time either; the time that passes during one is a ``+``
  step, which the explorer can put at that point (each re-sent request is a pause point).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

#: Where every run's clock starts (an arbitrary, fixed instant: runs are reproducible).
EPOCH = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """A timezone-aware UTC clock that changes only when :meth:`advance` is called."""

    def __init__(self, start: datetime = EPOCH) -> None:
        self.start = start
        self.now = start

    def __call__(self) -> datetime:
        """The current time (the clock is called like ``utc_now()``)."""
        return self.now

    def advance(self, by: timedelta) -> None:
        """Move the clock forward (a tick step)."""
        self.now += by

    def reset(self) -> None:
        """Back to the start, for the next run."""
        self.now = self.start

    def elapsed(self) -> timedelta:
        """Simulated time since the start of the run (for traces)."""
        return self.now - self.start


@contextlib.contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    """Set ``target.name`` to ``value`` for the duration, then put the original back."""
    original = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, original)


@contextlib.contextmanager
def instant_sleeps(in_actor: Callable[[], bool]) -> Iterator[None]:
    """``time.sleep`` returns at once in threads where ``in_actor()`` holds; elsewhere it sleeps.

    Patched on the ``time`` module itself, so botocore's ``time.sleep`` and the runtime's
    are both covered without knowing where each of them sleeps.
    """
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if not in_actor():
            real_sleep(seconds)

    with patched(time, "sleep", sleep):
        yield
