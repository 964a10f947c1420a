"""The gateway handler on hand-made request contexts (no LocalStack process).

The integration tests (test_enforcement.py) run the same paths through a real
LocalStack; these pin the decisions, the error each service answers and what is
recorded, quickly and for every mode.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from sfn_patterns_localstack.emulation.iam import handler as iam_handler
from sfn_patterns_localstack.emulation.iam import resource_policies
from sfn_patterns_localstack.emulation.iam.handler import Enforcer, denial_message
from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy
from sfn_patterns_localstack.emulation.iam.principals import Directory, RolePolicies, RoleSession
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder, unused_actions


def service_error() -> type[Exception]:
    """LocalStack's service error class, imported when a test needs it, not at collection.

    Why: importing ``localstack.aws.api`` costs each pytest process that collects this
    file (every worker) most of a CPU-second; only the worker that runs it needs it.
    """
    from localstack.aws.api import CommonServiceException

    return CommonServiceException


ACCOUNT = "000000000000"
KEY = "LSIAQAAAAAAAAAAAAAAA"
SESSION = RoleSession(ACCOUNT, f"arn:aws:iam::{ACCOUNT}:role/worker", "AROAWORKER", "s1")
SCOPE = "us-east-1/x/aws4_request"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/jobs"


def doc(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


class Roles:
    """A fake IAM backend: role name -> RolePolicies, counting lookups."""

    def __init__(self, roles: dict[str, RolePolicies]) -> None:
        self.roles = roles
        self.lookups = 0

    def __call__(self, account: str, name: str) -> RolePolicies | None:
        self.lookups += 1
        return self.roles.get(name)


def enforcer(roles: Roles, mode: str = "enforce") -> Enforcer:
    sessions = {KEY: SESSION}
    directory = Directory(lambda account, key: sessions.get(key), roles)
    return Enforcer(mode, directory, UsageRecorder(None))


def context(service, operation, request, *, key=KEY, internal=None, response=None):
    return SimpleNamespace(
        service=SimpleNamespace(service_name=service),
        operation=SimpleNamespace(name=operation),
        service_request=request,
        service_response=response,
        request=SimpleNamespace(
            headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={key}/20261125/{SCOPE}"}
        ),
        account_id=ACCOUNT,
        region="us-east-1",
        partition="aws",
        internal_request_params=internal,
    )


WORKER = RolePolicies(
    identity=(
        NamedPolicy(
            "worker/inline",
            doc(
                {"Sid": "Table", "Effect": "Allow", "Action": "dynamodb:Query", "Resource": TABLE},
                {"Sid": "Assume", "Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"},
            ),
        ),
    ),
    trust=None,
)


def test_allowed_call_passes_and_is_counted():
    roles = Roles({"worker": WORKER})
    e = enforcer(roles)
    e(None, context("dynamodb", "Query", {"TableName": "jobs"}), None)
    (row,) = e.recorder.snapshot()["allowed"]
    assert (row["statement"], row["action"], row["calls"]) == (
        "worker/inline#Table",
        "dynamodb:Query",
        1,
    )


def test_query_on_index_without_index_grant_is_denied_as_dynamodb_does():
    e = enforcer(Roles({"worker": WORKER}))
    with pytest.raises(service_error()) as raised:
        e(None, context("dynamodb", "Query", {"TableName": "jobs", "IndexName": "status"}), None)
    error = raised.value
    assert (error.code, error.status_code) == ("AccessDeniedException", 400)
    assert error.message == (
        f"User: arn:aws:sts::{ACCOUNT}:assumed-role/worker/s1 is not authorized to perform: "
        f"dynamodb:Query on resource: {TABLE}/index/status because no identity-based policy "
        "allows the dynamodb:Query action"
    )
    assert e.recorder.snapshot()["allowed"] == []
    (denied,) = e.recorder.snapshot()["denied"]
    assert (denied["reason"], denied["enforced"]) == ("implicit-deny", True)


@pytest.mark.parametrize(
    ("service", "operation", "request_", "code", "status"),
    [
        ("sqs", "SendMessage", {"QueueUrl": "http://h/000000000000/q"}, "AccessDenied", 403),
        ("lambda", "Invoke", {"FunctionName": "f"}, "AccessDeniedException", 403),
        ("stepfunctions", "SendTaskSuccess", {}, "AccessDeniedException", 400),
        ("s3", "GetObject", {"Bucket": "b", "Key": "k"}, "AccessDenied", 403),
    ],
)
def test_each_service_answers_with_its_own_code(service, operation, request_, code, status):
    e = enforcer(Roles({"worker": WORKER}))
    with pytest.raises(service_error()) as raised:
        e(None, context(service, operation, request_), None)
    assert (raised.value.code, raised.value.status_code) == (code, status)


def test_unmapped_operation_of_a_role_session_is_denied_saying_so():
    e = enforcer(Roles({"worker": WORKER}))
    with pytest.raises(service_error()) as raised:
        e(None, context("dynamodb", "ExecuteStatement", {"Statement": "SELECT 1"}), None)
    assert "dynamodb:ExecuteStatement" in raised.value.message
    assert "unmapped" in raised.value.message


def test_audit_mode_lets_the_call_through_and_records_it():
    e = enforcer(Roles({"worker": WORKER}), mode="audit")
    e(None, context("dynamodb", "PutItem", {"TableName": "jobs"}), None)
    (denied,) = e.recorder.snapshot()["denied"]
    assert (denied["action"], denied["enforced"]) == ("dynamodb:PutItem", False)


def test_account_keys_are_not_evaluated():
    roles = Roles({})
    e = enforcer(roles)
    e(None, context("dynamodb", "DeleteTable", {"TableName": "jobs"}, key="test"), None)
    e(None, context("dynamodb", "DeleteTable", {"TableName": "jobs"}, key=ACCOUNT), None)
    assert roles.lookups == 0
    assert e.recorder.snapshot() == {"policies": {}, "allowed": [], "denied": []}


def test_usage_keeps_the_policies_of_roles_that_made_calls():
    e = enforcer(Roles({"worker": WORKER}))
    e(None, context("dynamodb", "Query", {"TableName": "jobs"}), None)
    usage = json.loads(json.dumps(e.recorder.snapshot()))
    assert usage["policies"]["worker"][0]["name"] == "worker/inline"
    # Query was used; the AssumeRole grant allowed nothing.
    assert unused_actions(usage) == [
        {
            "role": "worker",
            "policy": "worker/inline",
            "statement": "worker/inline#Assume",
            "action": "sts:AssumeRole",
        }
    ]


def test_policies_are_cached_until_an_iam_write():
    roles = Roles({"worker": WORKER})
    e = enforcer(roles)
    for _ in range(5):
        e(None, context("dynamodb", "Query", {"TableName": "jobs"}), None)
    assert roles.lookups == 1
    e(None, context("iam", "PutRolePolicy", {}, key="test"), None)
    e(None, context("dynamodb", "Query", {"TableName": "jobs"}), None)
    assert roles.lookups == 2


def trusting(principal: dict) -> RolePolicies:
    return RolePolicies(
        identity=(),
        trust=NamedPolicy(
            "target/trust-policy",
            doc({"Effect": "Allow", "Principal": principal, "Action": "sts:AssumeRole"}),
        ),
    )


def assume(target="target"):
    return context(
        "sts",
        "AssumeRole",
        {"RoleArn": f"arn:aws:iam::{ACCOUNT}:role/{target}", "RoleSessionName": "x"},
    )


def test_assume_role_needs_the_targets_trust():
    e = enforcer(Roles({"worker": WORKER, "target": trusting({"Service": "lambda.amazonaws.com"})}))
    with pytest.raises(service_error()) as raised:
        e(None, assume(), None)
    assert (raised.value.code, raised.value.status_code) == ("AccessDenied", 403)
    assert raised.value.message == (
        f"User: {SESSION.arn} is not authorized to perform: sts:AssumeRole on resource: "
        f"arn:aws:iam::{ACCOUNT}:role/target"
    )
    e = enforcer(Roles({"worker": WORKER, "target": trusting({"AWS": SESSION.role_arn})}))
    e(None, assume(), None)


def test_assume_role_needs_the_callers_identity_policy_too():
    no_assume = RolePolicies(identity=(NamedPolicy("worker/none", doc()),), trust=None)
    e = enforcer(Roles({"worker": no_assume, "target": trusting({"AWS": SESSION.role_arn})}))
    with pytest.raises(service_error()) as raised:
        e(None, assume(), None)
    assert (
        "because no identity-based policy allows the sts:AssumeRole action" in raised.value.message
    )


FUNCTION = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:f"
RULE = f"arn:aws:events:us-east-1:{ACCOUNT}:rule/cleanup"


def test_service_principal_invoke_is_decided_by_the_function_policy(monkeypatch):
    policy = NamedPolicy(
        "fn",
        doc(
            {
                "Sid": "events",
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "lambda:InvokeFunction",
                "Resource": FUNCTION,
                "Condition": {"ArnLike": {"AWS:SourceArn": RULE}},
            }
        ),
    )
    found = {"policy": None}
    monkeypatch.setattr(
        resource_policies, "localstack_resource_policy", lambda a, r: found["policy"]
    )
    e = enforcer(Roles({}))
    internal = {"service_principal": "events", "source_arn": RULE}
    with pytest.raises(service_error()) as raised:
        e(
            None,
            context("lambda", "Invoke", {"FunctionName": FUNCTION}, key=ACCOUNT, internal=internal),
            None,
        )
    assert raised.value.message == denial_message(
        "events.amazonaws.com", "lambda:InvokeFunction", FUNCTION, "resource-implicit-deny"
    )
    found["policy"] = policy
    e(
        None,
        context("lambda", "Invoke", {"FunctionName": FUNCTION}, key=ACCOUNT, internal=internal),
        None,
    )
    other_rule = {"service_principal": "events", "source_arn": RULE + "-x"}
    with pytest.raises(service_error()):
        e(
            None,
            context(
                "lambda", "Invoke", {"FunctionName": FUNCTION}, key=ACCOUNT, internal=other_rule
            ),
            None,
        )


def test_redshift_statement_owner_condition(monkeypatch):
    own = RolePolicies(
        identity=(
            NamedPolicy(
                "dag/inline",
                doc(
                    {
                        "Sid": "FollowOwnStatements",
                        "Effect": "Allow",
                        "Action": "redshift-data:DescribeStatement",
                        "Resource": "*",
                        "Condition": {
                            "StringEquals": {
                                "redshift-data:statement-owner-iam-userid": "${aws:userid}"
                            }
                        },
                    },
                    {
                        "Effect": "Allow",
                        "Action": [
                            "redshift-data:ExecuteStatement",
                            "redshift:GetClusterCredentialsWithIAM",
                        ],
                        "Resource": "*",
                    },
                ),
            ),
        ),
        trust=None,
    )
    e = enforcer(Roles({"worker": own}))
    execute = context(
        "redshift-data", "ExecuteStatement", {"ClusterIdentifier": "c"}, response={"Id": "st-1"}
    )
    e(None, execute, None)
    e.on_response(None, execute, None)
    e(None, context("redshift-data", "DescribeStatement", {"Id": "st-1"}), None)
    with pytest.raises(service_error()):  # a statement nobody here started
        e(None, context("redshift-data", "DescribeStatement", {"Id": "st-2"}), None)


def test_mode_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("SFNP_IAM", raising=False)
    assert iam_handler.mode_from_env() == "enforce"
    monkeypatch.setenv("SFNP_IAM", "Audit")
    assert iam_handler.mode_from_env() == "audit"
    monkeypatch.setenv("SFNP_IAM", "loose")
    with pytest.raises(ValueError, match="SFNP_IAM"):
        iam_handler.mode_from_env()


def test_recorder_output_is_json_serialisable():
    e = enforcer(Roles({"worker": WORKER}), mode="audit")
    e(None, context("dynamodb", "Query", {"TableName": "jobs"}), None)
    e(None, context("dynamodb", "Scan", {"TableName": "jobs"}), None)
    json.dumps(e.recorder.snapshot())


@pytest.mark.parametrize("operation", ["GetObject", "HeadObject"])
def test_a_read_of_a_missing_key_needs_list_bucket_as_on_aws(monkeypatch, operation):
    """S3 answers 404 for a missing key only with s3:ListBucket on the bucket, else 403."""
    bucket, key = "arn:aws:s3:::b", "arn:aws:s3:::b/docs/1.json"
    reader = RolePolicies(
        identity=(
            NamedPolicy(
                "worker/inline",
                doc({"Sid": "Read", "Effect": "Allow", "Action": "s3:GetObject", "Resource": key}),
            ),
        ),
        trust=None,
    )
    lister = RolePolicies(
        identity=(
            NamedPolicy(
                "worker/inline",
                doc(
                    {"Sid": "Read", "Effect": "Allow", "Action": "s3:GetObject", "Resource": key},
                    {
                        "Sid": "List",
                        "Effect": "Allow",
                        "Action": "s3:ListBucket",
                        "Resource": bucket,
                    },
                ),
            ),
        ),
        trust=None,
    )
    request = {"Bucket": "b", "Key": "docs/1.json"}
    exists = {"value": True}
    monkeypatch.setattr(iam_handler, "_s3_object_exists", lambda *_: exists["value"])
    e = enforcer(Roles({"worker": reader}))
    e(None, context("s3", operation, request), None)  # the key is there: GetObject suffices
    exists["value"] = False
    with pytest.raises(service_error()) as raised:
        e(None, context("s3", operation, request), None)
    assert (raised.value.code, raised.value.status_code) == ("AccessDenied", 403)
    assert f"s3:ListBucket on resource: {bucket}" in raised.value.message
    e = enforcer(Roles({"worker": lister}))
    e(None, context("s3", operation, request), None)
    assert {row["action"] for row in e.recorder.snapshot()["allowed"]} == {
        "s3:GetObject",
        "s3:ListBucket",
    }
