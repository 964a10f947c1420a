"""A dependency-strategy deployment of examples/dag-aggregate for LocalStack tests.

Shared by the dependency tests that apply the example: the Deployment class (apply
with a SQL directory, run SQL, start coordinator executions, read statuses, run
documents and the CLI against it) and small helpers.

The deployment encrypts everything the module stores with a customer managed key
whose policy an account would have (the root statement: IAM policies decide for
roles; a statement for CloudWatch Logs, which encrypts as its service principal).
The harness decides KMS on every call, so a role of the module, or the operator
policy output, that lacks a KMS action fails its test here.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sfn_patterns_cli.dag_aggregate import runs
from sfn_patterns_cli.dag_aggregate.cli import group
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.kms_keys import LOGS_STATEMENT, ROOT_STATEMENT, create_key

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"
DATABASE = "dev"


class Deployment:
    """The applied example plus helpers to run SQL and coordinator executions."""

    def __init__(
        self,
        aws: Callable[[str], Any],
        workspace: Workspace,
        workgroup: str,
        endpoint: str,
        kms_key_arn: str,
    ) -> None:
        self.aws = aws
        self.workspace = workspace
        self.workgroup = workgroup
        self.endpoint = endpoint
        self.kms_key_arn = kms_key_arn
        self.variables: dict[str, object] = {}
        self.outputs: dict[str, Any] = {}

    def cli(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        """``sfn-patterns dag <args> --state-machine-arn <coordinator>`` against LocalStack,
        as the account (``env``: a role session's credentials instead)."""
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
            env=env or {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
        )
        return result.exit_code, result.stdout, result.stderr

    def document(self, run_id: str) -> dict[str, Any]:
        return runs.read_run_results(self.aws("s3"), self.outputs["run_results_uri"], run_id)

    def apply(
        self,
        sql_dir: Path | None,
        max_concurrency: int,
        external_tables: tuple[str, ...] = ("raw.*",),
        workgroup: str | None = None,
        refresh: bool = True,
    ) -> None:
        """Apply (first) or update the deployment in place: its SQL, limit and workgroup.

        ``sql_dir`` None is the example's own SQL; ``workgroup`` switches the target
        (a run that lists its statements by workgroup sees only its own).
        ``refresh=False`` updates without Terraform's refresh: the state is then this
        deployment's own last apply, and the runs since started executions, they
        changed no resource, so reading every resource back would only cost a plan's
        CPU. The second plan after the last apply still refreshes: drift shows there.
        """
        if workgroup is not None:
            self.workgroup = workgroup
        self.variables = {
            "name_prefix": f"dep-{uuid.uuid4().hex[:6]}"
            if not self.variables
            else self.variables["name_prefix"],
            "strategy": "dependency",
            **workgroup_variables(self.workgroup),
            "max_concurrency": max_concurrency,
            "external_tables": list(external_tables),
            "kms_key_arn": self.kms_key_arn,
            # Its body is checked against AWS's structure (test_dependency_on_localstack),
            # with its alarm widget: alarms without a target, created for the dashboard.
            "create_dashboard": True,
            "alarms": {"create": True},
        }
        if sql_dir is not None:
            self.variables["sql_dir"] = str(sql_dir)
        if refresh:
            self.workspace.apply(self.variables)
        else:
            self.workspace.run(
                "apply",
                "-input=false",
                "-no-color",
                "-auto-approve",
                "-refresh=false",
                *self.workspace.var_args(self.variables),
            )
        self.outputs = self.workspace.outputs()

    def _finished(self, sid: str, what: object) -> None:
        """Wait until statement ``sid`` ends (30 s at most); it must have FINISHED."""
        client = self.aws("redshift-data")
        deadline = time.monotonic() + 30
        while (described := client.describe_statement(Id=sid))["Status"] not in (
            "FINISHED",
            "FAILED",
            "ABORTED",
        ):
            assert time.monotonic() < deadline, what
            time.sleep(0.05)
        assert described["Status"] == "FINISHED", described

    def sql(self, statement: str) -> str:
        """Run one statement to completion; returns its id."""
        sid = self.aws("redshift-data").execute_statement(
            WorkgroupName=self.workgroup, Database=DATABASE, Sql=statement
        )["Id"]
        self._finished(sid, statement)
        return sid

    def sql_batch(self, statements: list[str]) -> None:
        """Run set-up statements in order, 40 to a batch (the Data API's limit).

        One BatchExecuteStatement and its polls instead of one statement and its polls
        each: a set-up of 40 tables was 40 round trips of requests to the emulator.
        """
        client = self.aws("redshift-data")
        for i in range(0, len(statements), 40):
            batch = statements[i : i + 40]
            sid = client.batch_execute_statement(
                WorkgroupName=self.workgroup, Database=DATABASE, Sqls=batch
            )["Id"]
            self._finished(sid, batch)

    def count(self, table: str) -> int:
        sid = self.sql(f"SELECT COUNT(*) FROM {table}")
        records = self.aws("redshift-data").get_statement_result(Id=sid)["Records"]
        return int(records[0][0]["longValue"])

    def run(self, run_id: str, timeout: float, select: str | None = None) -> dict[str, Any]:
        """Start a coordinator execution (of the tasks ``select`` picks) and wait for its end."""
        sfn = self.aws("stepfunctions")
        data: dict[str, str] = {"run_id": run_id}
        if select is not None:
            data["select"] = select
        arn = sfn.start_execution(
            stateMachineArn=self.outputs["state_machine_arn"], input=json.dumps(data)
        )["executionArn"]
        deadline = time.monotonic() + timeout
        while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
            assert time.monotonic() < deadline, f"run {run_id} did not finish in {timeout} s"
            time.sleep(1)
        return described

    def task_executions(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The task machine's executions; with ``run_id``, only that run's.

        A task execution's name starts with its run id (``execution_name``): one
        deployment serves several runs, and each test looks at its own.
        """
        sfn = self.aws("stepfunctions")
        pages = sfn.get_paginator("list_executions").paginate(
            stateMachineArn=self.outputs["task_state_machine_arn"]
        )
        found = [e for page in pages for e in page["executions"]]
        if run_id is None:
            return found
        return [e for e in found if e["name"].startswith(f"{run_id}-")]

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


def deploy(
    localstack_endpoint: str, aws: Callable[[str], Any], scratch: Path, destroy: bool = True
) -> Iterator[Deployment]:
    """A Deployment whose workspace is closed, and destroyed if ``destroy``, afterwards
    (fixture body; conftest.destroy_deployments says when a test may skip the destroy)."""
    workspace = Workspace(EXAMPLE, localstack_endpoint, scratch / "tf")
    key = create_key(
        aws, ROOT_STATEMENT, LOGS_STATEMENT, description="dag-aggregate dependency tests"
    )
    deployment = Deployment(
        aws, workspace, f"wg-dep-{uuid.uuid4().hex[:6]}", localstack_endpoint, key
    )
    try:
        workspace.init()
        yield deployment
    finally:
        try:
            if destroy and deployment.variables:
                workspace.destroy(deployment.variables)
                aws("kms").schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
        finally:
            workspace.close()


def write_sql_dir(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, sql in files.items():
        (directory / f"{name}.sql").write_text(sql)
    return directory


def history_length(aws: Callable[[str], Any], execution_arn: str) -> int:
    pages = (
        aws("stepfunctions")
        .get_paginator("get_execution_history")
        .paginate(executionArn=execution_arn)
    )
    return sum(len(page["events"]) for page in pages)
