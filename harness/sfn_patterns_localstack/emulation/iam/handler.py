"""The gateway handler: decide each parsed request, answer a denial with the service's own error.

LocalStack 4.14.0 runs every request, its internal clients' included (they short-circuit
into the same gateway), through one handler chain. ``install`` appends this handler to
``serve_custom_service_request_handlers``, which runs after the request is parsed
(``context.service``, ``context.operation``, ``context.service_request`` are set) and
before the provider is called; and a response handler to
``run_custom_response_handlers``, which drops cached role policies after an IAM write
and remembers who started each Redshift Data statement.

A request is decided when it is signed by a role session (identity policies; plus the
target's trust policy for ``sts:AssumeRole``), or made by a service principal on a
resource that has a resource policy (a Lambda function, an SQS queue) or to assume a
role (the trust policy). Everything else (the account's own keys: Terraform, the
tests' admin clients, LocalStack's internal bookkeeping) passes untouched, at the cost
of a header lookup. Once a request is allowed, the KMS uses it makes the service perform
on a customer managed key are decided by ``KeyCheck`` (``emulation/kms``), whoever the
principal the service acts as.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sfn_patterns_localstack.emulation.iam import actions, resource_policies
from sfn_patterns_localstack.emulation.iam.actions import Authorization, Scope
from sfn_patterns_localstack.emulation.iam.policy import (
    Principal,
    Request,
    StatementRef,
    evaluate,
)
from sfn_patterns_localstack.emulation.iam.principals import (
    Directory,
    RoleSession,
    account_of,
    moto_role,
    moto_session,
    role_name_of,
)
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder

LOG = logging.getLogger(__name__)

MODES = ("enforce", "audit", "off")
DEFAULT_MODE = "enforce"

# The AWS error code and HTTP status each service answers an authorization failure with.
_ERRORS: dict[str, tuple[str, int]] = {
    "dynamodb": ("AccessDeniedException", 400),
    "stepfunctions": ("AccessDeniedException", 400),
    "lambda": ("AccessDeniedException", 403),
    "logs": ("AccessDeniedException", 400),
    "events": ("AccessDeniedException", 400),
    "redshift-data": ("AccessDeniedException", 400),
    "kms": ("AccessDeniedException", 400),
    "scheduler": ("AccessDeniedException", 403),
    "sqs": ("AccessDenied", 403),
    "s3": ("AccessDenied", 403),
    "sts": ("AccessDenied", 403),
    "iam": ("AccessDenied", 403),
}


def mode_from_env() -> str:
    """``SFNP_IAM`` (enforce, audit or off); an unknown value is an error, not a silent off."""
    mode = (os.environ.get("SFNP_IAM") or DEFAULT_MODE).strip().lower()
    if mode not in MODES:
        raise ValueError(f"SFNP_IAM={mode!r}: use one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class Denial:
    """Why a call is refused: who, what, on what, and the sentence AWS would write."""

    principal: str
    action: str
    resource: str
    reason: str
    message: str
    code: str | None = None  # the service's own error code when not its AccessDenied (KMS)
    status: int | None = None


def denial_message(principal: str, action: str, resource: str, reason: str) -> str:
    """The AccessDenied sentence as AWS writes it for each kind of refusal."""
    head = f"User: {principal} is not authorized to perform: {action} on resource: {resource}"
    tails = {
        "implicit-deny": f" because no identity-based policy allows the {action} action",
        "explicit-deny": " with an explicit deny in an identity-based policy",
        "resource-implicit-deny": f" because no resource-based policy allows the {action} action",
        "resource-explicit-deny": " with an explicit deny in a resource-based policy",
        "trust": "",
        "no-role": " because the role no longer exists",
        "unmapped": (
            " because the sfn-patterns IAM emulation has no mapping for this operation"
            " (unmapped: add it to sfn_patterns_localstack/emulation/iam/actions.py)"
        ),
    }
    return head + tails.get(reason, "")


class KeyCheck(Protocol):
    """The KMS decisions of a request (``emulation/kms``), run once IAM allowed the call.

    Defined here, where it is used, so the IAM package needs no import of the KMS one.
    """

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
        """The refusal of a KMS use of this request, or None."""

    def observe(
        self,
        service: str,
        operation: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        scope: Scope,
    ) -> None:
        """Remember the keys a successful configuration call set."""


class Enforcer:
    """Decides requests; ``__call__`` is the request handler, ``on_response`` the response one."""

    def __init__(
        self,
        mode: str,
        directory: Directory,
        recorder: UsageRecorder,
        keys: KeyCheck | None = None,
    ) -> None:
        self.mode = mode
        self.directory = directory
        self.recorder = recorder
        self.keys = keys
        self._statement_owners: dict[str, str] = {}
        self._owners_lock = threading.Lock()

    # -- the handler chain ---------------------------------------------------------------
    def __call__(self, chain: Any, context: Any, response: Any) -> None:
        """Request handler: raise the service's AccessDenied error for a denied call."""
        if self.mode == "off" or context.service is None or context.operation is None:
            return
        service = context.service.service_name
        operation = context.operation.name
        if service == "iam" and not operation.startswith(("Get", "List")):
            self.directory.invalidate()
        denial = self.check(context, service, operation)
        if denial is None or _lambda_log_group_exists(context, denial):
            return
        enforced = self.mode == "enforce"
        self.recorder.denied(
            denial.principal, denial.action, denial.resource, denial.reason, enforced
        )
        if not enforced:
            LOG.info("IAM audit: would deny %s", denial.message)
            return
        LOG.info("IAM enforce: %s", denial.message)
        raise access_denied(service, denial.message, denial.code, denial.status)

    def on_response(self, chain: Any, context: Any, response: Any) -> None:
        """Response handler: forget role policies after IAM writes; note statement owners."""
        if self.mode == "off" or context.service is None or context.operation is None:
            return
        service = context.service.service_name
        operation = context.operation.name
        if service == "iam" and not operation.startswith(("Get", "List")):
            self.directory.invalidate()
        elif self.keys is not None and context.service_response is not None:
            self.keys.observe(
                service,
                operation,
                context.service_request or {},
                context.service_response,
                Scope(context.account_id, context.region, context.partition),
            )
        if service == "redshift-data" and operation in (
            "ExecuteStatement",
            "BatchExecuteStatement",
        ):
            session = self._session(context)
            statement_id = (context.service_response or {}).get("Id")
            if session is not None and statement_id:
                with self._owners_lock:
                    self._statement_owners[statement_id] = session.user_id

    # -- deciding ------------------------------------------------------------------------
    def _session(self, context: Any) -> RoleSession | None:
        from localstack.utils.aws.request_context import extract_access_key_id_from_auth_header

        key = extract_access_key_id_from_auth_header(context.request.headers)
        return self.directory.session(key, context.account_id)

    def check(self, context: Any, service: str, operation: str) -> Denial | None:
        """The reason to refuse this request, or None to let it through.

        The request itself is decided first, then the KMS uses it makes the service
        perform (``keys``), as AWS authorizes the call before the service uses the key.
        """
        if (service, operation) in actions.UNAUTHORIZED_OPERATIONS:
            return None
        session = self._session(context)
        params = context.internal_request_params or {}
        if session is None and not params.get("service_principal"):
            return self._check_keys(context, service, operation, None)
        scope = Scope(
            account=(session.account if session else context.account_id),
            region=context.region,
            partition=context.partition,
        )
        request = context.service_request or {}
        needed = actions.authorizations(service, operation, request, scope)
        if (
            needed
            and service == "s3"
            and operation in actions.MISSING_OBJECT_READS
            and not _s3_object_exists(context.account_id, context.region, request)
        ):
            needed = [*needed, actions.missing_object(request, scope)]
        if session is not None:
            return self._check_session(
                session,
                service,
                operation,
                needed=needed,
                request=request,
                params=params,
                then=lambda: self._check_keys(context, service, operation, session),
            )
        refused = self._check_service(str(params["service_principal"]), needed, params, scope)
        return refused or self._check_keys(context, service, operation, None)

    def _check_keys(
        self, context: Any, service: str, operation: str, session: RoleSession | None
    ) -> Denial | None:
        if self.keys is None:
            return None
        scope = Scope(context.account_id, context.region, context.partition)
        params = context.internal_request_params or {}
        principal = params.get("service_principal")
        return self.keys.check(
            service,
            operation,
            context.service_request or {},
            scope,
            session,
            service_principal=(
                resource_policies.service_principal_name(str(principal), scope.partition)
                if principal and session is None
                else None
            ),
            source_arn=params.get("source_arn"),
        )

    def _check_session(
        self,
        session: RoleSession,
        service: str,
        operation: str,
        *,
        needed: list[Authorization] | None,
        request: Any,
        params: dict[str, Any],
        then: Callable[[], Denial | None] = lambda: None,
    ) -> Denial | None:
        if needed is None:
            action = f"{service}:{operation}"
            return Denial(
                session.arn,
                action,
                "*",
                "unmapped",
                denial_message(session.arn, action, "*", "unmapped"),
            )
        role = self.directory.policies(session.account, session.role_name)
        if role is None:
            first = needed[0] if needed else Authorization(f"{service}:{operation}", "*")
            return Denial(
                session.arn,
                first.action,
                first.resource,
                "no-role",
                denial_message(session.arn, first.action, first.resource, "no-role"),
            )
        self.recorder.role_policies(session.role_name, role.identity)
        context = self._request_context(session, service, request, params)
        allowed: list[tuple[StatementRef, str]] = []
        for authorization in needed:
            decision = evaluate(
                role.identity,
                Request(
                    action=authorization.action,
                    resource=authorization.resource,
                    context={**context, **authorization.context},
                ),
            )
            if not decision.allowed:
                return self._refusal(session.arn, authorization, decision.kind)
            if authorization.action == "sts:AssumeRole":
                refused = self._check_trust(session.arn, session.principal, authorization, context)
                if refused is not None:
                    return refused
            allowed.append((decision.statement, authorization.action))
        refused = then()  # the KMS uses of an allowed call
        if refused is not None:
            return refused
        # Counted only once the whole call is allowed: a refused call exercised no grant.
        for statement, action in allowed:
            self.recorder.allowed(session.role_name, statement, action)
        return None

    def _request_context(
        self, session: RoleSession, service: str, request: Any, params: dict[str, Any]
    ) -> dict[str, Any]:
        context: dict[str, Any] = session.context()
        if params.get("source_arn"):
            context["aws:SourceArn"] = params["source_arn"]
        if service == "redshift-data" and request.get("Id"):
            owner = self._statement_owners.get(str(request["Id"]).split(":", 1)[0])
            if owner is not None:
                context["redshift-data:statement-owner-iam-userid"] = owner
        return context

    def _check_trust(
        self,
        caller: str,
        principal: Principal,
        authorization: Authorization,
        context: dict[str, Any],
    ) -> Denial | None:
        """``sts:AssumeRole`` also needs the target role's trust policy to name the caller."""
        target = authorization.resource
        role = self.directory.policies(account_of(target), role_name_of(target))
        trust = [role.trust] if role is not None and role.trust is not None else []
        decision = evaluate(
            trust,
            Request(action="sts:AssumeRole", resource=target, context=context, principal=principal),
        )
        if decision.allowed:
            return None
        return Denial(
            caller,
            "sts:AssumeRole",
            target,
            "trust",
            denial_message(caller, "sts:AssumeRole", target, "trust"),
        )

    def _check_service(
        self,
        short_name: str,
        needed: list[Authorization] | None,
        params: dict[str, Any],
        scope: Scope,
    ) -> Denial | None:
        """A service principal: trust policies for AssumeRole, resource policies otherwise."""
        if not needed:
            return None  # nothing this service does here is decided by a resource policy
        name = resource_policies.service_principal_name(short_name, scope.partition)
        principal = Principal(service=name)
        source_arn = params.get("source_arn")
        for authorization in needed:
            # Without a source ARN the service acts for the account owning the resource.
            source_account = (
                account_of(source_arn)
                if source_arn
                else (account_of(authorization.resource) or scope.account)
            )
            context: dict[str, Any] = {"aws:SourceAccount": source_account}
            if source_arn:
                context["aws:SourceArn"] = source_arn
            if authorization.action == "sts:AssumeRole":
                refused = self._check_trust(name, principal, authorization, context)
                if refused is not None:
                    return refused
                continue
            policy = resource_policies.localstack_resource_policy(
                authorization.action, authorization.resource
            )
            if policy is None and not _has_resource_policies(authorization.action):
                continue
            decision = resource_policies.decide_resource(policy, authorization, principal, context)
            if not decision.allowed:
                return self._refusal(name, authorization, f"resource-{decision.kind}")
            self.recorder.allowed(name, decision.statement, authorization.action)
        return None

    @staticmethod
    def _refusal(caller: str, authorization: Authorization, reason: str) -> Denial:
        return Denial(
            caller,
            authorization.action,
            authorization.resource,
            reason,
            denial_message(caller, authorization.action, authorization.resource, reason),
        )


