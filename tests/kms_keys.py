"""Customer managed keys for tests, with the key policy statements an account uses.

Why shared: a key whose policy is KMS's default (the account root statement) lets IAM
policies decide for roles, but not for CloudWatch Logs, which encrypts a log group as
its service principal and needs a statement of its own in the key policy (AWS's
"Encrypt log data in CloudWatch Logs using AWS KMS"). A test that applies a module with
log groups under its key needs both, as an account's key would have them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

ACCOUNT = "000000000000"
REGION = "us-east-1"


def root_statement(account: str) -> dict:
    """The account root statement of KMS's default key policy: IAM policies decide."""
    return {
        "Sid": "Enable IAM User Permissions",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{account}:root"},
        "Action": "kms:*",
        "Resource": "*",
    }


ROOT_STATEMENT = root_statement(ACCOUNT)
LOGS_STATEMENT = {
    "Sid": "AllowCloudWatchLogs",
    "Effect": "Allow",
    "Principal": {"Service": f"logs.{REGION}.amazonaws.com"},
    "Action": ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
    "Resource": "*",
    "Condition": {
        "ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:{ACCOUNT}:*"}
    },
}


def create_key(
    aws: Callable[[str], Any], *statements: dict, description: str = "sfn-patterns test"
) -> str:
    """A new key's ARN, its policy made of ``statements``."""
    policy = {"Version": "2012-10-17", "Statement": list(statements)}
    created = aws("kms").create_key(Description=description, Policy=json.dumps(policy))
    return created["KeyMetadata"]["Arn"]
