"""dag-aggregate tasks on LocalStack: event completion, its fallback, and the history formulas.

tests/dag_aggregate/event_completion applies the event-completion building block the
way modules/dag-aggregate configures it (the statements' "Redshift Data Statement
Status Change" events, which the harness's Data API publishes as AWS does). Each
scenario renders a definition with the planner, creates it directly and runs it on
the DuckDB-backed Data API; ``/* sfnp:sleep=N */`` keeps a statement running N s.

The history formulas the plan-time budget uses (``sfn_patterns_cli.dag_aggregate.
history``) are checked here against real histories: the polls (or fallback checks)
are counted in each history, and its length must be what the formula gives for them.
"""

from __future__ import annotations

import io
import json
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate import history
from sfn_patterns_cli.dag_aggregate.dependency import plan_document, render_task_machine
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import render
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.executions import history as history_of
from sfn_patterns_localstack.executions import wait_stopped
from sfn_patterns_localstack.roles import delete_role, function_role, trust_policy
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace

from .helpers import count_rows, sql_runner_policy, write_sql

# Every run executes its statements through the Redshift Data API (tests/portable.py).
pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.needs("redshift-data")]

CONFIG = Path(__file__).resolve().parent / "event_completion"
SCENARIOS = (
    "events",
    "parent",
    "polls",
    "task-events",
    "task-polls",
    "failed",
    "timeout",
    "lost",
    "duplicates",
    "task-duplicates",
)
FALLBACK = 3
# c's statement runs past a whole fallback period even when its park is entered late:
# a loaded machine took more than a second from the submission to the park, and a
# 4-s statement then ended before the first 3-s fallback check (no check to count).
C_SECONDS = 2 * FALLBACK + 1
# Three tasks on two levels: a (a reload: DELETE + INSERT in one batch) and c (a
# statement that runs C_SECONDS, longer than two fallback periods) first, then b.
DAG = {
    "a": "SELECT 1 AS x",
    "b": "-- sfn: mode=append\nSELECT x FROM agg.a",
    "c": f"-- sfn: mode=append\n/* sfnp:sleep={C_SECONDS} */ SELECT 2 AS x",
}
TASK_DONE = "def handler(event, context):\n    return {'recorded': event.get('task_id')}\n"


@pytest.fixture(scope="module")
def completion(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    prefix = f"dagev-{int(time.time()) % 100000}"
    account = aws("sts").get_caller_identity()["Account"]
    machines = {
        name: f"arn:aws:states:us-east-1:{account}:stateMachine:{prefix}-{name}"
        for name in SCENARIOS
    }
    variables = {"name_prefix": prefix, "state_machine_arns": list(machines.values())}
    workspace = Workspace(CONFIG, localstack_endpoint, tmp_path_factory.mktemp("dag-events"))
    iam, lam = aws("iam"), aws("lambda")
    # The machines' role: _warehouse grants it each workgroup and the functions.
    role = iam.create_role(
        RoleName=f"{prefix}-sfn", AssumeRolePolicyDocument=trust_policy("states")
    )["Role"]
    # The task-done function's own role: its log group and streams, nothing else.
    task_done_role = function_role(iam, f"{prefix}-task-done", [f"{prefix}-task-done"], account)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("task_done.py", TASK_DONE)
    task_done = lam.create_function(
        FunctionName=f"{prefix}-task-done",
        Runtime="python3.12",
        Role=task_done_role,
        Handler="task_done.handler",
        Code={"ZipFile": archive.getvalue()},
    )["FunctionArn"]
    lam.get_waiter("function_active_v2").wait(FunctionName=task_done)
    created: list[str] = []
    try:
        with workspace.applied(variables) as outputs:
            yield {
                "prefix": prefix,
                "function": outputs["function_arn"],
                "rule": outputs["rule_name"],
                "role": role["Arn"],
                "role_name": role["RoleName"],
                "task_done": task_done,
                "created": created,
                "workgroups": [],
            }
    finally:
        sfn = aws("stepfunctions")
        for machine in created:
            sfn.delete_state_machine(stateMachineArn=machine)
        lam.delete_function(FunctionName=task_done)
        logs = aws("logs")
        for group in logs.describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{prefix}-")[
            "logGroups"
        ]:
            logs.delete_log_group(logGroupName=group["logGroupName"])
        delete_role(iam, role["RoleName"])
        delete_role(iam, f"{prefix}-task-done")
    assert leftovers(aws, prefix) == {}


