"""strategy = "dependency" on LocalStack: a 30-task DAG, then a failure, a retry, a selection.

One deployment of examples/dag-aggregate (``external_tables = ["raw.*"]``) serves
every test of this file. Its first apply holds two DAGs in one SQL directory, each
selected by its tag: the synthetic DAG (``tag:synthetic``) and FAILURE_DAG
(``tag:failure``; the selection test's own selectors pick within it, as FAILURE_DAG's
tasks read nothing of the synthetic DAG's). Its second apply is the example as
shipped (an in-place update of the definitions, not a second deployment: each
deployment is an init, an apply, a plan and a destroy of the whole example, and each
apply a refresh and a plan). The SQL really runs on the DuckDB-backed Redshift Data
API. Everything it stores is encrypted with a customer managed key whose policy hands
access to IAM (dependency_deployment.py), and the harness decides KMS on every call:
the runs, the failure and retry, the operator policy's CLI calls all work under it.
``sfn-patterns dag run | retry | status`` are driven through click, against
LocalStack. Expected sets are written by hand from FAILURE_DAG; each run's task
executions are told apart by their names, which start with the run id.

Crashes and timeouts are in test_dependency_failures_on_localstack.py (its
deployment polls), the 2,000-task scale run in scripts/bench_dag_strategies.py.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sfn_patterns_cli.dag_aggregate import runs
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag
from sfn_patterns_localstack.executions import wait_stopped
from tests.dashboard_check import assert_module_dashboard, deployed_body
from tests.iam_denial import (
    assert_denial_text,
    denial,
    expect_denials,
    require_enforcement,
    session_credentials,
    temporary_role,
    without_actions,
)

from .dependency_deployment import Deployment, deploy, history_length, write_sql_dir
from .example_run import prepare, run_and_check

# Every run executes its statements through the Redshift Data API (tests/portable.py).
pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.needs("redshift-data")]

MAX_HISTORY_EVENTS = 25_000
# The size only has to prove the dependency strategy on LocalStack: one execution per
# task, several waves of dispatch through the concurrency limit, no history growing
# with the DAG. 30 tasks at max_concurrency 10 are three waves or more; the coordinator
# parks on one token (one Task state: eight-odd events whatever the DAG's size), so
# "fewer events than the DAG has tasks" still fails at 30 if any history grows by one
# event per task. Each task costs about 0.7 CPU-seconds (a task execution, two runtime
# calls, a statement), so a larger DAG here would buy no more proof; the 2,000-task
# scale run is scripts/bench_dag_strategies.py's.
TASKS = 30
MAX_CONCURRENCY = 10


@pytest.fixture(scope="module")
def deployment(
    localstack_endpoint: str,
    aws: Callable[[str], Any],
    tmp_path_factory: pytest.TempPathFactory,
    destroy_deployments: bool,
) -> Iterator[Deployment]:
    yield from deploy(
        localstack_endpoint, aws, tmp_path_factory.mktemp("dependency"), destroy_deployments
    )


def _synthetic_sql(n: int, seed: int) -> dict[str, str]:
    """``n`` tasks (t00000...) tagged ``synthetic``, each reading up to three earlier ones."""
    parents = random_dag(n, seed=seed, max_parents=3, window=60)
    files = {}
    for name, deps in parents.items():
        reads = " UNION ALL ".join(f"SELECT n FROM agg.{p}" for p in sorted(deps))
        body = f"SELECT COUNT(*) AS n FROM ({reads}) AS r" if deps else "SELECT 1 AS n"
        files[name] = f"-- sfn: mode=append wait=0 tags=synthetic\n{body}"
    return files


def test_a_synthetic_dag_runs_to_completion_without_long_histories(dags: Deployment) -> None:
    deployment = dags
    priorities = deployment.outputs["priorities"]
    assert len(priorities) == TASKS + len(FAILURE_DAG)
    assert sorted(priorities) == sorted([*SYNTHETIC, *FAILURE_DAG])

    begin = time.monotonic()
    result = deployment.run(f"synthetic-{TASKS}", timeout=600, select="tag:synthetic")
    elapsed = time.monotonic() - begin
    assert result["status"] == "SUCCEEDED", result
    output = json.loads(result["output"])
    assert output["tasks"]["succeeded"] == TASKS, output
    executions = deployment.task_executions(f"synthetic-{TASKS}")
    assert len(executions) == TASKS
    # A task execution reports its end from its last Task state, so the one whose report
    # ended the run may still be finishing when the coordinator has ended (a loaded CI
    # run listed it RUNNING): those are awaited, not failed.
    finishing = [e["executionArn"] for e in executions if e["status"] == "RUNNING"]
    ended = wait_stopped(deployment.aws("stepfunctions"), finishing, timeout=60)
    statuses = [ended.get(e["executionArn"], e) for e in executions]
    assert [e["status"] for e in statuses] == ["SUCCEEDED"] * TASKS, statuses
    # The point of one execution per task: no history grows with the DAG.
    coordinator = history_length(deployment.aws, result["executionArn"])
    longest = max(
        [coordinator] + [history_length(deployment.aws, e["executionArn"]) for e in executions[:20]]
    )
    assert longest < MAX_HISTORY_EVENTS
    # Sharper at this size: the coordinator's history holds fewer events than the DAG
    # has tasks (one event per task would already fail this).
    assert coordinator < TASKS, coordinator
    print(
        f"{TASKS} tasks, max_concurrency {MAX_CONCURRENCY}: {elapsed:.0f} s, coordinator "
        f"history {coordinator} events, longest history {longest} events"
    )


# b fails while raw.flag holds 'bad'; y is slow, so it is still running when b fails.
# z needs both branches: it must never start while b has not succeeded.
# (Its widest point is two tasks at once: the synthetic DAG's max_concurrency, 10, runs
# it as the 2 it ran on a deployment of its own did.)
FAILURE_DAG = {
    name: f"-- sfn: mode=append wait={wait} tags=failure\n{body}"
    for name, wait, body in (
        ("a", 0, "SELECT 1 AS x"),
        ("b", 0, "SELECT CAST(f.v AS INTEGER) AS x FROM raw.flag AS f, agg.a"),
        ("c", 0, "SELECT x FROM agg.b"),
        ("x", 0, "SELECT 2 AS x"),
        ("y", 2, "/* sfnp:sleep=4 */ SELECT x FROM agg.x"),
        ("z", 0, "SELECT x FROM agg.y UNION ALL SELECT x FROM agg.b"),
    )
}
SYNTHETIC = _synthetic_sql(TASKS, seed=11)


def test_the_dashboard_charts_the_runtime_metrics(dags: Deployment) -> None:
    """The dependency runtime's metrics (what dispatch prints: the task failures,
    tasks skipped, run duration), under the module instance's dimensions."""
    outputs = dags.outputs
    assert_module_dashboard(
        deployed_body(dags.aws, outputs["dashboard_name"]),
        module=outputs["state_machine_arn"].rsplit(":", 1)[1],
        pattern="dag-aggregate",
        metrics={"TaskFailures", "TasksSkipped", "RunDuration"},
        alarm_arns=[a["arn"] for a in outputs["alarms"].values()],
    )


