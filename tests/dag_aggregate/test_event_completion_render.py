"""Event completion in the rendered definitions: WithEvent, the park, the fallback, the budget.

Offline: the definitions are rendered by the planner and parsed by LocalStack's ASL
parser. That they run, and that the history formulas match real executions, is
checked on LocalStack in test_history_on_localstack.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate import history
from sfn_patterns_cli.dag_aggregate.dependency import plan_document, render_task_machine
from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import render

from .helpers import EXAMPLES, write_sql

COMPLETION_ARN = "arn:aws-cn:lambda:cn-north-1:123456789012:function:dag-completion"
EVENTS = RenderOptions(
    target=Target(database="dev", workgroup_name="wg"),
    completion="event",
    completion_function_arn=COMPLETION_ARN,
    fallback_seconds=300,
    partition="aws-cn",
)


def _iteration(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    first_map = next(s for s in definition["States"].values() if s["Type"] == "Map")
    return first_map["ItemProcessor"]["States"]


def test_level_tasks_run_with_event_and_park_until_it_comes() -> None:
    from sfn_patterns_localstack.asl import validate

    text = render(plan_from_dir(EXAMPLES), "parent-level", EVENTS)
    validate(text)
    states = _iteration(json.loads(text))
    execute = states["S1 Execute batch"]
    assert execute["Parameters"]["WithEvent"] is True
    assert execute["Next"] == "S1 Poll Await"
    park = states["S1 Poll Await"]
    assert park["Resource"] == "arn:aws-cn:states:::lambda:invoke.waitForTaskToken"
    assert park["Parameters"]["FunctionName"] == COMPLETION_ARN
    assert park["Parameters"]["Payload"]["job_id.$"] == "$.statement.id"
    assert park["Parameters"]["Payload"]["max_checks.$"] == "$.task.max_polls"
    assert park["TimeoutSeconds"] == 300
    catches = {c["ErrorEquals"][0]: c["Next"] for c in park["Catch"]}
    assert catches == {
        "States.Timeout": "S1 Poll Get Status",  # the fallback describe
        "JobTimeoutError": "S1 Cancel",  # out of fallback checks: cancel the statement
        "States.ALL": "S1 Poll error",
    }
    # A failed statement's event has no message: describe it before reporting.
    check = states["S1 Poll Check"]
    assert [c["Next"] for c in check["Choices"]] == [
        "S1 Finished",
        "S1 Failure detail",
        "S1 Poll Await",
    ]
    assert check["Default"] == "S1 Unexpected status"
    assert states["S1 Failure detail"]["Next"] == "S1 Statement ended?"
    assert "$.poll.error.Cause" in states["S1 Timed out"]["CausePath"]
    # Every service-integration ARN carries the partition given.
    assert '"arn:aws:' not in text


def test_max_polls_are_fallback_checks_with_events(tmp_path: Path) -> None:
    sql = write_sql(
        tmp_path / "sql",
        {"a": "-- sfn: timeout=1000\nSELECT 1 AS x", "b": "SELECT x FROM agg.a"},
    )
    document = plan_document(plan_from_dir(sql), EVENTS)
    polls = {name: task["task"]["max_polls"] for name, task in document["tasks"].items()}
    assert polls == {"a": 4, "b": 12}  # ceil(1000 / 300), ceil(3600 / 300)


def test_task_machine_parks_with_events() -> None:
    definition = json.loads(render_task_machine(EVENTS, "arn:aws-cn:lambda:x:1:function:rt"))
    states = definition["States"]
    assert states["Execute"]["Next"] == "Task Poll Await"
    assert states["Execute"]["Parameters"]["WithEvent"] is True
    assert states["Task Poll Check"]["Choices"][1]["Next"] == "Task Failure detail"
    assert states["Report success"]["Resource"] == "arn:aws-cn:states:::lambda:invoke"


def test_event_completion_needs_the_function() -> None:
    options = RenderOptions(target=Target(database="dev", workgroup_name="wg"), completion="event")
    with pytest.raises(RenderError, match="completion-function-arn"):
        render(plan_from_dir(EXAMPLES), "parent-level", options)


def test_a_level_strategy_over_the_history_limit_fails_with_the_numbers(tmp_path: Path) -> None:
    # 40 tasks polling every second for an hour: far more than 25,000 events.
    sql = write_sql(tmp_path / "sql", {f"t{i}": "SELECT 1 AS x" for i in range(40)})
    options = RenderOptions(
        target=Target(database="dev", workgroup_name="wg"), poll_interval=1, default_wait=0
    )
    with pytest.raises(RenderError) as raised:
        render(plan_from_dir(sql), "parent-level", options)
    message = str(raised.value)
    assert "exceeds the 25,000-event limit" in message
    assert "40 tasks x (24 + 18 execute retries) + 144000 polls in all" in message
    assert "Use strategy dependency" in message
    # The same DAG with events fits: 12 fallback checks per task.
    events = RenderOptions(
        target=Target(database="dev", workgroup_name="wg"),
        completion="event",
        completion_function_arn=COMPLETION_ARN,
    )
    render(plan_from_dir(sql), "parent-level", events)
    budget = history.level_budget(plan_from_dir(sql), "parent-level", events)
    assert budget.fits and budget.worst_case == 6 + 6 + 40 * (21 + 18) + 40 * 12 * 13 + 5


def test_a_task_execution_over_the_history_limit_fails(tmp_path: Path) -> None:
    sql = write_sql(tmp_path / "sql", {"slow": "-- sfn: timeout=86400 wait=0\nSELECT 1 AS x"})
    options = RenderOptions(target=Target(database="dev", workgroup_name="wg"), poll_interval=1)
    with pytest.raises(RenderError, match=r"task slow: 31 \+ 36 retries .* 86400 polls"):
        plan_document(plan_from_dir(sql), options)
