"""strategy = "dependency" on LocalStack: failures, retry, selection, run documents, 500 tasks.

One Terraform workspace (examples/dag-aggregate with its ``sql_dir`` variable) serves
every test: it is applied with the small failure DAG, then re-applied with the
synthetic one, which only replaces the plan document and the task definition. The SQL
really runs on the DuckDB-backed Redshift Data API. ``sfn-patterns dag run | retry |
status`` are driven through click, against LocalStack.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sfn_patterns_cli.dag_aggregate import runs
from sfn_patterns_cli.dag_aggregate.cli import group
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag
from sfn_patterns_localstack.terraform import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"
DATABASE = "dev"
MAX_HISTORY_EVENTS = 25_000

# b fails while raw.flag holds 'bad'; y is slow, so it is still running when b fails.
# z needs both branches: it must never start while b has not succeeded.
FAILURE_DAG = {
    "a": "-- sfn: mode=append wait=0\nSELECT 1 AS x",
    "b": "-- sfn: mode=append wait=0\nSELECT CAST(f.v AS INTEGER) AS x FROM raw.flag AS f, agg.a",
    "c": "-- sfn: mode=append wait=0\nSELECT x FROM agg.b",
    "x": "-- sfn: mode=append wait=0\nSELECT 2 AS x",
    "y": "-- sfn: mode=append wait=2\n/* sfnp:sleep=4 */ SELECT x FROM agg.x",
    "z": "-- sfn: mode=append wait=0\nSELECT x FROM agg.y UNION ALL SELECT x FROM agg.b",
}


class Deployment:
    """The applied example plus helpers to run SQL and coordinator executions."""

    def __init__(
        self, aws: Callable[[str], Any], workspace: Workspace, workgroup: str, endpoint: str
    ) -> None:
        self.aws = aws
        self.workspace = workspace
        self.workgroup = workgroup
        self.endpoint = endpoint
        self.variables: dict[str, object] = {}
        self.outputs: dict[str, Any] = {}

    def cli(self, *args: str) -> tuple[int, str, str]:
        """``sfn-patterns dag <args> --state-machine-arn <coordinator>`` against LocalStack."""
        result = CliRunner().invoke(
            group,
            [
                *args,
                "--state-machine-arn",
                self.outputs["state_machine_arn"],
                "--endpoint-url",
                self.endpoint,
                "--region",
                "us-east-1",
            ],
            env={"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
        )
        return result.exit_code, result.stdout, result.stderr

    def document(self, run_id: str) -> dict[str, Any]:
        return runs.read_run_results(self.aws("s3"), self.outputs["run_results_uri"], run_id)

    def apply(self, sql_dir: Path, max_concurrency: int) -> None:
        self.variables = {
            "name_prefix": f"dep-{uuid.uuid4().hex[:6]}"
            if not self.variables
            else self.variables["name_prefix"],
            "strategy": "dependency",
            "redshift_workgroup_name": self.workgroup,
            "max_concurrency": max_concurrency,
            "sql_dir": str(sql_dir),
            "external_tables": ["raw.*"],
        }
        self.workspace.apply(self.variables)
        self.outputs = self.workspace.outputs()

    def sql(self, statement: str) -> str:
        """Run one statement to completion; returns its id."""
        client = self.aws("redshift-data")
        sid = client.execute_statement(
            WorkgroupName=self.workgroup, Database=DATABASE, Sql=statement
        )["Id"]
        deadline = time.monotonic() + 30
        while (described := client.describe_statement(Id=sid))["Status"] not in (
            "FINISHED",
            "FAILED",
            "ABORTED",
        ):
            assert time.monotonic() < deadline, statement
            time.sleep(0.05)
        assert described["Status"] == "FINISHED", described
        return sid

    def count(self, table: str) -> int:
        sid = self.sql(f"SELECT COUNT(*) FROM {table}")
        records = self.aws("redshift-data").get_statement_result(Id=sid)["Records"]
        return int(records[0][0]["longValue"])

    def run(self, run_id: str, timeout: float) -> dict[str, Any]:
        sfn = self.aws("stepfunctions")
        arn = sfn.start_execution(
            stateMachineArn=self.outputs["state_machine_arn"],
            input=json.dumps({"run_id": run_id}),
        )["executionArn"]
        deadline = time.monotonic() + timeout
        while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
            assert time.monotonic() < deadline, f"run {run_id} did not finish in {timeout} s"
            time.sleep(1)
        return described

    def task_executions(self) -> list[dict[str, Any]]:
        sfn = self.aws("stepfunctions")
        pages = sfn.get_paginator("list_executions").paginate(
            stateMachineArn=self.outputs["task_state_machine_arn"]
        )
        return [e for page in pages for e in page["executions"]]

    def task_of(self, execution: dict[str, Any]) -> tuple[str, int]:
        described = self.aws("stepfunctions").describe_execution(
            executionArn=execution["executionArn"]
        )
        payload = json.loads(described["input"])
        return payload["task_id"], payload["attempt"]

    def statuses(self, run_id: str) -> dict[str, str]:
        items = self.aws("dynamodb").query(
            TableName=self.outputs["runs_table_name"],
            KeyConditionExpression="pk = :r",
            ExpressionAttributeValues={":r": {"S": run_id}},
            ConsistentRead=True,
        )["Items"]
        return {i["sk"]["S"]: i["status"]["S"] for i in items}


@pytest.fixture(scope="module")
def deployment(
    localstack_endpoint: str, aws: Callable[[str], Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    scratch = tmp_path_factory.mktemp("dependency")
    workspace = Workspace(EXAMPLE, localstack_endpoint, scratch / "tf")
    deployment = Deployment(aws, workspace, f"wg-dep-{uuid.uuid4().hex[:6]}", localstack_endpoint)
    try:
        workspace.init()
        yield deployment
    finally:
        try:
            if deployment.variables:
                workspace.destroy(deployment.variables)
        finally:
            workspace.close()


def _write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, sql in files.items():
        (directory / f"{name}.sql").write_text(sql)
    return directory


def _history_length(aws: Callable[[str], Any], execution_arn: str) -> int:
    pages = (
        aws("stepfunctions")
        .get_paginator("get_execution_history")
        .paginate(executionArn=execution_arn)
    )
    return sum(len(page["events"]) for page in pages)


@pytest.fixture(scope="module")
def failure_dag(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The deployment applied with FAILURE_DAG (its tables created, raw.flag 'bad')."""
    for statement in (
        "CREATE SCHEMA IF NOT EXISTS raw",
        "CREATE SCHEMA IF NOT EXISTS agg",
        "CREATE TABLE raw.flag (v VARCHAR)",
        "INSERT INTO raw.flag VALUES ('bad')",
        *(f"CREATE TABLE agg.{name} (x INTEGER)" for name in FAILURE_DAG),
    ):
        deployment.sql(statement)
    deployment.apply(_write(tmp_path_factory.mktemp("failure") / "sql", FAILURE_DAG), 2)
    return deployment


