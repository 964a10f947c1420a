"""Adopted as a platform team would: every module by git reference and tag, the team's own code.

In a temporary directory outside the checkout, the root module of
``tests/consumer/team_repo`` (the team's repository: its own adapter Lambda, target
state machines, one of them in another account, and SQL) uses each pattern module as
``git::file://<clone>//modules/<pattern>?ref=<tag>``, where ``<clone>`` is a bare
clone of this repository with the tag added: Terraform fetches the modules with git,
exactly as from a remote, and no file of the checkout is copied or edited. The
modules' plan-time Python is the team's own interpreter (Python 3.9, the oldest
supported, with the planner's documented dependencies), not the project's venv.

Then: init, plan, apply to LocalStack, a clean second plan, one execution of each
pattern (the three workflows started together after the apply), and destroy, whose
leftover check looks every created resource up in its own account; a name-prefix
sweep of both accounts follows.

The clone is of the committed HEAD: uncommitted changes are not in it.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns.sqs_throttle import enqueue
from sfn_patterns.status_table import Status, Tracker
from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import REPO_ROOT, Workspace

from ..iam_denial import (
    assert_denial_text,
    denial,
    expect_denials,
    require_enforcement,
    without_actions,
)
from ..tooling.pythons import venv_for

pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.slow]

TEAM_REPO = Path(__file__).resolve().parent / "team_repo"
TAG = "v1.0.0"  # the ref the fixture pins
PUBLISHED_URL = "https://example.com/sfn-patterns.git"  # the URL the README documents
ANALYTICS = "222222222222"  # the other account (LocalStack: account from the access key)


def clone_and_tag(target: Path) -> Path:
    """A bare clone of this repository (committed HEAD) with the release tag on HEAD."""
    subprocess.run(["git", "clone", "--quiet", "--bare", str(REPO_ROOT), str(target)], check=True)
    subprocess.run(
        ["git", "-C", str(target), "tag", "-f", TAG, "HEAD"], check=True, capture_output=True
    )
    return target


def team_checkout(target: Path, remote: Path) -> Path:
    """The team's repository in a directory of its own, pointing at the tagged clone."""
    shutil.copytree(TEAM_REPO, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for tf in target.glob("*.tf"):
        tf.write_text(tf.read_text().replace(PUBLISHED_URL, f"file://{remote}"))
    return target


def wait(sfn: Any, arn: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            return described
        assert time.monotonic() < deadline, f"{arn} still running after {timeout} s"
        time.sleep(1)


def run_sql(aws: Callable, workgroup: str, sql: str) -> dict:
    data = aws("redshift-data")
    statement = data.execute_statement(WorkgroupName=workgroup, Database="dev", Sql=sql)["Id"]
    deadline = time.monotonic() + 60
    while True:
        described = data.describe_statement(Id=statement)
        if described["Status"] in ("FINISHED", "FAILED", "ABORTED"):
            assert described["Status"] == "FINISHED", described
            return data.get_statement_result(Id=statement) if described["HasResultSet"] else {}
        assert time.monotonic() < deadline
        time.sleep(0.3)


@pytest.fixture(scope="module")
def team(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("consumer")
    assert REPO_ROOT not in base.parents
    remote = clone_and_tag(base / "sfn-patterns.git")
    config = team_checkout(base / "team-repo", remote)
    python = venv_for("3.9", base)  # the team's own Python, with only what the modules document
    prefix = f"team-{uuid.uuid4().hex[:6]}"
    workgroup = f"wg-{prefix}"
    for statement in (
        "CREATE SCHEMA IF NOT EXISTS raw",
        "CREATE SCHEMA IF NOT EXISTS agg",
        "CREATE TABLE raw.orders (created_at TIMESTAMP, amount DECIMAL(10, 2))",
        "INSERT INTO raw.orders VALUES ('2026-11-01 10:00', 10.50), ('2026-11-01 11:00', 4.50),"
        " ('2026-11-02 09:00', 7.00)",
        "CREATE TABLE agg.orders_daily (day DATE, n_orders BIGINT, revenue DECIMAL(38, 2))",
        "CREATE TABLE agg.orders_total (n_orders BIGINT, revenue DECIMAL(38, 2))",
    ):
        run_sql(aws, workgroup, statement)
    variables = {
        "name_prefix": prefix,
        "python_executable": str(python),
        **workgroup_variables(workgroup),
    }
    workspace = Workspace(
        config, localstack_endpoint, base / "scratch", aliases={"analytics": ANALYTICS}
    )
    try:
        workspace.init()
        assert (base / "scratch/.terraform/modules").is_dir()
        workspace.apply(variables)
        outputs = workspace.outputs()
        # The three workflow runs start here, at once, and run while the tests before
        # theirs (the second plan) do: each test below waits for its own execution.
        sfn = aws("stepfunctions")
        started = {
            key: sfn.start_execution(stateMachineArn=outputs[arn], input=payload)["executionArn"]
            for key, arn, payload in (
                ("export", "export_poller_arn", '{"seconds": 2}'),
                ("warehouse", "warehouse_wrapper_arn", "{}"),
                ("aggregates", "aggregates_state_machine_arn", "{}"),
            )
        }
        yield {
            "workspace": workspace,
            "variables": variables,
            "prefix": prefix,
            "workgroup": workgroup,
            "started": started,
            **outputs,
        }
    finally:
        try:
            workspace.destroy(variables)  # fails if anything it created is left, in either account
        finally:
            workspace.close()
    assert leftovers(aws, prefix) == {}
    assert leftovers(client_factory(localstack_endpoint, account=ANALYTICS), prefix) == {}


def test_modules_come_from_the_tagged_git_clone(team: dict) -> None:
    modules = json.loads(
        (team["workspace"].scratch_dir / ".terraform/modules/modules.json").read_text()
    )["Modules"]
    sources = {m["Key"]: m["Source"] for m in modules if m["Key"]}
    for key in ("export_poller", "warehouse_slot", "report_throttle", "aggregates", "order_tasks"):
        assert sources[key].startswith("git::file://"), sources[key]
        assert sources[key].endswith(f"?ref={TAG}")


def test_second_plan_is_empty(team: dict) -> None:
    code, plan = team["workspace"].plan_exit_code(team["variables"])
    assert code == 0, plan


def test_every_module_role_follows_the_accounts_role_rules(team: dict, aws: Callable) -> None:
    """role_path and role_permissions_boundary reach every role the modules create: all
    of them are under /workloads/ with the team's boundary; only the team's own role is
    not. (The workflows running through these roles, cross-account trust included, are
    the tests around this one.)"""
    iam = aws("iam")
    prefix = team["prefix"]
    roles = [
        iam.get_role(RoleName=r["RoleName"])["Role"]
        for page in iam.get_paginator("list_roles").paginate()
        for r in page["Roles"]
        if r["RoleName"].startswith(f"{prefix}-")
    ]
    outside = sorted(r["RoleName"] for r in roles if r["Path"] != "/workloads/")
    assert outside == [f"{prefix}-load"]
    under = [r for r in roles if r["Path"] == "/workloads/"]
    assert len(under) >= 10, [r["RoleName"] for r in under]
    boundary = f"arn:aws:iam::000000000000:policy/{prefix}-workload-boundary"
    for role in under:
        assert role["Arn"].endswith(f":role/workloads/{role['RoleName']}"), role["Arn"]
        assert role.get("PermissionsBoundary", {}).get("PermissionsBoundaryArn") == boundary, role


def test_job_poller_runs_our_export_job(team: dict, aws: Callable) -> None:
    sfn = aws("stepfunctions")
    arn = team["started"]["export"]
    assert arn.startswith(team["export_poller_arn"].replace(":stateMachine:", ":execution:"))
    described = wait(sfn, arn)
    assert described["status"] == "SUCCEEDED", described


def test_semaphore_wraps_our_load_workflow(team: dict, aws: Callable) -> None:
    sfn = aws("stepfunctions")
    arn = team["started"]["warehouse"]
    assert arn.startswith(team["warehouse_wrapper_arn"].replace(":stateMachine:", ":execution:"))
    assert wait(sfn, arn)["status"] == "SUCCEEDED"
    loads = sfn.list_executions(stateMachineArn=team["load_state_machine_arn"])["executions"]
    assert [e["status"] for e in loads] == ["SUCCEEDED"]


def test_throttle_starts_our_report_in_the_analytics_account(team: dict, aws: Callable) -> None:
    enqueue(
        team["reports_queue_url"],
        {"report": "daily"},
        request_id=f"r-{team['prefix']}",
        client=aws("sqs"),
    )
    response = aws("lambda").invoke(
        FunctionName=team["reports_starter_function_name"], Payload=b"{}"
    )
    report = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, report
    assert len(report["started"]) == 1, report
    theirs = client_factory(team["workspace"].endpoint, account=ANALYTICS)("stepfunctions")
    runs = theirs.list_executions(stateMachineArn=team["report_state_machine_arn"])["executions"]
    assert [r["name"] for r in runs] == report["started"]
    assert wait(theirs, runs[0]["executionArn"])["status"] == "SUCCEEDED"


@pytest.mark.iam_denial
def test_the_target_role_outputs_are_needed(
    team: dict, aws: Callable, localstack_endpoint: str
) -> None:
    """target_role_policy_json and target_role_trust_policy_json, each needed (the test above
    shows they are enough). Without states:StartExecution in the analytics role's policy
    the start is refused, naming that role's session; with a trust policy that does not
    name the starter, its sts:AssumeRole is refused, naming the starter's role.
    """
    require_enforcement(aws, localstack_endpoint)
    theirs = client_factory(localstack_endpoint, account=ANALYTICS)
    target_role = f"arn:aws:iam::{ANALYTICS}:role/{team['prefix']}-throttle-target"
    starter = team["reports_starter_function_name"]
    starter_role = aws("lambda").get_function(FunctionName=starter)["Configuration"]["Role"]
    request_id = f"denied-{team['prefix']}"
    enqueue(
        team["reports_queue_url"], {"report": "denied"}, request_id=request_id, client=aws("sqs")
    )

    def run_starter() -> tuple[dict, dict]:
        response = aws("lambda").invoke(FunctionName=starter, Payload=b"{}", LogType="Tail")
        return response, json.loads(response["Payload"].read())

    report_machine = team["report_state_machine_arn"]
    with (
        without_actions(theirs, target_role, "states:StartExecution"),
        expect_denials(denial(target_role, "states:StartExecution", report_machine)),
    ):
        response, report = run_starter()
    assert "FunctionError" not in response, report
    assert report["started"] == [] and len(report["failed"]) == 1, report
    log = base64.b64decode(response["LogResult"]).decode(errors="replace")
    assert_denial_text(log, target_role, "states:StartExecution", code="AccessDenied")

    iam = theirs("iam")
    name = target_role.rsplit("/", 1)[1]
    trust = iam.get_role(RoleName=name)["Role"]["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    nobody = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "states.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    iam.update_assume_role_policy(RoleName=name, PolicyDocument=json.dumps(nobody))
    try:
        with expect_denials(denial(starter_role, "sts:AssumeRole", target_role)):
            response, error = run_starter()
    finally:
        iam.update_assume_role_policy(RoleName=name, PolicyDocument=json.dumps(trust))
    assert response.get("FunctionError") == "Unhandled", error
    assert_denial_text(
        error["errorMessage"], starter_role, "sts:AssumeRole", target_role, code="AccessDenied"
    )


def test_dag_aggregate_runs_our_sql(team: dict, aws: Callable) -> None:
    sfn = aws("stepfunctions")
    arn = team["started"]["aggregates"]
    assert arn.startswith(
        team["aggregates_state_machine_arn"].replace(":stateMachine:", ":execution:")
    )
    assert wait(sfn, arn)["status"] == "SUCCEEDED"
    result = run_sql(aws, team["workgroup"], "SELECT n_orders, revenue FROM agg.orders_total")
    [[n_orders, revenue]] = [[next(iter(v.values())) for v in row] for row in result["Records"]]
    assert (int(n_orders), float(revenue)) == (3, 22.0)  # three orders: 10.50 + 4.50 + 7.00


def test_status_table_tracks_our_tasks(
    team: dict, localstack_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(key, value)
    tracker = Tracker(
        team["order_tasks_table_name"], "orders", host=localstack_endpoint, region="us-east-1"
    )
    tracker.create_tasks(["o-1"])
    with tracker.start("o-1"):
        pass
    assert [t.task_id for t in tracker.query(Status.SUCCEEDED)] == ["o-1"]
