"""examples/status-table on LocalStack: Terraform creates the table the library expects.

One apply (module-scoped) serves every test: the table's layout and the tracker against
it, the module's policy outputs used as a consumer would (a role with nothing else,
its session signing the tracker's calls), and a denial: the worker role without its
grant on the status index.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sfn_patterns.status_table import Status, Tracker, terraform_schema
from sfn_patterns.status_table.model import make_model
from sfn_patterns_cli.status_table.cli import group as status_cli
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.dashboard_check import assert_module_dashboard, deployed_body
from tests.iam_denial import (
    assert_denial_text,
    denial,
    expect_denials,
    require_enforcement,
    session_credentials,
    temporary_role,
    without_resource,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "status-table"


@pytest.fixture(scope="module")
def example(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict]:
    # Alarms without a target (created for the dashboard's alarm widget). The table is
    # encrypted with a customer managed key whose policy hands access to IAM, as an
    # account's default key policy does: the policy outputs' roles need the key too.
    key = aws("kms").create_key(Description="status-table example test")["KeyMetadata"]["Arn"]
    variables = {
        "name_prefix": f"st-{int(time.time()) % 100000}",
        "create_dashboard": True,
        "alarms": {"create": True},
        "kms_key_arn": key,
    }
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path_factory.mktemp("status-tf"))
    with workspace.applied(variables) as outputs:
        yield {"workspace": workspace, "variables": variables, **outputs}
        table_name = outputs["table_name"]
    aws("kms").schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    assert table_name not in aws("dynamodb").list_tables()["TableNames"]
    assert leftovers(aws, variables["name_prefix"]) == {}


@pytest.fixture
def admin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The account's own keys for pynamodb (the tracker reads credentials from the env)."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "test")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)


@pytest.fixture(autouse=True)
def fresh_models() -> Iterator[None]:
    """No model (and so no pynamodb connection) outlives a test: each binds its credentials.

    ``make_model`` caches one model class per table, and with it the connection that
    read the credentials when it was first used; a test that signs as a role needs a
    connection of its own, and must not leave it to the next test.
    """
    make_model.cache_clear()
    yield
    make_model.cache_clear()


def as_role(monkeypatch: pytest.MonkeyPatch, endpoint: str, role_arn: str) -> None:
    """Sign the calls of trackers made from now on as a session of the role (env credentials)."""
    for key, value in session_credentials(endpoint, role_arn).items():
        monkeypatch.setenv(key, value)
    make_model.cache_clear()


def tracker(example: dict, endpoint: str, use_case: str) -> Tracker:
    """A tracker of the example's table (a new model class: credentials read afresh)."""
    return Tracker(
        table_name=example["table_name"],
        use_case_id=use_case,
        host=endpoint,
        region="us-east-1",
        max_retry=2,
    )


def _index_shape(index: dict) -> dict:
    return {
        "IndexName": index["IndexName"],
        "KeySchema": index["KeySchema"],
        "Projection": {"ProjectionType": index["Projection"]["ProjectionType"]},
    }


def test_example_table_serves_the_tracker(
    localstack_endpoint: str, aws: Callable, example: dict, admin_env: None
) -> None:
    outputs = example
    variables = example["variables"]
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

    # The read-write policy: item actions on this table, Query on its index only (the
    # ARN each is decided on), kms:Decrypt on the table's key, and no wildcard action.
    policy = aws("iam").get_role_policy(
        RoleName=outputs["worker_role_arn"].rsplit("/", 1)[1],
        PolicyName=f"{variables['name_prefix']}-worker-status-table",
    )["PolicyDocument"]
    if isinstance(policy, str):
        policy = json.loads(policy)
    index_arn = f"{outputs['table_arn']}/index/status-update_time-index"
    granted = {
        (action, resource)
        for s in policy["Statement"]
        for action in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        for resource in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    }
    assert {r for _, r in granted} == {outputs["table_arn"], index_arn, variables["kms_key_arn"]}
    assert {a for a, r in granted if r == index_arn} == {"dynamodb:Query"}
    assert {a for a, r in granted if r == variables["kms_key_arn"]} == {"kms:Decrypt"}
    assert table["SSEDescription"]["KMSMasterKeyArn"] == variables["kms_key_arn"]
    assert "dynamodb:Query" not in {a for a, r in granted if r == outputs["table_arn"]}
    assert not [a for a, _ in granted if "*" in a]

    # The library runs against the table Terraform created.
    orders = tracker(example, localstack_endpoint, "orders")
    created = orders.create_tasks(["o-1", "o-2"])
    assert sorted(created.created) == ["o-1", "o-2"]
    with orders.start("o-1"):
        pass
    with pytest.raises(ZeroDivisionError), orders.start("o-2"):
        1 / 0  # noqa: B018 - the task's business logic fails
    assert orders.get("o-1").status == Status.SUCCEEDED
    assert orders.get("o-2").status == Status.FAILED
    # A worker given the module's metrics_environment prints the pattern's metrics
    # under this module instance's name.
    with pytest.MonkeyPatch.context() as env:
        for key, value in outputs["metrics_environment"].items():
            env.setenv(key, value)
        orders.create_tasks(["o-3"])
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            age = orders.emit_backlog_metrics()
    assert age is not None and age >= 0
    (line,) = [json.loads(text) for text in printed.getvalue().splitlines()]
    assert (line["Module"], line["Pattern"]) == (
        f"{variables['name_prefix']}-tasks",
        "status-table",
    )
    assert line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "sfn-patterns"
    assert line["OldestPendingAge"] == age

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