def test_a_failure_skips_only_its_descendants_and_a_retry_reruns_just_them(
    failure_dag: Deployment,
) -> None:
    deployment = failure_dag
    deployment.sql("UPDATE raw.flag SET v = 'bad'")
    first = deployment.run("nightly-1", timeout=150)
    assert first["status"] == "FAILED", first
    sfn = deployment.aws("stepfunctions")
    history = sfn.get_execution_history(executionArn=first["executionArn"], reverseOrder=True)
    failed = next(e for e in history["events"] if e["type"] == "ExecutionFailed")
    details = failed["executionFailedEventDetails"]
    assert details["error"] == "DagAggregate.StatementFailed"
    assert '"task": "b"' in details["cause"]

    started = [deployment.task_of(e) for e in deployment.task_executions()]
    assert sorted(started) == [("a", 1), ("b", 1), ("x", 1), ("y", 1)]
    assert deployment.statuses("nightly-1") == {
        "run": "FAILED",
        "task#a": "succeeded",
        "task#b": "failed",
        "task#c": "pending",
        "task#x": "succeeded",
        "task#y": "succeeded",  # the independent branch finished after b failed
        "task#z": "pending",
    }
    assert deployment.count("agg.y") == 1 and deployment.count("agg.z") == 0

    document = deployment.document("nightly-1")
    results = {r["task"]: r for r in document["results"]}
    assert {t: r["status"] for t, r in results.items()} == {
        "a": "success",
        "b": "error",
        "c": "skipped",
        "x": "success",
        "y": "success",
        "z": "skipped",
    }
    assert results["b"]["error"] == "DagAggregate.StatementFailed"
    assert results["z"]["waiting_on"] == ["b"]
    assert results["a"]["rows_affected"] == 1 and results["a"]["statement_id"]
    assert document["failure"]["task"] == "b"
    code, out, _ = deployment.cli("status", "nightly-1")
    assert code == 0
    assert out.startswith("run nightly-1: FAILED")
    assert any(line.split()[:2] == ["c", "skipped"] for line in out.splitlines())

    deployment.sql("UPDATE raw.flag SET v = '7'")
    code, out, err = deployment.cli("retry", "nightly-1", "--wait")
    assert code == 0, err
    assert "retrying 3 task(s): b, c, z" in err
    rerun = sorted(deployment.task_of(e) for e in deployment.task_executions())
    assert sorted(set(rerun) - set(started)) == [("b", 2), ("c", 1), ("z", 1)]
    assert set(deployment.statuses("nightly-1").values()) == {"SUCCEEDED", "succeeded"}
    retried = deployment.document("nightly-1")
    assert retried["status"] == "SUCCEEDED" and retried["invocation"] == 2
    assert {r["task"]: r["invocation"] for r in retried["results"]} == {
        "a": 1,
        "b": 2,
        "c": 2,
        "x": 1,
        "y": 1,
        "z": 2,
    }
    # Each task wrote exactly once over both runs: a and y were not re-run.
    assert [deployment.count(f"agg.{t}") for t in ("a", "b", "c", "x", "y", "z")] == [
        1,
        1,
        1,
        1,
        1,
        2,
    ]
    code, _, err = deployment.cli("retry", "nightly-1")
    assert code == 0 and "nothing to retry" in err


