"""Finding a key from what a resource names, and the keys LocalStack's stores hold.

``resolve_key`` is given a stand-in for LocalStack's ``kms_stores`` (importing the real
module costs each test process about two CPU-seconds); the shapes are LocalStack
4.14.0's: ``KmsKey.metadata`` (``KeyId``, ``Arn``, ``KeyManager``) and ``.policy`` (a
JSON string), ``KmsAlias.metadata["TargetKeyId"]``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace

import pytest

from sfn_patterns_localstack.emulation.kms.stores import resolve_key

ACCOUNT = "000000000000"
REGION = "us-east-1"
KEY_ID = "1234abcd-12ab-34cd-56ef-1234567890ab"
KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{KEY_ID}"
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "kms:*"}]}


def stores(manager: str = "CUSTOMER") -> dict:
    key = SimpleNamespace(
        metadata={"KeyId": KEY_ID, "Arn": KEY_ARN, "KeyManager": manager},
        policy=json.dumps(POLICY),
    )
    store = SimpleNamespace(
        keys={KEY_ID: key},
        aliases={
            "alias/app": SimpleNamespace(metadata={"TargetKeyId": KEY_ID}),
            "alias/aws/sqs": SimpleNamespace(metadata={"TargetKeyId": KEY_ID}),
        },
    )
    bundle: dict = defaultdict(lambda: defaultdict(lambda: SimpleNamespace(keys={}, aliases={})))
    bundle[ACCOUNT][REGION] = store
    return bundle


@pytest.mark.parametrize(
    "reference",
    [
        KEY_ID,
        KEY_ARN,
        "alias/app",
        f"arn:aws:kms:{REGION}:{ACCOUNT}:alias/app",
        f"arn:aws:kms:{REGION}:{ACCOUNT}:key/alias/app",  # LocalStack's DynamoDB, from an alias
    ],
)
def test_every_way_a_resource_names_a_customer_key(reference):
    key = resolve_key(reference, ACCOUNT, REGION, stores())
    assert key is not None
    assert (key.arn, key.account, key.policy.name) == (KEY_ARN, ACCOUNT, f"{KEY_ARN} (key policy)")
    assert key.policy.document == POLICY


def test_aws_managed_and_unknown_keys_are_not_decided():
    assert resolve_key("alias/aws/sqs", ACCOUNT, REGION, stores()) is None
    assert resolve_key(KEY_ARN, ACCOUNT, REGION, stores(manager="AWS")) is None
    assert resolve_key("alias/other", ACCOUNT, REGION, stores()) is None
    assert resolve_key(KEY_ARN.replace(ACCOUNT, "111122223333"), ACCOUNT, REGION, stores()) is None
