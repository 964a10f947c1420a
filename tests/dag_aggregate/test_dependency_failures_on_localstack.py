"""strategy = "dependency" on LocalStack when things go wrong outside the runtime's control.

* a coordinator stopped mid-run: a new coordinator with the same run id adopts the run
  while its tasks still run, and the run completes with every task run exactly once;
* a task execution aborted by hand, or past the task machine's timeout, never reports
  itself: the EventBridge rule on its end tells the runtime, which fails the task,
  skips its descendants, lets the other branches finish and fails the run.

One deployment of examples/dag-aggregate serves every test (one SQL directory, one
DAG per test, selected by tag; each run's executions told apart by its run id). The
four scenarios run at once (the ``scenarios`` fixture); the faults test runs alone.
Expected sets are written by hand from the DAG below. The SQL runs on the
DuckDB-backed Redshift Data API; a ``/* sfnp:sleep=N */`` comment keeps a statement
running N seconds.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate import runs
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables
from sfn_patterns_localstack.terraform.workspace import Workspace

from .helpers import count_rows

# Every run executes its statements through the Redshift Data API (tests/portable.py).
pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.needs("redshift-data")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"
TASK_TIMEOUT = 20  # task_execution_timeout_seconds: far above any quick task here

# Three independent DAGs in one directory; each test selects its own with tag:.
#   takeover: slow (10 s) -> after_slow; q1 -> q2 -> q3
#   abort:    held (30 s) -> h1 -> h2; free (2 s) -> f1
#   timeout:  stuck (60 s) -> s1; fine -> f2
#   cancel:   overrun (30 s, its own timeout 3 s)
SQL = {
    "slow": "-- sfn: mode=append wait=1 tags=takeover\n/* sfnp:sleep=10 */ SELECT 1 AS x",
    "after_slow": "-- sfn: mode=append wait=0 tags=takeover\nSELECT x FROM agg.slow",
    "q1": "-- sfn: mode=append wait=0 tags=takeover\nSELECT 1 AS x",
    "q2": "-- sfn: mode=append wait=0 tags=takeover\nSELECT x FROM agg.q1",
    "q3": "-- sfn: mode=append wait=0 tags=takeover\nSELECT x FROM agg.q2",
    "held": "-- sfn: mode=append wait=1 tags=abort\n/* sfnp:sleep=30 */ SELECT 1 AS x",
    "h1": "-- sfn: mode=append wait=0 tags=abort\nSELECT x FROM agg.held",
    "h2": "-- sfn: mode=append wait=0 tags=abort\nSELECT x FROM agg.h1",
    "free": "-- sfn: mode=append wait=1 tags=abort\n/* sfnp:sleep=2 */ SELECT 1 AS x",
    "f1": "-- sfn: mode=append wait=0 tags=abort\nSELECT x FROM agg.free",
    "stuck": "-- sfn: mode=append wait=1 timeout=600 tags=timeout\n"
    "/* sfnp:sleep=60 */ SELECT 1 AS x",
    "s1": "-- sfn: mode=append wait=0 tags=timeout\nSELECT x FROM agg.stuck",
    "fine": "-- sfn: mode=append wait=0 tags=timeout\nSELECT 1 AS x",
    "f2": "-- sfn: mode=append wait=0 tags=timeout\nSELECT x FROM agg.fine",
    "overrun": "-- sfn: mode=append wait=1 timeout=3 tags=cancel\n"
    "/* sfnp:sleep=30 */ SELECT 1 AS x",
    # faults: root -> (left, right) -> join; each appends its parents' rows.
    "root": "-- sfn: mode=append wait=0 tags=faults\nSELECT 1 AS x",
    "left": "-- sfn: mode=append wait=0 tags=faults\nSELECT x FROM agg.root",
    "right": "-- sfn: mode=append wait=0 tags=faults\nSELECT x FROM agg.root",
    "join": "-- sfn: mode=append wait=0 tags=faults\n"
    "SELECT x FROM agg.left UNION ALL SELECT x FROM agg.right",
}
# Rows each faults task must hold after running once (twice would double them).
FAULT_ROWS = {"root": 1, "left": 1, "right": 1, "join": 2}


class Deployment:
    """The applied example, and helpers around its coordinator and task machine."""

    def __init__(self, aws: Callable[[str], Any], outputs: dict[str, Any], workgroup: str) -> None:
        self.aws = aws
        self.outputs = outputs
        self.workgroup = workgroup
        # Made once, here: the scenarios run in threads, and boto3 clients may be
        # shared by threads where making them from one session may not.
        self.sfn = aws("stepfunctions")
        self.s3 = aws("s3")
        self.redshift = aws("redshift-data")

    def start(self, run_id: str, **data: Any) -> str:
        return self.sfn.start_execution(
            stateMachineArn=self.outputs["state_machine_arn"],
            input=json.dumps({"run_id": run_id, **data}),
        )["executionArn"]

    def wait(self, arn: str, timeout: float = 150) -> dict[str, Any]:
        return runs.wait(self.sfn, arn, timeout=timeout, interval=0.5)

    def task_executions(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """Task -> its executions in this run (from each execution's input)."""
        found: dict[str, list[dict[str, Any]]] = {}
        pages = self.sfn.get_paginator("list_executions").paginate(
            stateMachineArn=self.outputs["task_state_machine_arn"]
        )
        for execution in (e for page in pages for e in page["executions"]):
            # A task execution's name starts with its run id (execution_name): only
            # this run's are described (the input below still decides).
            if not execution["name"].startswith(f"{run_id}-"):
                continue
            described = self.sfn.describe_execution(executionArn=execution["executionArn"])
            payload = json.loads(described["input"])
            if payload["run_id"] == run_id:
                found.setdefault(payload["task_id"], []).append(described)
        return found

    def wait_running(
        self, run_id: str, task: str, timeout: float = 60, *, or_ended: bool = False
    ) -> dict[str, Any]:
        """The task's execution once it runs (``or_ended``: or has already ended: a task
        of a few hundred milliseconds can start and end between two polls)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for execution in self.task_executions(run_id).get(task, []):
                if execution["status"] == "RUNNING" or or_ended:
                    return execution
            time.sleep(0.3)
        raise AssertionError(f"{task} of {run_id} never ran")

    def document(self, run_id: str) -> dict[str, Any]:
        return runs.read_run_results(self.s3, self.outputs["run_results_uri"], run_id)

    def failure(self, described: dict[str, Any]) -> dict[str, Any]:
        events = self.sfn.get_execution_history(
            executionArn=described["executionArn"], reverseOrder=True
        )["events"]
        return next(e for e in events if e["type"] == "ExecutionFailed")[
            "executionFailedEventDetails"
        ]


def _sql(client: Any, workgroup: str, statement: str) -> None:
    sid = client.execute_statement(WorkgroupName=workgroup, Database="dev", Sql=statement)["Id"]
    deadline = time.monotonic() + 30
    while client.describe_statement(Id=sid)["Status"] != "FINISHED":
        assert time.monotonic() < deadline, statement
        time.sleep(0.05)


@pytest.fixture(scope="module")
def deployment(
    localstack_endpoint: str,
    aws: Callable[[str], Any],
    tmp_path_factory: pytest.TempPathFactory,
    destroy_deployments: bool,
) -> Iterator[Deployment]:
    scratch = tmp_path_factory.mktemp("dependency-failures")
    sql_dir = scratch / "sql"
    sql_dir.mkdir()
    for name, sql in SQL.items():
        (sql_dir / f"{name}.sql").write_text(sql)
    workgroup = f"wg-fail-{uuid.uuid4().hex[:6]}"
    redshift = aws("redshift-data")
    for statement in ["CREATE SCHEMA agg", *(f"CREATE TABLE agg.{n} (x INTEGER)" for n in SQL)]:
        _sql(redshift, workgroup, statement)
    workspace = Workspace(EXAMPLE, localstack_endpoint, scratch / "tf")
    variables = {
        "name_prefix": f"fail-{uuid.uuid4().hex[:6]}",
        "strategy": "dependency",
        **workgroup_variables(workgroup),
        "max_concurrency": 3,
        "sql_dir": str(sql_dir),
        "task_execution_timeout_seconds": TASK_TIMEOUT,
        # Tasks poll every second: a task's own timeout (overrun's 3 s) is then checked
        # within a second and cancels the statement (with events, only at a fallback).
        "completion": "poll",
        # No alarms: no test here reads one (test_dependency_on_localstack.py's
        # deployment of the example keeps them), and they were a third of this apply.
        "alarms": {"create": False},
    }
    try:
        workspace.init()
        workspace.apply(variables)
        yield Deployment(aws, workspace.outputs(), workgroup)
    finally:
        try:
            if destroy_deployments:
                workspace.destroy(variables)
        finally:
            workspace.close()


def _takeover(deployment: Deployment) -> None:
    run_id = f"takeover-{uuid.uuid4().hex[:6]}"
    first = deployment.start(run_id, select="tag:takeover")
    deployment.wait_running(run_id, "slow")
    deployment.sfn.stop_execution(executionArn=first, error="Test", cause="stopped mid-run")
    assert deployment.wait(first)["status"] == "ABORTED"
    # slow (10 s) still runs: the new coordinator must adopt the run, not restart it.
    assert deployment.task_executions(run_id)["slow"][0]["status"] == "RUNNING"
    second = deployment.start(run_id, select="tag:takeover")
    described = deployment.wait(second)
    assert described["status"] == "SUCCEEDED", described

    executions = deployment.task_executions(run_id)
    assert sorted(executions) == ["after_slow", "q1", "q2", "q3", "slow"]
    for task, ran in executions.items():
        assert len(ran) == 1, f"{task} ran {len(ran)} times"
        # A task execution reports its outcome before its own last state, so the
        # coordinator may end first (seen under a loaded cold run): wait for its stop.
        assert deployment.wait(ran[0]["executionArn"])["status"] == "SUCCEEDED"
        assert json.loads(ran[0]["input"])["attempt"] == 1
    document = deployment.document(run_id)
    assert document["status"] == "SUCCEEDED"
    assert document["invocation"] == 1  # adopted, not restarted
    assert document["coordinator_execution"] == second
    assert {r["status"] for r in document["results"]} == {"success"}


def _abort(deployment: Deployment) -> None:
    run_id = f"abort-{uuid.uuid4().hex[:6]}"
    coordinator = deployment.start(run_id, select="tag:abort")
    held = deployment.wait_running(run_id, "held")
    deployment.sfn.stop_execution(executionArn=held["executionArn"], cause="aborted by hand")
    described = deployment.wait(coordinator)
    assert described["status"] == "FAILED", described
    failure = deployment.failure(described)
    assert failure["error"] == "DagAggregate.TaskAborted", failure
    assert json.loads(failure["cause"])["task"] == "held"

    executions = deployment.task_executions(run_id)
    assert sorted(executions) == ["f1", "free", "held"]  # h1 and h2 never started
    assert executions["held"][0]["status"] == "ABORTED"
    statuses = {r["task"]: r["status"] for r in deployment.document(run_id)["results"]}
    assert statuses == {
        "held": "error",
        "h1": "skipped",
        "h2": "skipped",
        "free": "success",
        "f1": "success",
    }


def _timeout(deployment: Deployment) -> None:
    run_id = f"timeout-{uuid.uuid4().hex[:6]}"
    coordinator = deployment.start(run_id, select="tag:timeout")
    begin = time.monotonic()
    described = deployment.wait(coordinator)
    assert described["status"] == "FAILED", described
    # Well before the 60 s statement ends: the execution timeout ended the task.
    assert time.monotonic() - begin < 55
    failure = deployment.failure(described)
    assert failure["error"] == "DagAggregate.TaskTimedOut", failure
    assert json.loads(failure["cause"])["task"] == "stuck"
    executions = deployment.task_executions(run_id)
    assert executions["stuck"][0]["status"] == "TIMED_OUT"
    assert "s1" not in executions
    statuses = {r["task"]: r["status"] for r in deployment.document(run_id)["results"]}
    assert statuses == {"stuck": "error", "s1": "skipped", "fine": "success", "f2": "success"}


def _cancel(deployment: Deployment) -> None:
    """The task machine's poll loop gives up at the task's timeout and cancels the statement.

    CancelStatement is made by the task machine's role (the module's FollowOwnStatements
    grant, owner condition included); the statement ends ABORTED long before its 30 s.
    """
    run_id = f"cancel-{uuid.uuid4().hex[:6]}"
    described = deployment.wait(deployment.start(run_id, select="tag:cancel"))
    assert described["status"] == "FAILED", described
    failure = deployment.failure(described)
    assert failure["error"] == "DagAggregate.TaskTimedOut", failure
    assert json.loads(failure["cause"])["task"] == "overrun"
    statuses = {r["task"]: r["status"] for r in deployment.document(run_id)["results"]}
    assert statuses == {"overrun": "error"}
    statements = deployment.redshift.list_statements(
        Status="ALL", WorkgroupName=deployment.workgroup
    )["Statements"]
    overrun = [s for s in statements if "INSERT INTO agg.overrun" in s.get("QueryString", "")]
    assert overrun and all(s["Status"] == "ABORTED" for s in overrun), overrun


SCENARIOS = {"takeover": _takeover, "abort": _abort, "timeout": _timeout, "cancel": _cancel}


@pytest.fixture(scope="module")
def scenarios(deployment: Deployment) -> dict[str, BaseException | None]:
    """The four scenarios at once, each in its own thread; what each raised (None: held).

    Each selects its own DAG (its tag) under its own run id, and max_concurrency
    limits a run, not the deployment: they do not meet. In a row they waited for one
    another's slow statements (10, 30, 20 and 3 s). The faults test runs alone after
    them: its fault plan would reach every run.
    """
    with ThreadPoolExecutor(max_workers=len(SCENARIOS)) as pool:
        futures = {name: pool.submit(run, deployment) for name, run in SCENARIOS.items()}
    return {name: future.exception() for name, future in futures.items()}


def _held(scenarios: dict[str, BaseException | None], name: str) -> None:
    error = scenarios[name]
    if error is not None:
        raise error


def test_a_stopped_coordinator_is_taken_over_and_every_task_runs_once(
    scenarios: dict[str, BaseException | None],
) -> None:
    _held(scenarios, "takeover")


def test_a_task_execution_aborted_by_hand_fails_its_task_and_skips_its_descendants(
    scenarios: dict[str, BaseException | None],
) -> None:
    _held(scenarios, "abort")


def test_a_task_execution_past_its_timeout_fails_its_task_and_the_run(
    scenarios: dict[str, BaseException | None],
) -> None:
    _held(scenarios, "timeout")


def test_a_statement_past_its_own_timeout_is_cancelled_by_its_task(
    scenarios: dict[str, BaseException | None],
) -> None:
    """See _cancel: the task's poll loop gives up at the task's timeout and cancels."""
    _held(scenarios, "cancel")


def test_the_runtime_metrics_count_the_failed_and_skipped_tasks_of_the_four_runs(
    scenarios: dict[str, BaseException | None], deployment: Deployment
) -> None:
    """The dependency runtime's EMF lines reach CloudWatch (through the harness).

    Expected from the scenarios above, written out by hand: three tasks failed (held,
    stuck, overrun), three never ran (h1 and h2 behind held, s1 behind stuck), and four
    runs ended (takeover's once, though two coordinators ran it). Runs after the
    scenarios and before the faults test, whose runs would add to the counts.
    """
    for name, error in scenarios.items():
        assert error is None, f"scenario {name} failed, so its metrics are not known: {error!r}"
    module = deployment.outputs["state_machine_arn"].rsplit(":", 1)[1]
    dims = [{"Name": "Module", "Value": module}, {"Name": "Pattern", "Value": "dag-aggregate"}]
    cloudwatch = deployment.aws("cloudwatch")

    def statistic(metric: str, stat: str) -> float:
        now = datetime.datetime.now(datetime.UTC)
        points = cloudwatch.get_metric_statistics(
            Namespace="sfn-patterns",
            MetricName=metric,
            Dimensions=dims,
            StartTime=now - datetime.timedelta(hours=1),
            EndTime=now + datetime.timedelta(minutes=1),
            Period=7200,
            Statistics=[stat],
        )["Datapoints"]
        return sum(p[stat] for p in points)

    expected = {("TaskFailures", "Sum"): 3, ("TasksSkipped", "Sum"): 3}
    expected[("RunDuration", "SampleCount")] = 4
    deadline = time.monotonic() + 30  # the harness's sink writes every second
    while True:
        seen = {key: statistic(*key) for key in expected}
        if seen == expected or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert seen == expected


def test_under_faults_every_task_runs_once_and_the_run_ends_with_a_name(
    deployment: Deployment, localstack_endpoint: str
) -> None:
    """Faults injected: Data API and DynamoDB throttling and runtime Lambda crashes.

    Oracles: the task executions (one per task, started at attempt 1), each table's
    rows (an append task run twice, or its rows counted twice, doubles them), and
    the coordinator's status: SUCCEEDED, or FAILED with a DagAggregate.* error.
    """
    aws = deployment.aws
    outputs = deployment.outputs
    task_role = deployment.sfn.describe_state_machine(
        stateMachineArn=outputs["task_state_machine_arn"]
    )["roleArn"]
    runtime = outputs["runtime_function_name"]
    runtime_role = aws("lambda").get_function(FunctionName=runtime)["Configuration"]["Role"]
    rate = 0.2
    data_api = {"service": "redshift-data", "caller_role": task_role, "probability": rate}
    plan = {
        "seed": 28,
        "faults": [
            {**data_api, "operation": "ExecuteStatement", "kind": "throttle"},
            {**data_api, "operation": "DescribeStatement", "kind": "throttle"},
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "throttle",
                "caller_role": runtime_role,
                "probability": rate,
            },
            # No event faults: this file's deployment polls (``completion = "poll"``, for
            # the cancel test), so its tasks deliver no completion event to duplicate.
        ],
    }
    run_id = f"faults-{uuid.uuid4().hex[:6]}"
    crash = {
        "service": "lambda",
        "operation": "Invoke",
        "kind": "kill",
        "resource": runtime,
        "seconds": 0.2,
    }
    # The coordinator's first call of the runtime (start) dies for sure: its Retry
    # covers a crashed runtime (Runtime.ExitError), and the retry, the same execution,
    # carries on with the run the dead call may have begun.
    plan["faults"] = [{**crash, "first": 1}, *plan["faults"]]
    with faults.applied(localstack_endpoint, plan):
        coordinator = deployment.start(run_id, select="tag:faults")
        # root may run and end between two polls (a few hundred milliseconds).
        deployment.wait_running(run_id, "root", or_ended=True)
        log = faults.log(localstack_endpoint)
        assert [e["kind"] for e in log].count("kill") == 1, log
        # From the first task on, the runtime's next call dies for sure, and one in
        # 2/rate after it (its reports, its dispatches).
        plan["faults"] = [
            {**crash, "first": 1},
            {**crash, "probability": rate / 2},
            *plan["faults"][1:],
        ]
        faults.set_plan(localstack_endpoint, plan)
        described = deployment.wait(coordinator, timeout=240)
        log += faults.log(localstack_endpoint)
    kinds = Counter(entry["kind"] for entry in log)
    print(f"\ndag under faults: {described['status']}, injected {dict(kinds)}")
    if described["status"] != "SUCCEEDED":
        assert described["status"] == "FAILED", described
        assert deployment.failure(described)["error"].startswith("DagAggregate."), described
    executions = deployment.task_executions(run_id)
    for task, ran in executions.items():
        assert len(ran) == 1, f"{task} ran {len(ran)} times"
        assert json.loads(ran[0]["input"])["attempt"] == 1
    redshift = aws("redshift-data")
    if described["status"] == "SUCCEEDED":
        assert sorted(executions) == sorted(FAULT_ROWS)
        rows = {task: count_rows(redshift, deployment.workgroup, task) for task in FAULT_ROWS}
        assert rows == FAULT_ROWS
        assert {r["status"] for r in deployment.document(run_id)["results"]} == {"success"}
    assert {"throttle", "kill"} <= set(kinds), kinds
