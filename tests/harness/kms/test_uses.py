"""Which KMS actions each service performs for each operation, as AWS documents them.

The expected actions and encryption contexts are the documented ones (the page is named
on each test); ``FakeResources`` stands for LocalStack's stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sfn_patterns_localstack.emulation.iam.actions import Scope
from sfn_patterns_localstack.emulation.kms import uses
from sfn_patterns_localstack.emulation.kms.uses import FunctionKey, MachineKey, key_uses

ACCOUNT = "000000000000"
SCOPE = Scope(ACCOUNT, "us-east-1")
KEY = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/k1"
QUEUE = f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs"
MACHINE = f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:flow"
FUNCTION = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:worker"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/worker"


@dataclass
class FakeResources:
    tables: dict[str, str] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    objects: dict[tuple[str, str], tuple[str | None, bool]] = field(default_factory=dict)
    functions: dict[str, FunctionKey] = field(default_factory=dict)
    machines: dict[str, MachineKey] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)

    def table_key(self, account, region, table):
        return self.tables.get(table)

    def queue_key(self, queue_arn):
        return self.queues.get(queue_arn)

    def bucket_default_key(self, bucket):
        return self.buckets.get(bucket, (None, False))

    def object_key(self, bucket, key):
        return self.objects.get((bucket, key), (None, False))

    def function_key(self, function_arn):
        return self.functions.get(function_arn)

    def machine_key(self, state_machine_arn):
        return self.machines.get(state_machine_arn)

    def log_group_key(self, account, region, group):
        return self.groups.get(group)


def summary(found: list[uses.KeyUse]) -> list[tuple]:
    return [
        (u.action, u.key, dict(u.encryption_context), u.acting_as, u.via_service) for u in found
    ]


# -- DynamoDB: services-dynamodb.html, "Decrypt": the principal accessing the table -------
@pytest.mark.parametrize(
    ("operation", "request_"),
    [
        ("GetItem", {"TableName": "jobs"}),
        ("PutItem", {"TableName": "jobs"}),
        ("UpdateItem", {"TableName": "jobs"}),
        ("DeleteItem", {"TableName": "jobs"}),
        ("Query", {"TableName": "jobs", "IndexName": "by-status"}),
        ("Scan", {"TableName": "jobs"}),
        ("BatchWriteItem", {"RequestItems": {"jobs": []}}),
        ("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "jobs"}}]}),
    ],
)
def test_dynamodb_item_access_decrypts_the_table_key_as_the_caller(operation, request_):
    found = key_uses("dynamodb", operation, request_, SCOPE, FakeResources(tables={"jobs": KEY}))
    assert summary(found) == [
        (
            "kms:Decrypt",
            KEY,
            {"aws:dynamodb:tableName": "jobs", "aws:dynamodb:subscriberId": ACCOUNT},
            uses.CALLER,
            "dynamodb.us-east-1.amazonaws.com",
        )
    ]


def test_dynamodb_transaction_decrypts_each_encrypted_table_once():
    request = {
        "TransactItems": [
            {"Put": {"TableName": "jobs"}},
            {"Update": {"TableName": "jobs"}},
            {"ConditionCheck": {"TableName": "locks"}},
            {"Delete": {"TableName": "plain"}},
        ]
    }
    resources = FakeResources(tables={"jobs": KEY, "locks": KEY})
    found = key_uses("dynamodb", "TransactWriteItems", request, SCOPE, resources)
    assert [u.encryption_context["aws:dynamodb:tableName"] for u in found] == ["jobs", "locks"]


def test_dynamodb_table_management_and_unencrypted_tables_use_no_key():
    resources = FakeResources(tables={"jobs": KEY})
    assert key_uses("dynamodb", "DescribeTable", {"TableName": "jobs"}, SCOPE, resources) == []
    assert key_uses("dynamodb", "GetItem", {"TableName": "plain"}, SCOPE, resources) == []


# -- SQS: sqs-key-management.html, producers and consumers --------------------------------
@pytest.mark.parametrize(
    ("operation", "actions"),
    [
        ("SendMessage", ["kms:GenerateDataKey", "kms:Decrypt"]),
        ("SendMessageBatch", ["kms:GenerateDataKey", "kms:Decrypt"]),
        ("ReceiveMessage", ["kms:Decrypt"]),
        ("DeleteMessage", []),
    ],
)
def test_sqs_producers_and_consumers(operation, actions):
    request = {"QueueUrl": f"http://localhost:4566/{ACCOUNT}/jobs"}
    found = key_uses("sqs", operation, request, SCOPE, FakeResources(queues={QUEUE: KEY}))
    assert [u.action for u in found] == actions
    assert all(u.encryption_context == {"aws:sqs:arn": QUEUE} for u in found)
    assert all(u.via_service == "sqs.us-east-1.amazonaws.com" for u in found)


# -- S3: UsingKMSEncryption.html, "Permissions" and "Encryption context" ------------------
def test_s3_upload_generates_a_data_key_and_download_decrypts():
    resources = FakeResources(
        buckets={"plans": (KEY, False)}, objects={("plans", "a.json"): (KEY, False)}
    )
    put = key_uses("s3", "PutObject", {"Bucket": "plans", "Key": "a.json"}, SCOPE, resources)
    get = key_uses("s3", "GetObject", {"Bucket": "plans", "Key": "a.json"}, SCOPE, resources)
    context = {"aws:s3:arn": "arn:aws:s3:::plans/a.json"}
    assert summary(put) == [
        ("kms:GenerateDataKey", KEY, context, uses.CALLER, "s3.us-east-1.amazonaws.com")
    ]
    assert summary(get) == [
        ("kms:Decrypt", KEY, context, uses.CALLER, "s3.us-east-1.amazonaws.com")
    ]


def test_s3_bucket_key_context_is_the_bucket_and_a_request_key_wins():
    resources = FakeResources(buckets={"plans": ("default-key", True)})
    request = {"Bucket": "plans", "Key": "a", "ServerSideEncryption": "aws:kms", "SSEKMSKeyId": KEY}
    (use,) = key_uses("s3", "PutObject", request, SCOPE, resources)
    assert (use.key, dict(use.encryption_context)) == (KEY, {"aws:s3:arn": "arn:aws:s3:::plans"})


def test_s3_without_a_customer_key_uses_none():
    sse_s3 = {"Bucket": "plans", "Key": "a", "ServerSideEncryption": "AES256"}
    aws_managed = {"Bucket": "plain", "Key": "a", "ServerSideEncryption": "aws:kms"}
    resources = FakeResources(buckets={"plans": (KEY, False)})
    assert key_uses("s3", "PutObject", sse_s3, SCOPE, resources) == []
    assert key_uses("s3", "PutObject", aws_managed, SCOPE, resources) == []
    assert key_uses("s3", "GetObject", {"Bucket": "plans", "Key": "x"}, SCOPE, resources) == []


# -- Lambda: configuration-envvars-encryption.html ----------------------------------------
def test_lambda_invoke_decrypts_the_environment_as_the_execution_role_through_its_grant():
    resources = FakeResources(functions={FUNCTION: FunctionKey(KEY, ROLE, "AROA1", True)})
    (use,) = key_uses("lambda", "Invoke", {"FunctionName": "worker:live"}, SCOPE, resources)
    assert (use.action, use.acting_as, use.role_arn, use.grant_role_id) == (
        "kms:Decrypt",
        uses.ROLE,
        ROLE,
        "AROA1",
    )
    assert dict(use.encryption_context) == {"aws:lambda:FunctionArn": FUNCTION}


def test_lambda_without_variables_or_customer_key_decrypts_nothing():
    resources = FakeResources(functions={FUNCTION: FunctionKey(KEY, ROLE, "AROA1", False)})
    assert key_uses("lambda", "Invoke", {"FunctionName": "worker"}, SCOPE, resources) == []
    assert key_uses("lambda", "Invoke", {"FunctionName": "other"}, SCOPE, resources) == []


def test_lambda_configuring_a_key_needs_create_grant_and_encrypt_as_the_caller():
    request = {"FunctionName": "worker", "KMSKeyArn": KEY}
    found = key_uses("lambda", "UpdateFunctionConfiguration", request, SCOPE, FakeResources())
    assert [(u.action, u.acting_as) for u in found] == [
        ("kms:CreateGrant", uses.CALLER),
        ("kms:Encrypt", uses.CALLER),
    ]


# -- Step Functions: encryption-at-rest.html and the API reference's includedData ---------
def test_state_machine_start_is_decided_for_its_role():
    resources = FakeResources(machines={MACHINE: MachineKey(KEY, ROLE)})
    found = key_uses(
        "stepfunctions", "StartExecution", {"stateMachineArn": MACHINE}, SCOPE, resources
    )
    assert [(u.action, u.acting_as, u.role_arn) for u in found] == [
        ("kms:GenerateDataKey", uses.ROLE, ROLE),
        ("kms:Decrypt", uses.ROLE, ROLE),
    ]
    assert all(u.encryption_context == {"aws:states:stateMachineArn": MACHINE} for u in found)


@pytest.mark.parametrize(
    ("operation", "request_", "decrypts"),
    [
        (
            "DescribeExecution",
            {"executionArn": f"{MACHINE.replace('stateMachine', 'execution')}:e1"},
            True,
        ),
        (
            "DescribeExecution",
            {
                "executionArn": f"{MACHINE.replace('stateMachine', 'execution')}:e1",
                "includedData": "METADATA_ONLY",
            },
            False,
        ),
        ("DescribeStateMachine", {"stateMachineArn": MACHINE}, True),
        (
            "GetExecutionHistory",
            {"executionArn": f"{MACHINE.replace('stateMachine', 'execution')}:e1"},
            True,
        ),
    ],
)
def test_state_machine_readers_decrypt_unless_metadata_only(operation, request_, decrypts):
    resources = FakeResources(machines={MACHINE: MachineKey(KEY, ROLE)})
    found = key_uses("stepfunctions", operation, request_, SCOPE, resources)
    expected = [("kms:Decrypt", uses.CALLER, MACHINE)] if decrypts else []
    assert [
        (u.action, u.acting_as, u.encryption_context["aws:states:stateMachineArn"]) for u in found
    ] == expected


# -- CloudWatch Logs: encrypt-log-data-kms.html, the service principal --------------------
@pytest.mark.parametrize(
    ("operation", "request_", "action"),
    [
        ("CreateLogGroup", {"logGroupName": "/aws/x", "kmsKeyId": KEY}, "kms:GenerateDataKey"),
        ("AssociateKmsKey", {"logGroupName": "/aws/x", "kmsKeyId": KEY}, "kms:GenerateDataKey"),
        ("PutLogEvents", {"logGroupName": "/aws/x", "logStreamName": "s"}, "kms:GenerateDataKey"),
        ("GetLogEvents", {"logGroupName": "/aws/x", "logStreamName": "s"}, "kms:Decrypt"),
        ("FilterLogEvents", {"logGroupName": "/aws/x"}, "kms:Decrypt"),
    ],
)
def test_log_groups_use_their_key_as_the_logs_service(operation, request_, action):
    found = key_uses("logs", operation, request_, SCOPE, FakeResources(groups={"/aws/x": KEY}))
    group = f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/aws/x"
    assert [
        (u.action, u.acting_as, u.service_principal, dict(u.encryption_context)) for u in found
    ] == [(action, uses.SERVICE, "logs.us-east-1.amazonaws.com", {"aws:logs:arn": group})]


def test_a_log_group_without_a_key_uses_none():
    request = {"logGroupName": "/aws/x", "logStreamName": "s"}
    assert key_uses("logs", "PutLogEvents", request, SCOPE, FakeResources()) == []
    assert (
        key_uses("logs", "CreateLogGroup", {"logGroupName": "/aws/x"}, SCOPE, FakeResources()) == []
    )
