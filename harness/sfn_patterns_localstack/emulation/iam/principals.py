"""Who signed a request: an access key resolved to its role session, and that role's policies.

LocalStack's services act with role sessions exactly where AWS does: Step Functions
assumes the state machine's role for its tasks, Lambda gives a function its execution
role's session credentials, an EventBridge target with a ``RoleArn`` is delivered
with that role. Each session is an ``sts:AssumeRole`` answered by moto's STS backend,
which keeps the access key with the role ARN and session name (``assumed_roles``).

Only temporary keys (``LSIA...``/``ASIA...``) found there are role sessions; the
account's own keys (``test``, a 12-digit account id: Terraform, test admin clients,
LocalStack's internal clients) resolve to None and are not evaluated.

Sessions never change once issued, so they are cached for good (misses too). Role policies are
cached per role and dropped whenever an IAM write passes the gateway (``invalidate``):
Terraform updates policies between tests, and a stale grant would hide a denial.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy, Principal

TEMPORARY_KEY_PREFIXES = ("LSIA", "ASIA")


@dataclass(frozen=True)
class RoleSession:
    """A role session: the role, the session name and the identifiers policies may use."""

    account: str
    role_arn: str
    role_id: str
    session_name: str
    partition: str = "aws"

    @property
    def role_name(self) -> str:
        """The role's name (the last path segment of its ARN)."""
        return self.role_arn.rsplit("/", 1)[-1]

    @property
    def arn(self) -> str:
        """The session's ARN, as AWS names the caller in an AccessDenied message."""
        return (
            f"arn:{self.partition}:sts::{self.account}:assumed-role/"
            f"{self.role_name}/{self.session_name}"
        )

    @property
    def user_id(self) -> str:
        """``aws:userid`` of a role session: ``ROLEID:SESSIONNAME``."""
        return f"{self.role_id}:{self.session_name}"

    @property
    def principal(self) -> Principal:
        """How resource and trust policies may name this caller."""
        root = f"arn:{self.partition}:iam::{self.account}:root"
        return Principal(aws=frozenset({self.arn, self.role_arn, root, self.account}))

    def context(self) -> dict[str, str]:
        """The global condition keys AWS puts in a role session's request context."""
        return {
            "aws:PrincipalArn": self.role_arn,
            "aws:PrincipalAccount": self.account,
            "aws:PrincipalType": "AssumedRole",
            "aws:userid": self.user_id,
            "aws:username": self.session_name,
        }


@dataclass(frozen=True)
class RolePolicies:
    """A role's identity policies (inline and attached managed) and its trust policy."""

    identity: tuple[NamedPolicy, ...]
    trust: NamedPolicy | None


def parse_document(text: Any) -> dict[str, Any]:
    """A policy document from what IAM stored: a dict, JSON, or URL-encoded JSON."""
    if isinstance(text, dict):
        return text
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return json.loads(unquote(str(text)))


class Directory:
    """Resolves access keys to sessions and roles to policies, with the caches above.

    ``find_session(account, access_key)`` and ``find_role(account, role_name)`` read the
    backends; they are injected so unit tests need no LocalStack.
    """

    def __init__(
        self,
        find_session: Callable[[str, str], RoleSession | None],
        find_role: Callable[[str, str], RolePolicies | None],
    ) -> None:
        self._find_session = find_session
        self._find_role = find_role
        self._sessions: dict[str, RoleSession | None] = {}
        self._roles: dict[tuple[str, str], RolePolicies | None] = {}
        self._lock = threading.Lock()

    def session(self, access_key: str | None, account: str) -> RoleSession | None:
        """The role session an access key belongs to, or None (not a role session)."""
        if not access_key or not access_key.startswith(TEMPORARY_KEY_PREFIXES):
            return None
        if access_key in self._sessions:
            return self._sessions[access_key]
        # A key is only used after the AssumeRole that issued it returned, so a miss is
        # final too (GetSessionToken keys of the account itself): cache both.
        found = self._find_session(account, access_key)
        self._sessions[access_key] = found
        return found

    def policies(self, account: str, role_name: str) -> RolePolicies | None:
        """The role's policies (None when the role does not exist), cached until invalidated."""
        key = (account, role_name)
        with self._lock:
            if key in self._roles:
                return self._roles[key]
        found = self._find_role(account, role_name)
        with self._lock:
            self._roles[key] = found
        return found

    def invalidate(self) -> None:
        """Forget every role's policies (an IAM write may have changed any of them)."""
        with self._lock:
            self._roles.clear()


# -- the backends LocalStack 4.14.0 keeps them in (moto's STS and IAM) -----------------
def moto_session(account: str, access_key: str) -> RoleSession | None:
    """Look the key up in moto's STS backend of every account that has sessions.

    The key's own account is tried first (LocalStack encodes it in ``LSIA`` keys);
    cross-account sessions live in the role's account, so the others follow.
    """
    from moto.iam.models import iam_backends
    from moto.sts.models import sts_backends

    accounts = [account, *(a for a in list(sts_backends) if a != account)]
    for candidate in accounts:
        for partition in ("aws",):
            backend = sts_backends[candidate][partition]
            found = backend.get_assumed_role_from_access_key(access_key)
            if found is None:
                continue
            try:
                role_id = (
                    iam_backends[found.account_id][partition].get_role_by_arn(found.role_arn).id
                )
            except Exception:  # a role deleted since: keep the session, not its id
                role_id = "AROAUNKNOWN"
            return RoleSession(
                account=found.account_id,
                role_arn=found.role_arn,
                role_id=role_id,
                session_name=found.session_name,
                partition=partition,
            )
    return None


def moto_role(account: str, role_name: str) -> RolePolicies | None:
    """The role's inline, attached managed and trust policies from moto's IAM backend."""
    from moto.iam.models import iam_backends

    backend = iam_backends[account]["aws"]
    try:
        role = backend.get_role(role_name)
    except Exception:  # moto raises its own NotFound
        return None
    identity = [
        NamedPolicy(f"{role_name}/{name}", parse_document(text))
        for name, text in sorted(role.policies.items())
    ]
    for arn, managed in sorted(role.managed_policies.items()):
        default = next((v for v in managed.versions if v.is_default), None)
        if default is not None:
            identity.append(NamedPolicy(arn, parse_document(default.document)))
    trust = NamedPolicy(
        f"{role_name}/trust-policy", parse_document(role.assume_role_policy_document)
    )
    return RolePolicies(identity=tuple(identity), trust=trust)


def role_name_of(role_arn: str) -> str:
    """The role name of a role ARN (``arn:...:role/path/NAME`` -> ``NAME``)."""
    return role_arn.rsplit("/", 1)[-1]


def account_of(arn: str) -> str:
    """The account id field of an ARN."""
    parts = arn.split(":")
    return parts[4] if len(parts) > 4 else ""
