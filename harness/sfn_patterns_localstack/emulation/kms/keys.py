"""One use of a KMS key, decided the way AWS KMS decides it: key policy first, then IAM.

AWS KMS differs from every other service in one rule: no IAM policy grants anything on
a KMS key unless the key policy lets it ("Key policies in AWS KMS", "Default key
policy", https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html
#key-policy-default-allow-root-enable-iam). The default key policy's first statement,
"Enable IAM User Permissions", allows the *account* principal
(``arn:aws:iam::ACCOUNT:root``), which hands access to the account's IAM policies; a key
policy without such a statement only lets the principals it names use the key, and
identity policies alone are then not enough. The decision, for a caller in the key's
account ("Troubleshooting key access",
https://docs.aws.amazon.com/kms/latest/developerguide/policy-evaluation.html):

1. an explicit ``Deny`` in the key policy or in an identity policy refuses;
2. a key policy statement that names the caller (its session or role ARN, or ``*``)
   allows, without any identity policy;
3. a key policy statement that names the caller's account hands the decision to IAM:
   an identity policy must allow;
4. otherwise nothing allows: refused.

A caller in another account needs both: the key policy must name it or its account, and
its identity policy must allow. A service principal (CloudWatch Logs,
``logs.REGION.amazonaws.com``) has no identity policy: the key policy alone decides.

Pure (no LocalStack): ``check.py`` calls it per request with the key read from
LocalStack's KMS store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sfn_patterns_localstack.emulation.iam.policy import (
    ContextValue,
    NamedPolicy,
    Principal,
    Request,
    StatementRef,
    evaluate,
)


@dataclass(frozen=True)
class Key:
    """A KMS key as the decision needs it: its ARN, account and key policy.

    ``customer_managed`` is False for AWS managed keys (``alias/aws/*``, ``KeyManager``
    ``AWS``): their key policies are AWS's, and the services that use them on the
    caller's behalf are not decided here.
    """

    arn: str
    account: str
    policy: NamedPolicy
    customer_managed: bool = True


@dataclass(frozen=True)
class Caller:
    """Who the service uses the key for: a role session, or a service principal.

    ``names``: the identifiers a key policy may name this caller by, other than its
    account (a session ARN and its role ARN). ``identity``: the caller's identity
    policies (None for a service principal, which has none).
    """

    account: str
    names: frozenset[str] = frozenset()
    identity: Sequence[NamedPolicy] | None = None
    service: str | None = None
    partition: str = "aws"

    @property
    def root(self) -> frozenset[str]:
        """How a key policy names the caller's account: its root ARN or its bare id."""
        return frozenset({f"arn:{self.partition}:iam::{self.account}:root", self.account})


@dataclass(frozen=True)
class KeyDecision:
    """Allowed or not, why (the reasons ``iam.handler.denial_message`` words), and by what.

    ``reason``: ``allow``; ``explicit-deny`` / ``implicit-deny`` (an identity policy
    denied / none allowed, after the key policy handed access to IAM);
    ``resource-explicit-deny`` / ``resource-implicit-deny`` (the key policy denied /
    neither allowed the caller nor handed its account to IAM). ``statements``: the key
    policy statement and, when IAM decided, the identity statement that allowed.
    """

    allowed: bool
    reason: str
    statements: tuple[StatementRef, ...] = ()


def decide(
    key: Key, action: str, caller: Caller, context: Mapping[str, ContextValue]
) -> KeyDecision:
    """Decide ``action`` on ``key`` for ``caller`` with the request ``context``."""
    everyone = Principal(aws=caller.names | caller.root, service=caller.service)
    on_key = evaluate([key.policy], _request(key, action, context, everyone))
    if on_key.explicit and not on_key.allowed:
        return KeyDecision(False, "resource-explicit-deny", _refs(on_key.statement))
    on_identity = (
        evaluate(caller.identity, Request(action=action, resource=key.arn, context=context))
        if caller.identity is not None
        else None
    )
    if on_identity is not None and on_identity.explicit and not on_identity.allowed:
        return KeyDecision(False, "explicit-deny", _refs(on_identity.statement))
    same_account = caller.account == key.account
    named = evaluate(
        [key.policy],
        _request(key, action, context, Principal(aws=caller.names, service=caller.service)),
    )
    if named.allowed and (same_account or caller.identity is None):
        return KeyDecision(True, "allow", _refs(named.statement))
    delegated = named if named.allowed else on_key
    if not delegated.allowed or caller.identity is None:
        return KeyDecision(False, "resource-implicit-deny")
    # The key policy names the caller's account (or, across accounts, the caller): IAM decides.
    if on_identity is None or not on_identity.allowed:
        return KeyDecision(False, "implicit-deny", _refs(delegated.statement))
    return KeyDecision(True, "allow", _refs(delegated.statement, on_identity.statement))


def _request(
    key: Key, action: str, context: Mapping[str, ContextValue], principal: Principal
) -> Request:
    return Request(action=action, resource=key.arn, context=context, principal=principal)


def _refs(*statements: StatementRef | None) -> tuple[StatementRef, ...]:
    return tuple(s for s in statements if s is not None)


def request_context(
    *,
    caller_account: str | None,
    via_service: str | None,
    encryption_context: Mapping[str, str],
    base: Mapping[str, ContextValue] | None = None,
) -> dict[str, ContextValue]:
    """The condition keys a service's call to KMS carries ("AWS KMS condition keys").

    ``kms:CallerAccount`` (the account of the principal the service acts for),
    ``kms:ViaService`` (``SERVICE.REGION.amazonaws.com`` when a service calls on the
    caller's behalf), ``kms:EncryptionContext:KEY`` for each pair and
    ``kms:EncryptionContextKeys`` (multivalued), on top of ``base`` (the session's
    global keys, ``aws:PrincipalArn`` and so on).
    https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html
    """
    context: dict[str, ContextValue] = dict(base or {})
    if caller_account:
        context["kms:CallerAccount"] = caller_account
    if via_service:
        context["kms:ViaService"] = via_service
    for name, value in encryption_context.items():
        context[f"kms:EncryptionContext:{name}"] = value
    if encryption_context:
        context["kms:EncryptionContextKeys"] = sorted(encryption_context)
    return context
