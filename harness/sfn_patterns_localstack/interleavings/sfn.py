"""A Step Functions stand-in: executions, task tokens and stops, answered in-process.

Why a stand-in: the runtime's Lambdas talk to Step Functions (a release wakes a waiter
with ``SendTaskSuccess``, the reconciler asks ``DescribeExecution``, a starter calls
``StartExecution`` and ``ListExecutions``), and those calls race with the DynamoDB writes
as much as the writes race with each other. So they go through the same pause point
(:mod:`.gateway`, botocore's ``before-send.sfn``): each is one actor step, which the
schedule may run, lose the answer of, throttle (``ThrottlingException``, which botocore
retries) or crash the actor at. moto's own Step Functions would run state machines on
real threads and real time; this stand-in holds only what the calls read and write, and
reads time from the run's fake clock.

What Step Functions itself does, the protocol's harness code does with the methods here,
in the actor that plays the execution (never through botocore, so they are not pause
points): :meth:`StepFunctions.park` opens a task and gives its token (a
``.waitForTaskToken`` task starting), :meth:`StepFunctions.task_state` says how it ended,
:meth:`StepFunctions.close_task` fails it (its Lambda failed), :meth:`StepFunctions.finish`
ends the execution. A stop is an actor's ``StopExecution`` call, so it falls at any step;
the Lambda that was running for the stopped execution goes on (it is another actor's
thread) or crashes, as the schedule says.

Answers follow Step Functions' documented behaviour where the runtime depends on it:

* a token that is not one the service issued: ``InvalidToken``;
* a token whose task is no longer open (completed, failed, timed out by its
  ``TimeoutSeconds`` or ``HeartbeatSeconds``, or its execution ended): ``TaskTimedOut``
  ("Provided task does not exist anymore"), so a ``SendTaskSuccess`` re-sent after a
  lost answer is told ``TaskTimedOut`` too;
* ``StartExecution`` with the name of an existing execution: the same answer again when
  it is ``RUNNING`` with the same input (the documented idempotent start), else
  ``ExecutionAlreadyExists``;
* ``ListExecutions``: newest first, ``statusFilter``, ``maxResults`` and ``nextToken``;
  AWS's is eventually consistent: for a state machine added with ``list_lag`` it shows
  the executions as they were that long ago (one started since is missing, one ended
  since is still ``RUNNING``), otherwise it is strongly consistent;
* ``StopExecution`` of an execution that has ended changes nothing;
* ``GetExecutionHistory`` (``reverseOrder``, ``maxResults``, ``nextToken``): the
  execution's start, each task's ``TaskStateEntered`` (with its state's name, for a task
  opened with one), ``TaskScheduled`` (with its ``resource`` and ``timeoutInSeconds``,
  its ``previousEventId`` the state's entry) and ``TaskStarted``, the task's end (``TaskSucceeded``,
  ``TaskFailed``, or ``TaskTimedOut`` at its deadline) if it ended while the execution
  ran, and the execution's end. A task still open when its execution ended has no end
  event, as on AWS, whose discarded result writes none.

An execution of a state machine added with ``runs_for`` ends ``SUCCEEDED`` that long
after its start, by the clock (a target whose work is not modelled step by step).

Every change is recorded as a :class:`~.scheduler.Write` of the actor whose thread made
it, keyed ``sfn:<execution ARN>``, with the execution's status and its tasks before and
after; the same key names the execution in each call's :class:`~.scheduler.CallPause`, so
the search's reduction sees that a ``StopExecution`` and a ``SendTaskSuccess`` to a token
of that execution do not commute.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from sfn_patterns_localstack.interleavings import scheduler
from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.scheduler import CallPause, Write

#: The account every ARN is in (moto's default account).
ACCOUNT = "123456789012"
KEY_PREFIX = "sfn:"

RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED = (
    "RUNNING",
    "SUCCEEDED",
    "FAILED",
    "TIMED_OUT",
    "ABORTED",
)
STATUSES = (RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED)

# How a task ended (what :meth:`StepFunctions.task_state` says).
OPEN, TASK_SUCCEEDED, TASK_FAILED, TASK_TIMED_OUT, EXECUTION_ENDED, CLOSED = (
    "open",
    "succeeded",
    "failed",
    "timed out",
    "execution ended",
    "closed",
)

_READS = frozenset({"DescribeExecution", "GetExecutionHistory", "ListExecutions"})
#: The operations the stand-in answers, and the method that does.
OPERATIONS: Mapping[str, str] = {
    "StartExecution": "_start_execution",
    "DescribeExecution": "_describe_execution",
    "GetExecutionHistory": "_get_execution_history",
    "ListExecutions": "_list_executions",
    "StopExecution": "_stop_execution",
    "SendTaskSuccess": "_send_task_success",
    "SendTaskFailure": "_send_task_failure",
    "SendTaskHeartbeat": "_send_task_heartbeat",
}
_GONE = "Task Timed Out: 'Provided task does not exist anymore'"


class StepFunctionsError(Exception):
    """An error answer of the stand-in: its code (``TaskTimedOut``) and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class Task:
    """A task: open until a call closes it, it times out, or its run ends.

    ``resource``: as ``TaskScheduled`` names it (``invoke.waitForTaskToken`` for a task
    that waits for its token, ``invoke`` for a Lambda the harness completes itself).
    ``state``: the name of the Task state, as its ``TaskStateEntered`` event gives it
    (None: the history shows no state entry for it).
    """

    token: str
    execution_arn: str
    scheduled_at: datetime
    timeout: timedelta | None = None
    heartbeat: timedelta | None = None
    beat_at: datetime | None = None
    outcome: str | None = None  # TASK_SUCCEEDED, TASK_FAILED or CLOSED once closed
    output: str | None = None
    error: str | None = None
    resource: str = "invoke.waitForTaskToken"
    closed_at: datetime | None = None
    state: str | None = None