def _warehouse(aws: Callable, completion: dict[str, Any], tables: list[str]) -> str:
    """A workgroup of its own with the agg tables the tasks write; the machines' role may use it."""
    workgroup = f"wg-{uuid.uuid4().hex[:6]}"
    redshift = aws("redshift-data")
    for sql in ["CREATE SCHEMA agg", *(f"CREATE TABLE agg.{t} (x INTEGER)" for t in tables)]:
        statement = redshift.execute_statement(WorkgroupName=workgroup, Database="dev", Sql=sql)
        while redshift.describe_statement(Id=statement["Id"])["Status"] != "FINISHED":
            time.sleep(0.05)
    completion["workgroups"].append(workgroup)
    aws("iam").put_role_policy(
        RoleName=completion["role_name"],
        PolicyName="run-sql",
        PolicyDocument=sql_runner_policy(
            completion["workgroups"], (completion["function"], completion["task_done"])
        ),
    )
    return workgroup


def _options(completion: dict[str, Any], workgroup: str, mode: str) -> RenderOptions:
    return RenderOptions(
        target=Target(database="dev", workgroup_name=workgroup),
        completion=mode,
        completion_function_arn=completion["function"],
        fallback_seconds=FALLBACK,
        poll_interval=1,
        default_wait=1,
        default_timeout=60,
    )


def _start(aws: Callable, completion: dict, scenario: str, definition: str, payload: dict) -> str:
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"{completion['prefix']}-{scenario}", definition=definition, roleArn=completion["role"]
    )["stateMachineArn"]
    completion["created"].append(machine)
    return sfn.start_execution(stateMachineArn=machine, input=json.dumps(payload))["executionArn"]


def _finish(aws: Callable, executions: dict[str, str], timeout: float = 120) -> dict[str, dict]:
    """Wait for every execution; return scenario -> describe_execution + its whole history."""
    sfn = aws("stepfunctions")
    stopped = wait_stopped(sfn, list(executions.values()), timeout)
    pending = {name for name, arn in executions.items() if arn not in stopped}
    assert not pending, f"still running: {pending}"
    return {
        name: {**stopped[arn], "events": history_of(sfn, arn)} for name, arn in executions.items()
    }


def _assert_succeeded(run: dict[str, Any]) -> None:
    """SUCCEEDED, or fail naming the run's error, cause and last events (not its ARN only)."""
    tail = [e["type"] for e in run["events"][-12:]]
    assert run["status"] == "SUCCEEDED", (run["status"], run.get("error"), run.get("cause"), tail)


def _count(events: list[dict], event_type: str, state_suffix: str | None = None) -> int:
    return sum(
        1
        for e in events
        if e["type"] == event_type
        and (state_suffix is None or e["stateEnteredEventDetails"]["name"].endswith(state_suffix))
    )


# A fallback check that finds the statement already ended costs its Get Status (5
# events) and nothing else: its TaskTimedOut and Exited take the place of the park's
# TaskSucceeded and Exited, and the Check after it is the one every task has. The
# formula's per-fallback count (13) is for a check that parks again: on a loaded
# machine a statement's event can come after the fallback period that saw it end.
ENDED_AT_FALLBACK_EVENTS = 5


def _fallbacks(events: list[dict], tasks: int) -> tuple[int, int]:
    """(fallback checks that parked again, fallback checks that found the statement ended)."""
    checks = _count(events, "TaskTimedOut")
    parked_again = _count(events, "TaskStateEntered", "Poll Await") - tasks
    assert 0 <= parked_again <= checks, (parked_again, checks)
    return parked_again, checks - parked_again


