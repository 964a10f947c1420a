"""examples/dag-aggregate run once on LocalStack, checked against a sequential run.

Shared by test_example_on_localstack.py (the level strategies, one deployment each)
and test_dependency_on_localstack.py (the dependency strategy, on the deployment its
other tests share). The oracles are independent of the planner: ``example_edges.json``
lists, by hand, what each SQL file reads; every statement must start after the
statements of the tables it reads have finished, and every agg table must equal a
sequential run in that order in a fresh DuckDB.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import networkx as nx

from sfn_patterns_cli.dag_aggregate import ddl
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"
DATABASE = "dev"
DECLARED = json.loads((Path(__file__).with_name("example_edges.json")).read_text())
EDGES = [tuple(edge) for edge in DECLARED["edges"]]


def setup_statements(plan: Plan) -> list[str]:
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


def _declared_order(tasks: list[str]) -> list[str]:
    graph = nx.DiGraph(EDGES)
    graph.add_nodes_from(tasks)
    return list(nx.lexicographical_topological_sort(graph))


def _reference(plan: Plan) -> dict[str, list[tuple]]:
    """Each task's table after running the SQL once, in the hand-declared order."""
    con = duckdb.connect()
    for statement in setup_statements(plan):
        con.execute(statement)
    for name in _declared_order(sorted(plan.tasks)):
        con.execute(f"INSERT INTO {plan.schema}.{name} {plan.tasks[name].select_sql}")
    return {n: _normalize(con.execute(f"SELECT * FROM agg.{n}").fetchall()) for n in plan.tasks}


def _statement_windows(client, workgroup: str) -> dict[str, tuple]:
    """Task -> (created, finished) of its Data API statement (named 'sfn-dag <task>')."""
    windows = {}
    for page in client.get_paginator("list_statements").paginate(
        StatementName="sfn-dag ", Status="ALL", WorkgroupName=workgroup
    ):
        for statement in page["Statements"]:
            assert statement["Status"] == "FINISHED", statement
            task = statement["StatementName"][len("sfn-dag ") :]
            assert task not in windows, f"{task} ran twice"
            windows[task] = (statement["CreatedAt"], statement["UpdatedAt"])
    return windows


def run_sql(client, workgroup: str, sql: str) -> dict:
    statement = client.execute_statement(WorkgroupName=workgroup, Database=DATABASE, Sql=sql)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described = client.describe_statement(Id=statement["Id"])
        if described["Status"] in ("FINISHED", "FAILED", "ABORTED"):
            assert described["Status"] == "FINISHED", described
            return described
        time.sleep(0.1)
    raise AssertionError(f"statement did not finish: {sql}")


def _check_run_results(
    aws: Callable, outputs: dict, described: dict, redshift, workgroup, *, plan
) -> None:
    """The run document: every task a success, with its statement and its rows written.

    The example waits for status-change events (its default completion): an append
    task's event counts its INSERT's rows; a reload task runs DELETE and INSERT as one
    batch, whose event counts both, so its rows stay unknown (None) rather than wrong.
    """
    from sfn_patterns_cli.dag_aggregate import runs

    run_id = described["name"]
    location = runs.run_results_location(aws("stepfunctions"), outputs["state_machine_arn"])
    document = runs.read_run_results(aws("s3"), location, run_id)
    assert document["status"] == "SUCCEEDED" and document["run_id"] == run_id
    by_task = {r["task"]: r for r in document["results"]}
    assert sorted(by_task) == sorted(p.stem for p in (EXAMPLE / "sql").glob("*.sql"))
    statements = {
        s["StatementName"][len("sfn-dag ") :]: s["Id"]
        for page in redshift.get_paginator("list_statements").paginate(
            StatementName="sfn-dag ", Status="ALL", WorkgroupName=workgroup
        )
        for s in page["Statements"]
    }
    for task, result in by_task.items():
        assert result["status"] == "success", result
        assert result["statement_id"] == statements[task], result
        assert result["execution_time"] is not None and result["execution_time"] >= 0, result
        rows = run_sql(redshift, workgroup, f"SELECT COUNT(*) FROM agg.{task}")
        counted = redshift.get_statement_result(Id=rows["Id"])["Records"][0][0]["longValue"]
        expected = counted if plan.tasks[task].mode == "append" else None
        assert result["rows_affected"] == expected, (task, result["rows_affected"], counted)


def _field(field: dict) -> object:
    if field.get("isNull"):
        return None
    return next(iter(field.values()))


def _table(client, workgroup: str, table: str) -> list[tuple]:
    described = run_sql(client, workgroup, f"SELECT * FROM agg.{table}")
    result = client.get_statement_result(Id=described["Id"])
    return _normalize([tuple(_field(f) for f in record) for record in result["Records"]])


def prepare(aws: Callable, workgroup: str) -> Plan:
    """The example's plan, its raw and agg tables created in ``workgroup``."""
    plan = plan_from_dir(EXAMPLE / "sql")
    redshift = aws("redshift-data")
    for statement in setup_statements(plan):
        run_sql(redshift, workgroup, statement)
    return plan


def run_and_check(
    aws: Callable, outputs: dict[str, Any], workgroup: str, strategy: str, plan: Plan
) -> None:
    """Run the applied example's state machine once; check it computed what a sequential
    run computes, in an order its reads allow (and, per strategy, the run document or
    the refusal of a selection)."""
    redshift = aws("redshift-data")
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

    windows = _statement_windows(redshift, workgroup)
    assert sorted(windows) == sorted(plan.tasks)
    for parent, child in EDGES:  # a child starts only after what it reads is written
        assert windows[parent][1] <= windows[child][0], (parent, child, windows)

    expected = _reference(plan)
    for table in sorted(plan.tasks):
        assert _table(redshift, workgroup, table) == expected[table], table
    if strategy == "dependency":
        _check_run_results(aws, outputs, described, redshift, workgroup, plan=plan)
    else:  # the level strategies run every task: a selection is refused, not ignored
        refused = sfn.start_execution(
            stateMachineArn=outputs["state_machine_arn"], input='{"select": ["+kpi_overview"]}'
        )["executionArn"]
        while (ended := sfn.describe_execution(executionArn=refused))["status"] == "RUNNING":
            time.sleep(0.2)
        assert (ended["status"], ended.get("error")) == (
            "FAILED",
            "DagAggregate.SelectionUnsupported",
        )