def _lambda_log_group_exists(context: Any, denial: Denial) -> bool:
    """A denied CreateLogGroup of LocalStack's Lambda log shipper, for a group that exists.

    LocalStack ships a function's logs with its role session and, when the stream is
    new, calls CreateLogGroup first and expects ResourceAlreadyExists. AWS's Lambda
    writes to an existing group with CreateLogStream alone, so a role without
    ``logs:CreateLogGroup`` (the modules grant only stream actions on their own,
    Terraform-made group) keeps its logs in AWS. Letting this one internal call reach
    the provider, which answers ResourceAlreadyExists, keeps them here too.
    """
    if denial.action != "logs:CreateLogGroup" or not context.is_internal_call:
        return False
    from localstack.services.logs.models import get_moto_logs_backend

    backend = get_moto_logs_backend(context.account_id, context.region)
    return (context.service_request or {}).get("logGroupName") in backend.groups


def _s3_object_exists(account: str, region: str, request: Any) -> bool:
    """Whether the key a GetObject/HeadObject names exists (no bucket: True, S3's own error)."""
    from localstack.services.s3.models import S3DeleteMarker, s3_stores

    bucket = s3_stores[account][region].buckets.get(str(request.get("Bucket")))
    if bucket is None:
        return True
    found = bucket.objects.get(str(request.get("Key")))
    return found is not None and not isinstance(found, S3DeleteMarker)


