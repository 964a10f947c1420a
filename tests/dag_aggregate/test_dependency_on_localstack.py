"""strategy = "dependency" on LocalStack: a 200-task DAG runs to completion.

examples/dag-aggregate applied with a synthetic DAG (each task reads up to three
earlier ones); the SQL really runs on the DuckDB-backed Redshift Data API. Failures,
retry and selection are in test_dependency_retry_on_localstack.py, crashes in
test_dependency_failures_on_localstack.py, the 2,000-task scale run in
scripts/bench_dag_strategies.py. 200 tasks at max_concurrency 20 is ten waves of
dispatch, enough to show that no history grows with the DAG; the 500 tasks this
file used to run cost the suite 170 CPU-seconds of a 2-core machine and proved
nothing more (tests/cpu_account.py measured it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

from .dependency_deployment import Deployment, deploy, history_length, write_sql_dir

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

MAX_HISTORY_EVENTS = 25_000
TASKS = 200


@pytest.fixture(scope="module")
def deployment(
    localstack_endpoint: str, aws: Callable[[str], Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    yield from deploy(localstack_endpoint, aws, tmp_path_factory.mktemp("dependency-200"))


def _synthetic_dir(directory: Path, n: int, seed: int) -> Path:
    parents = random_dag(n, seed=seed, max_parents=3, window=60)
    files = {}
    for name, deps in parents.items():
        reads = " UNION ALL ".join(f"SELECT n FROM agg.{p}" for p in sorted(deps))
        body = f"SELECT COUNT(*) AS n FROM ({reads}) AS r" if deps else "SELECT 1 AS n"
        files[name] = f"-- sfn: mode=append wait=0\n{body}"
    return write_sql_dir(directory, files)


@pytest.mark.slow
def test_a_200_task_dag_runs_to_completion_without_long_histories(
    deployment: Deployment, tmp_path: Path
) -> None:
    sql_dir = _synthetic_dir(tmp_path / "sql", TASKS, seed=11)
    for statement in ["CREATE SCHEMA IF NOT EXISTS agg"] + [
        f"CREATE TABLE agg.{path.stem} (n BIGINT)" for path in sorted(sql_dir.glob("*.sql"))
    ]:
        deployment.sql(statement)
    deployment.apply(sql_dir, max_concurrency=20)
    assert len(deployment.outputs["priorities"]) == TASKS

    begin = time.monotonic()
    result = deployment.run(f"synthetic-{TASKS}", timeout=600)
    elapsed = time.monotonic() - begin
    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output["tasks"]["succeeded"] == TASKS, output
    executions = [e for e in deployment.task_executions() if "synthetic" in e["name"]]
    assert len(executions) == TASKS
    assert all(e["status"] == "SUCCEEDED" for e in executions)
    # The point of one execution per task: no history grows with the DAG.
    longest = max(
        history_length(deployment.aws, arn)
        for arn in [result["executionArn"]] + [e["executionArn"] for e in executions[:20]]
    )
    assert longest < MAX_HISTORY_EVENTS
    print(f"{TASKS} tasks, max_concurrency 20: {elapsed:.0f} s, longest history {longest} events")