@dataclass
class Execution:
    """One execution: its identity, its status and when it started and ended."""

    arn: str
    name: str
    state_machine_arn: str
    input: str
    start_date: datetime
    status: str = RUNNING
    stop_date: datetime | None = None
    error: str | None = None
    cause: str | None = None


@dataclass
class StateMachine:
    """A state machine the stand-in knows; ``runs_for``: its executions end by the clock.

    ``list_lag``: how far behind the present ``ListExecutions`` shows its executions.
    """

    arn: str
    runs_for: timedelta | None = None
    list_lag: timedelta = timedelta(0)


@dataclass
class _World:
    machines: dict[str, StateMachine] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    tokens_issued: int = 0
    names_issued: int = 0


class StepFunctions:
    """The stand-in of one account and region, on the run's clock.

    Args:
        clock: The run's clock (task timeouts, ``runs_for``, dates).
        region: The region of every ARN.

    """

    def __init__(self, clock: FakeClock, region: str = "us-east-1") -> None:
        self.clock = clock
        self.region = region
        self._world = _World()

    # -- state kept across runs -----------------------------------------------------------

    def reset(self) -> None:
        """Forget every state machine, execution and task."""
        self._world = _World()

    def save(self) -> Any:
        """Everything as it is now (for :meth:`restore`; a protocol's setup is saved once)."""
        return copy.deepcopy(self._world)

    def restore(self, saved: Any) -> None:
        """Put everything back as :meth:`save` found it."""
        self._world = copy.deepcopy(saved)

    # -- what Step Functions does on its own (harness side) -------------------------------

    def state_machine_arn(self, name: str) -> str:
        """The ARN of the state machine ``name``."""
        return f"arn:aws:states:{self.region}:{ACCOUNT}:stateMachine:{name}"

    def execution_arn(self, state_machine_arn: str, name: str) -> str:
        """The ARN of the execution ``name`` of a state machine."""
        return state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + name

    def add_state_machine(
        self,
        name: str,
        *,
        runs_for: timedelta | None = None,
        list_lag: timedelta = timedelta(0),
    ) -> str:
        """Create a state machine; its ARN.

        ``runs_for``: its executions succeed that long after their start; ``list_lag``:
        ``ListExecutions`` shows them as they were that long ago.
        """
        arn = self.state_machine_arn(name)
        self._world.machines[arn] = StateMachine(arn, runs_for, list_lag)
        return arn

    def start(self, state_machine_arn: str, name: str | None = None, input: str = "{}") -> str:
        """Start an execution (``StartExecution``'s rules); its ARN."""
        with self._changing("StartExecution"):
            return self._start(state_machine_arn, name, input)

    def execution(self, execution_arn: str) -> Execution:
        """An execution, its status brought up to the clock (``ExecutionDoesNotExist``)."""
        execution = self._world.executions.get(execution_arn)
        if execution is None:
            raise StepFunctionsError(
                "ExecutionDoesNotExist", f"Execution Does Not Exist: '{execution_arn}'"
            )
        machine = self._world.machines[execution.state_machine_arn]
        if execution.status == RUNNING and machine.runs_for is not None:
            ends = execution.start_date + machine.runs_for
            if ends <= self.clock.now:
                execution.status, execution.stop_date = SUCCEEDED, ends
        return execution

    def status(self, execution_arn: str) -> str:
        """The execution's status now."""
        return self.execution(execution_arn).status

    def executions(self) -> list[Execution]:
        """Every execution, oldest first, statuses brought up to the clock."""
        return [self.execution(arn) for arn in self._world.executions]

    def park(
        self,
        execution_arn: str,
        *,
        timeout: timedelta | None = None,
        heartbeat: timedelta | None = None,
        resource: str = "invoke.waitForTaskToken",
        state: str | None = None,
    ) -> str:
        """Open a task of a RUNNING execution (``.waitForTaskToken`` unless named); its token.

        ``state``: the Task state's name, which the history shows (``TaskStateEntered``).
        """
        with self._changing("TaskScheduled"):
            execution = self.execution(execution_arn)
            if execution.status != RUNNING:
                raise StepFunctionsError(
                    "ExecutionNotRunning", f"{execution_arn} is {execution.status}: no task starts"
                )
            self._world.tokens_issued += 1
            token = f"token-{execution.name}-{self._world.tokens_issued}"
            now = self.clock.now
            self._world.tasks[token] = Task(
                token,
                execution_arn,
                now,
                timeout=timeout,
                heartbeat=heartbeat,
                beat_at=now,
                resource=resource,
                state=state,
            )
            return token

    def task(self, token: str) -> Task:
        """The task of a token (``InvalidToken`` when the stand-in never issued it)."""
        task = self._world.tasks.get(token)
        if task is None:
            raise StepFunctionsError("InvalidToken", f"Invalid Token: '{token}'")
        return task

    def task_state(self, token: str) -> str:
        """How the task stands now: open, succeeded, failed, timed out, execution ended, closed."""
        task = self.task(token)
        if task.outcome is not None:
            return task.outcome
        if self.status(task.execution_arn) != RUNNING:
            return EXECUTION_ENDED
        deadline = self.task_deadline(token)
        if deadline is not None and deadline <= self.clock.now:
            return TASK_TIMED_OUT
        return OPEN

    def task_deadline(self, token: str) -> datetime | None:
        """When the task times out if nothing closes it first (None: never)."""
        task = self.task(token)
        ends = []
        if task.timeout is not None:
            ends.append(task.scheduled_at + task.timeout)
        if task.heartbeat is not None and task.beat_at is not None:
            ends.append(task.beat_at + task.heartbeat)
        return min(ends, default=None)

    def last_deadline(self) -> datetime | None:
        """When every task opened so far has ended at the latest (None: no task has a bound)."""
        deadlines = [self.task_deadline(token) for token in self._world.tasks]
        return max((d for d in deadlines if d is not None), default=None)

    def settled(self, token: str) -> Callable[[], bool]:
        """A condition for :meth:`~.scheduler.ActorContext.wait_for`: the task is no longer open."""
        return lambda: self.task_state(token) != OPEN

    def close_task(self, token: str) -> None:
        """Close an open task without a call (its Lambda failed: Step Functions fails the task)."""
        with self._changing("TaskFailed"):
            if self.task_state(token) == OPEN:
                self._close(self.task(token), CLOSED)

    def complete_task(self, token: str) -> None:
        """A task's work returned (a Lambda task's invocation ended): it succeeds if still open.

        After its execution ended nothing is recorded: Step Functions discards the result.
        """
        with self._changing("TaskSucceeded"):
            if self.task_state(token) == OPEN:
                self._close(self.task(token), TASK_SUCCEEDED)

    def _close(self, task: Task, outcome: str) -> None:
        task.outcome, task.closed_at = outcome, self.clock.now

    def finish(self, execution_arn: str, status: str = SUCCEEDED) -> bool:
        """End a RUNNING execution with ``status``; False when it had ended already."""
        if status not in STATUSES or status == RUNNING:
            raise ValueError(f"an execution ends as one of {STATUSES[1:]}, not {status!r}")
        with self._changing(f"Execution{status.title().replace('_', '')}"):
            execution = self.execution(execution_arn)
            if execution.status != RUNNING:
                return False
            execution.status, execution.stop_date = status, self.clock.now
            return True

    # -- the record of changes ------------------------------------------------------------

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Each execution as ``sfn:<ARN>``: status and its tasks' states (what Writes show)."""
        tasks: dict[str, dict[str, str]] = {}
        for token in self._world.tasks:
            task = self._world.tasks[token]
            tasks.setdefault(task.execution_arn, {})[token] = self.task_state(token)
        return {
            KEY_PREFIX + e.arn: {"status": e.status, "name": e.name, "tasks": tasks.get(e.arn, {})}
            for e in self.executions()
        }

    @contextlib.contextmanager
    def _changing(self, operation: str) -> Iterator[None]:
        """Record what the block changed as a Write of the calling actor (if one is calling)."""
        binding = scheduler.current()
        if binding is None:
            yield
            return
        run, actor = binding
        before = self.snapshot()
        try:
            yield
        finally:
            after = self.snapshot()
            keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
            if keys:
                old = {k: before.get(k) for k in keys}
                new = {k: after.get(k) for k in keys}
                run.record(Write(run.step_count, actor.index, operation, old, new, run.clock.now))

    # -- the API, as botocore sends it ----------------------------------------------------

    def describe(self, operation: str, body: bytes | str | None) -> CallPause:
        """What a request touches: the executions it names (None: all), whether it writes."""
        data = _json(body)
        arn = data.get("executionArn")
        keys: frozenset[str] | None
        if operation in ("SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"):
            token = str(data.get("taskToken", ""))
            task = self._world.tasks.get(token)
            keys = frozenset({KEY_PREFIX + (task.execution_arn if task else f"token:{token}")})
        elif arn is not None:
            keys = frozenset({KEY_PREFIX + str(arn)})
        elif operation == "StartExecution" and data.get("name"):
            machine = str(data.get("stateMachineArn", ""))
            keys = frozenset({KEY_PREFIX + self.execution_arn(machine, str(data["name"]))})
        else:
            keys = None
        return CallPause(operation, keys, operation not in _READS)

    def send(self, operation: str, request: AWSPreparedRequest) -> AWSResponse:
        """Apply one request and give botocore the service's answer (JSON 1.0, as AWS)."""
        method = OPERATIONS.get(operation)
        if method is None:
            raise NotImplementedError(
                f"the Step Functions stand-in (interleavings/sfn.py) does not answer "
                f"{operation}; it answers {', '.join(sorted(OPERATIONS))}"
            )
        try:
            with self._changing(operation):
                payload = getattr(self, method)(_json(request.body))
        except StepFunctionsError as error:
            return json_response(request, 400, {"__type": error.code, "message": error.message})
        return json_response(request, 200, payload)

    def throttled(self, request: AWSPreparedRequest) -> AWSResponse:
        """Step Functions' answer to a throttled request (HTTP 400, nothing applied)."""
        message = "Rate exceeded (injected by the explorer)."
        return json_response(request, 400, {"__type": "ThrottlingException", "message": message})

    def _start(self, state_machine_arn: str, name: str | None, input: str) -> str:
        if state_machine_arn not in self._world.machines:
            raise StepFunctionsError(
                "StateMachineDoesNotExist", f"State Machine Does Not Exist: '{state_machine_arn}'"
            )
        if name is None:
            self._world.names_issued += 1
            name = f"execution-{self._world.names_issued}"
        arn = self.execution_arn(state_machine_arn, name)
        existing = self._world.executions.get(arn)
        if existing is not None:
            if self.status(arn) == RUNNING and existing.input == input:
                return arn
            raise StepFunctionsError("ExecutionAlreadyExists", f"Execution Already Exists: '{arn}'")
        self._world.executions[arn] = Execution(arn, name, state_machine_arn, input, self.clock.now)
        return arn

    def _start_execution(self, data: Mapping[str, Any]) -> dict[str, Any]:
        name = data.get("name")
        arn = self._start(
            str(data.get("stateMachineArn", "")),
            None if name is None else str(name),
            str(data.get("input", "{}")),
        )
        return {"executionArn": arn, "startDate": _epoch(self.execution(arn).start_date)}

    def _describe_execution(self, data: Mapping[str, Any]) -> dict[str, Any]:
        execution = self.execution(str(data.get("executionArn", "")))
        answer = {
            **_listed(execution),
            "input": execution.input,
        }
        if execution.error is not None:
            answer["error"] = execution.error
        if execution.cause is not None:
            answer["cause"] = execution.cause
        return answer

    def _get_execution_history(self, data: Mapping[str, Any]) -> dict[str, Any]:
        events = self.history(str(data.get("executionArn", "")))
        if data.get("reverseOrder"):
            events.reverse()
        size = int(data.get("maxResults") or 100)
        start = int(data.get("nextToken") or 0)
        answer: dict[str, Any] = {"events": events[start : start + size]}
        if start + size < len(events):
            answer["nextToken"] = str(start + size)
        return answer

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        """The execution's history events, oldest first, as ``GetExecutionHistory`` gives them."""
        execution = self.execution(execution_arn)
        ended = execution.stop_date if execution.status != RUNNING else None
        # (when, type, details, own key, key of the event it follows)
        raw: list[tuple[datetime, str, dict[str, Any], str | None, str | None]] = [
            (execution.start_date, "ExecutionStarted", {}, None, None)
        ]
        for task in self._world.tasks.values():
            if task.execution_arn != execution_arn:
                continue
            details: dict[str, Any] = {
                "resourceType": "lambda",
                "resource": task.resource,
                "region": self.region,
                "parameters": "{}",
            }
            if task.timeout is not None:
                details["timeoutInSeconds"] = int(task.timeout.total_seconds())
            if task.heartbeat is not None:
                details["heartbeatInSeconds"] = int(task.heartbeat.total_seconds())
            when = task.scheduled_at
            scheduled, started = f"scheduled:{task.token}", f"started:{task.token}"
            entered = None
            if task.state is not None:
                entered = f"entered:{task.token}"
                state = {"stateEnteredEventDetails": {"name": task.state}}
                raw.append((when, "TaskStateEntered", state, entered, None))
            raw.append(
                (when, "TaskScheduled", {"taskScheduledEventDetails": details}, scheduled, entered)
            )
            begun = {
                "taskStartedEventDetails": {"resourceType": "lambda", "resource": task.resource}
            }
            raw.append((when, "TaskStarted", begun, started, scheduled))
            end = self._task_end(task, ended)
            if end is not None:
                raw.append((end[0], end[1], {}, None, started))
        if ended is not None:
            kind = "Execution" + execution.status.title().replace("_", "")
            raw.append((ended, kind, {}, None, None))
        raw.sort(key=lambda event: event[0])  # stable: ties keep their order
        ids = {event[3]: index for index, event in enumerate(raw, 1) if event[3] is not None}
        events = []
        for index, (when, kind, details, _, follows) in enumerate(raw, 1):
            previous = ids[follows] if follows is not None else index - 1
            events.append(
                {"timestamp": _epoch(when), "type": kind, "id": index, "previousEventId": previous}
                | details
            )
        return events

    def _task_end(self, task: Task, ended: datetime | None) -> tuple[datetime, str] | None:
        """When and how a task ended while its execution ran (None: it did not)."""
        if task.outcome is not None and task.closed_at is not None:
            kind = "TaskSucceeded" if task.outcome == TASK_SUCCEEDED else "TaskFailed"
            return task.closed_at, kind
        deadline = self.task_deadline(task.token)
        if deadline is not None and deadline <= min(self.clock.now, ended or self.clock.now):
            return deadline, "TaskTimedOut"
        return None

    def _list_executions(self, data: Mapping[str, Any]) -> dict[str, Any]:
        machine = str(data.get("stateMachineArn", ""))
        if machine not in self._world.machines:
            raise StepFunctionsError(
                "StateMachineDoesNotExist", f"State Machine Does Not Exist: '{machine}'"
            )
        status = data.get("statusFilter")
        # Without a lag the list is the present itself (an execution a protocol started
        # with a later start date than the clock's, to order them, is listed as well).
        lag = self._world.machines[machine].list_lag
        seen = self.clock.now - lag if lag else None
        found = [
            e
            for e in (_as_of(e, seen) for e in reversed(self.executions()))  # newest first
            if e is not None
            and e.state_machine_arn == machine
            and (status is None or e.status == status)
        ]
        size = int(data.get("maxResults") or 100)
        start = int(data.get("nextToken") or 0)
        page = found[start : start + size]
        answer: dict[str, Any] = {"executions": [_listed(e) for e in page]}
        if start + size < len(found):
            answer["nextToken"] = str(start + size)
        return answer

    def _stop_execution(self, data: Mapping[str, Any]) -> dict[str, Any]:
        execution = self.execution(str(data.get("executionArn", "")))
        if execution.status == RUNNING:
            execution.status, execution.stop_date = ABORTED, self.clock.now
            execution.error = data.get("error")
            execution.cause = data.get("cause")
        return {"stopDate": _epoch(execution.stop_date or self.clock.now)}

    def _open_task(self, data: Mapping[str, Any]) -> Task:
        token = str(data.get("taskToken", ""))
        task = self.task(token)
        if self.task_state(token) != OPEN:
            raise StepFunctionsError("TaskTimedOut", _GONE)
        return task

    def _send_task_success(self, data: Mapping[str, Any]) -> dict[str, Any]:
        task = self._open_task(data)
        self._close(task, TASK_SUCCEEDED)
        task.output = str(data.get("output", "{}"))
        return {}

    def _send_task_failure(self, data: Mapping[str, Any]) -> dict[str, Any]:
        task = self._open_task(data)
        self._close(task, TASK_FAILED)
        task.error = data.get("error")
        return {}

    def _send_task_heartbeat(self, data: Mapping[str, Any]) -> dict[str, Any]:
        self._open_task(data).beat_at = self.clock.now
        return {}


