"""A Redshift Serverless workgroup's id and ARN, as the emulated Data API knows them.

On AWS a workgroup has a generated id (a UUID) besides its name, and its ARN ends in
that id (``arn:P:redshift-serverless:REGION:ACCOUNT:workgroup/ID``): IAM authorizes
``redshift-data:ExecuteStatement`` and ``redshift-serverless:GetCredentials`` on it,
and the Data API's "Redshift Data Statement Status Change" events name it. A policy
written with the workgroup's name in the ARN matches nothing.

LocalStack has no Redshift Serverless, so a workgroup exists here as soon as a
statement names it, and its id is derived from (account, region, name) with uuid5:
the same in every run and every LocalStack. A test, example or benchmark passes that
id where a real deployment passes the one ``aws redshift-serverless get-workgroup``
shows (the examples' ``redshift_workgroup_id``): :func:`workgroup_variables`.
"""

from __future__ import annotations

import uuid

# LocalStack's default account (the ``test`` access key) and the harness's region.
DEFAULT_ACCOUNT = "000000000000"
DEFAULT_REGION = "us-east-1"
# Fixed, so that ids do not change between runs (uuid5 of this namespace and the key).
NAMESPACE = uuid.UUID("5f0c6a52-6a0e-4f5e-9d53-6b1a2b7c9e10")


def partition_of(region: str) -> str:
    """The partition a region belongs to."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def workgroup_id(name: str, account: str = DEFAULT_ACCOUNT, region: str = DEFAULT_REGION) -> str:
    """The id of the workgroup ``name`` in ``account`` and ``region`` (a UUID, as on AWS)."""
    return str(uuid.uuid5(NAMESPACE, f"{account}/{region}/{name}"))


def workgroup_arn(name: str, account: str = DEFAULT_ACCOUNT, region: str = DEFAULT_REGION) -> str:
    """The workgroup's ARN, ending in its id (never its name)."""
    return (
        f"arn:{partition_of(region)}:redshift-serverless:{region}:{account}:"
        f"workgroup/{workgroup_id(name, account, region)}"
    )


def workgroup_variables(
    name: str, account: str = DEFAULT_ACCOUNT, region: str = DEFAULT_REGION
) -> dict[str, str]:
    """The examples' ``redshift_workgroup_name`` and ``redshift_workgroup_id`` for ``name``."""
    return {
        "redshift_workgroup_name": name,
        "redshift_workgroup_id": workgroup_id(name, account, region),
    }


__all__ = [
    "DEFAULT_ACCOUNT",
    "DEFAULT_REGION",
    "partition_of",
    "workgroup_arn",
    "workgroup_id",
    "workgroup_variables",
]
