"""The semaphore's actors: executions of a holder state machine, a stop with its event, a sweep.

Why these: each is one thing that runs concurrently on AWS, running the runtime's real
code where the runtime has code (``CallbackSemaphore``, ``reconciler.cleanup_handler``,
``reconciler.reconcile_callback``), and standing in for Step Functions where it is Step
Functions that acts (what the ASL fragments in ``templates/semaphore/callback_*`` do):

* :class:`Holder` - one execution through ``Semaphore: Acquire`` (``.waitForTaskToken``
  with ``TimeoutSeconds = fallback``), ``Re-check`` on each timeout, its critical section
  (a Lambda that runs for a step or more), and ``Semaphore: Release``;
* :class:`Gate` - the same with ``strategy = "oldest-first"``: the real gate handler
  (``ListExecutions``), waits, the critical section;
* :class:`Stopper` - ``StopExecution`` of some executions, each followed by the
  EventBridge delivery of its ``ABORTED`` event to the cleanup Lambda (the real
  ``cleanup_handler``; retried while it fails, as EventBridge retries, and delivered
  twice when the scenario duplicates events);
* :class:`Reconciler` - the scheduled sweep (the real ``reconcile_callback``), once or more.

What a crash means here: an actor's thread stops at a call and never runs again. For a
holder, that is its Lambda dying and its execution making no progress for the rest of the
run: the execution stays ``RUNNING`` (as while Step Functions waits out a hung Lambda), so
its slot or its place in the queue is legitimately kept (the task's timeout and Retry that
would follow on AWS are not modelled). A Lambda that raises is retried as the fragments'
``Retry`` does, a bounded number of times, after which the execution fails. For the
stopper, a crash at ``StopExecution`` is a stop that never happened, and a crash in the
cleanup is an event lost; for the reconciler, a sweep that died.

Each Step Functions transition that reads or changes the execution is a step of its own
(:meth:`~.scheduler.ActorContext.wait_for` keyed ``sfn:<execution ARN>``), never code run
after a call about something else: the search's reduction relies on every step touching
only what its pause names.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from sfn_patterns.semaphore import oldest_first, reconciler
from sfn_patterns.semaphore.callback import CallbackSemaphore
from sfn_patterns_localstack.interleavings.scheduler import ActorContext
from sfn_patterns_localstack.interleavings.sfn import (
    CLOSED,
    KEY_PREFIX,
    RUNNING,
    TASK_FAILED,
    TASK_SUCCEEDED,
    StepFunctions,
)

#: The subjects of the effects a holder records (the invariants count them).
ENTER, EXIT = "enter", "exit"
#: Attempts of a Lambda task before Step Functions fails the execution (the ASL's
#: ``acquire_budget`` and ``release_budget`` ``MaxAttempts``, plus the first attempt).
ACQUIRE_ATTEMPTS, RELEASE_ATTEMPTS = 7, 11
#: The critical section's Task ``TimeoutSeconds``: a Lambda invocation of a stopped
#: execution runs on, until at most this long after it was scheduled.
CRITICAL_TIMEOUT = timedelta(minutes=10)
#: The critical section's Task state (the module's ``fragment_acquired_next`` default).
CRITICAL_STATE = "Critical section"
#: The acquire fragment's Task state that invokes the oldest-first gate (default prefix).
GATE_STATE = oldest_first.DEFAULT_GATE_STATE
#: Deliveries of an event to a cleanup that keeps failing, before it is dropped (EventBridge
#: retries for up to a day; a few attempts are as good as all here, the run's clock stands still).
CLEANUP_ATTEMPTS = 5


# What the handlers build from their environment, per actor thread: the cleanup's
# semaphore (handler_semaphore) and the gate's Step Functions client (HandlerClients).
_handler = threading.local()


def handler_semaphore(dynamodb: Any = None, sfn: Any = None) -> CallbackSemaphore:
    """``reconciler.from_environment`` while exploring: the calling stopper's own semaphore.

    The cleanup handler builds its semaphore from the environment; here it gets the one
    the stopper actor was given (its clients attached to the gateway, its clock the run's).
    Per thread, so explorers of several scenarios can be open at once.
    """
    semaphore = getattr(_handler, "semaphore", None)
    if semaphore is None:
        raise RuntimeError("the semaphore's cleanup handler ran outside a stopper actor")
    return semaphore


class HandlerClients:
    """``oldest_first.clients`` while exploring: ``client()`` is the calling gate's own client.

    The gate handler builds its Step Functions client per invocation; here it gets the
    one its actor was given (attached to the gateway).
    """

    @staticmethod
    def client(service: str, **_: Any) -> Any:
        """The calling actor's client of ``service`` (only ``stepfunctions`` is asked for)."""
        client = getattr(_handler, "sfn", None)
        if service != "stepfunctions" or client is None:
            raise RuntimeError(f"the oldest-first gate asked for a {service} client outside a gate")
        return client


def short(arn: str) -> str:
    """An execution's name, for notes and messages."""
    return arn.rsplit(":", 1)[-1]


def _failure(error: BaseException) -> str:
    code = getattr(error, "response", {}).get("Error", {}).get("Code")
    return f"{type(error).__name__}{f' ({code})' if code else ''}: {error}"


def critical_section(
    ctx: ActorContext,
    world: StepFunctions,
    execution_arn: str,
    key: frozenset[str],
    running: Callable[[], bool],
) -> bool:
    """Enter, run the critical section's Lambda for a step, leave; whether the run goes on.

    The section is a Lambda task of the execution (``TaskScheduled`` in its history, with
    :data:`CRITICAL_TIMEOUT`). The Lambda runs on even if the execution is stopped while it
    runs (a Lambda invocation does not stop with its execution), and its return is recorded
    only if the execution still runs; the execution takes its next state only if running.
    """
    token = world.park(
        execution_arn, timeout=CRITICAL_TIMEOUT, resource="invoke", state=CRITICAL_STATE
    )
    ctx.effect(ENTER)
    ctx.wait_for(None, "critical section", keys=key, writes=True)
    world.complete_task(token)
    ctx.effect(EXIT)
    return running()


class Holder:
    """One execution of the holder state machine (callback strategy), as Step Functions runs it.

    Args:
        world: The Step Functions stand-in.
        semaphore: The runtime's ``CallbackSemaphore`` as the callback Lambda builds it.
        execution_arn: This execution (started by the protocol's setup).
        fallback: The acquire task's ``TimeoutSeconds`` (``fallback_seconds``).
        lock_key: The lock item's key (the step that enters reads it, for the reduction).
        inside: The execution holds its slot already and starts in its critical section.
        parked_on: The execution is queued already, parked on this token.

    """

    def __init__(
        self,
        world: StepFunctions,
        semaphore: CallbackSemaphore,
        execution_arn: str,
        *,
        fallback: timedelta,
        lock_key: str,
        inside: bool = False,
        parked_on: str | None = None,
    ) -> None:
        self.world = world
        self.inside = inside
        self.parked_on = parked_on
        self.semaphore = semaphore
        self.arn = execution_arn
        self.fallback = fallback
        self.key = frozenset({KEY_PREFIX + execution_arn})
        self.enter_keys = self.key | {lock_key}

    def running(self) -> bool:
        """Whether the execution still runs (a stopped one takes no further state)."""
        return self.world.status(self.arn) == RUNNING

    def __call__(self, ctx: ActorContext) -> None:
        """Acquire, critical section, release; each only while the execution runs."""
        if not self.inside and not self._acquire(ctx):
            return
        if not critical_section(ctx, self.world, self.arn, self.key, self.running):
            return
        release = functools.partial(self.semaphore.release, self.arn)
        if self._invoke(ctx, "release", release, RELEASE_ATTEMPTS):
            ctx.wait_for(None, "to end", keys=self.key, writes=True)
            self.world.finish(self.arn)

    def _acquire(self, ctx: ActorContext) -> bool:
        """``Acquire`` / ``Re-check`` until the token is sent; False once the execution ended."""
        failures = 0
        token = self.parked_on  # queued by the setup: parked already
        while True:
            if token is None:  # a new task: Acquire, Re-check, or the Retry of a failed one
                token = self.world.park(self.arn, timeout=self.fallback)
                try:
                    outcome = self.semaphore.acquire(self.arn, token)
                    ctx.note(f"acquire: {outcome['outcome']}", outcome=outcome["outcome"])
                except Exception as error:  # the Lambda failed: Step Functions fails the task
                    ctx.note(f"acquire failed: {_failure(error)}", outcome="error")
                    ctx.wait_for(None, "the acquire task fails", keys=self.key, writes=True)
                    self.world.close_task(token)
                    failures += 1
                    if failures >= ACQUIRE_ATTEMPTS and self.world.task_state(token) == CLOSED:
                        self.world.finish(self.arn, "FAILED")  # retries used up
                        return False
            ctx.wait_for(
                self.world.settled(token),
                "parked on its token",
                until=self.world.task_deadline(token),
                keys=self.enter_keys,
                writes=True,
            )
            if not self.running():
                return False
            state = self.world.task_state(token)
            if state == TASK_SUCCEEDED:
                return True
            if state == TASK_FAILED:  # Semaphore.AcquireTimeout: no Retry, the execution fails
                ctx.note("acquire timed out", outcome="acquire-timeout")
                self.world.finish(self.arn, "FAILED")
                return False
            if state == CLOSED:
                ctx.note("acquire retried", outcome="retry")
            token = None  # timed out: Re-check; closed: the Retry. Each is a new task.

    def _invoke(self, ctx: ActorContext, what: str, call: Callable[[], Any], attempts: int) -> bool:
        """A Lambda task Step Functions retries while it fails; False: the execution failed."""
        for _ in range(attempts):
            try:
                call()
                return True
            except Exception as error:
                ctx.note(f"{what} failed: {_failure(error)}", outcome="error")
                ctx.wait_for(None, f"{what} retried", keys=self.key, writes=True)
                if not self.running():
                    return False
        self.world.finish(self.arn, "FAILED")  # retries used up
        return False


class Gate:
    """One execution of a holder state machine with ``strategy = "oldest-first"``.

    ``Semaphore: Acquire`` invokes the gate (the real ``oldest_first.handler``); it proceeds
    to the critical section when the gate says so, or waits one tick (``Wait for a slot``)
    and asks again, until ``acquire_timeout`` of waiting (``Acquire timed out``). The
    release is a Pass state: the slot frees when the execution stops running.

    Args:
        world: The Step Functions stand-in.
        sfn: The gate Lambda's Step Functions client.
        execution_arn: This execution.
        wait: One ``Wait for a slot`` (the tick).
        acquire_timeout: Waiting after which the execution fails.
        inside: The gate admitted the execution already: it starts in its critical section.

    """

    def __init__(
        self,
        world: StepFunctions,
        sfn: Any,
        execution_arn: str,
        *,
        wait: timedelta,
        acquire_timeout: timedelta,
        inside: bool = False,
    ) -> None:
        self.world = world
        self.inside = inside
        self.sfn = sfn
        self.arn = execution_arn
        self.machine = world.execution(execution_arn).state_machine_arn
        self.wait = wait
        self.acquire_timeout = acquire_timeout
        self.key = frozenset({KEY_PREFIX + execution_arn})

    def running(self) -> bool:
        """Whether the execution still runs."""
        return self.world.status(self.arn) == RUNNING

    def __call__(self, ctx: ActorContext) -> None:
        """Ask the gate until it says proceed; critical section; end."""
        _handler.sfn = self.sfn
        if not (self.inside or self._acquire(ctx)) or not critical_section(
            ctx, self.world, self.arn, self.key, self.running
        ):
            return
        ctx.wait_for(None, "to end", keys=self.key, writes=True)
        self.world.finish(self.arn)

    def _acquire(self, ctx: ActorContext) -> bool:
        waited, failures = timedelta(0), 0
        event = {"execution_arn": self.arn, "state_machine_arn": self.machine}
        while True:
            # The gate's invocation is a task of the execution (in its history, named by
            # its state): a stop while the gate runs leaves it without an end event.
            token = self.world.park(self.arn, resource="invoke", state=GATE_STATE)
            try:
                decision = oldest_first.handler(event, None)
            except Exception as error:  # the gate's Retry
                ctx.note(f"gate failed: {_failure(error)}", outcome="error")
                failures += 1
                ctx.wait_for(None, "gate retried", keys=self.key, writes=True)
                self.world.close_task(token)
                if failures >= ACQUIRE_ATTEMPTS:
                    self.world.finish(self.arn, "FAILED")
                    return False
                if not self.running():
                    return False
                continue
            ctx.note(f"gate: {decision}", outcome="proceed" if decision["proceed"] else "wait")
            ctx.wait_for(None, "the gate task succeeds", keys=self.key, writes=True)
            self.world.complete_task(token)
            if not self.running():
                return False
            if decision["proceed"]:
                ctx.wait_for(None, "to its critical section", keys=self.key, writes=True)
                return self.running()
            if waited >= self.acquire_timeout:
                ctx.wait_for(None, "Acquire timed out", keys=self.key, writes=True)
                self.world.finish(self.arn, "FAILED")
                return False
            waited += self.wait
            ctx.wait_for(None, "Wait for a slot", until=ctx.now() + self.wait, keys=self.key)
            if not self.running():
                return False


class Stopper:
    """``StopExecution`` of each execution in turn, then its ``ABORTED`` event to the cleanup.

    Args:
        sfn: The stopper's Step Functions client.
        semaphore: The cleanup Lambda's semaphore (:func:`handler_semaphore` returns it).
        execution_arns: The executions to stop, in order.
        deliveries: How many times EventBridge delivers each event (2: a duplicate).

    """

    def __init__(
        self,
        sfn: Any,
        semaphore: CallbackSemaphore,
        execution_arns: Sequence[str],
        *,
        deliveries: int,
    ) -> None:
        self.sfn = sfn
        self.semaphore = semaphore
        self.arns = list(execution_arns)
        self.deliveries = deliveries

    def __call__(self, ctx: ActorContext) -> None:
        """Stop, then deliver the event (each delivery retried until the cleanup returns)."""
        _handler.semaphore = self.semaphore
        for arn in self.arns:
            try:
                self.sfn.stop_execution(
                    executionArn=arn, error="Interleavings.Stop", cause="a schedule step"
                )
            except Exception as error:  # the caller's stop failed: no event either
                ctx.note(f"stop of {arn} failed: {_failure(error)}", outcome="error")
                continue
            event = {"detail": {"executionArn": arn, "status": "ABORTED"}}
            for _ in range(self.deliveries):
                for _ in range(CLEANUP_ATTEMPTS):
                    try:
                        result = reconciler.cleanup_handler(event, None)
                    except Exception as error:  # EventBridge retries a failed invocation
                        ctx.note(f"cleanup failed: {_failure(error)}", outcome="error")
                        continue
                    said = {
                        k: [short(a) for a in v] if k == "handed_to" else v
                        for k, v in result.items()
                        if k not in ("execution_arn", "status")
                    }
                    ctx.note(f"cleanup of {short(arn)}: {said}", outcome="cleanup")
                    break


class Reconciler:
    """The scheduled sweep, ``sweeps`` times (a sweep that fails is simply the next one)."""

    def __init__(self, semaphore: CallbackSemaphore, *, sweeps: int) -> None:
        self.semaphore = semaphore
        self.sweeps = sweeps

    def __call__(self, ctx: ActorContext) -> None:
        """Each sweep is one invocation of ``reconcile_callback`` at the run's time."""
        for _ in range(self.sweeps):
            try:
                report = reconciler.reconcile_callback(self.semaphore, now=ctx.now())
                released = [short(r["execution_arn"]) for r in report["released"]]
                ctx.note(f"sweep released {released}", outcome="sweep")
            except Exception as error:
                ctx.note(f"sweep failed: {_failure(error)}", outcome="error")
