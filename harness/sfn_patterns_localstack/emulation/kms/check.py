"""Decide the KMS uses of a request: for whom, on which key, and what to answer when refused.

``KeyChecker.check`` runs after the IAM handler allowed the request itself (AWS
authorizes the API call before the service touches the key). For each ``uses.KeyUse``
of the request it finds the key (``stores.resolve_key``: customer managed keys only),
the principal the service acts as and that principal's identity policies, builds the
request context (``kms:CallerAccount``, ``kms:ViaService``, ``kms:EncryptionContext:*``
and the session's ``aws:*`` keys) and asks ``keys.decide``. Allowed uses are counted in
the usage file against the key policy statement and the identity statement that allowed
them, like any other action; a refusal becomes the service's own error
(``errors.service_error``) naming the key.

Uses as the caller are decided for role sessions only, as the IAM emulation decides
nothing for the account's own keys; uses as a role a resource names (a Lambda function's
execution role, a state machine's role) and as a service principal (CloudWatch Logs)
are decided whoever makes the request, since on AWS the caller plays no part in them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sfn_patterns_localstack.emulation.iam.actions import Scope
from sfn_patterns_localstack.emulation.iam.handler import Denial, denial_message
from sfn_patterns_localstack.emulation.iam.policy import ContextValue, NamedPolicy
from sfn_patterns_localstack.emulation.iam.principals import (
    Directory,
    RoleSession,
    account_of,
    role_name_of,
)
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder
from sfn_patterns_localstack.emulation.kms import uses as kms_uses
from sfn_patterns_localstack.emulation.kms.errors import service_error
from sfn_patterns_localstack.emulation.kms.keys import Caller, Key, KeyDecision, decide
from sfn_patterns_localstack.emulation.kms.keys import request_context as kms_context
from sfn_patterns_localstack.emulation.kms.uses import KeyUse, Resources

KeyResolver = Callable[[str, str, str], Key | None]  # (reference, account, region) -> Key
ResourcesFor = Callable[[Scope], Resources]
RoleIds = Callable[[str], str | None]
# After a successful call: (service, operation, request, response, scope).
Observer = Callable[[str, str, Mapping[str, Any], Mapping[str, Any], Scope], None]


@dataclass(frozen=True)
class _Acting:
    """The principal a use is decided for: how it is named, its policies, its context."""

    label: str  # the usage file's "role" column: a role name or a service principal
    arn: str  # how a refusal names it
    caller: Caller
    base: Mapping[str, ContextValue]


class KeyChecker:
    """Decides the KMS uses of requests; ``check`` returns a ``Denial`` or None.

    ``resolve``, ``resources``, ``role_id`` and ``observe`` read and fill LocalStack's
    stores and the ``stores.Registry`` in the running emulation (``install.key_check``);
    unit tests inject fakes.
    """

    def __init__(
        self,
        directory: Directory,
        recorder: UsageRecorder,
        *,
        resolve: KeyResolver,
        resources: ResourcesFor,
        role_id: RoleIds,
        observe: Observer | None = None,
    ) -> None:
        self.directory = directory
        self.recorder = recorder
        self.resolve = resolve
        self.resources = resources
        self.role_id = role_id
        self._observe = observe

    def observe(
        self,
        service: str,
        operation: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        scope: Scope,
    ) -> None:
        """Response handler hook: remember the keys LocalStack drops (``stores.Registry``)."""
        if self._observe is not None:
            self._observe(service, operation, request, response, scope)

    def check(
        self,
        service: str,
        operation: str,
        request: Mapping[str, Any],
        scope: Scope,
        session: RoleSession | None,
        *,
        service_principal: str | None = None,
        source_arn: str | None = None,
    ) -> Denial | None:
        """The refusal of the first KMS use AWS would refuse, or None when all are allowed.

        ``service_principal`` (``events.amazonaws.com``): a service delivering to an
        encrypted SQS queue (EventBridge, SNS, S3 notifications), which AWS decides on
        the key policy alone ("Configure KMS permissions for AWS services"), with
        ``aws:SourceArn``/``aws:SourceAccount`` from ``source_arn``.
        """
        if (service, operation) not in kms_uses.USES:
            return None
        uses = kms_uses.key_uses(service, operation, request, scope, self.resources(scope))
        allowed: list[tuple[str, KeyDecision, str]] = []
        for use in uses:
            if use.acting_as == kms_uses.CALLER and session is None:
                if not (service_principal and use.service == "sqs"):
                    continue
                use = replace(  # noqa: PLW2901 - the same use, made by the service itself
                    use, acting_as=kms_uses.SERVICE, service_principal=service_principal
                )
            key = self.resolve(use.key, scope.account, scope.region)
            if key is None:
                continue
            acting = self._acting(use, session, scope, source_arn)
            if acting is None:  # the role a resource names does not exist
                return self._refusal(use, operation, key, use.role_arn or "", "no-role")
            if self._granted(use):
                continue
            context = kms_context(
                caller_account=acting.caller.account if use.acting_as != kms_uses.SERVICE else None,
                via_service=use.via_service,
                encryption_context=use.encryption_context,
                base=acting.base,
            )
            decision = decide(key, use.action, acting.caller, context)
            if not decision.allowed:
                return self._refusal(use, operation, key, acting.arn, decision.reason)
            allowed.append((acting.label, decision, use.action))
        # Counted only once every use is allowed: a refused call exercised no grant.
        for label, decision, action in allowed:
            for statement in decision.statements:
                self.recorder.allowed(label, statement, action)
        return None

    # -- who the service acts as ---------------------------------------------------------
    def _acting(
        self, use: KeyUse, session: RoleSession | None, scope: Scope, source_arn: str | None
    ) -> _Acting | None:
        if use.acting_as == kms_uses.SERVICE:
            principal = str(use.service_principal)
            base: dict[str, ContextValue] = {
                "aws:SourceAccount": account_of(source_arn) if source_arn else scope.account
            }
            if source_arn:
                base["aws:SourceArn"] = source_arn
            return _Acting(
                principal,
                principal,
                Caller(account=scope.account, service=principal, partition=scope.partition),
                base,
            )
        if use.acting_as == kms_uses.CALLER:
            assert session is not None
            identity = self._identity(session.account, session.role_name)
            if identity is None:
                return None
            return _Acting(
                session.role_name,
                session.arn,
                Caller(
                    account=session.account,
                    names=frozenset({session.arn, session.role_arn}),
                    identity=identity,
                    partition=session.partition,
                ),
                session.context(),
            )
        role_arn = str(use.role_arn)
        account, name = account_of(role_arn), role_name_of(role_arn)
        identity = self._identity(account, name)
        if identity is None:
            return None
        session_arn = (
            f"arn:{scope.partition}:sts::{account}:assumed-role/{name}/"
            f"{use.resource.rsplit(':', 1)[-1]}"
        )
        return _Acting(
            name,
            session_arn,
            Caller(
                account=account,
                names=frozenset({session_arn, role_arn}),
                identity=identity,
                partition=scope.partition,
            ),
            {
                "aws:PrincipalArn": role_arn,
                "aws:PrincipalAccount": account,
                "aws:PrincipalType": "AssumedRole",
            },
        )

    def _identity(self, account: str, role_name: str) -> tuple[NamedPolicy, ...] | None:
        role = self.directory.policies(account, role_name)
        if role is None:
            return None
        self.recorder.role_policies(role_name, role.identity)
        return role.identity

    def _granted(self, use: KeyUse) -> bool:
        """Lambda's grant: it names the execution role as it was when the key was set."""
        if use.grant_role_id is None or use.role_arn is None:
            return False
        return self.role_id(use.role_arn) == use.grant_role_id

    @staticmethod
    def _refusal(use: KeyUse, operation: str, key: Key, who: str, reason: str) -> Denial:
        message = denial_message(who, use.action, key.arn, reason)
        error = service_error(use.service, operation, message, use.resource)
        return Denial(who, use.action, key.arn, reason, error.message, error.code, error.status)
