"""Where LocalStack 4.14.0 keeps each resource's key, and the keys it does not keep.

DynamoDB (moto's table ``SSESpecification``), SQS (``KmsMasterKeyId``), S3
(the bucket's default encryption rule, each object's ``kms_key_id``) and CloudWatch Logs
(moto's log group ``kms_key_id``) keep the key they were given. LocalStack 4.14.0 drops
Lambda's ``KMSKeyArn`` and Step Functions' ``encryptionConfiguration``; ``Registry``
remembers them from the requests that set them (the response handler calls
``Registry.observe``), with the execution role's unique id at the time, which is the
role Lambda's grant names.

Keys are read from LocalStack's KMS store on every use (a key policy may change between
tests); ``resolve_key`` answers None for a key this emulation does not decide (an AWS
managed key, an ``alias/aws/*`` alias, a key LocalStack does not know).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sfn_patterns_localstack.emulation.iam.actions import Scope, function_arn
from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy
from sfn_patterns_localstack.emulation.iam.principals import parse_document
from sfn_patterns_localstack.emulation.kms.keys import Key
from sfn_patterns_localstack.emulation.kms.uses import FunctionKey, MachineKey

LOG = logging.getLogger(__name__)

RoleIds = Callable[[str], str | None]  # role ARN -> the role's unique id (None: no role)


@dataclass(frozen=True)
class _Configured:
    key: str
    role_arn: str
    role_id: str | None


class Registry:
    """The keys LocalStack drops: Lambda's environment key, a state machine's key.

    ``functions``: unqualified function ARN -> (key, the role's unique id when Lambda
    made its grant). ``machines``: state machine ARN -> key. Thread-safe.
    """

    def __init__(self, role_id: RoleIds) -> None:
        self._role_id = role_id
        self.functions: dict[str, _Configured] = {}
        self.machines: dict[str, str] = {}
        self._lock = threading.Lock()

    def observe(
        self,
        service: str,
        operation: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        scope: Scope,
    ) -> None:
        """Remember what a successful configuration call set (called after the provider)."""
        if service == "lambda" and operation in ("CreateFunction", "UpdateFunctionConfiguration"):
            self._function(operation, request, response, scope)
        elif service == "lambda" and operation == "DeleteFunction" and not request.get("Qualifier"):
            with self._lock:
                self.functions.pop(_unqualified(request, scope), None)
        elif service == "stepfunctions" and operation in (
            "CreateStateMachine",
            "UpdateStateMachine",
        ):
            arn = str(response.get("stateMachineArn") or request.get("stateMachineArn") or "")
            configuration = request.get("encryptionConfiguration")
            if not arn or configuration is None:
                return
            with self._lock:
                if configuration.get("type") == "CUSTOMER_MANAGED_KMS_KEY":
                    self.machines[arn] = str(configuration.get("kmsKeyId"))
                else:
                    self.machines.pop(arn, None)
        elif service == "stepfunctions" and operation == "DeleteStateMachine":
            with self._lock:
                self.machines.pop(str(request.get("stateMachineArn")), None)

    def _function(
        self,
        operation: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        scope: Scope,
    ) -> None:
        arn = _unqualified(request, scope)
        key = request.get("KMSKeyArn")
        with self._lock:
            previous = self.functions.get(arn)
        role = str(
            response.get("Role")
            or request.get("Role")
            or (previous.role_arn if previous is not None else "")
        )
        if key is None and previous is not None:
            key = previous.key  # an update that leaves the key as it was
        with self._lock:
            if not key:
                self.functions.pop(arn, None)
                return
            # Lambda (re)creates its grant for the role the function has now.
            self.functions[arn] = _Configured(str(key), role, self._role_id(role) if role else None)

    def function(self, arn: str) -> _Configured | None:
        """What Lambda was configured with for this function, if a customer key."""
        with self._lock:
            return self.functions.get(arn)

    def machine(self, arn: str) -> str | None:
        """The customer managed key of a state machine, if any."""
        with self._lock:
            return self.machines.get(arn)


def _unqualified(request: Mapping[str, Any], scope: Scope) -> str:
    arn = function_arn(str(request.get("FunctionName") or ""), None, scope)
    return ":".join(arn.split(":")[:7])


class LocalStackResources:
    """``uses.Resources`` over LocalStack's stores and the ``Registry``."""

    def __init__(self, registry: Registry, account: str, region: str) -> None:
        self.registry = registry
        self.account = account
        self.region = region

    def table_key(self, account: str, region: str, table: str) -> str | None:
        """See ``uses.Resources``.

        The harness serves DynamoDB from moto (``PROVIDER_OVERRIDE_DYNAMODB=moto``,
        ``emulation/plugins.py``), which keeps the table's ``SSESpecification``; without
        a key id moto makes its own ``alias/aws/dynamodb`` key, which ``resolve_key``
        does not find in LocalStack's KMS store (an AWS managed key: not decided).
        """
        from moto.dynamodb.models import dynamodb_backends

        found = dynamodb_backends[account][region].tables.get(table)
        sse = (getattr(found, "sse_specification", None) or {}) if found is not None else {}
        if sse.get("Enabled") is not True:
            return None
        return sse.get("KMSMasterKeyId") or None

    def queue_key(self, queue_arn: str) -> str | None:
        """See ``uses.Resources``."""
        from localstack.services.sqs.models import sqs_stores

        _, _, _, region, account, name = queue_arn.split(":", 5)
        queue = sqs_stores[account][region].queues.get(name)
        return (queue.attributes.get("KmsMasterKeyId") or None) if queue is not None else None

    def _bucket(self, bucket: str) -> Any:
        from localstack.services.s3.models import s3_stores

        return s3_stores[self.account][self.region].buckets.get(bucket)

    def bucket_default_key(self, bucket: str) -> tuple[str | None, bool]:
        """See ``uses.Resources``."""
        found = self._bucket(bucket)
        rule = found.encryption_rule if found is not None else None
        if not rule:
            return None, False
        default = rule.get("ApplyServerSideEncryptionByDefault") or {}
        if default.get("SSEAlgorithm") not in ("aws:kms", "aws:kms:dsse"):
            return None, False
        return default.get("KMSMasterKeyID"), bool(rule.get("BucketKeyEnabled"))

    def object_key(self, bucket: str, key: str) -> tuple[str | None, bool]:
        """See ``uses.Resources``."""
        found = self._bucket(bucket)
        stored = found.objects.get(key) if found is not None else None
        if stored is None or getattr(stored, "encryption", None) not in ("aws:kms", "aws:kms:dsse"):
            return None, False
        return stored.kms_key_id, bool(stored.bucket_key_enabled)

    def function_key(self, function_arn: str) -> FunctionKey | None:
        """See ``uses.Resources``."""
        configured = self.registry.function(function_arn)
        if configured is None:
            return None
        from localstack.services.lambda_.invocation.models import lambda_stores

        _, _, _, region, account, _, name = function_arn.split(":")[:7]
        function = lambda_stores[account][region].functions.get(name)
        if function is None:
            return None
        config = function.latest().config
        return FunctionKey(
            key=configured.key,
            role_arn=config.role,
            grant_role_id=configured.role_id,
            has_variables=bool(config.environment),
        )

    def machine_key(self, state_machine_arn: str) -> MachineKey | None:
        """See ``uses.Resources``."""
        key = self.registry.machine(state_machine_arn)
        if key is None:
            return None
        from localstack.services.stepfunctions.backend.store import sfn_stores

        _, _, _, region, account = state_machine_arn.split(":")[:5]
        machine = sfn_stores[account][region].state_machines.get(state_machine_arn)
        return MachineKey(key, machine.role_arn) if machine is not None else None

    def log_group_key(self, account: str, region: str, group: str) -> str | None:
        """See ``uses.Resources``."""
        from localstack.services.logs.models import get_moto_logs_backend

        found = get_moto_logs_backend(account, region).groups.get(group)
        return getattr(found, "kms_key_id", None) if found is not None else None


