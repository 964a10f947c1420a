"""The two emulator speed-ups of providers.py keep the behaviour they skip work for.

sfn_client_cache: one session per (role, region), assumed once even by tasks that start
together, one client per service from it, a Task's Credentials role assumed through the
execution role's session; moto_update_copy:
UpdateItem results, ALL_OLD on a lost condition and a stream's old image are as
before. Both must apply to the pinned LocalStack and moto, or they would silently
stop working after an upgrade.
"""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.fixes import moto_update_copy, sfn_client_cache


def test_both_apply_to_the_pinned_versions() -> None:
    assert sfn_client_cache.apply() is True
    assert moto_update_copy.apply() is True


class _Factory:
    def __init__(self, calls: list, kwargs: dict) -> None:
        self.calls, self.kwargs = calls, kwargs

    def get_client(self, service: str) -> Any:
        self.calls.append((service, self.kwargs.get("role_arn") or self.kwargs["key"]))
        if service == "sts":
            return _Sts(self.kwargs.get("role_arn") or self.kwargs["key"], self.calls)
        return (service, self.kwargs.get("role_arn") or self.kwargs["key"], len(self.calls))


class _Sts:
    """The sts client of one session: AssumeRole returns keys naming who assumed what."""

    def __init__(self, caller: str, calls: list) -> None:
        self.caller, self.calls = caller, calls

    def assume_role(self, RoleArn: str, RoleSessionName: str) -> dict:
        self.calls.append(("assume", self.caller, RoleArn))
        key = f"{self.caller}>{RoleArn}"
        return {"Credentials": {"AccessKeyId": key, "SecretAccessKey": "s", "SessionToken": "t"}}


class _Connect:
    def __init__(self) -> None:
        self.calls: list = []
        self.assumed: list = []

    def with_assumed_role(self, **kwargs: Any) -> _Factory:
        self.assumed.append(kwargs["role_arn"])
        return _Factory(self.calls, kwargs)

    def __call__(self, **kwargs: Any) -> _Factory:
        return _Factory(self.calls, {"key": kwargs["aws_access_key_id"]})


def test_one_session_per_role_and_one_client_per_service() -> None:
    real = _Connect()
    connect = sfn_client_cache._CachingConnect(real)
    config = object()

    def client(service: str, role: str, region: str = "us-east-1") -> Any:
        return connect.with_assumed_role(
            role_arn=role, region_name=region, service_principal="states", config=config
        ).get_client(service=service)

    first = client("lambda", "arn:role/a")
    assert client("lambda", "arn:role/a") is first
    assert client("lambda", "arn:role/b") != first
    assert client("dynamodb", "arn:role/a") != first
    assert client("lambda", "arn:role/a", region="eu-west-1") != first
    assert len(real.calls) == 4
    # role a's lambda and dynamodb clients come from one session (one AssumeRole).
    assert real.assumed == ["arn:role/a", "arn:role/b", "arn:role/a"]


def test_tasks_starting_together_share_one_session() -> None:
    real = _Connect()
    connect = sfn_client_cache._CachingConnect(real)
    threads = [
        threading.Thread(
            target=lambda: connect.with_assumed_role(role_arn="arn:role/a").get_client(
                service="redshift-data"
            )
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert real.assumed == ["arn:role/a"]


def test_a_task_credentials_role_is_assumed_by_the_execution_role() -> None:
    real = _Connect()
    connect = sfn_client_cache._CachingConnect(real)
    target = sfn_client_cache._ChainedArn("arn:role/other-account")
    target.via = "arn:role/execution"
    made = connect.with_assumed_role(role_arn=target, service_principal="states").get_client(
        service="states"
    )
    # The service principal assumed only the execution role; that session assumed the other.
    assert real.assumed == ["arn:role/execution"]
    assert ("assume", "arn:role/execution", "arn:role/other-account") in real.calls
    assert made[:2] == ("states", "arn:role/execution>arn:role/other-account")
    # Without Credentials, the execution role's own session is another key.
    plain = connect.with_assumed_role(role_arn="arn:role/other-account").get_client(
        service="states"
    )
    assert plain[1] == "arn:role/other-account"


def test_a_kept_session_is_assumed_again_after_its_time() -> None:
    real = _Connect()
    connect = sfn_client_cache._CachingConnect(real)
    connect.with_assumed_role(role_arn="r").get_client(service="sqs")
    (kept,) = connect._sessions.values()
    kept.made_at -= sfn_client_cache.KEEP_SECONDS + 1
    connect.with_assumed_role(role_arn="r").get_client(service="sqs")
    assert real.assumed == ["r", "r"]


@pytest.fixture
def ddb() -> Any:
    from moto import mock_aws

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
    from moto.dynamodb import models as moto_dynamodb

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