# The actions a service principal is checked for against the resource's own policy.
_RESOURCE_POLICY_ACTIONS = frozenset({"lambda:invokefunction", "sqs:sendmessage"})


def _has_resource_policies(action: str) -> bool:
    return action.lower() in _RESOURCE_POLICY_ACTIONS


def access_denied(
    service: str, message: str, code: str | None = None, status: int | None = None
) -> Exception:
    """The service's own authorization error, serialized by LocalStack in its protocol.

    ``code``/``status`` override the service's AccessDenied (a KMS refusal the service
    passes on: ``KMS.AccessDeniedException`` from SQS, ``KMSAccessDeniedException`` 502
    from Lambda).
    """
    from localstack.aws.api import CommonServiceException

    default_code, default_status = _ERRORS.get(service, ("AccessDeniedException", 400))
    return CommonServiceException(
        code or default_code, message, status_code=status or default_status, sender_fault=True
    )


_installed: Enforcer | None = None


def usage_path(usage_file: str, pid: int | None = None) -> Path:
    """``SFNP_IAM_USAGE_FILE`` made this LocalStack process's own: ``<stem>.<pid><suffix>``.

    A test process may start more than one LocalStack, one after another (its session's,
    one of its own for a test); they inherit the same variable, and each recorder
    rewrites its whole file, so one path would keep only the last writer's counts (a
    whole worker's usage was once lost that way). Readers glob ``<stem>.*<suffix>``.
    """
    path = Path(usage_file)
    return path.with_name(f"{path.stem}.{pid or os.getpid()}{path.suffix}")


