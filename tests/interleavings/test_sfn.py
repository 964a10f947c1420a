"""The Step Functions stand-in: what it answers, and that its calls are schedule steps.

The calls are made as the runtime makes them, through a botocore client built by
``sfn_patterns.clients`` (standard retries) and attached to a gateway; the expected
answers are Step Functions' documented ones (``InvalidToken`` for a token never issued,
``TaskTimedOut`` for a task that is no longer open, ``ExecutionAlreadyExists``, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns import clients
from sfn_patterns_localstack.interleavings.clock import FakeClock, instant_sleeps
from sfn_patterns_localstack.interleavings.gateway import Gateway
from sfn_patterns_localstack.interleavings.scheduler import (
    ActorContext,
    CallPause,
    Note,
    Option,
    Scheduler,
    WaitPause,
    Write,
    in_actor,
)
from sfn_patterns_localstack.interleavings.sfn import (
    ABORTED,
    CLOSED,
    EXECUTION_ENDED,
    OPEN,
    RUNNING,
    SUCCEEDED,
    TASK_FAILED,
    TASK_SUCCEEDED,
    TASK_TIMED_OUT,
    StepFunctions,
)
from sfn_patterns_localstack.interleavings.steps import Kind, Step
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST, MotoStore

pytestmark = pytest.mark.interleavings

MINUTE = timedelta(seconds=60)


@pytest.fixture
def world() -> StepFunctions:
    return StepFunctions(FakeClock())


def _client(gateway: Gateway, host: str = RUNTIME_HOST) -> Any:
    client = clients.client(
        "stepfunctions",
        region_name="us-east-1",
        endpoint_url=host,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    gateway.attach(client)
    return client


@pytest.fixture
def sfn(world: StepFunctions) -> Any:
    return _client(Gateway(MotoStore("unused", "us-east-1"), "pk", sfn=world))


@pytest.fixture(autouse=True)
def _no_retry_sleeps() -> Iterator[None]:
    with instant_sleeps(in_actor):
        yield


def _code(call: Any, **kwargs: Any) -> str:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    return str(raised.value.response["Error"]["Code"])


def _running(world: StepFunctions, name: str = "e1", machine: str = "holder") -> str:
    return world.start(world.add_state_machine(machine), name)


def test_a_token_succeeds_once_then_is_gone(world: StepFunctions, sfn: Any) -> None:
    arn = _running(world)
    token = world.park(arn, timeout=MINUTE)
    assert world.task_state(token) == OPEN
    sfn.send_task_success(taskToken=token, output=json.dumps({"ok": True}))
    assert world.task_state(token) == TASK_SUCCEEDED
    assert _code(sfn.send_task_success, taskToken=token, output="{}") == "TaskTimedOut"
    assert _code(sfn.send_task_heartbeat, taskToken=token) == "TaskTimedOut"
    assert _code(sfn.send_task_success, taskToken="forged", output="{}") == "InvalidToken"


def test_a_task_times_out_by_its_timeout_or_its_heartbeat(world: StepFunctions, sfn: Any) -> None:
    arn = _running(world)
    timed = world.park(arn, timeout=MINUTE)
    beating = world.park(arn, timeout=5 * MINUTE, heartbeat=MINUTE)
    world.clock.advance(MINUTE / 2)
    sfn.send_task_heartbeat(taskToken=beating)
    world.clock.advance(MINUTE / 2)
    assert world.task_state(timed) == TASK_TIMED_OUT
    assert _code(sfn.send_task_success, taskToken=timed, output="{}") == "TaskTimedOut"
    assert world.task_state(beating) == OPEN  # its heartbeat moved the deadline
    assert world.task_deadline(beating) == world.clock.now + MINUTE / 2
    world.clock.advance(MINUTE / 2)
    assert world.task_state(beating) == TASK_TIMED_OUT


def test_a_failed_or_closed_task_is_not_open(world: StepFunctions, sfn: Any) -> None:
    arn = _running(world)
    failed, closed = world.park(arn), world.park(arn)
    sfn.send_task_failure(taskToken=failed, error="Semaphore.AcquireTimeout", cause="c")
    world.close_task(closed)
    assert (world.task_state(failed), world.task_state(closed)) == (TASK_FAILED, CLOSED)
    assert world.task(failed).error == "Semaphore.AcquireTimeout"
    assert _code(sfn.send_task_success, taskToken=closed, output="{}") == "TaskTimedOut"


def test_a_stop_ends_the_execution_and_its_tasks(world: StepFunctions, sfn: Any) -> None:
    arn = _running(world)
    token = world.park(arn)
    world.clock.advance(MINUTE)
    sfn.stop_execution(executionArn=arn, error="E", cause="stopped by a test")
    described = sfn.describe_execution(executionArn=arn)
    assert described["status"] == ABORTED
    assert described["stopDate"].timestamp() == world.clock.now.timestamp()
    assert world.task_state(token) == EXECUTION_ENDED
    assert _code(sfn.send_task_success, taskToken=token, output="{}") == "TaskTimedOut"
    world.clock.advance(MINUTE)
    sfn.stop_execution(executionArn=arn)  # an ended execution: nothing changes
    assert sfn.describe_execution(executionArn=arn)["stopDate"] == described["stopDate"]
    assert not world.finish(arn)
    with pytest.raises(Exception, match="no task starts"):
        world.park(arn)
    missing = arn + "-missing"
    assert _code(sfn.describe_execution, executionArn=missing) == "ExecutionDoesNotExist"


def test_starts_are_idempotent_by_name_and_input(world: StepFunctions, sfn: Any) -> None:
    machine = world.add_state_machine("target")
    first = sfn.start_execution(stateMachineArn=machine, name="r1", input='{"a": 1}')
    again = sfn.start_execution(stateMachineArn=machine, name="r1", input='{"a": 1}')
    assert first["executionArn"] == again["executionArn"] == world.execution_arn(machine, "r1")
    assert (
        _code(sfn.start_execution, stateMachineArn=machine, name="r1", input='{"a": 2}')
        == "ExecutionAlreadyExists"
    )
    world.finish(first["executionArn"])
    assert (
        _code(sfn.start_execution, stateMachineArn=machine, name="r1", input='{"a": 1}')
        == "ExecutionAlreadyExists"
    )
    unnamed = sfn.start_execution(stateMachineArn=machine)["executionArn"]
    assert world.status(unnamed) == RUNNING
    missing = world.state_machine_arn("missing")
    assert _code(sfn.start_execution, stateMachineArn=missing) == "StateMachineDoesNotExist"


def test_executions_of_a_timed_machine_end_by_the_clock(world: StepFunctions, sfn: Any) -> None:
    machine = world.add_state_machine("target", runs_for=MINUTE)
    arn = sfn.start_execution(stateMachineArn=machine, name="r1")["executionArn"]
    world.clock.advance(MINUTE / 2)
    assert sfn.describe_execution(executionArn=arn)["status"] == RUNNING
    world.clock.advance(MINUTE / 2)
    assert sfn.describe_execution(executionArn=arn)["status"] == SUCCEEDED


def test_list_executions_newest_first_filtered_and_paged(world: StepFunctions, sfn: Any) -> None:
    machine = world.add_state_machine("holder")
    other = world.add_state_machine("other")
    names = ["a", "b", "c", "d"]
    for name in names:
        world.start(machine, name)
        world.clock.advance(MINUTE)
    world.start(other, "x")
    world.finish(world.execution_arn(machine, "b"))
    page = sfn.list_executions(stateMachineArn=machine, statusFilter=RUNNING, maxResults=2)
    assert [e["name"] for e in page["executions"]] == ["d", "c"]
    rest = sfn.list_executions(
        stateMachineArn=machine, statusFilter=RUNNING, maxResults=2, nextToken=page["nextToken"]
    )
    assert [e["name"] for e in rest["executions"]] == ["a"] and "nextToken" not in rest
    paginator = sfn.get_paginator("list_executions")  # as the oldest-first gate lists
    listed = [
        e["name"] for p in paginator.paginate(stateMachineArn=machine) for e in p["executions"]
    ]
    assert listed == ["d", "c", "b", "a"]
    missing = world.state_machine_arn("missing")
    assert _code(sfn.list_executions, stateMachineArn=missing) == "StateMachineDoesNotExist"


def test_a_lagging_list_shows_the_executions_as_they_were(world: StepFunctions, sfn: Any) -> None:
    lag = MINUTE / 2
    machine = world.add_state_machine("target", runs_for=2 * MINUTE, list_lag=lag)
    early = sfn.start_execution(stateMachineArn=machine, name="early")["executionArn"]
    world.clock.advance(MINUTE)
    sfn.start_execution(stateMachineArn=machine, name="late")
    world.finish(early)

    def listed() -> list[tuple[str, str]]:
        page = sfn.list_executions(stateMachineArn=machine, statusFilter=RUNNING)
        return [(e["name"], e["status"]) for e in page["executions"]]

    # "late" started less than the lag ago; "early" ended since the moment the list shows.
    assert listed() == [("early", RUNNING)]
    assert sfn.describe_execution(executionArn=early)["status"] == SUCCEEDED
    world.clock.advance(lag)
    assert listed() == [("late", RUNNING)]


def test_the_history_shows_each_task_and_its_end_only_while_the_execution_ran(
    world: StepFunctions, sfn: Any
) -> None:
    """As on AWS: a task still open at the stop has no end event (its result is discarded)."""
    arn = _running(world)
    done = world.park(arn, timeout=MINUTE, resource="invoke")
    world.clock.advance(MINUTE / 2)
    world.complete_task(done)
    world.park(arn, timeout=MINUTE)
    world.clock.advance(2 * MINUTE)  # it times out a minute after it was scheduled
    running = world.park(arn, timeout=10 * MINUTE, resource="invoke")
    world.clock.advance(MINUTE)
    sfn.stop_execution(executionArn=arn, error="E", cause="stopped in a task")
    world.complete_task(running)  # its Lambda returns after the stop: nothing recorded
    pages = sfn.get_paginator("get_execution_history").paginate(
        executionArn=arn, reverseOrder=True, PaginationConfig={"PageSize": 3}
    )
    events = [event for page in pages for event in page["events"]]
    assert [e["id"] for e in events] == list(range(len(events), 0, -1))  # newest first
    by_id = {e["id"]: e for e in events}
    ends = {
        e["type"]: by_id[by_id[e["previousEventId"]]["previousEventId"]]
        for e in events
        if e["type"] in ("TaskSucceeded", "TaskTimedOut")
    }
    scheduled = [e for e in reversed(events) if e["type"] == "TaskScheduled"]
    assert [e["taskScheduledEventDetails"]["timeoutInSeconds"] for e in scheduled] == [60, 60, 600]
    assert ends == {"TaskSucceeded": scheduled[0], "TaskTimedOut": scheduled[1]}
    [timed_out] = [e for e in events if e["type"] == "TaskTimedOut"]
    assert timed_out["timestamp"].timestamp() == (world.clock.start + 1.5 * MINUTE).timestamp()
    assert [e["type"] for e in events[:1]] == ["ExecutionAborted"]
    assert [e["type"] for e in events].count("TaskStarted") == 3


def test_an_operation_the_stand_in_does_not_answer_is_named(sfn: Any) -> None:
    with pytest.raises(NotImplementedError, match="does not answer ListStateMachines"):
        sfn.list_state_machines()


def test_a_gateway_without_the_stand_in_refuses_a_step_functions_client() -> None:
    with pytest.raises(ValueError, match="sfn only when given a StepFunctions stand-in"):
        _client(Gateway(MotoStore("unused", "us-east-1"), "pk"))


# -- as schedule steps ---------------------------------------------------------------------------


def _scheduler(world: StepFunctions, *bodies: Any) -> Scheduler:
    named = [(f"a{i}", body) for i, body in enumerate(bodies)]
    return Scheduler(named, world.clock, MINUTE)


def test_a_call_is_a_pause_point_and_its_change_a_write(world: StepFunctions) -> None:
    arn = _running(world)
    token = world.park(arn)
    gateway = Gateway(MotoStore("unused", "us-east-1"), "pk", sfn=world)
    sfn = _client(gateway)

    def wake(ctx: ActorContext) -> None:
        try:
            sfn.send_task_success(taskToken=token, output="{}")
            ctx.note("sent")
        except ClientError as error:
            ctx.note(error.response["Error"]["Code"])

    run = _scheduler(world, wake)
    run.start()
    try:
        [option, *_] = run.options()
        assert option.pause == CallPause("SendTaskSuccess", frozenset({"sfn:" + arn}), True)
        assert world.task_state(token) == OPEN
        run.perform(Step(Kind.LOSE, 0))  # applied, the answer lost: botocore sends it again
        assert world.task_state(token) == TASK_SUCCEEDED
        run.perform(Step(Kind.RUN, 0))
    finally:
        run.close()
    [write] = [e for e in run.events if isinstance(e, Write)]
    assert (write.actor, write.operation, write.step) == (0, "SendTaskSuccess", 1)
    key = "sfn:" + arn
    assert write.before[key]["tasks"] == {token: OPEN}
    assert write.after[key]["tasks"] == {token: TASK_SUCCEEDED}
    # The re-sent call finds the task closed: what the runtime must take for success.
    assert [e.text for e in run.events if isinstance(e, Note)] == ["TaskTimedOut"]


def test_a_throttled_call_is_not_applied_and_is_retried(world: StepFunctions) -> None:
    arn = _running(world)
    gateway = Gateway(MotoStore("unused", "us-east-1"), "pk", sfn=world)
    sfn = _client(gateway)

    def stop(ctx: ActorContext) -> None:
        sfn.stop_execution(executionArn=arn)

    run = _scheduler(world, stop)
    run.start()
    try:
        run.perform(Step(Kind.THROTTLE, 0))
        assert world.status(arn) == RUNNING and run.events == []
        run.perform(Step(Kind.RUN, 0))
    finally:
        run.close()
    assert world.status(arn) == ABORTED
    assert [e.operation for e in run.events if isinstance(e, Write)] == ["StopExecution"]


def test_calls_about_one_execution_do_not_commute(world: StepFunctions) -> None:
    a, b = _running(world, "a"), _running(world, "b")
    token = world.park(a)

    def option(actor: int, operation: str, **body: Any) -> Option:
        pause = world.describe(operation, json.dumps(body))
        return Option(Step(Kind.RUN, actor), pause)

    wake = option(0, "SendTaskSuccess", taskToken=token, output="{}")
    assert not wake.independent(option(1, "StopExecution", executionArn=a))
    assert wake.independent(option(1, "StopExecution", executionArn=b))
    assert option(0, "DescribeExecution", executionArn=a).independent(
        option(1, "DescribeExecution", executionArn=a)
    )
    listing = option(0, "ListExecutions", stateMachineArn=world.state_machine_arn("holder"))
    assert not listing.independent(option(1, "StopExecution", executionArn=b))
    # An execution moving on after its token reads the execution: a stop of it does not commute.
    resumed = Option(Step(Kind.RUN, 0), WaitPause(None, world.settled(token), "", wake.pause.keys))
    assert not resumed.independent(option(1, "StopExecution", executionArn=a))
    assert resumed.independent(option(1, "StopExecution", executionArn=b))
    assert Option(Step(Kind.RUN, 0), WaitPause()).independent(
        option(1, "StopExecution", executionArn=a)
    )


def test_an_execution_parked_on_its_token_moves_on_once_the_token_is_sent(
    world: StepFunctions,
) -> None:
    arn = _running(world)
    token = world.park(arn, timeout=5 * MINUTE)
    gateway = Gateway(MotoStore("unused", "us-east-1"), "pk", sfn=world)
    sfn = _client(gateway)
    key = frozenset({"sfn:" + arn})

    def parked(ctx: ActorContext) -> None:
        ctx.wait_for(world.settled(token), "for the token", keys=key)
        ctx.note(world.task_state(token))

    def releaser(ctx: ActorContext) -> None:
        sfn.send_task_success(taskToken=token, output="{}")

    run = _scheduler(world, parked, releaser)
    run.start()
    try:
        assert all(o.step.actor != 0 for o in run.options())
        waiting = run.actors[0].pause
        assert isinstance(waiting, WaitPause) and waiting.keys == key
        run.perform(Step(Kind.RUN, 1))
        assert Step(Kind.RUN, 0) in {o.step for o in run.options()}
        run.perform(Step(Kind.RUN, 0))
    finally:
        run.close()
    assert [e.text for e in run.events if isinstance(e, Note)] == [TASK_SUCCEEDED]


def test_a_wait_with_a_deadline_ends_at_the_deadline(world: StepFunctions) -> None:
    arn = _running(world)
    token = world.park(arn, timeout=MINUTE)

    def parked(ctx: ActorContext) -> None:
        deadline = world.task_deadline(token)
        ctx.wait_for(world.settled(token), "for the token", until=deadline)
        ctx.note(world.task_state(token))

    run = _scheduler(world, parked)
    run.start()
    try:
        assert [o.step for o in run.options()] == [Step(Kind.TICK)]
        run.perform(Step(Kind.TICK))
        run.perform(Step(Kind.RUN, 0))
    finally:
        run.close()
    assert [e.text for e in run.events if isinstance(e, Note)] == [TASK_TIMED_OUT]


def test_save_and_restore_give_each_run_the_same_start(world: StepFunctions) -> None:
    arn = _running(world)
    saved = world.save()
    token = world.park(arn)
    world.finish(arn)
    world.restore(saved)
    assert world.status(arn) == RUNNING
    with pytest.raises(Exception, match="InvalidToken"):
        world.task(token)
