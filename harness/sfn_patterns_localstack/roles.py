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


def function_logs_policy(
    function_names: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
    region: str = DEFAULT_REGION,
) -> str:
    """The functions' own log groups and streams: create the group, then write to it."""
    groups = [
        f"arn:aws:logs:{region}:{account}:log-group:/aws/lambda/{name}" for name in function_names
    ]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "OwnLogGroups",
                    "Effect": "Allow",
                    "Action": "logs:CreateLogGroup",
                    "Resource": groups,
                },
                {
                    "Sid": "OwnLogStreams",
                    "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": [f"{group}:*" for group in groups],
                },
            ],
        }
    )


def function_role(
    iam: Any,
    name: str,
    function_names: Iterable[str],
    account: str = DEFAULT_ACCOUNT,
    region: str = DEFAULT_REGION,
) -> str:
    """Create a role Lambda may assume that may log for these functions; return its ARN."""
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust_policy("lambda"))["Role"][
        "Arn"
    ]
    iam.put_role_policy(
        RoleName=name,
        PolicyName="logs",
        PolicyDocument=function_logs_policy(function_names, account, region),
    )
    return arn


def delete_role(iam: Any, name: str) -> None:
    """Delete a role and its inline policies (IAM refuses a role that still has any)."""
    for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
        iam.delete_role_policy(RoleName=name, PolicyName=policy)
    iam.delete_role(RoleName=name)


__all__ = ["delete_role", "function_logs_policy", "function_role", "trust_policy"]