def test_a_selection_runs_only_the_chosen_tasks_in_dag_order(failure_dag: Deployment) -> None:
    deployment = failure_dag
    deployment.sql("UPDATE raw.flag SET v = '7'")
    # +z is a, b, x, y, z; without x and y: a, b and z, z waiting for b (y is left out).
    code, out, err = deployment.cli(
        "run", "--run-id", "partial-1", "--select", "+z", "--exclude", "x y", "--wait"
    )
    assert code == 0, err
    ran = sorted(
        deployment.task_of(e)
        for e in deployment.task_executions()
        if e["name"].startswith("partial-1-")
    )
    assert ran == [("a", 1), ("b", 1), ("z", 1)]
    document = deployment.document("partial-1")
    assert document["selection"] == {"select": ["+z"], "exclude": ["x", "y"]}
    assert sorted(r["task"] for r in document["results"]) == ["a", "b", "z"]
    times = {r["task"]: (r["started_at"], r["finished_at"]) for r in document["results"]}
    assert times["b"][1] <= times["z"][0]  # z started after b reported
    assert "run partial-1: SUCCEEDED" in out
    # A selector that matches nothing fails the execution at once, saying why.
    code, arn, err = deployment.cli("run", "--select", "+nope")
    assert code == 0, err
    described = runs.wait(deployment.aws("stepfunctions"), arn.strip(), timeout=60, interval=0.5)
    assert described["status"] == "FAILED"
    assert described["error"] == "InvalidRunInputError", described
    assert "matches no task" in described["cause"]


def _synthetic_dir(directory: Path, n: int, seed: int) -> Path:
    parents = random_dag(n, seed=seed, max_parents=3, window=60)
    files = {}
    for name, deps in parents.items():
        reads = " UNION ALL ".join(f"SELECT n FROM agg.{p}" for p in sorted(deps))
        body = f"SELECT COUNT(*) AS n FROM ({reads}) AS r" if deps else "SELECT 1 AS n"
        files[name] = f"-- sfn: mode=append wait=0\n{body}"
    return _write(directory, files)


@pytest.mark.slow
def test_a_500_task_dag_runs_to_completion_without_long_histories(
    deployment: Deployment, tmp_path: Path
) -> None:
    sql_dir = _synthetic_dir(tmp_path / "sql", 500, seed=11)
    for statement in ["CREATE SCHEMA IF NOT EXISTS agg"] + [
        f"CREATE TABLE agg.{path.stem} (n BIGINT)" for path in sorted(sql_dir.glob("*.sql"))
    ]:
        deployment.sql(statement)
    deployment.apply(sql_dir, max_concurrency=20)
    assert len(deployment.outputs["priorities"]) == 500

    begin = time.monotonic()
    result = deployment.run("synthetic-500", timeout=600)
    elapsed = time.monotonic() - begin
    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output["tasks"]["succeeded"] == 500, output
    executions = [e for e in deployment.task_executions() if "synthetic" in e["name"]]
    assert len(executions) == 500
    assert all(e["status"] == "SUCCEEDED" for e in executions)
    # The point of one execution per task: no history grows with the DAG.
    longest = max(
        _history_length(deployment.aws, arn)
        for arn in [result["executionArn"]] + [e["executionArn"] for e in executions[:20]]
    )
    assert longest < MAX_HISTORY_EVENTS
    print(f"500 tasks, max_concurrency 20: {elapsed:.0f} s, longest history {longest} events")