def _unsubmitted(events: list[dict]) -> int:
    """Parks that timed out before their invoke returned: no TaskSubmitted (AWS writes none).

    The formula counts one per park; on a loaded machine the park's Lambda can take
    longer than the fallback period to store its token.
    """
    missing = _count(events, "TaskStateEntered", "Poll Await") - _count(events, "TaskSubmitted")
    assert missing >= 0, missing
    return missing


def _level_events(plan: Plan, strategy: str, options: RenderOptions, events: list[dict]) -> int:
    """What the formula gives for this history's fallback checks, counted in the history."""
    parked_again, ended = _fallbacks(events, len(plan.level))
    return (
        history.level_history(plan, strategy, options, parked_again)
        + ENDED_AT_FALLBACK_EVENTS * ended
        - _unsubmitted(events)
    )


def _task_events(options: RenderOptions, events: list[dict]) -> int:
    """The same for one dependency task execution (one task, one park)."""
    parked_again, ended = _fallbacks(events, 1)
    return (
        history.task_execution_history(options, parked_again)
        + ENDED_AT_FALLBACK_EVENTS * ended
        - _unsubmitted(events)
    )


def _timeline(events: list[dict]) -> str:
    """The history, one short line per event (ms from the start, id, previous id, type, state).

    A count that misses the formula by an event or two is a timing path nobody had
    seen; this is what it takes to name it from a CI log.
    """
    start = events[0]["timestamp"]
    lines = []
    for e in events:
        name = next(
            (v["name"] for k, v in e.items() if k.endswith("EventDetails") and "name" in v), ""
        )
        ms = int((e["timestamp"] - start).total_seconds() * 1000)
        lines.append(f"{ms:>6} {e['id']:>3}<{e.get('previousEventId', 0):<3} {e['type']} {name}")
    return "\n".join(lines)


def _assert_formula(events: list[dict], expected: int) -> None:
    """The history is as long as the formula says, or fail printing its timeline."""
    assert len(events) == expected, f"{len(events)} events, formula {expected}:\n" + _timeline(
        events
    )


