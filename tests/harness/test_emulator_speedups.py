"""moto_update_copy (providers.py) keeps the behaviour it skips work for.

UpdateItem results, ALL_OLD on a lost condition and a stream's old image are as
before. It must apply to the pinned moto, or it would silently stop working after an
upgrade.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb import models as moto_dynamodb

from sfn_patterns_localstack import moto_update_copy


def test_it_applies_to_the_pinned_version() -> None:
    assert moto_update_copy.apply() is True


@pytest.fixture
def ddb() -> Any:
    assert moto_update_copy.apply()
    with mock_aws():
        yield boto3.client("dynamodb", region_name="us-east-1")


def _table(ddb: Any, name: str, stream: bool) -> None:
    extra = (
        {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}}
        if stream
        else {}
    )
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        **extra,
    )


def test_updates_and_all_old_are_unchanged_without_a_stream(ddb: Any) -> None:
    _table(ddb, "plain", stream=False)
    ddb.put_item(TableName="plain", Item={"pk": {"S": "k"}, "m": {"M": {"a": {"N": "1"}}}})
    old = ddb.update_item(
        TableName="plain",
        Key={"pk": {"S": "k"}},
        UpdateExpression="SET m.b = :two",
        ExpressionAttributeValues={":two": {"N": "2"}},
        ReturnValues="ALL_OLD",
    )["Attributes"]
    assert old == {"pk": {"S": "k"}, "m": {"M": {"a": {"N": "1"}}}}
    with pytest.raises(ClientError) as lost:
        ddb.update_item(
            TableName="plain",
            Key={"pk": {"S": "k"}},
            UpdateExpression="SET m.c = :two",
            ConditionExpression="attribute_not_exists(m.b)",
            ExpressionAttributeValues={":two": {"N": "2"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert lost.value.response["Item"] == {
        "pk": {"S": "k"},
        "m": {"M": {"a": {"N": "1"}, "b": {"N": "2"}}},
    }
    item = ddb.get_item(TableName="plain", Key={"pk": {"S": "k"}})["Item"]
    assert item == {"pk": {"S": "k"}, "m": {"M": {"a": {"N": "1"}, "b": {"N": "2"}}}}


def test_a_stream_still_gets_the_old_image(ddb: Any) -> None:
    _table(ddb, "streamed", stream=True)
    ddb.put_item(TableName="streamed", Item={"pk": {"S": "k"}, "n": {"N": "1"}})
    ddb.update_item(
        TableName="streamed",
        Key={"pk": {"S": "k"}},
        UpdateExpression="SET n = :two",
        ExpressionAttributeValues={":two": {"N": "2"}},
    )
    backend = moto_dynamodb.dynamodb_backends["123456789012"]["us-east-1"]
    record = backend.get_table("streamed").stream_shard.items[-1].to_json()
    assert record["dynamodb"]["OldImage"] == {"pk": {"S": "k"}, "n": {"N": "1"}}
    assert record["dynamodb"]["NewImage"] == {"pk": {"S": "k"}, "n": {"N": "2"}}
