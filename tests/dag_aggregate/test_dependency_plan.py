"""The dependency strategy's plan-time outputs: plan document, priorities, task machine."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sfn_patterns_cli.dag_aggregate.cli import group
from sfn_patterns_cli.dag_aggregate.dependency import (
    document_json,
    document_sha256,
    plan_document,
    priorities,
    render_task_machine,
)
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dependencies, plan_from_dir

from .helpers import EXAMPLES, write_sql

OPTIONS = RenderOptions(
    target=Target(database="dev", workgroup_name="wg"), default_wait=2, poll_interval=3
)


def test_priority_is_the_longest_remaining_path_by_duration() -> None:
    plan = plan_from_dependencies({"a": set(), "b": {"a"}, "c": {"a"}, "d": {"b"}})
    durations = {"a": 1.0, "b": 5.0, "c": 9.0, "d": 1.0}
    assert priorities(plan.reduced, durations) == {"a": 10.0, "b": 6.0, "c": 9.0, "d": 1.0}


def test_the_example_document_has_every_task_with_reduced_edges_and_sql() -> None:
    plan = plan_from_dir(EXAMPLES)
    document = plan_document(plan, OPTIONS)
    tasks = document["tasks"]
    assert sorted(tasks) == sorted(plan.tasks)
    edges = sorted((p, c) for c, spec in tasks.items() for p in spec["parents"])
    assert edges == sorted(plan.reduced.edges)
    assert all(c in tasks[p]["children"] for p, c in edges)
    kpi = tasks["kpi_overview"]
    assert kpi["priority"] == 1.0 and kpi["task"]["pre_sql"] == "DELETE FROM agg.kpi_overview"
    assert kpi["task"]["sql"].startswith("INSERT INTO agg.kpi_overview")
    assert document["critical_path"] == 4.0  # four levels of unit durations
    assert document["total_work"] == 12.0


def test_duration_config_drives_priority_and_the_hash_is_stable(tmp_path: Path) -> None:
    sql = write_sql(
        tmp_path / "sql",
        {
            "a": "-- sfn: duration=30 wait=7\nSELECT 1 AS x",
            "b": "SELECT x FROM agg.a",
            "c": "-- sfn: mode=append\nSELECT 2 AS x",
        },
    )
    document = plan_document(plan_from_dir(sql), OPTIONS)
    assert document["tasks"]["a"]["priority"] == 31.0
    assert document["tasks"]["a"]["task"]["wait"] == 7
    assert "pre_sql" not in document["tasks"]["c"]["task"]  # append: one INSERT
    text = document_json(document)
    assert text == document_json(plan_document(plan_from_dir(sql), OPTIONS))
    assert len(document_sha256(text)) == 64


def test_task_machine_polls_and_reports_every_outcome() -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:dag-runtime"
    definition = json.loads(render_task_machine(OPTIONS, arn))
    states = definition["States"]
    reports = [s for s in states.values() if s.get("Resource") == "arn:aws:states:::lambda:invoke"]
    assert [r["Parameters"]["Payload"]["ok"] for r in reports] == [True, False]
    assert all(r["Parameters"]["FunctionName"] == arn for r in reports)
    # Every failure exit goes through "Report failure" before the Fail state.
    for name in ("Execute error", "Statement failed", "Timed out", "Task Poll error"):
        assert states[name]["Next"] == "Report failure"
    assert states["Task Poll Get Status"]["Resource"].endswith("redshiftdata:describeStatement")
    assert states["Task Poll Wait Poll"]["Seconds"] == 3
    assert states["Execute batch"]["Parameters"]["WorkgroupName"] == "wg"


def test_cli_commands_print_the_document_and_the_definition() -> None:
    runner = CliRunner()
    result = runner.invoke(group, ["dependency-plan", "--sql-dir", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert document_sha256(out["document"]) == out["sha256"]
    result = runner.invoke(
        group,
        ["render-task", "--task-done-arn", "arn:x", "--database", "dev", "--workgroup-name", "w"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["StartAt"] == "Batch?"


def test_dependency_plan_needs_no_target_and_prints_module_data_s_document() -> None:
    # The document holds SQL and limits only: no target, no event-completion function.
    waits = ["--sql-dir", str(EXAMPLES), "--completion", "event", "--fallback-seconds", "120"]
    runner = CliRunner()
    alone = runner.invoke(group, ["dependency-plan", *waits])
    assert alone.exit_code == 0, alone.output
    target = ["--database", "dev", "--workgroup-name", "wg", "--task-done-arn", "arn:x"]
    target += ["--completion-function-arn", "arn:y"]
    full = runner.invoke(group, ["module-data", "--strategy", "dependency", *waits, *target])
    assert full.exit_code == 0, full.output
    assert json.loads(alone.output) == json.loads(full.output)["dependency"]
    document = json.loads(json.loads(alone.output)["document"])
    # Checked every 120 s: the default hour's timeout allows 30 fallback checks,
    # kpi_overview's timeout=900 allows 8 (ceil(900 / 120)).
    polls = {name: spec["task"]["max_polls"] for name, spec in document["tasks"].items()}
    assert polls.pop("kpi_overview") == 8
    assert set(polls.values()) == {30}
