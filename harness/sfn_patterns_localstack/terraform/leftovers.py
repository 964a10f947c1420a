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


class Lookup:
    """One account's listings during one leftover check, each listed once.

    Why: a check asks "is this one still there?" for every resource of the state, and
    the answer comes from a list operation (every page). Listing per resource made a
    destroy's check quadratic: 11 roles of the job-poller example were 11 full
    ListRoles, 41 alarms 41 DescribeAlarms, each with a new client, in a LocalStack
    that holds other tests' resources too; it was a fifth of a test worker's CPU on
    tests/job_poller/test_example.py (py-spy). Nothing changes while the check runs
    (the destroy has returned), so one listing per operation and arguments answers
    every resource of its kind.
    """

    def __init__(self, aws: ClientFactory) -> None:
        self._aws = aws
        self._clients: dict[str, Any] = {}
        self._listed: dict[tuple, frozenset] = {}

    def client(self, service: str) -> Any:
        """The service's client, made once."""
        if service not in self._clients:
            self._clients[service] = self._aws(service)
        return self._clients[service]

    def names(
        self, service: str, operation: str, key: str, field: str | None = None, **kwargs: Any
    ) -> frozenset:
        """``field`` of every item of a list operation (the item itself if None), all pages.

        Operations without a boto3 paginator (EventBridge's) page by ``NextToken``.
        """
        memo = (service, operation, key, field, tuple(sorted(kwargs.items())))
        if memo not in self._listed:
            client = self.client(service)
            if client.can_paginate(operation):
                items = _pages(client, operation, key, **kwargs)
            else:
                items = _manual_pages(
                    getattr(client, operation), key, "NextToken", "NextToken", **kwargs
                )
            self._listed[memo] = frozenset(i if field is None else i[field] for i in items)
        return self._listed[memo]


# Each checker: (lookup, resource values) -> True when the resource still exists.
def _role(aws: Lookup, v: dict) -> bool:
    return v["name"] in aws.names("iam", "list_roles", "Roles", "RoleName")


def _managed_policy(aws: Lookup, v: dict) -> bool:
    """A customer managed policy (a permissions boundary, for one), by its ARN."""
    return v["arn"] in aws.names("iam", "list_policies", "Policies", "Arn", Scope="Local")


def _role_policy(aws: Lookup, v: dict) -> bool:
    if not _role(aws, {"name": v["role"]}):
        return False
    return v["name"] in aws.names("iam", "list_role_policies", "PolicyNames", RoleName=v["role"])


def _function(aws: Lookup, v: dict) -> bool:
    return v["function_name"] in aws.names("lambda", "list_functions", "Functions", "FunctionName")


def _function_child(aws: Lookup, v: dict) -> bool:
    """A permission or invoke config lives and dies with its function."""
    name = v["function_name"]
    if ":function:" in name:  # an ARN, possibly with a qualifier
        name = name.split(":function:", 1)[1].split(":", 1)[0]
    return _function(aws, {"function_name": name})


def _log_group(aws: Lookup, v: dict) -> bool:
    return v["name"] in aws.names("logs", "describe_log_groups", "logGroups", "logGroupName")


def _rule(aws: Lookup, v: dict) -> bool:
    bus = v.get("event_bus_name") or "default"
    return v["name"] in aws.names("events", "list_rules", "Rules", "Name", EventBusName=bus)


def _target(aws: Lookup, v: dict) -> bool:
    if not _rule(aws, {"name": v["rule"], "event_bus_name": v.get("event_bus_name")}):
        return False
    bus = v.get("event_bus_name") or "default"
    targets = aws.names(
        "events", "list_targets_by_rule", "Targets", "Id", Rule=v["rule"], EventBusName=bus
    )
    return v["target_id"] in targets


def _table(aws: Lookup, v: dict) -> bool:
    return v["name"] in aws.names("dynamodb", "list_tables", "TableNames")