def _as_of(execution: Execution, moment: datetime | None) -> Execution | None:
    """The execution as it was at ``moment`` (None: not started yet; no moment: now)."""
    if moment is None:
        return execution
    if execution.start_date > moment:
        return None
    if execution.stop_date is not None and moment < execution.stop_date:
        return replace(execution, status=RUNNING, stop_date=None, error=None, cause=None)
    return execution


def _listed(execution: Execution) -> dict[str, Any]:
    """An execution as ``ListExecutions`` shows it (``DescribeExecution`` adds to it)."""
    answer: dict[str, Any] = {
        "executionArn": execution.arn,
        "stateMachineArn": execution.state_machine_arn,
        "name": execution.name,
        "status": execution.status,
        "startDate": _epoch(execution.start_date),
    }
    if execution.stop_date is not None:
        answer["stopDate"] = _epoch(execution.stop_date)
    return answer


def _epoch(moment: datetime) -> float:
    """A timestamp as the JSON protocol carries it (seconds since the epoch)."""
    return moment.timestamp()


def _json(body: bytes | str | None) -> dict[str, Any]:
    data = json.loads(body or b"{}")
    return data if isinstance(data, dict) else {}


def json_response(
    request: AWSPreparedRequest, status: int, payload: Mapping[str, Any]
) -> AWSResponse:
    """An HTTP answer of a JSON 1.0 service (DynamoDB, Step Functions) for botocore to parse."""
    from moto.core.botocore_stubber import MockRawResponse

    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "interleavings"}
    return AWSResponse(request.url, status, headers, MockRawResponse(json.dumps(payload)))
