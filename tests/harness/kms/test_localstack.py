"""KMS decided on a real LocalStack enforcing IAM: an encrypted table and queue need the key.

A customer managed key with the key policy an account would have (the default "Enable
IAM User Permissions" statement and CloudWatch Logs' service statement, as
examples/complete writes it) encrypts a DynamoDB table and an SQS queue. A role allowed
the table and queue but not the key is refused with each service's own error naming the
key; given ``kms:Decrypt`` and ``kms:GenerateDataKey`` it reads and writes. A key whose
policy has no root statement refuses the same role even with those grants, until the
key policy names it. The oracles are the AWS APIs' answers (codes, messages, items and
messages read back); each refusal is declared with ``expect_denials``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.harness.iam.test_enforcement import (  # the module's LocalStack fixtures
    ACCOUNT_ROOT,
    admin,
    denied,
    endpoint,
    make_role,
    put_policy,
    session,
    unique,
)
from tests.iam_denial import denial, expect_denials
from tests.kms_keys import ACCOUNT, LOGS_STATEMENT, REGION, ROOT_STATEMENT, create_key

pytestmark = [pytest.mark.integration, pytest.mark.needs("iam")]

__all__ = ["admin", "endpoint"]  # fixtures, used by name


def create_table(admin: Callable, key_arn: str) -> str:
    name = unique("kms-jobs")
    admin("dynamodb").create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": key_arn},
    )
    return name


def data_statement(table: str, queue_arn: str | None = None) -> dict:
    resources = [f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"]
    actions = ["dynamodb:PutItem", "dynamodb:GetItem"]
    if queue_arn:
        resources.append(queue_arn)
        actions += ["sqs:SendMessage", "sqs:ReceiveMessage"]
    return {"Sid": "Data", "Effect": "Allow", "Action": actions, "Resource": resources}


def key_statement(key_arn: str) -> dict:
    return {
        "Sid": "UseKey",
        "Effect": "Allow",
        "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
        "Resource": key_arn,
    }


def error_of(call: Callable[[], object]) -> tuple[str, str]:
    error = denied(call).response["Error"]
    return error["Code"], error["Message"]


ITEM = {"pk": {"S": "job-1"}, "status": {"S": "RUNNING"}}


def test_encrypted_table_and_queue_need_the_key_as_aws_requires(endpoint, admin):
    key = create_key(admin, ROOT_STATEMENT, LOGS_STATEMENT)
    table = create_table(admin, key)
    queue_url = admin("sqs").create_queue(
        QueueName=unique("kms-jobs"), Attributes={"KmsMasterKeyId": key}
    )["QueueUrl"]
    queue_arn = admin("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    role_arn = make_role(admin, ACCOUNT_ROOT, data_statement(table, queue_arn))
    clients = session(endpoint, role_arn)

    with expect_denials(
        denial(role_arn, "kms:Decrypt", key), denial(role_arn, "kms:GenerateDataKey", key)
    ):
        code, message = error_of(lambda: clients("dynamodb").put_item(TableName=table, Item=ITEM))
        assert code == "AccessDeniedException"
        assert message.startswith("KMS key access denied error: User: ")
        assert f"is not authorized to perform: kms:Decrypt on resource: {key}" in message
        code, message = error_of(
            lambda: clients("sqs").send_message(QueueUrl=queue_url, MessageBody="job-1")
        )
        assert code == "KMS.AccessDeniedException"
        assert f"kms:GenerateDataKey on resource: {key}" in message

    put_policy(
        admin, role_arn.rsplit("/", 1)[-1], data_statement(table, queue_arn), key_statement(key)
    )
    clients("dynamodb").put_item(TableName=table, Item=ITEM)
    read = clients("dynamodb").get_item(TableName=table, Key={"pk": {"S": "job-1"}})
    assert read["Item"] == ITEM
    clients("sqs").send_message(QueueUrl=queue_url, MessageBody="job-1")
    received = clients("sqs").receive_message(QueueUrl=queue_url, WaitTimeSeconds=1)
    assert [m["Body"] for m in received["Messages"]] == ["job-1"]


def test_a_key_policy_without_the_root_statement_refuses_identity_grants(endpoint, admin):
    key_admin = make_role(admin, ACCOUNT_ROOT)
    administrators = {
        "Sid": "KeyAdministrators",
        "Effect": "Allow",
        "Principal": {"AWS": key_admin},
        "Action": "kms:*",
        "Resource": "*",
    }
    key = create_key(admin, administrators)
    table = create_table(admin, key)
    role_arn = make_role(admin, ACCOUNT_ROOT)
    put_policy(admin, role_arn.rsplit("/", 1)[-1], data_statement(table), key_statement(key))
    clients = session(endpoint, role_arn)

    with expect_denials(denial(role_arn, "kms:Decrypt", key)):
        code, message = error_of(lambda: clients("dynamodb").put_item(TableName=table, Item=ITEM))
    assert code == "AccessDeniedException"
    assert message.endswith(
        f"kms:Decrypt on resource: {key} because no resource-based policy allows the kms:Decrypt"
        " action (Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)"
    )

    # The key policy naming the role lets it in, without the root statement.
    users = {
        **administrators,
        "Sid": "KeyUsers",
        "Principal": {"AWS": role_arn},
        "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
    }
    admin("kms").put_key_policy(
        KeyId=key,
        PolicyName="default",
        Policy=json.dumps({"Version": "2012-10-17", "Statement": [administrators, users]}),
    )
    clients("dynamodb").put_item(TableName=table, Item=ITEM)
