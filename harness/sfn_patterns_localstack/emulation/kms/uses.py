"""Which KMS actions a service performs with a resource's key when a request reaches it.

A service that encrypts a resource with a customer managed key calls KMS itself while
serving the request: as the caller (``kms:ViaService`` names the service), as another
principal the resource names (a Lambda function's execution role), or as the service
principal (CloudWatch Logs). Each entry below is what AWS documents for that service,
with the page it comes from:

- **DynamoDB** (``DYNAMODB_DOC``): every item read or write decrypts the table key, as
  the caller: ``kms:Decrypt`` with encryption context ``aws:dynamodb:tableName``,
  ``aws:dynamodb:subscriberId`` ("Monitoring DynamoDB interaction with AWS KMS",
  Decrypt: "The user is the principal in your AWS account who is accessing the table").
- **SQS** (``SQS_DOC``): ``SendMessage``/``SendMessageBatch`` need
  ``kms:GenerateDataKey`` and ``kms:Decrypt`` ("Configure KMS permissions for
  producers"), ``ReceiveMessage`` ``kms:Decrypt`` ("... for consumers"), as the caller,
  with encryption context ``aws:sqs:arn`` (the queue ARN). A service delivering to the
  queue (EventBridge, SNS, S3 notifications) needs both from the key policy alone
  ("Configure KMS permissions for AWS services"; ``check.KeyChecker`` makes the use the
  service's when no role session sends).
- **S3** (``S3_DOC``): uploading an object encrypted with a KMS key needs
  ``kms:GenerateDataKey``, downloading it ``kms:Decrypt`` ("Permissions"), as the
  caller, with encryption context ``aws:s3:arn``: the object ARN, or the bucket ARN with
  an S3 Bucket Key ("Encryption context").
- **Lambda** (``LAMBDA_DOC``): configuring a customer managed key for environment
  variables needs ``kms:CreateGrant`` and ``kms:Encrypt`` ("Lambda uses your permissions
  to create a grant on the key"). At initialization Lambda decrypts them as the
  execution role through that grant, with encryption context ``aws:lambda:FunctionArn``;
  the grant names the role as it was when the key was configured, so a role deleted and
  re-created since is refused (KMSAccessDeniedException) unless the key policy and its
  identity policies allow ``kms:Decrypt`` on their own.
- **Step Functions** (``STATES_DOC``, ``STATES_API``): the execution history and the
  definition are encrypted with the state machine's key. The execution role needs
  ``kms:Decrypt`` and ``kms:GenerateDataKey`` with encryption context
  ``aws:states:stateMachineArn`` to run it (decided at ``StartExecution`` and
  ``StartSyncExecution``); callers of ``DescribeStateMachine``,
  ``DescribeStateMachineForExecution``, ``DescribeExecution`` and ``StartSyncExecution``
  need ``kms:Decrypt`` unless they ask for ``includedData=METADATA_ONLY`` (the API
  reference's ``includedData``), and reading the encrypted history
  (``GetExecutionHistory``) needs it too.
- **CloudWatch Logs** (``LOGS_DOC``): the service principal ``logs.REGION.amazonaws.com``
  uses the key, so only the key policy decides ("Step 2: Set permissions on the CMK"),
  with encryption context ``aws:logs:arn`` (the log group ARN). Associating a key with
  a group (``CreateLogGroup`` with ``kmsKeyId``, ``AssociateKmsKey``) and ingesting
  (``PutLogEvents``) are decided on ``kms:GenerateDataKey``, reading
  (``GetLogEvents``, ``FilterLogEvents``) on ``kms:Decrypt``: AWS lists the action
  families the key policy must grant (``kms:Encrypt*``, ``kms:Decrypt*``,
  ``kms:ReEncrypt*``, ``kms:GenerateDataKey*``, ``kms:Describe*``), not which call
  uses which.

AWS owned keys (no key configured) and AWS managed keys (``alias/aws/*``) are not
decided. Pure: ``key_uses`` is given a ``Resources`` that answers which key a resource
has; ``stores.py`` reads LocalStack's stores, the unit tests pass a fake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sfn_patterns_localstack.emulation.iam.actions import Scope, function_arn, queue_arn

DYNAMODB_DOC = "https://docs.aws.amazon.com/kms/latest/developerguide/services-dynamodb.html"
SQS_DOC = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
    "sqs-key-management.html"
)
S3_DOC = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html"
LAMBDA_DOC = "https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars-encryption.html"
STATES_DOC = "https://docs.aws.amazon.com/step-functions/latest/dg/encryption-at-rest.html"
STATES_API = (
    "https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html"
)
LOGS_DOC = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html"

# Who the service acts as when it calls KMS.
CALLER = "caller"  # the principal that made the request (kms:ViaService is set)
ROLE = "role"  # a role the resource names: a function's or a state machine's role
SERVICE = "service"  # the service principal itself


@dataclass(frozen=True)
class KeyUse:
    """One KMS action a service performs with a resource's key while serving a request.

    ``key``: the key as the resource names it (id, ARN, alias or alias ARN).
    ``resource``: the encrypted resource's ARN (named in the service's error).
    ``acting_as``: ``CALLER``, ``ROLE`` (then ``role_arn``) or ``SERVICE`` (then
    ``service_principal``). ``via_service``: ``kms:ViaService``, None when the service
    acts as itself. ``grant_role_id``: Lambda's grant for the execution role, the role's
    unique id when the key was configured (None: no grant).
    """

    service: str
    action: str
    key: str
    resource: str
    encryption_context: Mapping[str, str]
    acting_as: str = CALLER
    via_service: str | None = None
    role_arn: str | None = None
    service_principal: str | None = None
    grant_role_id: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class FunctionKey:
    """A Lambda function's environment key, its role and the grant Lambda made for it."""

    key: str
    role_arn: str
    grant_role_id: str | None
    has_variables: bool