@pytest.fixture(scope="module")
def dags(deployment: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    """The deployment applied once with both DAGs (their tables created, raw.flag 'bad')."""
    deployment.sql_batch(
        [
            "CREATE SCHEMA IF NOT EXISTS raw",
            "CREATE SCHEMA IF NOT EXISTS agg",
            "CREATE TABLE raw.flag (v VARCHAR)",
            "INSERT INTO raw.flag VALUES ('bad')",
            *(f"CREATE TABLE agg.{name} (x INTEGER)" for name in FAILURE_DAG),
            *(f"CREATE TABLE agg.{name} (n BIGINT)" for name in SYNTHETIC),
        ]
    )
    sql_dir = write_sql_dir(tmp_path_factory.mktemp("dags") / "sql", {**SYNTHETIC, **FAILURE_DAG})
    deployment.apply(sql_dir, max_concurrency=MAX_CONCURRENCY)
    return deployment


def test_what_the_module_stores_is_under_the_customer_key(dags: Deployment) -> None:
    """kms_key_arn reaches every store the dependency strategy creates: the runs table,
    the coordinator and task state machines, the runtime Lambda's environment, the run
    documents' bucket. The runs in this file then prove the roles hold the KMS actions
    those stores need."""
    aws, key = dags.aws, dags.kms_key_arn
    table = aws("dynamodb").describe_table(TableName=dags.outputs["runs_table_name"])["Table"]
    assert table["SSEDescription"]["KMSMasterKeyArn"] == key, table.get("SSEDescription")
    sfn = aws("stepfunctions")
    for output in ("state_machine_arn", "task_state_machine_arn"):
        described = sfn.describe_state_machine(stateMachineArn=dags.outputs[output])
        assert described["encryptionConfiguration"] == {
            "type": "CUSTOMER_MANAGED_KMS_KEY",
            "kmsKeyId": key,
            "kmsDataKeyReusePeriodSeconds": 300,
        }, (output, described.get("encryptionConfiguration"))
    function = aws("lambda").get_function_configuration(
        FunctionName=dags.outputs["runtime_function_name"]
    )
    assert function["KMSKeyArn"] == key, function.get("KMSKeyArn")
    bucket = dags.outputs["run_results_uri"].removeprefix("s3://").split("/")[0]
    (rule,) = aws("s3").get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"][
        "Rules"
    ]
    assert rule["ApplyServerSideEncryptionByDefault"] == {
        "SSEAlgorithm": "aws:kms",
        "KMSMasterKeyID": key,
    }, rule


