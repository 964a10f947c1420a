"""The Redshift Data API under LocalStack runs SQL on DuckDB (harness/.../redshift_data.py)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_arn
from sfn_patterns_localstack.roles import events_to_queue_policy, trust_policy

pytestmark = pytest.mark.integration

TERMINAL = {"FINISHED", "FAILED", "ABORTED"}


def _target() -> dict[str, str]:
    """A workgroup of its own, so each test starts with an empty database."""
    return {"WorkgroupName": f"wg-{uuid.uuid4().hex[:8]}", "Database": "dev"}


def _wait(rsd, statement_id: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        described = rsd.describe_statement(Id=statement_id)
        if described["Status"] in TERMINAL:
            return described
        if time.monotonic() > deadline:
            pytest.fail(f"statement {statement_id} still {described['Status']}")
        time.sleep(0.1)


def _run(rsd, target: dict[str, str], sql: str, **kwargs: object) -> dict:
    return _wait(rsd, rsd.execute_statement(Sql=sql, **target, **kwargs)["Id"])


def _rows(rsd, target: dict[str, str], sql: str) -> list[list]:
    """The rows of a query, with each typed field unwrapped to its value."""
    described = _run(rsd, target, sql)
    assert described["Status"] == "FINISHED", described.get("Error")
    records = rsd.get_statement_result(Id=described["Id"])["Records"]
    return [[next(iter(field.values())) for field in record] for record in records]


@pytest.fixture(scope="module")
def rsd(aws: Callable[..., object]):
    return aws("redshift-data")


def test_query_results_come_back_in_typed_fields(rsd) -> None:
    target = _target()
    created = rsd.execute_statement(
        Sql="CREATE TABLE sales (id INT, region VARCHAR, amount DOUBLE, paid BOOLEAN);"
        "INSERT INTO sales VALUES (1, 'north', 10.5, true), (2, NULL, 2.25, false),"
        " (3, 'south', NULL, NULL)",
        StatementName="load-sales",
        **target,
    )
    # Asynchronous: the Id comes back at once, with the target echoed.
    assert created["WorkgroupName"] == target["WorkgroupName"]
    assert created["Database"] == "dev"
    assert "CreatedAt" in created
    loaded = _wait(rsd, created["Id"])
    assert loaded["Status"] == "FINISHED"
    assert loaded["HasResultSet"] is False
    assert loaded["ResultRows"] == 3  # the INSERT's affected rows

    described = _run(
        rsd,
        target,
        "SELECT id, region, amount, paid, amount * 2 AS doubled, CAST(amount AS DECIMAL(6, 2)) "
        "AS exact FROM public.sales WHERE id >= :min_id ORDER BY id",
        Parameters=[{"name": "min_id", "value": "1"}],
    )
    assert described["Status"] == "FINISHED", described.get("Error")
    assert described["HasResultSet"] is True
    assert described["ResultRows"] == 3
    assert described["Duration"] >= 0
    assert described["RedshiftQueryId"] > 0
    assert "WHERE id >= :min_id" in described["QueryString"]
    result = rsd.get_statement_result(Id=described["Id"])
    assert result["TotalNumRows"] == 3
    assert [c["name"] for c in result["ColumnMetadata"]] == [
        "id",
        "region",
        "amount",
        "paid",
        "doubled",
        "exact",
    ]
    assert [c["typeName"] for c in result["ColumnMetadata"]] == [
        "int4",
        "varchar",
        "float8",
        "bool",
        "float8",
        "numeric",
    ]
    assert result["Records"] == [
        [
            {"longValue": 1},
            {"stringValue": "north"},
            {"doubleValue": 10.5},
            {"booleanValue": True},
            {"doubleValue": 21.0},
            {"stringValue": "10.50"},
        ],
        [
            {"longValue": 2},
            {"isNull": True},
            {"doubleValue": 2.25},
            {"booleanValue": False},
            {"doubleValue": 4.5},
            {"stringValue": "2.25"},
        ],
        [
            {"longValue": 3},
            {"stringValue": "south"},
            {"isNull": True},
            {"isNull": True},
            {"isNull": True},
            {"isNull": True},
        ],
    ]
    listed = rsd.list_statements(StatementName="load-sales", Status="FINISHED")["Statements"]
    assert [s["Id"] for s in listed] == [created["Id"]]


def test_long_results_are_paginated(rsd) -> None:
    target = _target()
    described = _run(rsd, target, "SELECT range AS n FROM range(2500)")
    pages = [rsd.get_statement_result(Id=described["Id"])]
    while "NextToken" in pages[-1]:
        pages.append(rsd.get_statement_result(Id=described["Id"], NextToken=pages[-1]["NextToken"]))
    assert [len(p["Records"]) for p in pages] == [1000, 1000, 500]
    numbers = [r[0]["longValue"] for p in pages for r in p["Records"]]
    assert numbers == list(range(2500))


def test_bad_sql_fails_with_the_engine_error(rsd) -> None:
    target = _target()
    missing = _run(rsd, target, "SELECT * FROM no_such_table")
    assert missing["Status"] == "FAILED"
    assert "no_such_table" in missing["Error"]
    syntax = _run(rsd, target, "SELEC 1")
    assert syntax["Status"] == "FAILED"
    assert "syntax error" in syntax["Error"]
    # A warehouse does not invent schemas: the caller must create them.
    unknown_schema = _run(rsd, target, "CREATE TABLE agg.t (a INT)")
    assert unknown_schema["Status"] == "FAILED"
    assert "agg" in unknown_schema["Error"]
    with pytest.raises(ClientError) as raised:
        rsd.get_statement_result(Id=missing["Id"])
    assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_a_failing_batch_statement_rolls_back_the_whole_batch(rsd) -> None:
    target = _target()
    assert _run(rsd, target, "CREATE SCHEMA IF NOT EXISTS agg")["Status"] == "FINISHED"
    assert _run(rsd, target, "CREATE TABLE agg.totals (k VARCHAR, v INT)")["Status"] == "FINISHED"
    good = rsd.batch_execute_statement(
        Sqls=[
            "INSERT INTO agg.totals VALUES ('old', 1)",
            "DELETE FROM agg.totals; INSERT INTO agg.totals WITH x AS (SELECT 'a' AS k, 2 AS v)"
            " SELECT k, v FROM x",
            "SELECT k, v FROM agg.totals",
        ],
        **target,
    )
    described = _wait(rsd, good["Id"])
    assert described["Status"] == "FINISHED", described.get("Error")
    assert [s["Status"] for s in described["SubStatements"]] == ["FINISHED"] * 3
    assert [s["Id"] for s in described["SubStatements"]] == [f"{good['Id']}:{n}" for n in (1, 2, 3)]
    assert described["SubStatements"][2]["HasResultSet"] is True
    third = rsd.get_statement_result(Id=f"{good['Id']}:3")
    assert third["Records"] == [[{"stringValue": "a"}, {"longValue": 2}]]

    bad = rsd.batch_execute_statement(
        Sqls=[
            "INSERT INTO agg.totals VALUES ('b', 3)",
            "INSERT INTO agg.missing VALUES ('c', 4)",
            "INSERT INTO agg.totals VALUES ('d', 5)",
        ],
        **target,
    )
    described = _wait(rsd, bad["Id"])
    assert described["Status"] == "FAILED"
    assert "missing" in described["Error"]
    assert [s["Status"] for s in described["SubStatements"]] == ["FINISHED", "FAILED", "ABORTED"]
    assert _rows(rsd, target, "SELECT k, v FROM agg.totals ORDER BY k") == [["a", 2]]


def test_cancel_aborts_a_running_statement_before_it_applies(rsd) -> None:
    target = _target()
    assert _run(rsd, target, "CREATE TABLE t (a INT)")["Status"] == "FINISHED"
    started = rsd.execute_statement(Sql="/* sfnp:sleep=30 */ INSERT INTO t VALUES (1)", **target)
    deadline = time.monotonic() + 10
    while rsd.describe_statement(Id=started["Id"])["Status"] != "STARTED":
        assert time.monotonic() < deadline, "the statement never started"
        time.sleep(0.05)
    assert rsd.cancel_statement(Id=started["Id"])["Status"] is True
    described = _wait(rsd, started["Id"], timeout=5)
    assert described["Status"] == "ABORTED"
    assert _rows(rsd, target, "SELECT count(*) FROM t") == [[0]]
    with pytest.raises(ClientError) as raised:
        rsd.cancel_statement(Id=started["Id"])
    assert raised.value.response["Error"]["Code"] == "ValidationException"


def test_concurrent_statements_are_independent(rsd) -> None:
    target = _target()
    ids = [
        rsd.execute_statement(
            Sql=f"CREATE TABLE t{n} AS SELECT range AS v FROM range({n * 100})", **target
        )["Id"]
        for n in range(1, 7)
    ]
    ids.append(rsd.execute_statement(Sql="INSERT INTO nowhere VALUES (1)", **target)["Id"])
    statuses = [_wait(rsd, statement_id)["Status"] for statement_id in ids]
    assert statuses == ["FINISHED"] * 6 + ["FAILED"]
    counts = _rows(
        rsd, target, " UNION ALL ".join(f"SELECT {n}, count(*) FROM t{n}" for n in range(1, 7))
    )
    assert sorted(counts) == [[n, n * 100] for n in range(1, 7)]


@pytest.mark.parametrize(
    "target",
    [
        {"Database": "dev"},
        {"Database": "dev", "WorkgroupName": "wg-both", "ClusterIdentifier": "c1-both"},
        {"WorkgroupName": "wg-nodb"},
        {"WorkgroupName": "wg-nosql", "Database": "dev", "Sql": ""},
    ],
    ids=["neither", "both", "no-database", "empty-sql"],
)
def test_requests_are_validated(aws, target: dict[str, str]) -> None:
    # Without the client's own checks, so the provider's validation is what answers.
    unchecked = aws("redshift-data", config=Config(parameter_validation=False))
    with pytest.raises(ClientError) as raised:
        unchecked.execute_statement(**{"Sql": "SELECT 1", **target})
    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_unknown_statement_is_not_found(rsd) -> None:
    with pytest.raises(ClientError) as raised:
        rsd.describe_statement(Id=str(uuid.uuid4()))
    assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_step_functions_polls_a_statement_to_completion(aws, rsd) -> None:
    target = _target()
    assert _run(rsd, target, "CREATE TABLE events (id INT)")["Status"] == "FINISHED"
    iam, sfn = aws("iam"), aws("stepfunctions")
    role = iam.create_role(
        RoleName=f"sfn-rsd-{uuid.uuid4().hex[:8]}",
        AssumeRolePolicyDocument=trust_policy("states"),
    )["Role"]
    # What the two tasks need, as on AWS: the statement on the workgroup's id ARN with
    # its temporary credentials, and describing the role's own statements.
    iam.put_role_policy(
        RoleName=role["RoleName"],
        PolicyName="statements",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": [
                            "redshift-data:ExecuteStatement",
                            "redshift-serverless:GetCredentials",
                        ],
                        "Resource": workgroup_arn(target["WorkgroupName"]),
                    },
                    {
                        "Effect": "Allow",
                        "Action": "redshift-data:DescribeStatement",
                        "Resource": "*",
                        "Condition": {
                            "StringEquals": {
                                "redshift-data:statement-owner-iam-userid": "${aws:userid}"
                            }
                        },
                    },
                ],
            }
        ),
    )
    definition = {
        "StartAt": "Execute",
        "States": {
            "Execute": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:redshiftdata:executeStatement",
                "Parameters": {
                    "WorkgroupName": target["WorkgroupName"],
                    "Database": "dev",
                    "Sql": "/* sfnp:sleep=2 */ INSERT INTO events SELECT range FROM range(5)",
                },
                "ResultSelector": {"Id.$": "$.Id"},
                "ResultPath": "$.statement",
                "Next": "Wait",
            },
            "Wait": {"Type": "Wait", "Seconds": 1, "Next": "Describe"},
            "Describe": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:redshiftdata:describeStatement",
                "Parameters": {"Id.$": "$.statement.Id"},
                "ResultSelector": {"Id.$": "$.Id", "Status.$": "$.Status"},
                "ResultPath": "$.statement",
                "Next": "Done?",
            },
            "Done?": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.statement.Status", "StringEquals": "FINISHED", "Next": "Ok"},
                    {
                        "Or": [
                            {"Variable": "$.statement.Status", "StringEquals": "FAILED"},
                            {"Variable": "$.statement.Status", "StringEquals": "ABORTED"},
                        ],
                        "Next": "Failed",
                    },
                ],
                "Default": "Wait",
            },
            "Ok": {"Type": "Succeed"},
            "Failed": {"Type": "Fail", "Error": "StatementFailed"},
        },
    }
    machine = sfn.create_state_machine(
        name=f"rsd-poll-{uuid.uuid4().hex[:8]}",
        definition=json.dumps(definition),
        roleArn=role["Arn"],
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 60
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the execution did not end"
        time.sleep(0.5)
    assert described["status"] == "SUCCEEDED", described
    history = sfn.get_execution_history(executionArn=execution)["events"]
    polls = [e for e in history if e["type"] == "TaskSucceeded"]
    # The statement took >= 2 s, so the Wait/Describe loop ran more than once.
    assert len(polls) >= 3
    assert _rows(rsd, target, "SELECT count(*), sum(id) FROM events") == [[5, 10]]


def test_statements_run_with_event_announce_their_end_on_eventbridge(aws, rsd) -> None:
    """WithEvent=true: one "Redshift Data Statement Status Change" per statement, as AWS sends."""
    sqs, events = aws("sqs"), aws("events")
    name = f"rsd-events-{uuid.uuid4().hex[:8]}"
    queue = sqs.create_queue(QueueName=name)["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    target = _target()
    events.put_rule(
        Name=name,
        EventPattern=json.dumps(
            {
                "source": ["aws.redshift-data"],
                "detail-type": ["Redshift Data Statement Status Change"],
                "detail": {"statementName": [{"prefix": name}]},
            }
        ),
    )
    # EventBridge delivers to a queue whose policy lets it, for this rule only (as on AWS).
    rule_arn = events.describe_rule(Name=name)["Arn"]
    sqs.set_queue_attributes(
        QueueUrl=queue, Attributes={"Policy": events_to_queue_policy(queue_arn, [rule_arn])}
    )
    events.put_targets(Rule=name, Targets=[{"Id": "q", "Arn": queue_arn}])
    try:
        finished = _run(rsd, target, "SELECT 1 AS x", WithEvent=True, StatementName=f"{name} ok")
        failed = _run(
            rsd, target, "SELECT * FROM nowhere", WithEvent=True, StatementName=f"{name} bad"
        )
        running = rsd.execute_statement(
            Sql="/* sfnp:sleep=30 */ SELECT 1",
            WithEvent=True,
            StatementName=f"{name} stop",
            **target,
        )["Id"]
        rsd.cancel_statement(Id=running)
        quiet = _run(rsd, target, "SELECT 2", StatementName=f"{name} quiet")  # no WithEvent
        received: dict[str, dict] = {}
        deadline = time.monotonic() + 30
        while len(received) < 3 and time.monotonic() < deadline:
            for message in sqs.receive_message(
                QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1
            ).get("Messages", []):
                event = json.loads(message["Body"])
                received[event["detail"]["statementId"]] = event
        time.sleep(1)  # a fourth (wrong) event would have arrived by now
        for message in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages", []):
            event = json.loads(message["Body"])
            received[event["detail"]["statementId"]] = event
    finally:
        events.remove_targets(Rule=name, Ids=["q"])
        events.delete_rule(Name=name)
        sqs.delete_queue(QueueUrl=queue)
    assert set(received) == {finished["Id"], failed["Id"], running}
    assert quiet["Id"] not in received
    ok = received[finished["Id"]]
    assert ok["source"] == "aws.redshift-data"
    assert ok["detail-type"] == "Redshift Data Statement Status Change"
    # The workgroup's ARN ends in its id (a UUID), as on AWS, never in its name; the
    # one IAM authorizes ExecuteStatement on (workgroups.py).
    (resource,) = ok["resources"]
    prefix, _, workgroup = resource.rpartition("/")
    assert prefix == f"arn:aws:redshift-serverless:us-east-1:{ok['account']}:workgroup"
    assert str(uuid.UUID(workgroup)) == workgroup != target["WorkgroupName"]
    assert resource == workgroup_arn(target["WorkgroupName"], ok["account"], "us-east-1")
    assert ok["detail"]["state"] == "FINISHED" and ok["detail"]["rows"] == 1
    assert ok["detail"]["statementName"] == f"{name} ok"
    assert ok["detail"]["expireAt"] > time.time() + 23 * 3600
    assert set(ok["detail"]) == {
        "principal",
        "statementName",
        "statementId",
        "redshiftQueryId",
        "state",
        "rows",
        "expireAt",
    }
    assert received[failed["Id"]]["detail"]["state"] == "FAILED"
    assert received[running]["detail"]["state"] == "ABORTED"