@dataclass(frozen=True)
class MachineKey:
    """A state machine's customer managed key and its execution role."""

    key: str
    role_arn: str


class Resources(Protocol):
    """Which customer key a resource is encrypted with (None: AWS owned or managed)."""

    def table_key(self, account: str, region: str, table: str) -> str | None:
        """The key of a table with SSE type KMS."""

    def queue_key(self, queue_arn: str) -> str | None:
        """The queue's ``KmsMasterKeyId``."""

    def bucket_default_key(self, bucket: str) -> tuple[str | None, bool]:
        """The bucket's default SSE-KMS key and whether it uses an S3 Bucket Key."""

    def object_key(self, bucket: str, key: str) -> tuple[str | None, bool]:
        """The key an object was stored with and whether it used an S3 Bucket Key."""

    def function_key(self, function_arn: str) -> FunctionKey | None:
        """A function's environment key (from its unqualified ARN)."""

    def machine_key(self, state_machine_arn: str) -> MachineKey | None:
        """A state machine's customer managed key and role."""

    def log_group_key(self, account: str, region: str, group: str) -> str | None:
        """The key associated with a log group."""


Request = Mapping[str, Any]
UseResolver = Callable[[str, Request, Scope, Resources], list["KeyUse"]]


def key_uses(
    service: str, operation: str, request: Request, scope: Scope, resources: Resources
) -> list[KeyUse]:
    """The KMS actions ``operation`` makes the service perform, for customer managed keys."""
    resolver = USES.get((service, operation))
    if resolver is None:
        return []
    return resolver(operation, request, scope, resources)


def via(service: str, scope: Scope) -> str:
    """``kms:ViaService`` of a service in this region: ``dynamodb.us-east-1.amazonaws.com``."""
    return f"{service}.{scope.region}.amazonaws.com"


# -- DynamoDB --------------------------------------------------------------------------
def _table_name(name: str) -> str:
    return name.split(":table/", 1)[1].split("/", 1)[0] if name.startswith("arn:") else name


def _tables(operation: str, request: Request) -> list[str]:
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [_table_name(t) for t in request.get("RequestItems") or {}]
    if operation in ("TransactWriteItems", "TransactGetItems"):
        names = []
        for item in request.get("TransactItems") or []:
            for body in item.values():
                if isinstance(body, Mapping) and body.get("TableName"):
                    names.append(_table_name(str(body["TableName"])))
        return names
    return [_table_name(str(request.get("TableName") or ""))]