def install(
    key_check: Callable[[Directory, UsageRecorder], KeyCheck] | None = None,
) -> Enforcer | None:
    """Add the handlers to LocalStack's chain once (LocalStack start-up imports the plugins).

    ``SFNP_IAM=off`` installs nothing. ``SFNP_IAM_USAGE_FILE`` names the usage file
    (``usage_path``: one per LocalStack process). ``key_check`` builds the KMS decisions
    (``emulation.kms.install.key_check``), which then share the mode and the usage file.
    """
    global _installed  # noqa: PLW0603 - one enforcer per LocalStack process
    if _installed is not None:
        return _installed
    mode = mode_from_env()
    if mode == "off":
        return None
    from localstack.aws import handlers

    usage_file = os.environ.get("SFNP_IAM_USAGE_FILE")
    recorder = UsageRecorder(usage_path(usage_file) if usage_file else None)
    recorder.start()
    directory = Directory(moto_session, moto_role)
    keys = key_check(directory, recorder) if key_check is not None else None
    enforcer = Enforcer(mode, directory, recorder, keys)
    handlers.serve_custom_service_request_handlers.append(enforcer)
    handlers.run_custom_response_handlers.append(enforcer.on_response)
    _installed = enforcer
    LOG.info("sfn-patterns IAM emulation: %s", mode)
    return enforcer