def resolve_key(
    reference: str, account: str, region: str, stores: Mapping[str, Any] | None = None
) -> Key | None:
    """The customer managed key ``reference`` names (id, ARN, alias, alias ARN), or None.

    None for an AWS managed key (``alias/aws/*``, ``KeyManager`` ``AWS``) and for a key
    LocalStack does not know: neither is decided here. ``stores``: LocalStack's
    ``kms_stores`` (account -> region -> store with ``keys`` and ``aliases``) unless given.
    """
    if stores is None:
        from localstack.services.kms.models import kms_stores as stores

    if reference.startswith("arn:"):
        _, _, _, region, account, resource = reference.split(":", 5)
    else:
        resource = reference
    store = stores[account][region]
    # LocalStack's DynamoDB turns an alias into "arn:...:key/alias/NAME": an alias still.
    resource = resource.removeprefix("key/") if resource.startswith("key/alias/") else resource
    if resource.startswith("alias/"):
        if resource.startswith("alias/aws/"):
            return None
        alias = store.aliases.get(resource)
        if alias is None:
            return None
        resource = str(alias.metadata.get("TargetKeyId"))
        if resource.startswith("arn:"):
            resource = resource.split(":", 5)[5]
    key_id = resource.removeprefix("key/")
    found = store.keys.get(key_id)
    if found is None:
        LOG.debug("sfn-patterns KMS emulation: no key %s in %s/%s", reference, account, region)
        return None
    if found.metadata.get("KeyManager") != "CUSTOMER":
        return None
    return _key(str(found.metadata.get("Arn")), account, str(found.policy))


@lru_cache(maxsize=256)
def _key(arn: str, account: str, policy: str) -> Key:
    """The key with its policy parsed once per policy text (read on every use of the key)."""
    return Key(
        arn=arn, account=account, policy=NamedPolicy(f"{arn} (key policy)", parse_document(policy))
    )


def moto_role_id(role_arn: str) -> str | None:
    """The unique id (``AROA...``) of a role, from moto's IAM backend (None: no such role)."""
    from moto.iam.models import iam_backends

    parts = role_arn.split(":")
    if len(parts) < 6:
        return None
    try:
        return iam_backends[parts[4]]["aws"].get_role_by_arn(role_arn).id
    except Exception:  # moto raises its own NotFound
        return None