def _dynamodb(operation: str, request: Request, scope: Scope, resources: Resources) -> list[KeyUse]:
    uses = []
    for table in dict.fromkeys(_tables(operation, request)):
        key = resources.table_key(scope.account, scope.region, table)
        if key is None:
            continue
        uses.append(
            KeyUse(
                service="dynamodb",
                action="kms:Decrypt",
                key=key,
                resource=scope.arn("dynamodb", f"table/{table}"),
                encryption_context={
                    "aws:dynamodb:tableName": table,
                    "aws:dynamodb:subscriberId": scope.account,
                },
                via_service=via("dynamodb", scope),
                doc=DYNAMODB_DOC,
            )
        )
    return uses


_DYNAMODB_ITEM_OPERATIONS = (
    "BatchGetItem",
    "BatchWriteItem",
    "DeleteItem",
    "GetItem",
    "PutItem",
    "Query",
    "Scan",
    "TransactGetItems",
    "TransactWriteItems",
    "UpdateItem",
)


# -- SQS -------------------------------------------------------------------------------
_SQS_ACTIONS = {
    "SendMessage": ("kms:GenerateDataKey", "kms:Decrypt"),
    "SendMessageBatch": ("kms:GenerateDataKey", "kms:Decrypt"),
    "ReceiveMessage": ("kms:Decrypt",),
}


def _sqs(operation: str, request: Request, scope: Scope, resources: Resources) -> list[KeyUse]:
    arn = queue_arn(str(request.get("QueueUrl") or ""), scope)
    key = resources.queue_key(arn)
    if key is None:
        return []
    return [
        KeyUse(
            service="sqs",
            action=action,
            key=key,
            resource=arn,
            encryption_context={"aws:sqs:arn": arn},
            via_service=via("sqs", scope),
            doc=SQS_DOC,
        )
        for action in _SQS_ACTIONS[operation]
    ]


# -- S3 --------------------------------------------------------------------------------
_KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")


def _s3(operation: str, request: Request, scope: Scope, resources: Resources) -> list[KeyUse]:
    bucket, name = str(request.get("Bucket")), str(request.get("Key"))
    if operation == "PutObject":
        if request.get("ServerSideEncryption") in _KMS_ALGORITHMS:
            default_key, default_bucket_key = resources.bucket_default_key(bucket)
            key = request.get("SSEKMSKeyId") or default_key
            bucket_key = bool(request.get("BucketKeyEnabled") or default_bucket_key)
        elif request.get("ServerSideEncryption"):
            return []  # AES256 (SSE-S3): no KMS key
        else:
            key, bucket_key = resources.bucket_default_key(bucket)
        action = "kms:GenerateDataKey"
    else:
        key, bucket_key = resources.object_key(bucket, name)
        action = "kms:Decrypt"
    if not key:
        return []  # aws:kms without a key id: the AWS managed aws/s3 key
    object_arn = f"arn:{scope.partition}:s3:::{bucket}/{name}"
    bucket_arn = f"arn:{scope.partition}:s3:::{bucket}"
    return [
        KeyUse(
            service="s3",
            action=action,
            key=str(key),
            resource=object_arn,
            encryption_context={"aws:s3:arn": bucket_arn if bucket_key else object_arn},
            via_service=via("s3", scope),
            doc=S3_DOC,
        )
    ]


# -- Lambda ----------------------------------------------------------------------------
def _lambda_invoke(
    operation: str, request: Request, scope: Scope, resources: Resources
) -> list[KeyUse]:
    # The environment is the function's, whatever version is invoked: decide on the
    # unqualified ARN, which is also the encryption context Lambda uses.
    arn = function_arn(str(request.get("FunctionName") or ""), None, scope)
    arn = ":".join(arn.split(":")[:7])
    found = resources.function_key(arn)
    if found is None or not found.has_variables:
        return []
    return [
        KeyUse(
            service="lambda",
            action="kms:Decrypt",
            key=found.key,
            resource=arn,
            encryption_context={"aws:lambda:FunctionArn": arn},
            acting_as=ROLE,
            via_service=via("lambda", scope),
            role_arn=found.role_arn,
            grant_role_id=found.grant_role_id,
            doc=LAMBDA_DOC,
        )
    ]


def _lambda_configure(
    operation: str, request: Request, scope: Scope, resources: Resources
) -> list[KeyUse]:
    key = request.get("KMSKeyArn")
    if not key:
        return []
    arn = function_arn(str(request.get("FunctionName") or ""), None, scope)
    return [
        KeyUse(
            service="lambda",
            action=action,
            key=str(key),
            resource=arn,
            encryption_context={},
            via_service=via("lambda", scope),
            doc=LAMBDA_DOC,
        )
        for action in ("kms:CreateGrant", "kms:Encrypt")
    ]


