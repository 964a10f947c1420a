"""The ``dag`` click group through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from sfn_patterns_cli.dag_aggregate.cli import group

from .helpers import EXAMPLES, write_sql


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_plan_json() -> None:
    code, out, _ = run("plan", "--sql-dir", str(EXAMPLES), "--json")
    assert code == 0
    doc = json.loads(out)
    assert {"tasks", "edges", "levels", "groups", "stages", "external_sources"} <= set(doc)
    assert len(doc["tasks"]) == 12
    assert all(len(edge) == 2 for edge in doc["edges"])
    assert set(doc["stages"]) == {"simple-level", "parent-level"}
    assert sorted(t for g in doc["groups"].values() for t in g) == doc["tasks"]
    assert "raw.events" in doc["external_sources"]


def test_plan_prints_a_summary_a_person_reads_by_default() -> None:
    """The example's shape, as its README draws it: 12 tasks on 4 levels, one outside table."""
    code, out, _ = run("plan", "--sql-dir", str(EXAMPLES))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "12 tasks in schema agg, 4 levels, 13 edges after transitive reduction"
    assert "level 4 (1): kpi_overview" in lines
    assert "  user_segments       <- user_first_seen, user_purchases" in lines
    assert "  daily_events        <- (nothing: a root)" in lines
    assert "  simple-level: 4 stages (5 + 3 + 3 + 1 tasks)" in lines
    assert any(
        line.startswith("  raw.events <- daily_active_users, daily_events") for line in lines
    )
    assert not out.lstrip().startswith("{")


def test_render_writes_file(tmp_path: Path) -> None:
    out = tmp_path / "out" / "dag.asl.json"
    code, stdout, _ = run(
        "render", "--sql-dir", str(EXAMPLES), "--strategy", "parent-level",
        "--max-concurrency", "3", "--database", "dev", "--cluster-identifier", "c",
        "--db-user", "admin", "--default-timeout", "600", "--compact", "-o", str(out),
    )  # fmt: skip
    assert code == 0
    assert stdout == ""
    definition = json.loads(out.read_text())
    maps = [s for s in definition["States"].values() if s["Type"] == "Map"]
    assert maps
    assert {m["MaxConcurrency"] for m in maps} == {3}
    assert "\n" not in out.read_text().strip()


def test_simulate(tmp_path: Path) -> None:
    directory = write_sql(
        tmp_path / "sql",
        {"a": "SELECT 1", "b": "SELECT 1", "c": "SELECT x FROM agg.a, agg.b"},
    )
    durations = tmp_path / "d.json"
    durations.write_text(json.dumps({"a": 5, "b": 3, "c": 2}))
    code, out, _ = run(
        "simulate", "--sql-dir", str(directory), "--durations", str(durations),
        "--max-concurrency", "1",
    )  # fmt: skip
    assert code == 0
    # one slot: 5 + 3 then 2 for every strategy; lower bound = total work 10
    assert json.loads(out) == {
        "lower_bound": 10.0,
        "makespan": {"simple-level": 10.0, "parent-level": 10.0, "dependency": 10.0},
    }


