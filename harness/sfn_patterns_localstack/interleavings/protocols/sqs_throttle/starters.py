"""A starter's schedule as one actor: the real ``Starter.run``, invoked again and again.

Why a schedule and not one run: the throttle's promises are about what its runs achieve
together (a run that crashed, stalled or stopped early leaves its work to a later run), so
each actor is one function's EventBridge schedule: it invokes a fresh ``Starter`` (as the
Lambda handler builds one per invocation), and invokes it again one schedule period later
for as long as the queue holds a message. A run that raises is an invocation that failed,
and a run still going at the function's timeout (``max_seconds_per_run`` + 30 s, as the
module sets it) is killed there, wherever it is paused
(:meth:`~...scheduler.ActorContext.invocation`); either way the schedule goes on. So at
quiescence every request was started, unless every schedule crashed.

Runs of one function never overlap (reserved concurrency 1): an actor that continues
another's schedule (:attr:`Schedule.after`) starts its first run only once that actor has
ended (finished or crashed, i.e. its invocation was killed), as a step of its own that
may come at once (an invocation by an operator or by the target's last state, which the
module's README suggests for faster admission), while the dead run's lease still runs.
While the earlier run is paused, however long, the later one waits: the explorer never
runs two invocations of one function at once, which is the assumption the lease's group
takeover rests on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sfn_patterns.sqs_throttle.starter import Config, RunReport, Starter
from sfn_patterns_localstack.interleavings import scheduler
from sfn_patterns_localstack.interleavings.scheduler import ActorContext, ActorState

_ENDED = (ActorState.FINISHED, ActorState.CRASHED)


class Schedule:
    """One function's schedule of starter runs.

    Args:
        config: The starter's configuration (its ``exclusive_group`` names the function).
        clients: The actor's own SQS, Step Functions and DynamoDB clients, in that order.
        period: Time between two runs (the schedule's rate).
        timeout: The function's timeout: a run still going then is killed.
        work_left: Whether the queue still holds a message (the schedule keeps firing).
        after: The actor whose schedule this one continues (None: its own function).
        late: The schedule first fires one period after the start.

    """

    def __init__(
        self,
        config: Config,
        clients: tuple[Any, Any, Any],
        *,
        period: timedelta,
        timeout: timedelta,
        work_left: Callable[[], bool],
        after: int | None = None,
        late: bool = False,
    ) -> None:
        self.config = config
        self.clients = clients
        self.period = period
        self.timeout = timeout
        self.work_left = work_left
        self.after = after
        self.late = late

    def __call__(self, ctx: ActorContext) -> None:
        """The actor's body."""
        if self.late:
            ctx.wait_until(ctx.now() + self.period)
        if self.after is not None:
            ctx.wait_for(self._ended(self.after), f"until s{self.after} has ended")
        run = 0
        while self.work_left():
            self._invoke(ctx, run)
            run += 1
            if not self.work_left():
                return
            ctx.wait_until(ctx.now() + self.period)

    def _invoke(self, ctx: ActorContext, run: int) -> None:
        """One invocation of the starter Lambda."""
        starter = Starter(
            self.config,
            *self.clients,
            clock=lambda: ctx.now().timestamp(),
            sleep=lambda seconds: ctx.wait_until(ctx.now() + timedelta(seconds=seconds)),
        )
        # The owner is a fresh id per run (uuid4); named after the actor and run here so
        # that a run is the same every time it is replayed.
        group = self.config.exclusive_group
        starter.owner = f"{group}/{ctx.name}.{run}" if group else f"{ctx.name}.{run}"
        report: RunReport | None = None
        try:
            with ctx.invocation(self.timeout):
                report = starter.run(remaining_seconds=self.timeout.total_seconds())
        except Exception as error:  # the invocation failed; the next tick runs again
            ctx.note(f"run {run} failed: {type(error).__name__}: {error}", run=run, failed=True)
            return
        if report is None:  # killed at its timeout (the context noted it)
            return
        ctx.note(
            f"run {run}: {report.stopped}; counted {report.counts}, started "
            f"{report.started or '-'}, existed {report.already_existed or '-'}, failed "
            f"{report.failed or '-'}",
            run=run,
            report=report.as_dict(),
        )

    @staticmethod
    def _ended(index: int) -> Callable[[], bool]:
        """Whether actor ``index`` has ended (read by the controller, so bound here)."""
        binding = scheduler.current()
        assert binding is not None, "a schedule runs in an actor thread"
        actor = binding[0].actors[index]
        return lambda: actor.state in _ENDED
