"""The IAM permissions a state machine's role needs for the Tasks of its definition.

Why: LocalStack never evaluates a state machine role's policy, and some calls an
integration makes on AWS are never made on LocalStack at all (``.sync``'s managed
EventBridge rule, the Data API's credential lookup). What AWS requires for each
integration is documented ("IAM policies for integrated services" and the
per-service ``*-iam.html`` pages of the Step Functions guide); this module derives
that list from a definition, so a static check can compare it with the role.

``required_permissions(definition, context)`` is pure: a definition (dict) in, one
``Requirement`` per (Task, action, resource) out, each with the AWS page that
requires it. Map (``Iterator``/``ItemProcessor``) and Parallel (``Branches``) states
are recursed. Tasks with ``Credentials`` act through another role: their
requirements carry ``role_arn``, and the machine's own role needs ``sts:AssumeRole``
on it.

A requirement's ``resource`` is an ARN or a pattern, and its ``scope`` says how the
role must allow it:

- ``"all"``: every resource the pattern matches. A static ARN; ``*`` for actions
  without resource-level permissions (``redshift-data:DescribeStatement``); the
  executions of a ``.sync`` child, ``arn:P:states:R:A:execution:CHILD:*`` (any name).
- ``"any"``: the definition cannot name the resource, only its kind, so at least one
  grant within the pattern is required. This is the case for a value computed at run
  time (JSONPath ``"Key.$"`` or a JSONata ``"{% ... %}"`` value): the fixed part is
  kept and the computed part becomes ``*``, so ``ExecutionArn.$`` of an
  ``aws-sdk:sfn:describeExecution`` requires DescribeExecution on some
  ``arn:P:states:*:*:execution:*`` (a grant on the state machine's ARN instead is
  caught; whether the run-time value falls inside the grant is for the run-time
  evaluator). It is also the case for a resource named without its ARN's ID (a
  Redshift Serverless workgroup by name: ``workgroup/*``) and, without a ``Context``,
  for names whose region and account are unknown. The ``note`` says which.

An integration this module does not know raises ``UnmappedIntegration``: a new
integration must be mapped here (with its AWS page), never passed silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

_GUIDE = "https://docs.aws.amazon.com/step-functions/latest/dg/"
_AUTHZ = "https://docs.aws.amazon.com/service-authorization/latest/reference/"
DOC = {
    "lambda": _GUIDE + "lambda-iam.html",
    "states": _GUIDE + "stepfunctions-iam.html",
    "dynamodb": _GUIDE + "dynamo-iam.html",
    "events": _GUIDE + "eventbridge-iam.html",
    "sqs": _GUIDE + "sqs-iam.html",
    "sns": _GUIDE + "sns-iam.html",
    "aws-sdk": _GUIDE + "supported-services-awssdk.html",
    "credentials": _GUIDE + "concepts-access-cross-acct-resources.html",
    "distributed-map": _GUIDE + "iam-policies-eg-dist-map.html",
    "redshift-data": "https://docs.aws.amazon.com/redshift/latest/mgmt/data-api-access.html",
    "authz-dynamodb": _AUTHZ + "list_amazondynamodb.html",
    "authz-states": _AUTHZ + "list_awsstepfunctions.html",
    "authz-redshift-data": _AUTHZ + "list_amazonredshiftdataapi.html",
}

# The managed rule through which `.sync` integrations of Step Functions learn that a
# child execution ended (stepfunctions-iam.html).
SYNC_RULE = "StepFunctionsGetEventsForStepFunctionsExecutionRule"


class UnmappedIntegration(ValueError):
    """A Task whose integration has no mapping here: add it, with its AWS page."""


@dataclass(frozen=True)
class Context:
    """Where the state machine runs: names without an ARN resolve here.

    Without a context, the region and account of such names are ``*`` (a pattern).
    """

    partition: str
    region: str
    account: str

    @classmethod
    def from_arn(cls, arn: str) -> Context:
        """The partition, region and account of any ARN (the state machine's)."""
        parts = arn.split(":", 5)
        return cls(partition=parts[1], region=parts[3], account=parts[4])


@dataclass(frozen=True)
class Requirement:
    """One permission a Task needs: ``action`` on ``resource`` (an ARN or a pattern).

    ``scope`` is ``"all"`` (every resource the pattern matches must be allowed) or
    ``"any"`` (one grant within it suffices: see the module docstring); ``note`` says
    why a resource is a pattern. ``role_arn`` is set when the Task acts through ASL
    ``Credentials`` (that role needs the permission, not the machine's).
    """

    state: str
    action: str
    resource: str
    doc: str
    role_arn: str | None = None
    note: str = ""
    scope: str = "all"


@dataclass(frozen=True)
class _Task:
    """What a resolver needs to know about one Task state."""

    path: str
    resource: str
    partition: str
    params: Mapping[str, Any]
    context: Context | None
    cross_account: bool = False  # ASL Credentials: the Task acts through another role

    @property
    def region(self) -> str:
        return self.context.region if self.context else "*"

    @property
    def account(self) -> str:
        return self.context.account if self.context else "*"

    def req(self, action: str, resource: str, doc: str, note: str = "") -> Requirement:
        """A requirement of this Task: ``"any"`` scope when ``note`` says why it is a pattern."""
        scope = "any" if note and resource != "*" else "all"
        if ":*:*:" in resource and self.context is None and not note:
            note, scope = "no context: region and account unknown", "any"
        return Requirement(self.path, action, resource, doc, note=note, scope=scope)


def required_permissions(
    definition: Mapping[str, Any], context: Context | None = None
) -> list[Requirement]:
    """Every permission the Tasks of ``definition`` need, in state order, deduplicated."""
    seen: set[Requirement] = set()
    out: list[Requirement] = []
    for requirement in _states(definition, "", context):
        if requirement not in seen:
            seen.add(requirement)
            out.append(requirement)
    return out


def _states(
    machine: Mapping[str, Any], prefix: str, context: Context | None
) -> Iterator[Requirement]:
    for name, state in machine.get("States", {}).items():
        path = f"{prefix}{name}"
        kind = state.get("Type")
        if kind == "Task":
            yield from _task(path, state, context)
        elif kind == "Parallel":
            for index, branch in enumerate(state.get("Branches", [])):
                yield from _states(branch, f"{path}/branch {index}/", context)
        elif kind == "Map":
            processor = state.get("ItemProcessor") or state.get("Iterator") or {}
            if processor.get("ProcessorConfig", {}).get("Mode") == "DISTRIBUTED":
                yield from _distributed_map(path, state, context)
            yield from _states(processor, f"{path}/", context)


def _distributed_map(
    path: str, state: Mapping[str, Any], context: Context | None
) -> Iterator[Requirement]:
    """A distributed Map starts child executions of the machine itself."""
    if "ItemReader" in state or "ResultWriter" in state:
        raise UnmappedIntegration(f"{path}: distributed Map ItemReader/ResultWriter is not mapped")
    # The machine's own name is not in its definition: some machine and its executions.
    base = (
        "arn:*:states:*:*"
        if context is None
        else (f"arn:{context.partition}:states:{context.region}:{context.account}")
    )
    note, doc = "the machine's own ARN (not in its definition)", DOC["distributed-map"]
    yield Requirement(
        path, "states:StartExecution", f"{base}:stateMachine:*", doc, note=note, scope="any"
    )
    for action in ("states:DescribeExecution", "states:StopExecution"):
        yield Requirement(path, action, f"{base}:execution:*", doc, note=note, scope="any")


def _task(path: str, state: Mapping[str, Any], context: Context | None) -> Iterator[Requirement]:
    resource = state.get("Resource", "")
    if not isinstance(resource, str) or not resource.startswith("arn:"):
        raise UnmappedIntegration(f"{path}: Resource {resource!r} is not an ARN")
    partition = resource.split(":")[1]
    params = state.get("Parameters") or state.get("Arguments") or {}
    if not isinstance(params, Mapping):  # JSONata: the whole argument object computed
        params = {}
    credentials = state.get("Credentials")
    task = _Task(path, resource, partition, params, context, cross_account=bool(credentials))
    requirements = list(_resolve(task))
    if not credentials:
        yield from requirements
        return
    role = _static(credentials, "RoleArn")
    if role is None:
        role, note = f"arn:{partition}:iam::*:role/*", "Credentials.RoleArn computed at run time"
    else:
        note = ""
    scope = "any" if note else "all"
    yield Requirement(path, "sts:AssumeRole", role, DOC["credentials"], note=note, scope=scope)
    for requirement in requirements:
        yield replace(requirement, role_arn=role)


def _static(params: Mapping[str, Any], key: str) -> Any:
    """The static value of ``key``, or None when absent or computed at run time."""
    value = params.get(key)
    if isinstance(value, str) and value.startswith("{%") and value.endswith("%}"):
        return None  # JSONata expression
    return value


def _computed(params: Mapping[str, Any], key: str) -> bool:
    value = params.get(key)
    jsonata = isinstance(value, str) and value.startswith("{%") and value.endswith("%}")
    return f"{key}.$" in params or jsonata


# --- dispatch ------------------------------------------------------------------------


def _resolve(task: _Task) -> Iterator[Requirement]:
    fields = task.resource.split(":", 5)
    service, rest = fields[2], fields[5] if len(fields) > 5 else ""
    if service == "lambda":  # the function's own ARN as Resource (legacy form)
        yield task.req("lambda:InvokeFunction", task.resource, DOC["lambda"])
        return
    if service != "states":
        raise UnmappedIntegration(f"{task.path}: Resource {task.resource} is not mapped")
    if fields[3] or fields[4]:  # arn:P:states:REGION:ACCOUNT:activity:NAME
        if rest.startswith("activity:"):
            return  # the worker polls the activity; the machine's role calls nothing
        raise UnmappedIntegration(f"{task.path}: Resource {task.resource} is not mapped")
    integration, _, pattern = rest.partition(".")
    if pattern not in ("", "sync", "sync:2", "waitForTaskToken"):
        raise UnmappedIntegration(f"{task.path}: integration pattern .{pattern} is not mapped")
    parts = integration.split(":")
    if parts[0] == "aws-sdk" and len(parts) == 3:
        yield from _aws_sdk(task, parts[1], parts[2])
        return
    if len(parts) != 2 or (parts[0], parts[1]) not in _OPTIMIZED:
        raise UnmappedIntegration(f"{task.path}: integration {integration} is not mapped")
    yield from _OPTIMIZED[(parts[0], parts[1])](task, pattern)


# --- Lambda --------------------------------------------------------------------------


def _lambda_invoke(task: _Task, _pattern: str = "") -> Iterator[Requirement]:
    """lambda-iam.html: InvokeFunction on the function, qualified when a version/alias is."""
    if _computed(task.params, "FunctionName"):
        yield task.req(
            "lambda:InvokeFunction",
            f"arn:{task.partition}:lambda:*:*:function:*",
            DOC["lambda"],
            "FunctionName computed at run time",
        )
        return
    name = task.params.get("FunctionName")
    if not isinstance(name, str) or not name:
        raise UnmappedIntegration(f"{task.path}: lambda:invoke without FunctionName")
    if name.startswith("arn:"):
        fields = name.split(":")
        region, account, function = fields[3], fields[4], fields[6:]
    elif re.match(r"^\d{12}:function:", name):
        fields = name.split(":")
        region, account, function = task.region, fields[0], fields[2:]
    else:
        region, account, function = task.region, task.account, name.split(":")
    qualifier = _static(task.params, "Qualifier")
    if _computed(task.params, "Qualifier"):
        function = [function[0], "*"]
    elif qualifier:
        function = [function[0], str(qualifier)]
    arn = f"arn:{task.partition}:lambda:{region}:{account}:function:{':'.join(function)}"
    yield task.req("lambda:InvokeFunction", arn, DOC["lambda"])


# --- Step Functions ------------------------------------------------------------------


def _machine_arn(task: _Task, key: str = "StateMachineArn") -> tuple[str, str]:
    if _computed(task.params, key):
        return f"arn:{task.partition}:states:*:*:stateMachine:*", f"{key} computed at run time"
    arn = task.params.get(key)
    if not isinstance(arn, str) or not arn.startswith("arn:"):
        raise UnmappedIntegration(f"{task.path}: {key} is not an ARN: {arn!r}")
    return arn, ""


def _executions_of(machine_arn: str) -> str:
    """arn:P:states:R:A:stateMachine:NAME -> arn:P:states:R:A:execution:NAME:*."""
    head, _, name = machine_arn.rpartition(":stateMachine:")
    return f"{head}:execution:{name}:*"


def _states_start(task: _Task, pattern: str) -> Iterator[Requirement]:
    """stepfunctions-iam.html: StartExecution; .sync also follows and stops, through a rule."""
    machine, note = _machine_arn(task)
    yield task.req("states:StartExecution", machine, DOC["states"], note)
    if pattern not in ("sync", "sync:2"):
        return
    for action in ("states:DescribeExecution", "states:StopExecution"):
        yield task.req(action, _executions_of(machine), DOC["states"], note)
    if task.cross_account:
        # Across accounts .sync polls DescribeExecution instead of using the rule
        # (concepts-access-cross-acct-resources.html).
        return
    rule = f"arn:{task.partition}:events:{task.region}:{task.account}:rule/{SYNC_RULE}"
    for action in ("events:PutTargets", "events:PutRule", "events:DescribeRule"):
        yield task.req(action, rule, DOC["states"])


def _sfn_sdk(task: _Task, operation: str) -> Iterator[Requirement]:
    doc = DOC["authz-states"]
    action = f"states:{_action_name(operation)}"
    if operation in (
        "startExecution",
        "startSyncExecution",
        "listExecutions",
        "describeStateMachine",
    ):
        machine, note = _machine_arn(task)
        yield task.req(action, machine, doc, note)
    elif operation in ("describeExecution", "stopExecution", "getExecutionHistory"):
        if _computed(task.params, "ExecutionArn"):
            arn = f"arn:{task.partition}:states:*:*:execution:*"
            yield task.req(action, arn, doc, "ExecutionArn computed at run time")
        else:
            yield task.req(action, str(task.params.get("ExecutionArn")), doc)
    elif operation in ("sendTaskSuccess", "sendTaskFailure", "sendTaskHeartbeat"):
        yield task.req(action, "*", doc, "no resource-level permission")
    else:
        raise UnmappedIntegration(f"{task.path}: aws-sdk:sfn:{operation} is not mapped")


# --- DynamoDB ------------------------------------------------------------------------


def _table_arn(task: _Task, params: Mapping[str, Any]) -> tuple[str, str]:
    if _computed(params, "TableName"):
        table = f"arn:{task.partition}:dynamodb:{task.region}:{task.account}:table/*"
        return table, "TableName computed at run time"
    name = params.get("TableName")
    if not isinstance(name, str) or not name:
        raise UnmappedIntegration(f"{task.path}: DynamoDB call without TableName")
    if name.startswith("arn:"):
        return name, ""
    return f"arn:{task.partition}:dynamodb:{task.region}:{task.account}:table/{name}", ""


_DYNAMODB_ITEM = ("getItem", "putItem", "updateItem", "deleteItem")
_TRANSACT_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


def _dynamodb(task: _Task, operation: str, doc: str) -> Iterator[Requirement]:
    """dynamo-iam.html: the call's own action on the table (an index for Query/Scan on one)."""
    if operation in _DYNAMODB_ITEM:
        table, note = _table_arn(task, task.params)
        yield task.req(f"dynamodb:{_action_name(operation)}", table, doc, note)
    elif operation in ("query", "scan"):
        table, note = _table_arn(task, task.params)
        if _computed(task.params, "IndexName"):
            table, note = f"{table}/index/*", "IndexName computed at run time"
        elif task.params.get("IndexName"):
            table = f"{table}/index/{task.params['IndexName']}"
        yield task.req(f"dynamodb:{_action_name(operation)}", table, doc, note)
    elif operation in ("transactWriteItems", "transactGetItems"):
        items = task.params.get("TransactItems")
        if not isinstance(items, list):
            raise UnmappedIntegration(f"{task.path}: {operation} with computed TransactItems")
        for item in items:
            for kind, body in item.items():
                table, note = _table_arn(task, body)
                yield task.req(f"dynamodb:{_TRANSACT_ACTIONS[kind]}", table, doc, note)
    elif operation in ("batchWriteItem", "batchGetItem"):
        tables = task.params.get("RequestItems")
        if not isinstance(tables, Mapping):
            raise UnmappedIntegration(f"{task.path}: {operation} with computed RequestItems")
        for name in tables:
            table, note = _table_arn(task, {"TableName": name})
            yield task.req(f"dynamodb:{_action_name(operation)}", table, doc, note)
    else:
        raise UnmappedIntegration(f"{task.path}: dynamodb:{operation} is not mapped")


# --- Redshift Data API ---------------------------------------------------------------


def _redshift_data(task: _Task, operation: str) -> Iterator[Requirement]:
    """data-api-access.html: the statement action on the target, plus the credential action.

    Serverless workgroup ARNs hold the workgroup's ID, not its name, so a workgroup
    named in the call is ``workgroup/*`` here.
    """
    doc, p = DOC["redshift-data"], task.params
    if operation in (
        "describeStatement",
        "cancelStatement",
        "getStatementResult",
        "getStatementResultV2",
        "listStatements",
    ):
        # No resource-level permissions (list_amazonredshiftdataapi.html).
        action = (
            "GetStatementResult" if operation == "getStatementResultV2" else _action_name(operation)
        )
        yield task.req(
            f"redshift-data:{action}",
            "*",
            DOC["authz-redshift-data"],
            "no resource-level permission",
        )
        return
    if operation not in ("executeStatement", "batchExecuteStatement"):
        raise UnmappedIntegration(f"{task.path}: aws-sdk:redshiftdata:{operation} is not mapped")
    base = f"{task.region}:{task.account}"
    if "WorkgroupName" in p or "WorkgroupName.$" in p:
        target = f"arn:{task.partition}:redshift-serverless:{base}:workgroup/*"
        note = "a workgroup's ARN holds its ID, not its name"
    elif _computed(p, "ClusterIdentifier"):
        target, note = (
            f"arn:{task.partition}:redshift:{base}:cluster:*",
            "ClusterIdentifier computed at run time",
        )
    elif p.get("ClusterIdentifier"):
        target, note = f"arn:{task.partition}:redshift:{base}:cluster:{p['ClusterIdentifier']}", ""
    else:
        raise UnmappedIntegration(
            f"{task.path}: {operation} names neither a workgroup nor a cluster"
        )
    yield task.req(f"redshift-data:{_action_name(operation)}", target, doc, note)
    if "SecretArn" in p or "SecretArn.$" in p:
        secret = "*" if _computed(p, "SecretArn") else str(p["SecretArn"])
        yield task.req("secretsmanager:GetSecretValue", secret, doc)
    elif "WorkgroupName" in p or "WorkgroupName.$" in p:
        yield task.req("redshift-serverless:GetCredentials", target, doc, note)
    elif "DbUser" in p or "DbUser.$" in p:
        # Temporary credentials for the user, in the database the call names.
        cluster = target.rpartition(":cluster:")[2]
        for kind, key in (("dbuser", "DbUser"), ("dbname", "Database")):
            if key not in p and f"{key}.$" not in p:
                continue
            computed = _computed(p, key)
            name = "*" if computed else p[key]
            resource = f"arn:{task.partition}:redshift:{base}:{kind}:{cluster}/{name}"
            why = f"{key} computed at run time" if computed else ""
            yield task.req("redshift:GetClusterCredentials", resource, doc, why)
    else:
        cluster = target.rpartition(":cluster:")[2]
        database = p.get("Database", "*") if not _computed(p, "Database") else "*"
        resource = f"arn:{task.partition}:redshift:{base}:dbname:{cluster}/{database}"
        yield task.req("redshift:GetClusterCredentialsWithIAM", resource, doc)


# --- EventBridge, SQS, SNS -----------------------------------------------------------


def _put_events(task: _Task, doc: str) -> Iterator[Requirement]:
    """eventbridge-iam.html: PutEvents on each entry's bus (the default bus when unnamed)."""
    entries = task.params.get("Entries")
    if not isinstance(entries, list):
        bus = f"arn:{task.partition}:events:{task.region}:{task.account}:event-bus/*"
        yield task.req("events:PutEvents", bus, doc, "Entries computed at run time")
        return
    for entry in entries:
        if _computed(entry, "EventBusName"):
            bus = f"arn:{task.partition}:events:*:*:event-bus/*"
            yield task.req("events:PutEvents", bus, doc, "EventBusName computed at run time")
            continue
        name = entry.get("EventBusName") or "default"
        if not name.startswith("arn:"):
            name = f"arn:{task.partition}:events:{task.region}:{task.account}:event-bus/{name}"
        yield task.req("events:PutEvents", name, doc)


def _queue_arn(task: _Task) -> tuple[str, str]:
    if _computed(task.params, "QueueUrl"):
        return f"arn:{task.partition}:sqs:*:*:*", "QueueUrl computed at run time"
    url = urlparse(str(task.params.get("QueueUrl", "")))
    account, _, name = url.path.strip("/").partition("/")
    host = url.hostname or ""
    region = host.split(".")[1] if host.startswith("sqs.") else task.region
    if not name:
        raise UnmappedIntegration(f"{task.path}: QueueUrl {url.geturl()!r} is not a queue URL")
    return f"arn:{task.partition}:sqs:{region}:{account}:{name}", ""


def _sqs(task: _Task, operation: str, doc: str) -> Iterator[Requirement]:
    if operation != "sendMessage":
        raise UnmappedIntegration(f"{task.path}: sqs:{operation} is not mapped")
    queue, note = _queue_arn(task)
    yield task.req("sqs:SendMessage", queue, doc, note)


def _sns(task: _Task, operation: str, doc: str) -> Iterator[Requirement]:
    if operation != "publish":
        raise UnmappedIntegration(f"{task.path}: sns:{operation} is not mapped")
    if _computed(task.params, "TopicArn"):
        yield task.req(
            "sns:Publish", f"arn:{task.partition}:sns:*:*:*", doc, "TopicArn computed at run time"
        )
    else:
        yield task.req("sns:Publish", str(task.params.get("TopicArn")), doc)


# --- tables --------------------------------------------------------------------------


def _action_name(operation: str) -> str:
    """The IAM action name (PascalCase) of an SDK operation (camelCase)."""
    return operation[:1].upper() + operation[1:]


def _dynamodb_optimized(task: _Task, _pattern: str) -> Iterator[Requirement]:
    operation = task.resource.split(":")[6].partition(".")[0]
    yield from _dynamodb(task, operation, DOC["dynamodb"])


_OPTIMIZED = {
    ("lambda", "invoke"): _lambda_invoke,
    ("states", "startExecution"): _states_start,
    **{("dynamodb", operation): _dynamodb_optimized for operation in _DYNAMODB_ITEM},
    ("events", "putEvents"): lambda task, _p: _put_events(task, DOC["events"]),
    ("sqs", "sendMessage"): lambda task, _p: _sqs(task, "sendMessage", DOC["sqs"]),
    ("sns", "publish"): lambda task, _p: _sns(task, "publish", DOC["sns"]),
}


def _aws_sdk(task: _Task, service: str, operation: str) -> Iterator[Requirement]:
    """aws-sdk:SERVICE:OPERATION: the service's own action, with no scoping done for you."""
    if service == "sfn":
        yield from _sfn_sdk(task, operation)
    elif service == "dynamodb":
        yield from _dynamodb(task, operation, DOC["authz-dynamodb"])
    elif service == "redshiftdata":
        yield from _redshift_data(task, operation)
    elif service == "lambda" and operation == "invoke":
        yield from _lambda_invoke(task)
    elif service == "eventbridge" and operation == "putEvents":
        yield from _put_events(task, DOC["aws-sdk"])
    elif service == "sqs":
        yield from _sqs(task, operation, DOC["aws-sdk"])
    elif service == "sns":
        yield from _sns(task, operation, DOC["aws-sdk"])
    else:
        raise UnmappedIntegration(f"{task.path}: aws-sdk:{service}:{operation} is not mapped")
