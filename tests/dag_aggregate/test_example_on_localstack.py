"""examples/dag-aggregate on LocalStack: both strategies compute what a sequential run computes.

The SQL really runs: the harness serves the Redshift Data API from DuckDB. Each
strategy's state machine runs the 12 tasks in its stage order through
executeStatement / batchExecuteStatement and a describeStatement poll loop, and
every agg table must then equal a sequential reference run in a fresh DuckDB.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import duckdb
import networkx as nx
import pytest

from sfn_patterns_cli.dag_aggregate import ddl
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_localstack.terraform import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"
DATABASE = "dev"


def _setup(plan: Plan) -> list[str]:
    return ddl.setup_statements((EXAMPLE / "setup.sql").read_text(), plan)


def _normalize(rows: list[tuple]) -> list[tuple]:
    # The Data API returns DECIMAL, DATE and TIMESTAMP as text (as Redshift does):
    # compare those as text, doubles rounded.
    def value(v: object) -> object:
        if isinstance(v, float):
            return round(v, 6)
        if isinstance(v, Decimal):
            return str(v)
        return v if v is None or isinstance(v, int | str) else str(v)

    return sorted((tuple(value(v) for v in row) for row in rows), key=repr)


def _reference(plan: Plan) -> dict[str, list[tuple]]:
    con = duckdb.connect()
    for statement in _setup(plan):
        con.execute(statement)
    for name in nx.topological_sort(plan.reduced):
        con.execute(f"INSERT INTO {plan.schema}.{name} {plan.tasks[name].select_sql}")
    return {n: _normalize(con.execute(f"SELECT * FROM agg.{n}").fetchall()) for n in plan.tasks}


def _run_sql(client, workgroup: str, sql: str) -> dict:
    statement = client.execute_statement(WorkgroupName=workgroup, Database=DATABASE, Sql=sql)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described = client.describe_statement(Id=statement["Id"])
        if described["Status"] in ("FINISHED", "FAILED", "ABORTED"):
            assert described["Status"] == "FINISHED", described
            return described
        time.sleep(0.1)
    raise AssertionError(f"statement did not finish: {sql}")


def _field(field: dict) -> object:
    if field.get("isNull"):
        return None
    return next(iter(field.values()))


def _table(client, workgroup: str, table: str) -> list[tuple]:
    described = _run_sql(client, workgroup, f"SELECT * FROM agg.{table}")
    result = client.get_statement_result(Id=described["Id"])
    return _normalize([tuple(_field(f) for f in record) for record in result["Records"]])


@pytest.mark.parametrize("strategy", ["simple-level", "parent-level", "dependency"])
def test_example_matches_a_sequential_run(
    strategy: str, localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    plan = plan_from_dir(EXAMPLE / "sql")
    workgroup = f"wg-{strategy}-{int(time.time()) % 100000}"
    redshift = aws("redshift-data")
    for statement in _setup(plan):
        _run_sql(redshift, workgroup, statement)

    variables = {
        "name_prefix": f"dag-{int(time.time()) % 100000}",
        "strategy": strategy,
        "redshift_workgroup_name": workgroup,
        "max_concurrency": 3,
    }
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path / "tf")
    try:
        workspace.init()
        workspace.apply(variables)
        outputs = workspace.outputs()
        assert sorted(outputs["tasks"]) == sorted(plan.tasks)
        sfn = aws("stepfunctions")
        execution = sfn.start_execution(stateMachineArn=outputs["state_machine_arn"], input="{}")
        deadline = time.monotonic() + 240
        while (described := sfn.describe_execution(executionArn=execution["executionArn"]))[
            "status"
        ] == "RUNNING":
            assert time.monotonic() < deadline, "the DAG did not finish in time"
            time.sleep(1)
        assert described["status"] == "SUCCEEDED", json.dumps(described, default=str)

        expected = _reference(plan)
        for table in sorted(plan.tasks):
            assert _table(redshift, workgroup, table) == expected[table], table

        code, output = workspace.plan_exit_code(variables)
        assert code == 0, f"second plan is not empty:\n{output}"
    finally:
        workspace.destroy(variables)
        workspace.close()
