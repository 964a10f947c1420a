"""Execution history budget: what each strategy's executions can write, checked at plan time.

A Standard execution holds at most 25,000 history events. A level strategy runs the
whole DAG in one execution, so every task's iteration (and every poll or fallback
check of its statement) adds to that one history; the dependency strategy runs each
task as its own execution, so only the longest task counts. The counts below come
from real executions (tests/dag_aggregate/test_history_on_localstack.py checks them
against LocalStack's histories); the worst case assumes every task uses all its
polls (``max_polls``) and every throttling retry of its execute call, and one task
runs into its timeout (cancel). Retries of a status check or a park on a service
error (3 events each) are not counted: the Data API rarely throttles a describe, and
counting them at every poll would refuse all but the smallest DAGs.
"""

from __future__ import annotations

from dataclasses import dataclass

from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, task_limits
from sfn_patterns_cli.dag_aggregate.planner import Plan

MAX_HISTORY_EVENTS = 25_000
# A retried task attempt adds TaskFailed, TaskScheduled and TaskStarted.
EVENTS_PER_RETRY = 3
# The runtime Lambda's report task (dependency strategy) retries up to 6 times.
REPORT_RETRIES = 6


@dataclass(frozen=True)
class TaskCost:
    """History events and state transitions of one task, fixed and per poll (or fallback)."""

    events: int
    events_per_poll: int
    transitions: int
    transitions_per_poll: int


# One level-strategy Map iteration that succeeds: MapIterationStarted/Succeeded, Pick
# SQL (Choice), the SQL (Pass), Execute (Task), the wait, Finished (Succeed).
#   event: Await (Task, parked: Entered, Scheduled, Started, Submitted, Succeeded,
#          Exited) + Check; per fallback: TaskTimedOut, Exited, Get Status (5),
#          Check (2), the next Await's Entered, Scheduled, Started, Submitted.
#   poll:  Poll Start (Pass), Wait Initial, Get Status, Check; per poll: Count,
#          Wait Poll, Get Status, Check.
LEVEL_TASK = {
    "event": TaskCost(events=21, events_per_poll=13, transitions=6, transitions_per_poll=3),
    "poll": TaskCost(events=24, events_per_poll=11, transitions=8, transitions_per_poll=4),
}
# A dependency-strategy task execution that succeeds: ExecutionStarted, Batch? (Choice),
# Execute, the wait, Task Finished (Choice), its row count (Pass), Report success
# (Task), Done, ExecutionSucceeded.
TASK_EXECUTION = {
    "event": TaskCost(events=28, events_per_poll=13, transitions=8, transitions_per_poll=3),
    "poll": TaskCost(events=31, events_per_poll=11, transitions=10, transitions_per_poll=4),
}
# The level strategies' execution: ExecutionStarted, Level strategy input? (Choice, 2),
# Done (2), ExecutionSucceeded; per stage: its items Pass (2) and the Map (Entered,
# Started, Succeeded, Exited).
EXECUTION_EVENTS = 6
STAGE_EVENTS = 6
# A task that runs into its timeout: Cancel (a Task, 5 events) instead of nothing.
TIMEOUT_EVENTS = 5


@dataclass(frozen=True)
class Budget:
    """The worst case of one execution, and how it was counted (for the error message)."""

    worst_case: int
    formula: str

    @property
    def fits(self) -> bool:
        """Whether the worst case stays within Step Functions' history limit."""
        return self.worst_case <= MAX_HISTORY_EVENTS


def level_history(plan: Plan, strategy: str, options: RenderOptions, polls: int) -> int:
    """Events of one successful level-strategy execution whose tasks polled ``polls`` times."""
    cost = LEVEL_TASK[options.completion]
    return (
        EXECUTION_EVENTS
        + STAGE_EVENTS * len(plan.stages[strategy])
        + cost.events * len(plan.level)
        + cost.events_per_poll * polls
    )


def task_execution_history(options: RenderOptions, polls: int) -> int:
    """Events of one successful dependency-strategy task execution with ``polls`` polls."""
    cost = TASK_EXECUTION[options.completion]
    return cost.events + cost.events_per_poll * polls


def level_budget(plan: Plan, strategy: str, options: RenderOptions) -> Budget:
    """The worst case of a level strategy's one execution."""
    cost = LEVEL_TASK[options.completion]
    retries = int(options.retry["attempts"]) * EVENTS_PER_RETRY
    polls = sum(task_limits(plan, task, options)[1] for task in plan.level)
    tasks, stages = len(plan.level), len(plan.stages[strategy])
    worst = level_history(plan, strategy, options, polls) + tasks * retries + TIMEOUT_EVENTS
    formula = (
        f"{EXECUTION_EVENTS} + {stages} stages x {STAGE_EVENTS} + {tasks} tasks x "
        f"({cost.events} + {retries} execute retries) + {polls} polls in all (each task's "
        f"max_polls, completion {options.completion}) x {cost.events_per_poll} + "
        f"{TIMEOUT_EVENTS} (a timeout) = {worst}"
    )
    return Budget(worst, formula)


def task_execution_budget(plan: Plan, options: RenderOptions) -> Budget:
    """The worst case of the longest dependency-strategy task execution."""
    cost = TASK_EXECUTION[options.completion]
    retries = (int(options.retry["attempts"]) + REPORT_RETRIES) * EVENTS_PER_RETRY
    task, polls = max(
        ((name, task_limits(plan, name, options)[1]) for name in plan.level),
        key=lambda item: item[1],
    )
    worst = task_execution_history(options, polls) + retries + TIMEOUT_EVENTS
    formula = (
        f"task {task}: {cost.events} + {retries} retries (execute, report) + {polls} polls "
        f"(max_polls, completion {options.completion}) x {cost.events_per_poll} + "
        f"{TIMEOUT_EVENTS} (a timeout) = {worst}"
    )
    return Budget(worst, formula)


def _advice(options: RenderOptions) -> str:
    if options.completion == "event":
        return "raise --fallback-seconds (poll.fallback_seconds) or lower the tasks' timeouts"
    return (
        'use --completion event (poll.completion = "event"), raise --poll-interval or the '
        "tasks' wait=, or lower their timeouts"
    )


def check_level_strategy(plan: Plan, strategy: str, options: RenderOptions) -> Budget:
    """Raise RenderError when the level strategy's execution could exceed the history limit."""
    budget = level_budget(plan, strategy, options)
    if not budget.fits:
        raise RenderError(
            f"strategy {strategy}: the execution's worst-case history exceeds the "
            f"{MAX_HISTORY_EVENTS:,}-event limit of Step Functions: {budget.formula} events. "
            f"Use strategy dependency (one execution per task), {_advice(options)}"
        )
    return budget


def check_task_executions(plan: Plan, options: RenderOptions) -> Budget:
    """Raise RenderError when a dependency-strategy task execution could exceed the limit."""
    budget = task_execution_budget(plan, options)
    if not budget.fits:
        raise RenderError(
            f"strategy dependency: a task execution's worst-case history exceeds the "
            f"{MAX_HISTORY_EVENTS:,}-event limit of Step Functions: {budget.formula} events. "
            f"{_advice(options).capitalize()}"
        )
    return budget
