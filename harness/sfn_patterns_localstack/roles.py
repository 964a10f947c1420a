"""Least-privilege roles for what tests and benchmarks create without Terraform.

The harness's LocalStack decides every call a role session makes (emulation/iam,
``SFNP_IAM=enforce`` by default): a function or state machine a test creates by hand
needs a role that the service may assume and that allows what it does, as in an AWS
account. These helpers write the usual two: a service's trust policy and a Lambda
function's logging (what ``AWSLambdaBasicExecutionRole`` grants, scoped to the
functions' own log groups). Anything more is the test's own statement.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

DEFAULT_ACCOUNT = "000000000000"
DEFAULT_REGION = "us-east-1"


def trust_policy(service: str) -> str:
    """A trust policy letting ``service`` (``lambda``, ``states``, ``events``) assume the role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": f"{service}.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                }
            ],
        }
    )


def account_root_trust(account: str = DEFAULT_ACCOUNT) -> dict[str, Any]:
    """A trust policy letting the account's own principals (a test, a benchmark) assume the role."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{account}:root"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def function_logs_statements(
    function_names: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
    region: str = DEFAULT_REGION,
) -> list[dict]:
    """The functions' own log groups and streams (a name may end in ``*``: a prefix)."""
    groups = [
        f"arn:aws:logs:{region}:{account}:log-group:/aws/lambda/{name}" for name in function_names
    ]
    return [
        allow("logs:CreateLogGroup", groups, "OwnLogGroups"),
        allow(
            ["logs:CreateLogStream", "logs:PutLogEvents"],
            [f"{group}:*" for group in groups],
            "OwnLogStreams",
        ),
    ]


def function_logs_policy(
    function_names: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
    region: str = DEFAULT_REGION,
) -> str:
    """The functions' own log groups and streams: create the group, then write to it."""
    statements = function_logs_statements(function_names, account, region)
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def function_role(
    iam: Any,
    name: str,
    function_names: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
    region: str = DEFAULT_REGION,
) -> str:
    """Create a role Lambda may assume that may log for these functions; return its ARN."""
    arn = _create_role(iam, name, "lambda")
    iam.put_role_policy(
        RoleName=name,
        PolicyName="logs",
        PolicyDocument=function_logs_policy(function_names, account, region),
    )
    return arn


def _create_role(iam: Any, name: str, service: str) -> str:
    """CreateRole; a retried request that finds the role made by its first attempt is fine.

    On a loaded machine botocore may resend a CreateRole whose answer timed out; the
    second attempt then meets the role the first one made (EntityAlreadyExists).
    """
    try:
        return iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust_policy(service))[
            "Role"
        ]["Arn"]
    except iam.exceptions.EntityAlreadyExistsException:
        return iam.get_role(RoleName=name)["Role"]["Arn"]


def allow(actions: str | list[str], resources: str | list[str], sid: str | None = None) -> dict:
    """One Allow statement."""
    statement: dict[str, Any] = {"Effect": "Allow", "Action": actions, "Resource": resources}
    if sid:
        statement["Sid"] = sid
    return statement


def service_role(iam: Any, name: str, service: str, statements: list[dict]) -> str:
    """Create a role ``service`` may assume, allowed ``statements`` (inline); return its ARN."""
    arn = _create_role(iam, name, service)
    if statements:
        iam.put_role_policy(
            RoleName=name,
            PolicyName="least",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
        )
    return arn


def events_to_queue_policy(queue_arn: str, rule_arns: list[str]) -> str:
    """A queue policy letting EventBridge deliver to the queue for these rules only."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "RuleDelivers",
                    "Effect": "Allow",
                    "Principal": {"Service": "events.amazonaws.com"},
                    "Action": "sqs:SendMessage",
                    "Resource": queue_arn,
                    "Condition": {"ArnEquals": {"aws:SourceArn": rule_arns}},
                }
            ],
        }
    )


def delete_role(iam: Any, name: str) -> None:
    """Delete a role and its inline policies (IAM refuses a role that still has any)."""
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    iam.delete_role(RoleName=name)


__all__ = [
    "allow",
    "delete_role",
    "events_to_queue_policy",
    "function_logs_policy",
    "function_logs_statements",
    "function_role",
    "service_role",
    "trust_policy",
]