@pytest.fixture(scope="module")
def runs(
    completion: dict[str, Any], aws: Callable, tmp_path_factory, localstack_endpoint: str
) -> dict[str, Any]:
    """Every scenario but the lost and duplicated events, at once; then each on its own."""
    root = tmp_path_factory.mktemp("dag-sql")
    plan = plan_from_dir(write_sql(root / "dag", DAG))
    broken = "-- sfn: external=raw.missing\nSELECT y FROM raw.missing"
    failing = plan_from_dir(write_sql(root / "failed", {"broken": broken}))
    slow = plan_from_dir(
        write_sql(
            root / "slow",
            {"slow": "-- sfn: mode=append timeout=4\n/* sfnp:sleep=60 */ SELECT 1 AS x"},
        )
    )

    def options(mode: str) -> RenderOptions:
        # Each scenario writes its own warehouse: no two runs race on one table.
        return _options(
            completion, _warehouse(aws, completion, ["a", "b", "c", "slow", "broken"]), mode
        )

    def task_input(mode_options: RenderOptions) -> dict[str, Any]:
        task = plan_document(plan, mode_options)["tasks"]["c"]["task"]
        return {"run_id": "r1", "task_id": "c", "attempt": 1, "task": task}

    events, polls = options("event"), options("poll")
    task_events, task_polls = options("event"), options("poll")
    task_done = completion["task_done"]
    started = {
        "events": _start(aws, completion, "events", render(plan, "simple-level", events), {}),
        "parent": _start(
            aws, completion, "parent", render(plan, "parent-level", options("event")), {}
        ),
        "polls": _start(aws, completion, "polls", render(plan, "simple-level", polls), {}),
        "task-events": _start(
            aws,
            completion,
            "task-events",
            render_task_machine(task_events, task_done),
            task_input(task_events),
        ),
        "task-polls": _start(
            aws,
            completion,
            "task-polls",
            render_task_machine(task_polls, task_done),
            task_input(task_polls),
        ),
        "failed": _start(
            aws, completion, "failed", render(failing, "simple-level", options("event")), {}
        ),
        "timeout": _start(
            aws, completion, "timeout", render(slow, "simple-level", options("event")), {}
        ),
    }
    results = _finish(aws, started)
    # Events lost: with the rule's target removed, only the fallback describe can see
    # the end. (Stock LocalStack 4.14.0 still delivers to a DISABLED rule; only the
    # harness's emulation/fixes/events_rule_state.py stops that.)
    bus = aws("events")
    targets = bus.list_targets_by_rule(Rule=completion["rule"])["Targets"]
    bus.remove_targets(Rule=completion["rule"], Ids=[t["Id"] for t in targets])
    try:
        quick = plan_from_dir(write_sql(root / "lost", {"a": "-- sfn: mode=append\nSELECT 1 AS x"}))
        lost = _start(aws, completion, "lost", render(quick, "simple-level", options("event")), {})
        results.update(_finish(aws, {"lost": lost}))
    finally:
        bus.put_targets(Rule=completion["rule"], Targets=targets)
    # Events duplicated (EventBridge delivers at least once): the harness's injector
    # sends every statement's completion event to the rule's target twice.
    twice, task_twice = options("event"), options("event")
    with faults.applied(
        localstack_endpoint,
        {
            "seed": 28,
            "faults": [
                {
                    "service": "events",
                    "operation": "PutEvents",
                    "kind": "event_duplicate",
                    "resource": completion["rule"],
                    "probability": 1.0,
                }
            ],
        },
    ):
        doubled = {
            "duplicates": _start(
                aws, completion, "duplicates", render(plan, "simple-level", twice), {}
            ),
            "task-duplicates": _start(
                aws,
                completion,
                "task-duplicates",
                render_task_machine(task_twice, task_done),
                task_input(task_twice),
            ),
        }
        results.update(_finish(aws, doubled))
        duplicated = [e for e in faults.log(localstack_endpoint) if e["kind"] == "event_duplicate"]
    return {
        "results": results,
        "plan": plan,
        "events": events,
        "polls": polls,
        "quick": quick,
        "twice": twice,
        "task_twice": task_twice,
        "duplicated": duplicated,
    }


def test_events_resume_every_task_and_the_formula_holds(runs: dict[str, Any]) -> None:
    run = runs["results"]["events"]
    _assert_succeeded(run)
    events = run["events"]
    # c ran C_SECONDS: at least one fallback describe (it was STARTED), then its event
    # resumed it; a and b: their events resumed the first park (a late event on a
    # loaded machine adds a fallback check, which the count below includes).
    fallbacks = _count(events, "TaskTimedOut")
    assert fallbacks >= 1
    assert _count(events, "TaskStateEntered", "Poll Get Status") == fallbacks
    plan: Plan = runs["plan"]
    _assert_formula(events, _level_events(plan, "simple-level", runs["events"], events))


def test_the_parent_level_strategy_costs_what_the_formula_says(runs: dict[str, Any]) -> None:
    run = runs["results"]["parent"]
    _assert_succeeded(run)
    plan: Plan = runs["plan"]
    # Stages differ from simple-level's ([a], then [b, c]); the per-task counts do not.
    assert [list(stage.tasks) for stage in plan.stages["parent-level"]] != [
        list(stage.tasks) for stage in plan.stages["simple-level"]
    ]
    _assert_formula(
        run["events"], _level_events(plan, "parent-level", runs["events"], run["events"])
    )