@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_graph_writes_svg_and_html(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"dag{suffix}"
    code, _, _ = run("graph", "--sql-dir", str(EXAMPLES), "-o", str(out))
    assert code == 0
    text = out.read_text()
    assert "<svg" in text
    assert "kpi_overview" in text
    assert "L_4E" in text  # group legend
    if suffix == ".svg":
        import xml.etree.ElementTree as ET

        root = ET.fromstring(text)
        assert root.tag.endswith("svg")
        nodes = root.findall(".//{http://www.w3.org/2000/svg}g[@class='node']")
        assert len(nodes) == 12
    else:
        assert text.startswith("<!DOCTYPE html>")


def bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    cyclic = write_sql(tmp / "cyc", {"a": "SELECT * FROM agg.b", "b": "SELECT * FROM agg.a"})
    bad = write_sql(tmp / "bad", {"a": "SELECT FROM WHERE ("})
    render_args = ["--database", "d", "--workgroup-name", "w"]
    return [
        (["plan", "--sql-dir", str(cyclic)], "cycle: a -> b -> a"),
        (["plan", "--sql-dir", str(bad)], "a.sql:1:"),
        (["plan", "--sql-dir", str(tmp / "missing")], "does not exist"),
        (
            ["render", "--sql-dir", str(EXAMPLES), "--strategy", "fastest", *render_args],
            "unknown strategy 'fastest'",
        ),
        (["graph", "--sql-dir", str(EXAMPLES), "-o", str(tmp / "x.png")], "must end in .svg"),
        (
            ["plan", "--sql-dir", str(write_sql(tmp / "typo", {"a": "SELECT 1 FROM agg.aa"}))],
            "a.sql:1: unresolved table agg.aa: no task produces agg.aa (did you mean agg.a?)",
        ),
        (["plan", "--sql-dir", str(EXAMPLES), "--external", "raw"], "must be schema.table"),
        (
            ["select", "--sql-dir", str(EXAMPLES), "--select", "+kpi_overveiw"],
            "did you mean kpi_overview",
        ),
        (
            ["module-data", "--sql-dir", str(EXAMPLES), "--strategy", "dependency", *render_args],
            "--strategy dependency needs --task-done-arn",
        ),
    ]


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    for args, message in bad_inputs(tmp_path):
        code, out, err = run(*args)
        assert code == 2, args
        assert out == ""
        assert message in err, err
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_module_data_is_everything_terraform_needs_in_one_call() -> None:
    # 1-min polls: with the default 10 s the one-hour timeout exceeds the history budget.
    common = ["--sql-dir", str(EXAMPLES), "--database", "d", "--workgroup-name", "w", "--no-cache"]
    common += ["--poll-interval", "60"]
    code, out, _ = run("module-data", "--strategy", "parent-level", *common)
    assert code == 0
    level = json.loads(out)
    assert level["dependency"] is None and level["task_definition"] is None
    assert json.loads(level["definition"])["StartAt"] == "Level strategy input?"
    assert len(level["plan"]["tasks"]) == 12
    code, out, _ = run(
        "module-data", "--strategy", "dependency", "--task-done-arn", "arn:x", *common
    )
    assert code == 0
    dependency = json.loads(out)
    assert dependency["definition"] is None
    assert dependency["plan"] == level["plan"]
    document = json.loads(dependency["dependency"]["document"])
    assert sorted(document["tasks"]) == level["plan"]["tasks"]
    task_machine = json.loads(dependency["task_definition"])
    assert task_machine["TimeoutSeconds"] > 3600  # the default task timeout, plus the margin


def test_select_prints_the_chosen_tasks_in_an_execution_order() -> None:
    code, out, _ = run(
        "select", "--sql-dir", str(EXAMPLES), "--no-cache",
        "--select", "+revenue_stats", "--exclude", "daily_events",
    )  # fmt: skip
    assert code == 0
    assert out.split() == ["daily_revenue", "revenue_stats"]
    code, out, _ = run("select", "--sql-dir", str(EXAMPLES), "--select", "user_segments+")
    assert out.split() == ["user_segments", "segment_summary", "kpi_overview"]


def test_run_refuses_a_level_strategy_state_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI checks the state machine before starting anything (no execution is made)."""
    from sfn_patterns_cli.dag_aggregate import cli

    class LevelMachine:
        started: ClassVar[list[object]] = []

        def describe_state_machine(self, stateMachineArn: str) -> dict:
            definition = {"Comment": "dag-aggregate parent-level: 12 tasks", "States": {}}
            return {"definition": json.dumps(definition)}

        def start_execution(self, **kwargs: object) -> dict:
            self.started.append(kwargs)
            return {"executionArn": "arn:x"}

    monkeypatch.setattr(cli, "_clients", lambda endpoint, region: (LevelMachine(), None))
    code, _, err = run("run", "--state-machine-arn", "arn:levels", "--select", "a")
    assert code == 2
    assert 'selection and retry need modules/dag-aggregate with strategy = "dependency"' in err
    assert LevelMachine.started == []


def test_status_prints_each_task_from_the_run_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    document = {
        "metadata": {"schema_version": "sfn-patterns/dag-aggregate/run-results/v1"},
        "run_id": "n/1",
        "status": "FAILED",
        "invocation": 1,
        "elapsed_time": 12.5,
        "counts": {"success": 1, "error": 1, "skipped": 1, "pending": 0, "running": 0},
        "failure": {"task": "b", "error": "Boom", "cause": "b broke"},
        "results": [
            {"task": "a", "status": "success", "attempt": 1, "started_at": "t0",
             "execution_time": 1.25, "rows_affected": 7, "statement_id": "s-a",
             "error": None, "waiting_on": []},
            {"task": "b", "status": "error", "attempt": 1, "started_at": "t1",
             "execution_time": 2.0, "rows_affected": None, "statement_id": "s-b",
             "error": "Boom", "waiting_on": []},
            {"task": "c", "status": "skipped", "attempt": 1, "started_at": None,
             "execution_time": None, "rows_affected": None, "statement_id": None,
             "error": None, "waiting_on": ["b"]},
        ],
    }  # fmt: skip
    with mock_aws():
        import boto3

        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="plans")
        s3.put_object(
            Bucket="plans",
            Key="dag-aggregate/runs/n%2F1/run_results.json",
            Body=json.dumps(document).encode(),
        )
        code, out, err = run(
            "status", "n/1", "--state-machine-arn", "arn:unused",
            "--run-results", "s3://plans/dag-aggregate/runs/", "--region", "us-east-1",
        )  # fmt: skip
        missing = run(
            "status", "other", "--state-machine-arn", "arn:unused",
            "--run-results", "s3://plans/dag-aggregate/runs/", "--region", "us-east-1",
        )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "run n/1: FAILED (invocation 1; success 1, error 1, skipped 1; elapsed 12.5 s)"
    )
    assert lines[1] == "first failure: b: Boom: b broke"
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["a"][:3] == ["a", "success", "1"] and "7" in rows["a"]
    assert rows["c"][1] == "skipped" and "(waiting on b)" in lines[-1]
    assert missing[0] == 2 and "no run results for run 'other'" in missing[2]


def test_help_texts() -> None:
    for command in ([], ["plan"], ["render"], ["simulate"], ["graph"], ["select"], ["run"],
                    ["retry"], ["status"], ["module-data"]):  # fmt: skip
        code, out, _ = run(*command, "--help")
        assert code == 0
        assert "Usage:" in out
    assert "simple-level" in run("render", "--help")[1]


COORDINATOR = "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"


def _status_refused(monkeypatch: pytest.MonkeyPatch, error: Exception) -> object:
    from sfn_patterns_cli.dag_aggregate import runs

    def refuse(sfn: object, arn: str) -> str:
        raise error

    monkeypatch.setattr(runs, "run_results_location", refuse)
    return CliRunner().invoke(
        group,
        ["status", "r1", "--state-machine-arn", COORDINATOR, "--region", "us-east-1"],
        env={"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"},
    )


def test_an_aws_refusal_is_one_line_naming_the_call_and_the_policy_to_attach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from botocore.exceptions import ClientError

    refused = ClientError(
        {"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}},
        "ListTagsForResource",
    )
    result = _status_refused(monkeypatch, refused)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: AWS refused ListTagsForResource (AccessDeniedException): not authorized "
        "(attach modules/dag-aggregate's operator_policy_json to the caller's role)\n"
    )


def test_another_aws_error_names_the_call_without_the_policy_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from botocore.exceptions import ClientError

    missing = ClientError(
        {"Error": {"Code": "StateMachineDoesNotExist", "Message": "no such machine"}},
        "ListTagsForResource",
    )
    result = _status_refused(monkeypatch, missing)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: AWS refused ListTagsForResource (StateMachineDoesNotExist): no such machine\n"
    )


def test_an_error_of_the_cli_itself_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _status_refused(monkeypatch, ValueError("a bug"))
    assert isinstance(result.exception, ValueError)
