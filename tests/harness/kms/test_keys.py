"""The key policy decision on its own, with key policies shaped like AWS's documented ones.

The policies are the ones AWS documents: the default key policy's "Enable IAM User
Permissions" statement (key-policy-default.html), the AWS managed DynamoDB key's
``kms:ViaService``/``kms:CallerAccount`` statement (services-dynamodb.html), and
CloudWatch Logs' service principal statement (encrypt-log-data-kms.html).
"""

from __future__ import annotations

from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy
from sfn_patterns_localstack.emulation.kms.keys import Caller, Key, decide, request_context
from tests.kms_keys import root_statement

ACCOUNT = "111122223333"
OTHER = "444455556666"
REGION = "us-east-1"
KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/worker"
ROOT = root_statement(ACCOUNT)
VIA_DYNAMODB = {
    "kms:CallerAccount": ACCOUNT,
    "kms:ViaService": f"dynamodb.{REGION}.amazonaws.com",
    "kms:EncryptionContext:aws:dynamodb:tableName": "jobs",
    "kms:EncryptionContext:aws:dynamodb:subscriberId": ACCOUNT,
}


def key(*statements: dict, account: str = ACCOUNT) -> Key:
    document = {"Version": "2012-10-17", "Statement": list(statements)}
    return Key(KEY_ARN, account, NamedPolicy(f"{KEY_ARN} (key policy)", document))


def identity(*statements: dict) -> tuple[NamedPolicy, ...]:
    return (NamedPolicy("worker/inline", {"Version": "2012-10-17", "Statement": list(statements)}),)


def role(policies: tuple[NamedPolicy, ...] = (), account: str = ACCOUNT) -> Caller:
    session = f"arn:aws:sts::{account}:assumed-role/worker/s1"
    role_arn = f"arn:aws:iam::{account}:role/worker"
    return Caller(account=account, names=frozenset({session, role_arn}), identity=policies)


DECRYPT = {"Sid": "UseKey", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": KEY_ARN}


def test_root_statement_hands_the_decision_to_identity_policies():
    decision = decide(key(ROOT), "kms:Decrypt", role(identity(DECRYPT)), VIA_DYNAMODB)
    assert decision.allowed
    assert [s.label for s in decision.statements] == [
        f"{KEY_ARN} (key policy)#Enable IAM User Permissions",
        "worker/inline#UseKey",
    ]


def test_root_statement_without_an_identity_grant_is_refused_by_iam():
    decision = decide(key(ROOT), "kms:Decrypt", role(), VIA_DYNAMODB)
    assert (decision.allowed, decision.reason) == (False, "implicit-deny")


def test_without_the_root_statement_identity_policies_alone_are_not_enough():
    admins = {
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/admin"},
        "Action": "kms:*",
        "Resource": "*",
    }
    decision = decide(key(admins), "kms:Decrypt", role(identity(DECRYPT)), VIA_DYNAMODB)
    assert (decision.allowed, decision.reason) == (False, "resource-implicit-deny")


def test_a_key_policy_naming_the_role_needs_no_identity_policy():
    user = {
        "Sid": "KeyUser",
        "Effect": "Allow",
        "Principal": {"AWS": ROLE},
        "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
        "Resource": "*",
    }
    decision = decide(key(user), "kms:Decrypt", role(), VIA_DYNAMODB)
    assert decision.allowed
    assert [s.label for s in decision.statements] == [f"{KEY_ARN} (key policy)#KeyUser"]
    assert not decide(key(user), "kms:Encrypt", role(), VIA_DYNAMODB).allowed


def test_an_explicit_deny_in_either_policy_wins():
    deny_on_key = {
        "Effect": "Deny",
        "Principal": {"AWS": "*"},
        "Action": "kms:Decrypt",
        "Resource": "*",
    }
    decision = decide(key(ROOT, deny_on_key), "kms:Decrypt", role(identity(DECRYPT)), VIA_DYNAMODB)
    assert (decision.allowed, decision.reason) == (False, "resource-explicit-deny")
    deny = {"Effect": "Deny", "Action": "kms:*", "Resource": "*"}
    decision = decide(key(ROOT), "kms:Decrypt", role(identity(DECRYPT, deny)), VIA_DYNAMODB)
    assert (decision.allowed, decision.reason) == (False, "explicit-deny")


def test_via_service_and_caller_account_conditions_see_the_service_call():
    # The AWS managed DynamoDB key's first statement (services-dynamodb.html).
    through_dynamodb = {
        "Effect": "Allow",
        "Principal": {"AWS": "*"},
        "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*"],
        "Resource": "*",
        "Condition": {
            "StringEquals": {
                "kms:CallerAccount": ACCOUNT,
                "kms:ViaService": f"dynamodb.{REGION}.amazonaws.com",
            }
        },
    }
    assert decide(key(through_dynamodb), "kms:Decrypt", role(), VIA_DYNAMODB).allowed
    via_sqs = {**VIA_DYNAMODB, "kms:ViaService": f"sqs.{REGION}.amazonaws.com"}
    assert not decide(key(through_dynamodb), "kms:Decrypt", role(), via_sqs).allowed