def test_a_failure_skips_only_its_descendants_and_a_retry_reruns_just_them(
    dags: Deployment,
) -> None:
    deployment = dags
    deployment.sql("UPDATE raw.flag SET v = 'bad'")
    first = deployment.run("nightly-1", timeout=150, select="tag:failure")
    assert first["status"] == "FAILED", first
    sfn = deployment.aws("stepfunctions")
    history = sfn.get_execution_history(executionArn=first["executionArn"], reverseOrder=True)
    failed = next(e for e in history["events"] if e["type"] == "ExecutionFailed")
    details = failed["executionFailedEventDetails"]
    assert details["error"] == "DagAggregate.StatementFailed"
    assert '"task": "b"' in details["cause"]

    started = [deployment.task_of(e) for e in deployment.task_executions("nightly-1")]
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
    rerun = sorted(deployment.task_of(e) for e in deployment.task_executions("nightly-1"))
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


def test_a_selection_runs_only_the_chosen_tasks_in_dag_order(dags: Deployment) -> None:
    deployment = dags
    deployment.sql("UPDATE raw.flag SET v = '7'")
    # +z is a, b, x, y, z; without x and y: a, b and z, z waiting for b (y is left out).
    code, out, err = deployment.cli(
        "run", "--run-id", "partial-1", "--select", "+z", "--exclude", "x y", "--wait"
    )
    assert code == 0, err
    ran = sorted(deployment.task_of(e) for e in deployment.task_executions("partial-1"))
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


