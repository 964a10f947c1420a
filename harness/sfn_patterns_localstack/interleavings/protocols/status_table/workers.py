"""A status-table worker as a Lambda would write it, run as one actor.

Why this shape: it is the loop README.md and the tracker's docstring show (``with
tracker.start(task) as attempt: ...``, skipping what the typed errors say to skip), made
persistent the way a Step Functions Map with ``Retry`` is: a task that is locked by a live
lease is retried once that lease has run out (:meth:`ActorContext.wait_until`: the actor
waits for the clock), and an invocation that failed (a throttle past every retry, a lost
answer, a failure the body raised) is retried. So at quiescence every task was either done
or left to a crashed worker, which is what the exactly-once invariant asks.

The side effect (``ctx.effect(task)``, the worker-provided callback the invariants count)
is done right after a call about the same task (the claim, or the heartbeat), never after
a call about another one: the explorer's reduction relies on it (:mod:`..scheduler`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from datetime import datetime

from sfn_patterns.status_table import (
    StaleAttemptError,
    TaskAlreadySucceededError,
    TaskIgnoredError,
    TaskLockedError,
    Tracker,
)
from sfn_patterns_localstack.interleavings.scheduler import ActorContext


class BusinessFailure(Exception):
    """The work itself failed (before doing anything): the retry path of the protocol."""


class Worker:
    """Works through ``tasks`` until each is done, skipped as finished, or parked.

    Args:
        tracker: The worker's own tracker (its own client, ``worker_id`` = actor name).
        tasks: Task ids, in the order this worker tries them.
        heartbeat: Extend the lease once before the work (a long body's heartbeat).
        fail_first: The first body this worker runs raises :class:`BusinessFailure`.

    """

    def __init__(
        self, tracker: Tracker, tasks: Sequence[str], *, heartbeat: bool, fail_first: bool
    ) -> None:
        self.tracker = tracker
        self.tasks = list(tasks)
        self.heartbeat = heartbeat
        self.failures_left = 1 if fail_first else 0

    def __call__(self, ctx: ActorContext) -> None:
        """The actor's body."""
        todo = deque(self.tasks)
        locked: dict[str, datetime] = {}
        while todo:
            task = todo[0]
            if self._attempt(ctx, task, locked):
                todo.popleft()
                locked.pop(task, None)
                continue
            if task in locked:
                todo.rotate(-1)
                if all(t in locked for t in todo):  # every task is leased: wait for one
                    ctx.wait_until(min(locked.values()))
                    locked.clear()

    def _attempt(self, ctx: ActorContext, task: str, locked: dict[str, datetime]) -> bool:
        """One invocation on ``task``; True when this worker is finished with it."""
        try:
            with self.tracker.start(task) as attempt:
                if self.heartbeat:
                    attempt.heartbeat()
                if self.failures_left:
                    self.failures_left -= 1
                    raise BusinessFailure(f"{task}: the work failed")
                ctx.effect(task)
        except TaskAlreadySucceededError:
            ctx.note(f"{task}: already succeeded", task=task, outcome="already-succeeded")
        except TaskIgnoredError:
            ctx.note(f"{task}: ignored", task=task, outcome="ignored")
        except TaskLockedError as error:
            until = error.lease_expires_at or ctx.now()
            locked[task] = until
            ctx.note(
                f"{task}: locked by {error.lease_owner} until {until.isoformat()}",
                task=task,
                outcome="locked",
                owner=error.lease_owner,
                until=until,
            )
            return False
        except StaleAttemptError as error:
            ctx.note(
                f"{task}: stale attempt {error.attempt} (now {error.current_attempt})",
                task=task,
                outcome="stale",
                attempt=error.attempt,
                current=error.current_attempt,
            )
            return False
        except BusinessFailure:
            ctx.note(f"{task}: the work failed", task=task, outcome="failed")
            return False
        except Exception as error:  # the invocation failed; Step Functions would retry it
            ctx.note(
                f"{task}: invocation failed: {type(error).__name__}", task=task, outcome="error"
            )
            return False
        else:
            ctx.note(f"{task}: succeeded", task=task, outcome="succeeded")
        return True
