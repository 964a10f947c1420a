"""examples/status-table on LocalStack: Terraform creates the table the library expects."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sfn_patterns.status_table import Status, Tracker, terraform_schema
from sfn_patterns_cli.status_table.cli import group as status_cli
from sfn_patterns_localstack.terraform.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "status-table"


def _index_shape(index: dict) -> dict:
    return {
        "IndexName": index["IndexName"],
        "KeySchema": index["KeySchema"],
        "Projection": {"ProjectionType": index["Projection"]["ProjectionType"]},
    }


def test_example_table_serves_the_tracker_and_replans_clean(
    localstack_endpoint: str, aws: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "test")
    variables = {"name_prefix": f"st-{int(time.time()) % 100000}"}
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path / "tf")
    try:
        workspace.init()
        workspace.apply(variables)
        outputs = workspace.outputs()
        table_name = outputs["table_name"]

        # The layout Terraform created equals the library's schema.py.
        ddb = aws("dynamodb")
        table = ddb.describe_table(TableName=table_name)["Table"]
        expected = terraform_schema()
        assert table["KeySchema"] == expected["KeySchema"]
        assert sorted(table["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
            expected["AttributeDefinitions"], key=lambda a: a["AttributeName"]
        )
        assert [_index_shape(i) for i in table["GlobalSecondaryIndexes"]] == expected[
            "GlobalSecondaryIndexes"
        ]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        assert table["SSEDescription"]["Status"] in ("ENABLED", "ENABLING")
        ttl = ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
        assert ttl["AttributeName"] == expected["TimeToLiveSpecification"]["AttributeName"]
        backups = ddb.describe_continuous_backups(TableName=table_name)
        pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
        assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"

        # The read-write policy names this table and its index, and no wildcard action.
        policy = aws("iam").get_role_policy(
            RoleName=outputs["worker_role_arn"].rsplit("/", 1)[1],
            PolicyName=f"{variables['name_prefix']}-worker-status-table",
        )["PolicyDocument"]
        if isinstance(policy, str):
            policy = json.loads(policy)
        resources = {r for s in policy["Statement"] for r in s["Resource"]}
        assert resources == {
            outputs["table_arn"],
            f"{outputs['table_arn']}/index/status-update_time-index",
        }
        assert not [a for s in policy["Statement"] for a in s["Action"] if "*" in a]

        # The library runs against the table Terraform created.
        tracker = Tracker(
            table_name=table_name,
            use_case_id="orders",
            host=localstack_endpoint,
            region="us-east-1",
            max_retry=2,
        )
        created = tracker.create_tasks(["o-1", "o-2"])
        assert sorted(created.created) == ["o-1", "o-2"]
        with tracker.start("o-1"):
            pass
        with pytest.raises(ZeroDivisionError), tracker.start("o-2"):
            1 / 0  # noqa: B018 - the task's business logic fails
        assert tracker.get("o-1").status == Status.SUCCEEDED
        assert tracker.get("o-2").status == Status.FAILED

        result = CliRunner().invoke(
            status_cli,
            [
                "list",
                "--table",
                table_name,
                "--use-case",
                "orders",
                "--status",
                "failed",
                "--since",
                "1h",
                "--endpoint-url",
                localstack_endpoint,
                "--region",
                "us-east-1",
            ],
        )
        assert result.exit_code == 0, result.output
        listed = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        assert [task["task_id"] for task in listed] == ["o-2"]

        code, plan = workspace.plan_exit_code(variables)
        assert code == 0, f"second plan is not empty:\n{plan}"
    finally:
        workspace.destroy(variables)
        workspace.close()
    assert table_name not in aws("dynamodb").list_tables()["TableNames"]
