"""The dag dispatcher's callers as actors, and the Step Functions they see.

Why these actors: the runtime Lambda is called by the coordinator's start and by each
task execution's report (``task_done``), and those calls race; the protocol's promises
are about them. Each actor runs the real ``dispatch.Scheduler`` (the one
``handler.scheduler_from_env`` builds) on its own DynamoDB client, as a separate Lambda
container would:

* :class:`Start`: the coordinator's start call (a first start, a start retried while
  the first attempt still runs, or another coordinator adopting the run);
* :class:`Report`: a task execution's report, once the runtime has started that
  execution (:meth:`~..scheduler.ActorContext.wait_for`); an invocation that fails is
  retried, as the task machine's ``Retry`` does;
* :class:`Redelivery`: the same call again if the first actor crashed (Step Functions
  retries a Lambda that died), so that a crash alone never leaves a run unfinished.

A replayed report (the task machine's retry after a lost answer, or the ended-execution
rule's report of an execution that had reported) is a second :class:`Report` actor for
the same task, concurrent with the first.

Why the runtime's ``Launcher`` is a recording stand-in (:class:`StepFunctions`) rather
than a boto3 client paused at the explorer's Step Functions stand-in (:mod:`...sfn`):
the runtime's Step Functions calls touch nothing the table's invariants depend on, and
none of their answers depends on the order of other actors' steps. StartExecution is
idempotent by execution name (the stand-in keeps the names: a second start of one name
is a no-op, as ``ExecutionAlreadyExists`` is to the runtime); when the started
execution reports is already a choice of the schedule (the report actor's steps); and a
crash just before or after it is a crash at the DynamoDB call next to it (the claim's
read, ``mark_launched``). SendTaskSuccess/Failure only answer the coordinator, and
DescribeExecution answers from the scenario (the first coordinator stopped or not).
So the explorer pauses at DynamoDB calls only, and the stand-in records what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sfn_patterns.dag_aggregate.runtime.dispatch import (
    InvalidRunInputError,
    RunAlreadyRunningError,
    Scheduler,
    StartRequest,
)
from sfn_patterns.dag_aggregate.runtime.store import Outcome
from sfn_patterns_localstack.interleavings.scheduler import ActorContext

#: Invocations of one report before the task execution gives up (the task machine's
#: Retry allows more; a few cover a throttle or a lost answer past botocore's retries).
REPORT_ATTEMPTS = 3

RuntimeFactory = Callable[["ActorContext", "Launcher"], Scheduler]


@dataclass
class StepFunctions:
    """Task executions by name, the coordinators that still run, and the tokens answered.

    Attributes:
        executions: Execution name -> (task, attempt), in the order they were started.
        running: Coordinator execution ARNs that still run (DescribeExecution).
        answers: ``(token, "success" | "failure")`` for each SendTaskSuccess/Failure.
        waited: Coordinator execution -> the token its Run state waits on now.

    """

    executions: dict[str, tuple[str, int]] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    answers: list[tuple[str, str]] = field(default_factory=list)
    waited: dict[str, str] = field(default_factory=dict)

    def copy(self) -> StepFunctions:
        """An independent copy (each run starts from the state setup left)."""
        return StepFunctions(
            dict(self.executions), set(self.running), list(self.answers), dict(self.waited)
        )

    def started(self, task: str) -> tuple[str, int] | None:
        """The first execution started for ``task``: (name, attempt), or None."""
        for name, (started, attempt) in self.executions.items():
            if started == task:
                return name, attempt
        return None

    @property
    def answered(self) -> bool:
        """Whether any coordinator token was answered (the run is over for its tasks)."""
        return bool(self.answers)


class Launcher:
    """The runtime's ``Launcher`` on the stand-in: records starts as the actor's side effects."""

    def __init__(self, sfn: StepFunctions, ctx: ActorContext | None) -> None:
        self.sfn = sfn
        self.ctx = ctx

    def start_task(self, name: str, payload: Mapping[str, Any]) -> None:
        """A new execution name starts the task (a side effect); a known one is a no-op."""
        if name in self.sfn.executions:
            return
        task, attempt = str(payload["task_id"]), int(payload["attempt"])
        self.sfn.executions[name] = (task, attempt)
        if self.ctx is not None:
            self.ctx.effect(task)

    def send_success(self, token: str, output: Mapping[str, Any]) -> None:
        """Record the coordinator's answer."""
        self._answer(token, "success")

    def send_failure(self, token: str, error: str, cause: str) -> None:
        """Record the coordinator's answer."""
        self._answer(token, "failure")

    def _answer(self, token: str, status: str) -> None:
        self.sfn.answers.append((token, status))
        if self.ctx is not None:
            self.ctx.note(f"answered {token}: {status}", token=token, answer=status)

    def execution_running(self, execution_arn: str) -> bool:
        """DescribeExecution: RUNNING only for a coordinator the scenario keeps running."""
        return execution_arn in self.sfn.running


