"""KMS decided through the IAM handler on hand-made requests (no LocalStack process).

The keys, roles and resources are fakes of LocalStack's stores; the expectations are
AWS's: the service's own error code and status, KMS's sentence naming the key, and the
usage file counting KMS actions like any other.
"""

from __future__ import annotations

import pytest

from sfn_patterns_localstack.emulation.iam.actions import Scope
from sfn_patterns_localstack.emulation.iam.handler import Enforcer
from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy
from sfn_patterns_localstack.emulation.iam.principals import Directory, RolePolicies
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder, unused_actions
from sfn_patterns_localstack.emulation.kms.check import KeyChecker
from sfn_patterns_localstack.emulation.kms.keys import Key
from sfn_patterns_localstack.emulation.kms.stores import Registry
from sfn_patterns_localstack.emulation.kms.uses import FunctionKey, MachineKey
from tests.harness.iam.test_handler import ACCOUNT, KEY, SESSION, Roles, context, doc, service_error
from tests.harness.kms.test_uses import FakeResources
from tests.kms_keys import root_statement

KEY_ARN = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/k1"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/jobs"
QUEUE = f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs"
QUEUE_URL = f"http://localhost:4566/{ACCOUNT}/jobs"
FUNCTION = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:fn"
FN_ROLE = f"arn:aws:iam::{ACCOUNT}:role/fn-role"
WORKER_ARN = SESSION.arn
ROOT = root_statement(ACCOUNT)
LOGS = {
    "Sid": "Logs",
    "Effect": "Allow",
    "Principal": {"Service": "logs.us-east-1.amazonaws.com"},
    "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
    "Resource": "*",
}
DATA = {
    "Sid": "Data",
    "Effect": "Allow",
    "Action": ["dynamodb:PutItem", "sqs:SendMessage", "sqs:ReceiveMessage"],
    "Resource": [TABLE, QUEUE],
}
KMS = {
    "Sid": "Key",
    "Effect": "Allow",
    "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
    "Resource": KEY_ARN,
}


def role(name: str, *statements: dict) -> RolePolicies:
    return RolePolicies(identity=(NamedPolicy(f"{name}/inline", doc(*statements)),), trust=None)


class Setup:
    """An enforcer with the KMS checker over fake stores."""

    def __init__(self, key_policy: list[dict], roles: dict[str, RolePolicies], mode="enforce"):
        self.key = Key(KEY_ARN, ACCOUNT, NamedPolicy(f"{KEY_ARN} (key policy)", doc(*key_policy)))
        self.resources = FakeResources(tables={"jobs": KEY_ARN}, queues={QUEUE: KEY_ARN})
        self.role_ids = {FN_ROLE: "AROAFN1"}
        directory = Directory(lambda account, key: {KEY: SESSION}.get(key), Roles(roles))
        self.recorder = UsageRecorder(None)
        self.checker = KeyChecker(
            directory,
            self.recorder,
            resolve=lambda ref, account, region: self.key if ref == KEY_ARN else None,
            resources=lambda scope: self.resources,
            role_id=self.role_ids.get,
        )
        self.enforcer = Enforcer(mode, directory, self.recorder, self.checker)

    def call(self, service: str, operation: str, request: dict, **kwargs) -> None:
        self.enforcer(None, context(service, operation, request, **kwargs), None)

    def refused(self, service: str, operation: str, request: dict, **kwargs) -> Exception:
        with pytest.raises(service_error()) as raised:
            self.call(service, operation, request, **kwargs)
        return raised.value


PUT = {"TableName": "jobs", "Item": {"pk": {"S": "1"}}}


def test_dynamodb_write_without_a_key_grant_is_refused_with_dynamodbs_error():
    setup = Setup([ROOT], {"worker": role("worker", DATA)})
    error = setup.refused("dynamodb", "PutItem", PUT)
    assert (error.code, error.status_code) == ("AccessDeniedException", 400)
    assert error.message == (
        f"KMS key access denied error: User: {WORKER_ARN} is not authorized to perform: "
        f"kms:Decrypt on resource: {KEY_ARN} because no identity-based policy allows the "
        "kms:Decrypt action (Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)"
    )
    (denied,) = setup.recorder.snapshot()["denied"]
    assert (denied["action"], denied["resource"], denied["reason"]) == (
        "kms:Decrypt",
        KEY_ARN,
        "implicit-deny",
    )
    assert setup.recorder.snapshot()["allowed"] == []  # the PutItem grant was not exercised


