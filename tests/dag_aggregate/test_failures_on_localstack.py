"""A task whose statement fails, or runs past its timeout, fails the DAG with the reason.

The rendered definition is created directly (no Terraform) and runs on the
DuckDB-backed Redshift Data API; a `/* sfnp:sleep=N */` comment keeps a statement
running N seconds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import render
from sfn_patterns_localstack.roles import trust_policy

from .helpers import sql_runner_policy

# Every run executes its statements through the Redshift Data API (tests/portable.py).
pytestmark = [pytest.mark.integration, pytest.mark.needs("redshift-data")]


def _run_dag(aws: Callable, tmp_path: Path, files: dict[str, str]) -> tuple[dict, str]:
    sql_dir = tmp_path / "sql"
    sql_dir.mkdir()
    for name, sql in files.items():
        (sql_dir / f"{name}.sql").write_text(sql)
    workgroup = f"wg-{uuid.uuid4().hex[:6]}"
    redshift = aws("redshift-data")
    for setup in (
        "CREATE SCHEMA agg",
        "CREATE TABLE agg.ok (x INTEGER)",
        "CREATE TABLE agg.slow (x INTEGER)",
        "CREATE TABLE agg.broken (x INTEGER)",
    ):
        statement = redshift.execute_statement(WorkgroupName=workgroup, Database="dev", Sql=setup)
        while redshift.describe_statement(Id=statement["Id"])["Status"] not in ("FINISHED",):
            time.sleep(0.05)
    definition = render(
        plan_from_dir(sql_dir),
        "simple-level",
        # Polling every second: a 60-s timeout keeps the history within its budget.
        RenderOptions(
            target=Target(database="dev", workgroup_name=workgroup),
            poll_interval=1,
            default_wait=1,
            default_timeout=60,
        ),
    )
    iam, name = aws("iam"), f"dag-fail-{uuid.uuid4().hex[:6]}"
    role = iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust_policy("states"))
    iam.put_role_policy(
        RoleName=name, PolicyName="run-sql", PolicyDocument=sql_runner_policy([workgroup])
    )
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=name, definition=definition, roleArn=role["Role"]["Arn"]
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 90
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the DAG did not finish"
        time.sleep(0.5)
    return described, workgroup


def test_a_failed_statement_fails_the_dag_with_its_error(aws: Callable, tmp_path: Path) -> None:
    described, _ = _run_dag(
        aws,
        tmp_path,
        {
            "ok": "SELECT 1 AS x",
            "broken": (
                "-- sfn: external=raw.table_that_does_not_exist\n"
                "SELECT x FROM raw.table_that_does_not_exist"
            ),
        },
    )
    assert described["status"] == "FAILED"
    history = aws("stepfunctions").get_execution_history(
        executionArn=described["executionArn"], reverseOrder=True
    )["events"]
    failure = next(e for e in history if e["type"] == "ExecutionFailed")[
        "executionFailedEventDetails"
    ]
    assert "DagAggregate.StatementFailed" in failure["error"] + failure.get("cause", "")
    assert "table_that_does_not_exist" in failure.get("cause", "")


def test_a_statement_past_its_timeout_is_cancelled_and_fails_the_dag(
    aws: Callable, tmp_path: Path
) -> None:
    described, workgroup = _run_dag(
        aws,
        tmp_path,
        {
            "slow": "-- sfn: mode=append wait=1 timeout=3\n/* sfnp:sleep=60 */ SELECT 1 AS x",
        },
    )
    assert described["status"] == "FAILED"
    history = aws("stepfunctions").get_execution_history(
        executionArn=described["executionArn"], reverseOrder=True
    )["events"]
    failure = next(e for e in history if e["type"] == "ExecutionFailed")[
        "executionFailedEventDetails"
    ]
    assert "DagAggregate.TaskTimedOut" in failure["error"] + failure.get("cause", "")
    statements = aws("redshift-data").list_statements(Status="ALL", WorkgroupName=workgroup)[
        "Statements"
    ]
    slow = [s for s in statements if "sfnp:sleep=60" in s.get("QueryString", "")]
    assert slow and all(s["Status"] == "ABORTED" for s in slow)