def _table_child(aws: Lookup, v: dict) -> bool:
    """A table item lives and dies with its table."""
    return _table(aws, {"name": v["table_name"]})


def _state_machine(aws: Lookup, v: dict) -> bool:
    machines = aws.names("stepfunctions", "list_state_machines", "stateMachines", "stateMachineArn")
    return v["arn"] in machines


def _queue(aws: Lookup, v: dict) -> bool:
    urls = aws.names("sqs", "list_queues", "QueueUrls")
    return v["name"] in {url.rsplit("/", 1)[-1] for url in urls}


def _bucket(aws: Lookup, v: dict) -> bool:
    return v.get("bucket") in aws.names("s3", "list_buckets", "Buckets", "Name")


def _object(aws: Lookup, v: dict) -> bool:
    if not _bucket(aws, v):
        return False
    listed = aws.names("s3", "list_objects_v2", "Contents", "Key", Bucket=v["bucket"])
    return v["key"] in listed


def _key(aws: Lookup, v: dict) -> bool:
    if v["key_id"] not in aws.names("kms", "list_keys", "Keys", "KeyId"):
        return False
    state = aws.client("kms").describe_key(KeyId=v["key_id"])["KeyMetadata"]["KeyState"]
    return state not in {"PendingDeletion", "PendingReplicaDeletion"}


def _alias(aws: Lookup, v: dict) -> bool:
    return v["name"] in aws.names("kms", "list_aliases", "Aliases", "AliasName")


def _schedule(aws: Lookup, v: dict) -> bool:
    group = v.get("group_name") or "default"
    schedules = aws.names("scheduler", "list_schedules", "Schedules", "Name", GroupName=group)
    return v["name"] in schedules


def _alarm(aws: Lookup, v: dict) -> bool:
    both = {"AlarmTypes": ("MetricAlarm", "CompositeAlarm")}
    metric = aws.names("cloudwatch", "describe_alarms", "MetricAlarms", "AlarmName", **both)
    composite = aws.names("cloudwatch", "describe_alarms", "CompositeAlarms", "AlarmName", **both)
    return v["alarm_name"] in metric | composite


def _invocation(aws: Lookup, v: dict) -> bool:
    """A Lambda invocation leaves nothing: it is a call, not a resource.

    Its function is checked as ``aws_lambda_function``.
    """
    return False


def _topic(aws: Lookup, v: dict) -> bool:
    return v["arn"] in aws.names("sns", "list_topics", "Topics", "TopicArn")


def _dashboard(aws: Lookup, v: dict) -> bool:
    names = aws.names("cloudwatch", "list_dashboards", "DashboardEntries", "DashboardName")
    return v["dashboard_name"] in names


def _state_only(aws: Lookup, v: dict) -> bool:
    """A resource of Terraform's state only (``terraform_data``): none can be left behind.

    Nothing of it is in the account.
    """
    return False


CHECKERS: dict[str, Callable[[Lookup, dict], bool]] = {
    "terraform_data": _state_only,
    "aws_iam_role": _role,
    "aws_iam_role_policy": _role_policy,
    "aws_iam_policy": _managed_policy,
    "aws_lambda_function": _function,
    "aws_lambda_permission": _function_child,
    "aws_lambda_function_event_invoke_config": _function_child,
    "aws_lambda_invocation": _invocation,
    "aws_cloudwatch_log_group": _log_group,
    "aws_cloudwatch_event_rule": _rule,
    "aws_cloudwatch_event_target": _target,
    "aws_dynamodb_table": _table,
    "aws_dynamodb_table_item": _table_child,
    "aws_sfn_state_machine": _state_machine,
    "aws_sqs_queue": _queue,
    "aws_sns_topic": _topic,
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
    lookups: dict[str | None, Lookup] = {}
    for resource in resources:
        account = account_of(resource.values)
        if not (account and in_account):
            account = None
        if account not in lookups:
            lookups[account] = Lookup(in_account(account) if account else aws)
        try:
            exists = CHECKERS[resource.type](lookups[account], resource.values)
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