# --- IAM: the policy outputs as a consumer uses them; the index grant is needed -------------


@pytest.mark.iam_denial
def test_read_write_policy_is_all_the_tracker_needs(
    localstack_endpoint: str, aws: Callable, example: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """iam_policy_read_write_json: a role with that policy and nothing else runs the whole
    tracker (create, lease, finish, query the status index); a role without it cannot
    even create a task."""
    require_enforcement(aws, localstack_endpoint)
    prefix = example["variables"]["name_prefix"]
    with (
        temporary_role(
            aws, f"{prefix}-rw", example["iam_policy_read_write_json"], module_output=True
        ) as writer,
        temporary_role(aws, f"{prefix}-stranger") as stranger,
        expect_denials(  # create_tasks reads first (BatchGetItem), refused at once
            denial(stranger, "dynamodb:BatchGetItem", f"*:table/{example['table_name']}")
        ),
    ):
        as_role(monkeypatch, localstack_endpoint, writer)
        worker = tracker(example, localstack_endpoint, "rw-consumer")
        assert sorted(worker.create_tasks(["t-1", "t-2"]).created) == ["t-1", "t-2"]
        with worker.start("t-1"):
            pass
        with pytest.raises(ZeroDivisionError), worker.start("t-2"):
            1 / 0  # noqa: B018 - the task's business logic fails
        assert [t.task_id for t in worker.query(Status.SUCCEEDED)] == ["t-1"]
        assert [t.task_id for t in worker.query(Status.FAILED)] == ["t-2"]

        as_role(monkeypatch, localstack_endpoint, stranger)
        with pytest.raises(Exception) as refused:
            tracker(example, localstack_endpoint, "rw-consumer").create_tasks(["t-3"])
        assert_denial_text(_chain(refused.value), stranger, "dynamodb:", code="AccessDenied")


@pytest.mark.iam_denial
def test_read_only_policy_reads_the_table_and_index_but_cannot_write(
    localstack_endpoint: str, aws: Callable, example: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """iam_policy_read_only_json: what dashboards and `status list` do (check the table,
    get, query the status index) works with that policy alone; a write is refused."""
    require_enforcement(aws, localstack_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    seeded = tracker(example, localstack_endpoint, "ro-consumer")
    seeded.create_tasks(["r-1"])
    prefix = example["variables"]["name_prefix"]
    with (
        temporary_role(
            aws, f"{prefix}-ro", example["iam_policy_read_only_json"], module_output=True
        ) as reader,
        expect_denials(denial(reader, "dynamodb:PutItem", f"*:table/{example['table_name']}")),
    ):
        as_role(monkeypatch, localstack_endpoint, reader)
        dashboard = tracker(example, localstack_endpoint, "ro-consumer")
        assert dashboard.table_exists()  # DescribeTable, as a dashboard's health check
        assert dashboard.get("r-1").status == Status.PENDING
        assert [t.task_id for t in dashboard.query(Status.PENDING)] == ["r-1"]
        with pytest.raises(Exception) as refused:
            dashboard.create_tasks(["r-2"])
        assert_denial_text(_chain(refused.value), reader, "dynamodb:", code="AccessDenied")


@pytest.mark.iam_denial
def test_without_its_grant_on_the_status_index_the_worker_cannot_query(
    localstack_endpoint: str, aws: Callable, example: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-write policy's index ARN is needed: a Query of the status index is decided
    on the index's own ARN, and the table's ARN does not cover it (AWS's rule). Without
    it the worker role still reads and writes items, and its query fails with AWS's
    AccessDenied sentence naming the role, dynamodb:Query and the index."""
    require_enforcement(aws, localstack_endpoint)
    worker_role = example["worker_role_arn"]
    index_arn = example["table_index_arn"]
    with (
        without_resource(aws, worker_role, index_arn),
        expect_denials(denial(worker_role, "dynamodb:Query", index_arn)),
    ):
        as_role(monkeypatch, localstack_endpoint, worker_role)
        worker = tracker(example, localstack_endpoint, "index-denial")
        worker.create_tasks(["i-1"])
        assert worker.get("i-1").status == Status.PENDING
        with pytest.raises(Exception) as refused:
            worker.query(Status.PENDING)
    assert_denial_text(
        _chain(refused.value), worker_role, "dynamodb:Query", index_arn, code="AccessDenied"
    )
    # The grant back, the same role's query answers (the index was the only cause).
    as_role(monkeypatch, localstack_endpoint, worker_role)
    assert [
        t.task_id
        for t in tracker(example, localstack_endpoint, "index-denial").query(Status.PENDING)
    ] == ["i-1"]


def test_the_dashboard_charts_the_tracker_metrics(aws: Callable, example: dict) -> None:
    # The dimensions the Tracker prints under metrics_environment (the test above).
    assert_module_dashboard(
        deployed_body(aws, example["dashboard_name"]),
        module=f"{example['variables']['name_prefix']}-tasks",
        pattern="status-table",
        metrics={"LeaseExpiries", "RetriesExhausted", "OldestPendingAge"},
        alarm_arns=[a["arn"] for a in example["alarms"].values()],
    )


def test_second_plan_is_empty(example: dict) -> None:
    """Last: also shows that every policy the tests above revoked was put back as it was."""
    code, plan = example["workspace"].plan_exit_code(example["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"


def _chain(error: BaseException) -> str:
    """The error and its causes as text (pynamodb wraps botocore's ClientError)."""
    parts = []
    seen: BaseException | None = error
    while seen is not None:
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(parts)