@pytest.mark.iam_denial
def test_without_run_statements_on_the_target_a_task_fails_with_access_denied(
    dags: Deployment, localstack_endpoint: str
) -> None:
    """RunStatementsOnTheTarget is needed: without redshift-data:ExecuteStatement the task
    machine's Execute state is refused; the task execution fails with AWS's AccessDenied
    sentence naming its role and the action, and the run document reports that error.

    The error name is the aws-sdk integration's: ``RedshiftData.`` and the SDK's exception
    (the Data API's model has no AccessDeniedException, so AWS reports the SDK's base
    ``RedshiftDataException``); the cause carries the sentence and the 400 status. The
    same selection, run again with the grant back, succeeds: the revocation was the cause.
    """
    deployment = dags
    aws = deployment.aws
    require_enforcement(aws, localstack_endpoint)
    sfn = aws("stepfunctions")
    role = sfn.describe_state_machine(stateMachineArn=deployment.outputs["task_state_machine_arn"])[
        "roleArn"
    ]
    with (
        without_actions(aws, role, "redshift-data:ExecuteStatement"),
        expect_denials(
            denial(
                role, "redshift-data:ExecuteStatement", "arn:aws:redshift-serverless:*:workgroup/*"
            )
        ),
    ):
        deployment.cli("run", "--run-id", "iam-denied", "--select", "x", "--wait")
    tasks = deployment.task_executions("iam-denied")
    assert len(tasks) == 1, tasks
    described = sfn.describe_execution(executionArn=tasks[0]["executionArn"])
    assert described["status"] == "FAILED", described
    assert described["error"].startswith("RedshiftData."), described
    print(f"\ndenied task: {described['error']}: {described['cause']}")
    assert_denial_text(described["cause"], role, "redshift-data:ExecuteStatement")
    assert "Status Code: 400" in described["cause"], described["cause"]
    (result,) = deployment.document("iam-denied")["results"]
    assert (result["task"], result["status"]) == ("x", "error"), result
    assert result["error"] == described["error"], result
    assert deployment.statuses("iam-denied")["task#x"] == "failed"

    code, _, err = deployment.cli("run", "--run-id", "iam-allowed", "--select", "x", "--wait")
    assert code == 0, err
    assert deployment.statuses("iam-allowed")["task#x"] == "succeeded"


@pytest.mark.iam_denial
def test_the_operator_policy_is_all_run_retry_and_status_need(
    dags: Deployment, localstack_endpoint: str
) -> None:
    """operator_policy_json: a role with that policy and nothing else starts a run and
    waits for it, reads its status and asks for a retry, through `sfn-patterns dag`; a role
    without it is refused the first call, and the CLI says so in one line naming the
    policy to attach."""
    deployment = dags
    aws = deployment.aws
    require_enforcement(aws, localstack_endpoint)
    coordinator = deployment.outputs["state_machine_arn"]
    with (
        temporary_role(
            aws, "dag-operator", deployment.outputs["operator_policy_json"], module_output=True
        ) as operator,
        temporary_role(aws, "dag-stranger") as stranger,
        expect_denials(denial(stranger, "states:ListTagsForResource", coordinator)),
    ):
        as_operator = session_credentials(localstack_endpoint, operator, "operator")
        code, out, err = deployment.cli(
            "run", "--run-id", "operated-1", "--select", "x", "--wait", env=as_operator
        )
        assert code == 0, err
        assert "run operated-1: SUCCEEDED" in out
        code, out, err = deployment.cli("status", "operated-1", env=as_operator)
        assert code == 0, err
        assert out.startswith("run operated-1: SUCCEEDED")
        code, _, err = deployment.cli("retry", "operated-1", env=as_operator)
        assert code == 0 and "nothing to retry" in err, err

        as_stranger = session_credentials(localstack_endpoint, stranger, "stranger")
        code, _, err = deployment.cli("status", "operated-1", env=as_stranger)
        assert code == 2, err
        assert err.startswith("error: AWS refused ListTagsForResource (AccessDenied"), err
        assert "operator_policy_json" in err
        assert len(err.strip().splitlines()) == 1, err


def test_the_example_matches_a_sequential_run_and_plans_no_change(deployment: Deployment) -> None:
    """examples/dag-aggregate as shipped (its own SQL, its own external_tables default),
    strategy dependency, on a workgroup of its own: the oracles of example_run.py (as
    test_example_on_localstack.py checks the level strategies), the run document; then
    the second plan of this deployment shows no change. Last in this file: the update
    from the two DAGs' configuration to the example's is itself an apply to plan after.
    """
    workgroup = f"wg-example-{uuid.uuid4().hex[:6]}"
    plan = prepare(deployment.aws, workgroup)
    deployment.apply(
        None, max_concurrency=3, external_tables=(), workgroup=workgroup, refresh=False
    )
    run_and_check(deployment.aws, deployment.outputs, workgroup, "dependency", plan)
    code, output = deployment.workspace.plan_exit_code(deployment.variables)
    assert code == 0, f"second plan is not empty:\n{output}"