# -- Step Functions --------------------------------------------------------------------
def machine_of(arn: str) -> str:
    """The state machine of an execution ARN (``...:execution:M:N`` -> ``...:stateMachine:M``)."""
    parts = arn.split(":")
    if len(parts) >= 8 and parts[5] in ("execution", "express"):
        return ":".join([*parts[:5], "stateMachine", parts[6]])
    return arn


def _states(operation: str, request: Request, scope: Scope, resources: Resources) -> list[KeyUse]:
    target = str(request.get("stateMachineArn") or request.get("executionArn") or "")
    machine = machine_of(target)
    found = resources.machine_key(machine)
    if found is None:
        return []
    context = {"aws:states:stateMachineArn": machine}
    uses: list[KeyUse] = []
    if operation in ("StartExecution", "StartSyncExecution"):
        uses += [
            KeyUse(
                service="stepfunctions",
                action=action,
                key=found.key,
                resource=machine,
                encryption_context=context,
                acting_as=ROLE,
                via_service=via("states", scope),
                role_arn=found.role_arn,
                doc=STATES_DOC,
            )
            for action in ("kms:GenerateDataKey", "kms:Decrypt")
        ]
    reads_data = operation == "GetExecutionHistory" or (
        operation != "StartExecution" and request.get("includedData") != "METADATA_ONLY"
    )
    if reads_data:
        uses.append(
            KeyUse(
                service="stepfunctions",
                action="kms:Decrypt",
                key=found.key,
                resource=machine,
                encryption_context=context,
                via_service=via("states", scope),
                doc=STATES_API,
            )
        )
    return uses


# -- CloudWatch Logs -------------------------------------------------------------------
def _logs(operation: str, request: Request, scope: Scope, resources: Resources) -> list[KeyUse]:
    group = str(request.get("logGroupName") or "")
    if operation in ("CreateLogGroup", "AssociateKmsKey"):
        key = request.get("kmsKeyId")
    else:
        key = resources.log_group_key(scope.account, scope.region, group)
    if not key or not group:
        return []
    arn = scope.arn("logs", f"log-group:{group}")
    action = (
        "kms:Decrypt"
        if operation in ("GetLogEvents", "FilterLogEvents")
        else ("kms:GenerateDataKey")
    )
    return [
        KeyUse(
            service="logs",
            action=action,
            key=str(key),
            resource=arn,
            encryption_context={"aws:logs:arn": arn},
            acting_as=SERVICE,
            service_principal=f"logs.{scope.region}.amazonaws.com",
            doc=LOGS_DOC,
        )
    ]


USES: dict[tuple[str, str], UseResolver] = {
    **{("dynamodb", op): _dynamodb for op in _DYNAMODB_ITEM_OPERATIONS},
    **{("sqs", op): _sqs for op in _SQS_ACTIONS},
    ("s3", "PutObject"): _s3,
    ("s3", "GetObject"): _s3,
    ("lambda", "Invoke"): _lambda_invoke,
    ("lambda", "InvokeAsync"): _lambda_invoke,
    ("lambda", "InvokeWithResponseStream"): _lambda_invoke,
    ("lambda", "CreateFunction"): _lambda_configure,
    ("lambda", "UpdateFunctionConfiguration"): _lambda_configure,
    **{
        ("stepfunctions", op): _states
        for op in (
            "DescribeExecution",
            "DescribeStateMachine",
            "DescribeStateMachineForExecution",
            "GetExecutionHistory",
            "StartExecution",
            "StartSyncExecution",
        )
    },
    **{
        ("logs", op): _logs
        for op in (
            "AssociateKmsKey",
            "CreateLogGroup",
            "FilterLogEvents",
            "GetLogEvents",
            "PutLogEvents",
        )
    },
}

# Which uses are decided whoever makes the request: the service acts as a principal the
# resource names (a function's or state machine's role) or as itself (CloudWatch Logs),
# so Terraform's and the tests' own clients are decided too. Uses as the caller are
# decided for role sessions only, like every other IAM decision of the harness.
ANY_CALLER = frozenset({ROLE, SERVICE})
