"""DynamoDB under LocalStack is served by moto through this project's provider."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def test_conditional_writes_and_indexes_work(aws) -> None:
    ddb = aws("dynamodb")
    table = f"provider-{uuid.uuid4().hex[:6]}"
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "status", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-status",
                "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(
        TableName=table,
        Item={"pk": {"S": "a"}, "status": {"S": "pending"}},
        ConditionExpression="attribute_not_exists(pk)",
    )
    with pytest.raises(ClientError) as raised:
        ddb.put_item(
            TableName=table,
            Item={"pk": {"S": "a"}, "status": {"S": "pending"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    assert raised.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    found = ddb.query(
        TableName=table,
        IndexName="by-status",
        KeyConditionExpression="#s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "pending"}},
    )
    assert [item["pk"]["S"] for item in found["Items"]] == ["a"]
