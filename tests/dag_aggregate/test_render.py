"""ASL rendering: valid JSON, parsed by LocalStack's ASL parser, SQL kept exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target, max_polls
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import render
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES

from .helpers import EXAMPLES, write_sql

WORKGROUP = Target(database="dev", workgroup_name="wg")
NASTY = (
    "-- sfn: mode=append\n"
    "-- it's {not} a \\ comment\n"
    "SELECT 'it''s {x} \\ \"quoted\"\ttab' AS s,\n"
    "       'line1\nline2' AS multi\n"
    "FROM agg.plain"
)


@pytest.fixture(scope="module")
def analyse() -> Any:
    from sfn_patterns_localstack.asl import validate

    return validate


@pytest.fixture
def nasty_plan(tmp_path: Path) -> Plan:
    return plan_from_dir(
        write_sql(tmp_path / "sql", {"plain": "SELECT 1 AS x", "nasty": NASTY, "z": "SELECT 2"})
    )


def states_of(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every state, including those inside Map iterators."""
    found: dict[str, dict[str, Any]] = {}
    for name, state in definition["States"].items():
        found[name] = state
        if state["Type"] == "Map":
            found.update(states_of(state["ItemProcessor"]))
    return found


COMPLETION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:dag-completion"
EVENTS = {"completion": "event", "completion_function_arn": COMPLETION_ARN}
# Poll mode within the history budget: 12 tasks x 60 polls x 11 events < 25,000.
POLLS = {"completion": "poll", "default_timeout": 600}


@pytest.mark.parametrize("completion", [EVENTS, POLLS], ids=["event", "poll"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_examples_render_and_parse(strategy: str, completion: dict, analyse: Any) -> None:
    plan = plan_from_dir(EXAMPLES)
    text = render(plan, strategy, RenderOptions(target=WORKGROUP, max_concurrency=4, **completion))
    analyse(text)
    definition = json.loads(text)
    maps = [s for s in definition["States"].values() if s["Type"] == "Map"]
    assert [m["ItemsPath"] for m in maps] == ["$.items"] * len(plan.stages[strategy])
    assert all(m["MaxConcurrency"] == 4 for m in maps)
    items = [s["Result"]["items"] for s in definition["States"].values() if s["Type"] == "Pass"]
    assert items == [list(stage.tasks) for stage in plan.stages[strategy]]
    # every state name is unique (JSON would silently keep the last duplicate)
    assert text.count('"Type"') == len(states_of(definition))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sql_with_quotes_braces_backslashes_newlines(
    strategy: str, nasty_plan: Plan, analyse: Any
) -> None:
    text = render(nasty_plan, strategy, RenderOptions(target=WORKGROUP))
    analyse(text)
    results = [
        s["Result"] for s in states_of(json.loads(text)).values() if "sql" in s.get("Result", {})
    ]
    by_sql = {r["sql"].split("\n", 1)[0]: r for r in results}
    nasty = by_sql["INSERT INTO agg.nasty"]
    assert nasty["sql"] == "INSERT INTO agg.nasty\n" + NASTY  # byte-exact, no escaping left
    assert "pre_sql" not in nasty  # append: a single INSERT
    assert by_sql["INSERT INTO agg.plain"]["pre_sql"] == "DELETE FROM agg.plain"


def test_items_carry_task_ids_only_and_poll_loop_shape(nasty_plan: Plan) -> None:
    definition = json.loads(render(nasty_plan, "simple-level", RenderOptions(target=WORKGROUP)))
    states = states_of(definition)
    for state in definition["States"].values():
        if state["Type"] == "Pass":
            assert all(isinstance(t, str) and "SELECT" not in t for t in state["Result"]["items"])
    assert "S1 Execute" not in states  # stage 1 (plain, z) is reload only: no unused state
    execute = states["S2 Execute"]  # stage 2 holds the append task
    assert execute["Resource"] == "arn:aws:states:::aws-sdk:redshiftdata:executeStatement"
    assert execute["Parameters"]["WorkgroupName"] == "wg"
    assert execute["Parameters"]["Sql.$"] == "$.task.sql"
    batch = states["S1 Execute batch"]
    assert batch["Resource"].endswith(":batchExecuteStatement")
    assert "RedshiftData.ThrottlingException" in batch["Retry"][0]["ErrorEquals"]
    assert batch["Retry"][0]["BackoffRate"] > 1
    # The poll loop is the job-poller's fragment, with per-task limits from the task's Pass.
    assert batch["Next"] == "S1 Poll Start"
    start = states["S1 Poll Start"]["Parameters"]
    assert start["max_wait_count.$"] == "$.task.max_polls"
    assert start["initial_wait_seconds.$"] == "$.task.wait"
    describe = states["S1 Poll Get Status"]
    assert describe["Resource"] == "arn:aws:states:::aws-sdk:redshiftdata:describeStatement"
    assert describe["Parameters"] == {"Id.$": "$.statement.id"}
    check = states["S1 Poll Check"]
    nexts = [c["Next"] for c in check["Choices"]]
    assert nexts == ["S1 Finished", "S1 Statement ended?", "S1 Cancel", "S1 Poll Count"]
    failed = [rule["StringEquals"] for rule in check["Choices"][1]["Or"]]
    assert failed == ["FAILED", "ABORTED"]
    assert check["Default"] == "S1 Unexpected status"
    assert states[check["Default"]]["Type"] == "Fail"
    ended = states["S1 Statement ended?"]["Choices"][0]
    assert ended["Variable"] == "$.poll.status.detail.Error" and ended["IsPresent"] is True
    assert "$.poll.status.detail.Error" in states["S1 Statement failed"]["CausePath"]
    assert "States.MathAdd" in states["S1 Poll Count"]["Parameters"]["wait_count.$"]
    assert states["S1 Poll Wait Poll"]["Next"] == "S1 Poll Get Status"


def test_targets() -> None:
    assert Target("d", cluster_identifier="c", db_user="u").parameters() == {
        "Database": "d",
        "ClusterIdentifier": "c",
        "DbUser": "u",
    }
    assert Target("d", cluster_identifier="c", secret_arn="arn:s").parameters()["SecretArn"]
    with pytest.raises(RenderError, match="exactly one of --cluster-identifier"):
        Target("d").parameters()
    with pytest.raises(RenderError, match="--db-user or --secret-arn"):
        Target("d", cluster_identifier="c").parameters()


def test_max_polls_covers_the_timeout() -> None:
    assert max_polls(wait=5, timeout=3600, poll_interval=10) == 360
    assert max_polls(wait=100, timeout=50, poll_interval=10) == 1


def test_oversized_definition_is_refused(tmp_path: Path) -> None:
    big = "SELECT '" + "x" * 600_000 + "' AS s"
    plan = plan_from_dir(write_sql(tmp_path / "sql", {"a": big, "b": big}))
    with pytest.raises(RenderError, match="over the 1048576-byte"):
        render(plan, "simple-level", RenderOptions(target=WORKGROUP))
