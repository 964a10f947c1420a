"""After ``terraform destroy``: nothing the configuration created is left, of any type.

Terraform's state being empty proves only that Terraform forgot the resources. This
module asks the service instead: for every resource the state held before the destroy,
the checker for its type lists what exists (paginated, every page) and reports the
resource if it is still there. A type without a checker is an error, so a module that
starts creating a new kind of resource cannot slip past the check.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

ClientFactory = Callable[..., Any]


@dataclass(frozen=True)
class Created:
    """One managed resource of the state: its type, address and attribute values."""

    type: str
    address: str
    values: dict[str, Any]


def created_resources(state: dict[str, Any]) -> list[Created]:
    """Every managed resource instance of a state file (``terraform.tfstate``), all modules.

    Read from the file rather than ``terraform show -json``: show starts the AWS
    provider to load its schema, a second or two of CPU per destroy for the same facts.
    """
    found: list[Created] = []
    for resource in state.get("resources", []):
        if resource.get("mode") != "managed":
            continue
        base = ".".join(
            part for part in (resource.get("module"), resource["type"], resource["name"]) if part
        )
        for instance in resource.get("instances", []):
            key = instance.get("index_key")
            suffix = "" if key is None else f"[{json.dumps(key)}]"
            found.append(Created(resource["type"], base + suffix, instance.get("attributes") or {}))
    return found


def _pages(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    """Every item of a list operation, through its paginator (all pages)."""
    for page in client.get_paginator(operation).paginate(**kwargs):
        yield from page.get(key, [])


def _manual_pages(
    call: Callable[..., dict], key: str, token_in: str, token_out: str, **kwargs: Any
) -> Iterator[Any]:
    """Every item of a list call without a boto3 paginator."""
    while True:
        page = call(**kwargs)
        yield from page.get(key, [])
        token = page.get(token_out)
        if not token:
            return
        kwargs[token_in] = token


def _missing(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code", "")
    return "NotFound" in code or code in {"NoSuchEntity", "NoSuchBucket", "NoSuchKey"}


# Each checker: (client factory, resource values) -> True when the resource still exists.
def _role(aws: ClientFactory, v: dict) -> bool:
    return v["name"] in {r["RoleName"] for r in _pages(aws("iam"), "list_roles", "Roles")}


def _role_policy(aws: ClientFactory, v: dict) -> bool:
    if not _role(aws, {"name": v["role"]}):
        return False
    names = _pages(aws("iam"), "list_role_policies", "PolicyNames", RoleName=v["role"])
    return v["name"] in set(names)


def _function(aws: ClientFactory, v: dict) -> bool:
    names = {f["FunctionName"] for f in _pages(aws("lambda"), "list_functions", "Functions")}
    return v["function_name"] in names


def _function_child(aws: ClientFactory, v: dict) -> bool:
    """A permission or invoke config lives and dies with its function."""
    name = v["function_name"]
    if ":function:" in name:  # an ARN, possibly with a qualifier
        name = name.split(":function:", 1)[1].split(":", 1)[0]
    return _function(aws, {"function_name": name})


def _log_group(aws: ClientFactory, v: dict) -> bool:
    groups = _pages(aws("logs"), "describe_log_groups", "logGroups", logGroupNamePrefix=v["name"])
    return v["name"] in {g["logGroupName"] for g in groups}


def _rule(aws: ClientFactory, v: dict) -> bool:
    bus = v.get("event_bus_name") or "default"
    rules = _manual_pages(
        aws("events").list_rules, "Rules", "NextToken", "NextToken", EventBusName=bus
    )
    return v["name"] in {r["Name"] for r in rules}


def _target(aws: ClientFactory, v: dict) -> bool:
    if not _rule(aws, {"name": v["rule"], "event_bus_name": v.get("event_bus_name")}):
        return False
    targets = _manual_pages(
        aws("events").list_targets_by_rule, "Targets", "NextToken", "NextToken", Rule=v["rule"]
    )
    return v["target_id"] in {t["Id"] for t in targets}


def _table(aws: ClientFactory, v: dict) -> bool:
    return v["name"] in set(_pages(aws("dynamodb"), "list_tables", "TableNames"))


def _table_child(aws: ClientFactory, v: dict) -> bool:
    """A table item lives and dies with its table."""
    return _table(aws, {"name": v["table_name"]})


def _state_machine(aws: ClientFactory, v: dict) -> bool:
    machines = _pages(aws("stepfunctions"), "list_state_machines", "stateMachines")
    return v["arn"] in {m["stateMachineArn"] for m in machines}


def _queue(aws: ClientFactory, v: dict) -> bool:
    urls = _pages(aws("sqs"), "list_queues", "QueueUrls")
    return v["name"] in {url.rsplit("/", 1)[-1] for url in urls}


def _bucket(aws: ClientFactory, v: dict) -> bool:
    names = {b["Name"] for b in _pages(aws("s3"), "list_buckets", "Buckets")}
    return v.get("bucket") in names


def _object(aws: ClientFactory, v: dict) -> bool:
    if not _bucket(aws, v):
        return False
    listed = _pages(aws("s3"), "list_objects_v2", "Contents", Bucket=v["bucket"], Prefix=v["key"])
    return v["key"] in {o["Key"] for o in listed}


def _key(aws: ClientFactory, v: dict) -> bool:
    kms = aws("kms")
    if v["key_id"] not in {k["KeyId"] for k in _pages(kms, "list_keys", "Keys")}:
        return False
    state = kms.describe_key(KeyId=v["key_id"])["KeyMetadata"]["KeyState"]
    return state not in {"PendingDeletion", "PendingReplicaDeletion"}


def _alias(aws: ClientFactory, v: dict) -> bool:
    return v["name"] in {a["AliasName"] for a in _pages(aws("kms"), "list_aliases", "Aliases")}


def _schedule(aws: ClientFactory, v: dict) -> bool:
    group = v.get("group_name") or "default"
    schedules = _pages(aws("scheduler"), "list_schedules", "Schedules", GroupName=group)
    return v["name"] in {s["Name"] for s in schedules}


def _alarm(aws: ClientFactory, v: dict) -> bool:
    found = aws("cloudwatch").describe_alarms(AlarmNames=[v["alarm_name"]])
    return bool(found["MetricAlarms"] or found["CompositeAlarms"])


def _dashboard(aws: ClientFactory, v: dict) -> bool:
    names = _pages(aws("cloudwatch"), "list_dashboards", "DashboardEntries")
    return v["dashboard_name"] in {d["DashboardName"] for d in names}


CHECKERS: dict[str, Callable[[ClientFactory, dict], bool]] = {
    "aws_iam_role": _role,
    "aws_iam_role_policy": _role_policy,
    "aws_lambda_function": _function,
    "aws_lambda_permission": _function_child,
    "aws_lambda_function_event_invoke_config": _function_child,
    "aws_cloudwatch_log_group": _log_group,
    "aws_cloudwatch_event_rule": _rule,
    "aws_cloudwatch_event_target": _target,
    "aws_dynamodb_table": _table,
    "aws_dynamodb_table_item": _table_child,
    "aws_sfn_state_machine": _state_machine,
    "aws_sqs_queue": _queue,
    # The bucket's configuration resources and objects go with the bucket.
    "aws_s3_bucket": _bucket,
    "aws_s3_bucket_lifecycle_configuration": _bucket,
    "aws_s3_bucket_public_access_block": _bucket,
    "aws_s3_bucket_server_side_encryption_configuration": _bucket,
    "aws_s3_bucket_versioning": _bucket,
    "aws_s3_bucket_policy": _bucket,
    "aws_s3_object": _object,
    "aws_kms_key": _key,
    "aws_kms_alias": _alias,
    "aws_scheduler_schedule": _schedule,
    "aws_cloudwatch_metric_alarm": _alarm,
    "aws_cloudwatch_dashboard": _dashboard,
}


class UncheckedTypeError(KeyError):
    """A resource type has no leftover checker: add one to CHECKERS."""


def account_of(values: dict[str, Any]) -> str | None:
    """The account a resource lives in, from its ARN attribute (None: unknown/default)."""
    arn = values.get("arn") or ""
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 and parts[4].isdigit() else None


def still_there(
    aws: ClientFactory,
    resources: list[Created],
    in_account: Callable[[str], ClientFactory] | None = None,
) -> list[str]:
    """Addresses of the resources that still exist (empty after a clean destroy).

    ``in_account(account_id)`` gives the clients of another account: a resource whose
    ARN names one is looked up there (a configuration with provider aliases in several
    accounts).
    """
    unchecked = sorted({r.type for r in resources} - set(CHECKERS))
    if unchecked:
        raise UncheckedTypeError(
            f"no leftover check for {', '.join(unchecked)}: add one to "
            "sfn_patterns_localstack.terraform.leftovers.CHECKERS"
        )
    left = []
    for resource in resources:
        account = account_of(resource.values)
        clients = in_account(account) if account and in_account else aws
        try:
            exists = CHECKERS[resource.type](clients, resource.values)
        except ClientError as error:
            if not _missing(error):
                raise
            exists = False
        if exists:
            left.append(f"{resource.address} ({resource.type})")
    return left


def leftovers(aws: ClientFactory, prefix: str) -> dict[str, list[str]]:
    """Resources whose names start with ``prefix``, by kind, all pages: empty when clean.

    A second, name-based net next to the state-based check of ``Workspace.destroy``: it
    also catches what a test or a handler created outside Terraform with the prefix.
    """
    found = {
        "lambda": [f["FunctionName"] for f in _pages(aws("lambda"), "list_functions", "Functions")],
        "stepfunctions": [
            m["name"] for m in _pages(aws("stepfunctions"), "list_state_machines", "stateMachines")
        ],
        "dynamodb": list(_pages(aws("dynamodb"), "list_tables", "TableNames")),
        "events": [
            r["Name"]
            for r in _manual_pages(aws("events").list_rules, "Rules", "NextToken", "NextToken")
        ],
        "iam": [r["RoleName"] for r in _pages(aws("iam"), "list_roles", "Roles")],
        "sqs": [u.rsplit("/", 1)[-1] for u in _pages(aws("sqs"), "list_queues", "QueueUrls")],
        "s3": [b["Name"] for b in _pages(aws("s3"), "list_buckets", "Buckets")],
        "logs": [
            g["logGroupName"] for g in _pages(aws("logs"), "describe_log_groups", "logGroups")
        ],
        "cloudwatch": [
            a["AlarmName"] for a in _pages(aws("cloudwatch"), "describe_alarms", "MetricAlarms")
        ]
        + [
            d["DashboardName"]
            for d in _pages(aws("cloudwatch"), "list_dashboards", "DashboardEntries")
        ],
    }
    return {
        kind: hits
        for kind, names in found.items()
        if (hits := [n for n in names if n.startswith(prefix) or f"/{prefix}" in n])
    }
