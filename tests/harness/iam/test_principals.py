"""Access key to role session and role to policies, read from moto's STS and IAM backends.

moto (LocalStack's IAM and STS backends) runs in-process here; the integration tests
cover the same lookups inside LocalStack.
"""

from __future__ import annotations

import json

import boto3
import pytest

from sfn_patterns_localstack.emulation.iam.principals import (
    Directory,
    RoleSession,
    moto_role,
    moto_session,
    parse_document,
)

ACCOUNT = "123456789012"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "states.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}
INLINE = {
    "Version": "2012-10-17",
    "Statement": [
        {"Sid": "Read", "Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}
    ],
}
MANAGED = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}],
}


@pytest.fixture
def moto_account(monkeypatch):
    from moto import mock_aws

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        iam = boto3.client("iam", region_name="us-east-1")
        role = iam.create_role(RoleName="machine", AssumeRolePolicyDocument=json.dumps(TRUST))[
            "Role"
        ]
        iam.put_role_policy(
            RoleName="machine", PolicyName="inline", PolicyDocument=json.dumps(INLINE)
        )
        arn = iam.create_policy(PolicyName="send", PolicyDocument=json.dumps(MANAGED))["Policy"][
            "Arn"
        ]
        iam.attach_role_policy(RoleName="machine", PolicyArn=arn)
        yield {"role": role, "managed_arn": arn, "iam": iam}


def test_session_of_an_assumed_role_key(moto_account):
    sts = boto3.client("sts", region_name="us-east-1")
    creds = sts.assume_role(RoleArn=moto_account["role"]["Arn"], RoleSessionName="run-1")[
        "Credentials"
    ]
    found = moto_session(ACCOUNT, creds["AccessKeyId"])
    assert found == RoleSession(
        ACCOUNT, moto_account["role"]["Arn"], moto_account["role"]["RoleId"], "run-1"
    )
    assert found.arn == f"arn:aws:sts::{ACCOUNT}:assumed-role/machine/run-1"
    assert moto_session(ACCOUNT, "ASIANOTISSUEDANYWHERE") is None


def test_role_policies_inline_managed_and_trust(moto_account):
    role = moto_role(ACCOUNT, "machine")
    assert [p.name for p in role.identity] == ["machine/inline", moto_account["managed_arn"]]
    assert role.identity[0].document == INLINE
    assert role.identity[1].document == MANAGED
    assert role.trust.document == TRUST
    assert moto_role(ACCOUNT, "no-such-role") is None


def test_managed_policy_uses_its_default_version(moto_account):
    newer = {**MANAGED, "Statement": [{**MANAGED["Statement"][0], "Action": "sqs:ReceiveMessage"}]}
    moto_account["iam"].create_policy_version(
        PolicyArn=moto_account["managed_arn"], PolicyDocument=json.dumps(newer), SetAsDefault=True
    )
    assert moto_role(ACCOUNT, "machine").identity[1].document == newer


def test_directory_caches_and_skips_account_keys():
    looked_up: list[str] = []

    def find(account: str, key: str):
        looked_up.append(key)
        return (
            RoleSession(account, "arn:aws:iam::1:role/r", "AROA1", "s")
            if key.endswith("A")
            else None
        )

    directory = Directory(find, lambda account, name: None)
    assert directory.session("test", ACCOUNT) is None
    assert directory.session(ACCOUNT, ACCOUNT) is None
    assert directory.session("LSIAKEYA", ACCOUNT) is not None
    assert directory.session("LSIAKEYA", ACCOUNT) is not None
    assert directory.session("LSIAKEYB", ACCOUNT) is None
    assert directory.session("LSIAKEYB", ACCOUNT) is None
    assert looked_up == ["LSIAKEYA", "LSIAKEYB"]


def test_parse_document_accepts_url_encoded_json():
    assert parse_document("%7B%22Version%22%3A%20%222012-10-17%22%7D") == {"Version": "2012-10-17"}
    assert parse_document({"a": 1}) == {"a": 1}