def test_dynamodb_write_with_a_key_grant_counts_the_kms_action_in_the_usage_file():
    setup = Setup([ROOT], {"worker": role("worker", DATA, KMS)})
    setup.call("dynamodb", "PutItem", PUT)
    rows = {(r["statement"], r["action"]) for r in setup.recorder.snapshot()["allowed"]}
    assert rows == {
        ("worker/inline#Data", "dynamodb:PutItem"),
        ("worker/inline#Key", "kms:Decrypt"),
        (f"{KEY_ARN} (key policy)#Enable IAM User Permissions", "kms:Decrypt"),
    }
    unused = unused_actions(setup.recorder.snapshot())
    assert {u["action"] for u in unused} == {
        "sqs:SendMessage",
        "sqs:ReceiveMessage",
        "kms:GenerateDataKey",
    }


def test_without_the_root_statement_identity_grants_do_not_reach_the_key():
    admins = {**ROOT, "Sid": "Admins", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/admin"}}
    setup = Setup([admins], {"worker": role("worker", DATA, KMS)})
    error = setup.refused("dynamodb", "PutItem", PUT)
    assert error.message.startswith(
        f"KMS key access denied error: User: {WORKER_ARN} is not authorized to perform: "
        f"kms:Decrypt on resource: {KEY_ARN} because no resource-based policy allows"
    )


def test_sqs_send_is_refused_with_sqs_kms_code_and_needs_both_actions():
    setup = Setup([ROOT], {"worker": role("worker", DATA, {**KMS, "Action": "kms:Decrypt"})})
    error = setup.refused("sqs", "SendMessage", {"QueueUrl": QUEUE_URL, "MessageBody": "x"})
    assert (error.code, error.status_code) == ("KMS.AccessDeniedException", 400)
    assert f"kms:GenerateDataKey on resource: {KEY_ARN}" in error.message
    setup.call("sqs", "ReceiveMessage", {"QueueUrl": QUEUE_URL})  # Decrypt alone suffices


def test_audit_mode_records_the_kms_refusal_and_lets_the_call_through():
    setup = Setup([ROOT], {"worker": role("worker", DATA)}, mode="audit")
    setup.call("dynamodb", "PutItem", PUT)
    (denied,) = setup.recorder.snapshot()["denied"]
    assert (denied["action"], denied["enforced"]) == ("kms:Decrypt", False)


def test_callers_with_the_accounts_own_keys_and_aws_managed_keys_are_not_decided():
    setup = Setup([], {"worker": role("worker", DATA)})
    setup.call("dynamodb", "PutItem", PUT, key="test")
    setup.resources.tables["jobs"] = "alias/aws/dynamodb"  # the resolver knows no such key
    setup.call("dynamodb", "PutItem", PUT)
    assert setup.recorder.snapshot()["denied"] == []


# -- Lambda: the execution role decrypts through the grant made when the key was set ----
def lambda_setup(key_policy: list[dict], granted_to: str | None) -> Setup:
    setup = Setup(key_policy, {"fn-role": role("fn-role")})
    setup.resources.functions[FUNCTION] = FunctionKey(KEY_ARN, FN_ROLE, granted_to, True)
    return setup


def test_lambda_invoke_is_allowed_by_the_grant_to_the_execution_role():
    lambda_setup([ROOT], "AROAFN1").call("lambda", "Invoke", {"FunctionName": "fn"}, key="test")


def test_lambda_invoke_after_the_role_was_recreated_is_refused_with_lambdas_error():
    setup = lambda_setup([ROOT], "AROAOLD")
    error = setup.refused("lambda", "Invoke", {"FunctionName": "fn"}, key="test")
    assert (error.code, error.status_code) == ("KMSAccessDeniedException", 502)
    assert error.message.startswith(
        "Lambda was unable to decrypt the environment variables because KMS access was denied."
    )
    assert f"kms:Decrypt on resource: {KEY_ARN}" in error.message
    # A key policy naming the role lets the new role in without the grant.
    named = {**ROOT, "Sid": "Fn", "Principal": {"AWS": FN_ROLE}, "Action": "kms:Decrypt"}
    lambda_setup([ROOT, named], "AROAOLD").call(
        "lambda", "Invoke", {"FunctionName": "fn"}, key="test"
    )


# -- Step Functions: the state machine's role, then the caller reading history ----------
def test_state_machine_start_is_decided_for_its_role_whoever_starts_it():
    machine = f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:flow"
    setup = Setup([ROOT], {"fn-role": role("fn-role")})
    setup.resources.machines[machine] = MachineKey(KEY_ARN, FN_ROLE)
    error = setup.refused(
        "stepfunctions", "StartExecution", {"stateMachineArn": machine}, key="test"
    )
    assert (error.code, error.status_code) == ("KmsAccessDeniedException", 400)
    assert (
        "assumed-role/fn-role/flow is not authorized to perform: kms:GenerateDataKey"
        in error.message
    )
    setup = Setup([ROOT], {"fn-role": role("fn-role", KMS)})
    setup.resources.machines[machine] = MachineKey(KEY_ARN, FN_ROLE)
    setup.call("stepfunctions", "StartExecution", {"stateMachineArn": machine}, key="test")


# -- CloudWatch Logs: the service principal, on the key policy alone --------------------
def test_log_group_key_needs_the_logs_service_in_the_key_policy():
    request = {"logGroupName": "/aws/lambda/fn", "kmsKeyId": KEY_ARN}
    error = Setup([ROOT], {}).refused("logs", "CreateLogGroup", request, key="test")
    group = f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/aws/lambda/fn"
    assert (error.code, error.status_code) == ("AccessDeniedException", 400)
    assert error.message.startswith(
        f"The specified KMS key does not exist or is not allowed to be used with Arn '{group}'."
    )
    setup = Setup([ROOT, LOGS], {})
    setup.call("logs", "CreateLogGroup", request, key="test")
    (row,) = setup.recorder.snapshot()["allowed"]
    assert (row["role"], row["statement"], row["action"]) == (
        "logs.us-east-1.amazonaws.com",
        f"{KEY_ARN} (key policy)#Logs",
        "kms:GenerateDataKey",
    )


# -- the keys LocalStack 4.14.0 drops, remembered from the configuring calls ------------
def test_registry_remembers_lambdas_key_and_the_role_of_its_grant():
    ids = {FN_ROLE: "AROAFN1"}
    registry = Registry(ids.get)
    scope = Scope(ACCOUNT, "us-east-1")
    create = {"FunctionName": "fn", "Role": FN_ROLE, "KMSKeyArn": KEY_ARN}
    registry.observe("lambda", "CreateFunction", create, {"Role": FN_ROLE}, scope)
    assert (registry.function(FUNCTION).key, registry.function(FUNCTION).role_id) == (
        KEY_ARN,
        "AROAFN1",
    )
    ids[FN_ROLE] = "AROAFN2"  # the role was re-created; an update makes a new grant
    registry.observe("lambda", "UpdateFunctionConfiguration", {"FunctionName": "fn"}, {}, scope)
    assert (registry.function(FUNCTION).key, registry.function(FUNCTION).role_id) == (
        KEY_ARN,
        "AROAFN2",
    )
    registry.observe(
        "lambda", "UpdateFunctionConfiguration", {"FunctionName": "fn", "KMSKeyArn": ""}, {}, scope
    )
    assert registry.function(FUNCTION) is None


def test_registry_remembers_a_state_machines_customer_key():
    registry = Registry(lambda arn: None)
    scope = Scope(ACCOUNT, "us-east-1")
    machine = f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:flow"
    encryption = {"type": "CUSTOMER_MANAGED_KMS_KEY", "kmsKeyId": KEY_ARN}
    registry.observe(
        "stepfunctions",
        "CreateStateMachine",
        {"name": "flow", "encryptionConfiguration": encryption},
        {"stateMachineArn": machine},
        scope,
    )
    assert registry.machine(machine) == KEY_ARN
    registry.observe(
        "stepfunctions",
        "UpdateStateMachine",
        {"stateMachineArn": machine, "encryptionConfiguration": {"type": "AWS_OWNED_KEY"}},
        {},
        scope,
    )
    assert registry.machine(machine) is None


def test_the_response_handler_feeds_the_registry():
    setup = Setup([ROOT], {})
    seen = []
    setup.checker._observe = lambda *args: seen.append(args[:2])
    response = {"FunctionArn": FUNCTION}
    setup.enforcer.on_response(
        None, context("lambda", "CreateFunction", {}, response=response), None
    )
    assert seen == [("lambda", "CreateFunction")]


# -- a service delivering to an encrypted queue: the key policy alone -------------------
def test_eventbridge_delivering_to_an_encrypted_queue_needs_the_key_policy(monkeypatch):
    from sfn_patterns_localstack.emulation.iam import resource_policies

    rule = f"arn:aws:events:us-east-1:{ACCOUNT}:rule/jobs"
    queue_policy = NamedPolicy(
        "queue",
        doc(
            {
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE,
            }
        ),
    )
    monkeypatch.setattr(resource_policies, "localstack_resource_policy", lambda a, r: queue_policy)
    internal = {"service_principal": "events", "source_arn": rule}
    request = {"QueueUrl": QUEUE_URL, "MessageBody": "x"}
    error = Setup([ROOT], {}).refused("sqs", "SendMessage", request, key=ACCOUNT, internal=internal)
    assert (error.code, error.status_code) == ("KMS.AccessDeniedException", 400)
    assert error.message.startswith(
        "User: events.amazonaws.com is not authorized to perform: kms:GenerateDataKey"
    )
    events = {
        "Sid": "Events",
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": "*",
        "Condition": {"ArnEquals": {"aws:SourceArn": rule}},
    }
    Setup([ROOT, events], {}).call("sqs", "SendMessage", request, key=ACCOUNT, internal=internal)