def test_identity_conditions_on_the_encryption_context():
    only_jobs = {
        **DECRYPT,
        "Condition": {"StringEquals": {"kms:EncryptionContext:aws:dynamodb:tableName": "jobs"}},
    }
    caller = role(identity(only_jobs))
    assert decide(key(ROOT), "kms:Decrypt", caller, VIA_DYNAMODB).allowed
    other_table = {**VIA_DYNAMODB, "kms:EncryptionContext:aws:dynamodb:tableName": "locks"}
    assert not decide(key(ROOT), "kms:Decrypt", caller, other_table).allowed


def test_a_service_principal_is_decided_by_the_key_policy_alone():
    logs = {
        "Effect": "Allow",
        "Principal": {"Service": f"logs.{REGION}.amazonaws.com"},
        "Action": [
            "kms:Encrypt*",
            "kms:Decrypt*",
            "kms:ReEncrypt*",
            "kms:GenerateDataKey*",
            "kms:Describe*",
        ],
        "Resource": "*",
    }
    service = Caller(account=ACCOUNT, service=f"logs.{REGION}.amazonaws.com")
    context = {"kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-east-1:1:log-group:g"}
    assert decide(key(ROOT, logs), "kms:GenerateDataKey", service, context).allowed
    # The root statement hands access to IAM principals, never to a service.
    decision = decide(key(ROOT), "kms:GenerateDataKey", service, context)
    assert (decision.allowed, decision.reason) == (False, "resource-implicit-deny")


def test_another_account_needs_the_key_policy_and_its_own_identity_policy():
    other_root = {
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"},
        "Action": "kms:Decrypt",
        "Resource": "*",
    }
    assert decide(key(ROOT, other_root), "kms:Decrypt", role(identity(DECRYPT), OTHER), {}).allowed
    decision = decide(key(ROOT, other_root), "kms:Decrypt", role((), OTHER), {})
    assert (decision.allowed, decision.reason) == (False, "implicit-deny")
    # The key account's root statement does not admit another account.
    decision = decide(key(ROOT), "kms:Decrypt", role(identity(DECRYPT), OTHER), {})
    assert (decision.allowed, decision.reason) == (False, "resource-implicit-deny")


def test_request_context_keys():
    context = request_context(
        caller_account=ACCOUNT,
        via_service="sqs.us-east-1.amazonaws.com",
        encryption_context={"aws:sqs:arn": "arn:aws:sqs:us-east-1:1:q"},
        base={"aws:PrincipalArn": ROLE},
    )
    assert context == {
        "aws:PrincipalArn": ROLE,
        "kms:CallerAccount": ACCOUNT,
        "kms:ViaService": "sqs.us-east-1.amazonaws.com",
        "kms:EncryptionContext:aws:sqs:arn": "arn:aws:sqs:us-east-1:1:q",
        "kms:EncryptionContextKeys": ["aws:sqs:arn"],
    }