def test_polls_cost_what_the_formula_says(runs: dict[str, Any]) -> None:
    run = runs["results"]["polls"]
    _assert_succeeded(run)
    polls = _count(run["events"], "WaitStateEntered", "Poll Wait Poll")
    assert polls >= 2  # c ran C_SECONDS, polled every second after a 1-s wait
    _assert_formula(
        run["events"], history.level_history(runs["plan"], "simple-level", runs["polls"], polls)
    )


def test_task_executions_cost_what_the_formula_says(runs: dict[str, Any]) -> None:
    with_events = runs["results"]["task-events"]
    assert with_events["status"] == "SUCCEEDED", with_events
    parked_again, ended = _fallbacks(with_events["events"], 1)
    assert parked_again + ended >= 1  # c ran C_SECONDS, past one fallback period
    _assert_formula(with_events["events"], _task_events(runs["events"], with_events["events"]))
    polled = runs["results"]["task-polls"]
    assert polled["status"] == "SUCCEEDED", polled
    polls = _count(polled["events"], "WaitStateEntered", "Poll Wait Poll")
    _assert_formula(polled["events"], history.task_execution_history(runs["polls"], polls))


def test_a_failed_statement_reports_its_error_after_its_event(runs: dict[str, Any]) -> None:
    run = runs["results"]["failed"]
    assert run["status"] == "FAILED"
    cause = run.get("cause", "") + run.get("error", "")
    assert "DagAggregate.StatementFailed" in cause
    # The event carries no message; the describe after it does (DuckDB's, naming the table).
    assert "missing" in cause


def test_a_statement_past_its_timeout_is_cancelled(runs: dict[str, Any], aws: Callable) -> None:
    run = runs["results"]["timeout"]
    assert run["status"] == "FAILED"
    assert "DagAggregate.TaskTimedOut" in run.get("error", "") + run.get("cause", "")
    assert "still running at its timeout" in run.get("cause", "")
    # timeout=4, fallback 3 s: two fallback checks, then the park raised JobTimeoutError.
    assert _count(run["events"], "TaskTimedOut") == 2


def test_without_events_the_fallback_describe_completes(runs: dict[str, Any]) -> None:
    run = runs["results"]["lost"]
    _assert_succeeded(run)
    fallbacks = _count(run["events"], "TaskTimedOut")
    assert fallbacks == 1
    elapsed = (run["stopDate"] - run["startDate"]).total_seconds()
    assert elapsed >= FALLBACK
    # The one check found the statement ended: this history is where the cost of a
    # fallback that ends a task (ENDED_AT_FALLBACK_EVENTS) is measured every run.
    assert _fallbacks(run["events"], 1) == (0, 1)
    _assert_formula(
        run["events"], _level_events(runs["quick"], "simple-level", runs["events"], run["events"])
    )


def test_a_duplicated_completion_event_runs_no_task_twice(
    runs: dict[str, Any], aws: Callable
) -> None:
    """EventBridge delivered each statement's completion event twice.

    The second delivery's SendTaskSuccess finds its token used. Oracles: the injector's
    log (the four task statements' events, each sent twice), both runs SUCCEEDED, each
    append table's rows (a task run again, or its rows counted twice, doubles them),
    and the history formulas (a duplicate adds no event to any history).
    """
    assert len(runs["duplicated"]) >= 4, runs["duplicated"]
    level, task = runs["results"]["duplicates"], runs["results"]["task-duplicates"]
    assert level["status"] == "SUCCEEDED", level
    assert task["status"] == "SUCCEEDED", task
    redshift = aws("redshift-data")
    level_workgroup = runs["twice"].target.workgroup_name
    assert {t: count_rows(redshift, level_workgroup, t) for t in "abc"} == {"a": 1, "b": 1, "c": 1}
    assert count_rows(redshift, runs["task_twice"].target.workgroup_name, "c") == 1
    plan: Plan = runs["plan"]
    _assert_formula(
        level["events"], _level_events(plan, "simple-level", runs["twice"], level["events"])
    )
    _assert_formula(task["events"], _task_events(runs["task_twice"], task["events"]))