@dataclass
class Start:
    """The coordinator's start call for ``execution`` with ``token`` (the Run state's)."""

    runtime: RuntimeFactory
    sfn: StepFunctions
    run_id: str
    execution: str
    token: str
    waited: bool = True  # False: an attempt Step Functions has given up on, still running
    retry_count: int = 0  # the Run state's $$.State.RetryCount for this attempt

    def __call__(self, ctx: ActorContext) -> None:
        """The actor's body: one start invocation, its expected refusals noted."""
        self.sfn.running.add(self.execution)
        if self.waited:
            self.sfn.waited[self.execution] = self.token
        request = StartRequest.from_event(
            {
                "execution": self.execution,
                "token": self.token,
                "retry_count": self.retry_count,
                "input": {"run_id": self.run_id},
            }
        )
        try:
            self.runtime(ctx, Launcher(self.sfn, ctx)).start(request)
        except (RunAlreadyRunningError, InvalidRunInputError) as error:
            ctx.note(
                f"start {self.token} refused: {type(error).__name__}: {error}",
                token=self.token,
                refused=type(error).__name__,
            )
        except Exception as error:  # the invocation failed; the Run state's Retry resends it
            ctx.note(f"start {self.token} failed: {type(error).__name__}", token=self.token)
        else:
            ctx.note(f"start {self.token} returned", token=self.token)


@dataclass
class Report:
    """A task execution's report of ``task``, sent once the runtime started it."""

    runtime: RuntimeFactory
    sfn: StepFunctions
    run_id: str
    task: str
    ok: bool = True

    def __call__(self, ctx: ActorContext) -> None:
        """The actor's body: wait for the execution, report (retried if the call fails)."""
        sfn = self.sfn

        def started() -> bool:
            return sfn.started(self.task) is not None or sfn.answered

        if not started():  # a task already running reports from the first step
            ctx.wait_for(started, f"until {self.task} started or the run answered")
        self.deliver(ctx)

    def deliver(self, ctx: ActorContext) -> None:
        """Report the task's first execution (nothing if it never started)."""
        started = self.sfn.started(self.task)
        if started is None:
            ctx.note(f"{self.task}: never started", task=self.task)
            return
        _, attempt = started
        outcome = Outcome(
            ok=self.ok,
            error=None if self.ok else "DagAggregate.TaskFailed",
            cause=None if self.ok else f"{self.task} failed",
        )
        runtime = self.runtime(ctx, Launcher(self.sfn, ctx))
        for _ in range(REPORT_ATTEMPTS):
            try:
                runtime.task_done(self.run_id, self.task, attempt, outcome)
            except Exception as error:  # the task machine's Retry invokes it again
                ctx.note(f"{self.task}: report failed: {type(error).__name__}", task=self.task)
                continue
            ctx.note(f"{self.task}: reported", task=self.task)
            return


@dataclass
class Redelivery:
    """Actor ``follows``'s call again, by ``again``, if that actor crashed."""

    follows: int
    again: Callable[[ActorContext], None]

    def __call__(self, ctx: ActorContext) -> None:
        """The actor's body: nothing once the first ended without crashing."""
        ctx.wait_for(lambda: ctx.ended(self.follows), f"until actor {self.follows} ended")
        if ctx.crashed(self.follows):
            self.again(ctx)
