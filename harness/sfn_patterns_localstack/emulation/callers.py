"""Who is calling: a request's access key resolved to the role session it belongs to.

AWS decides throttling, fault injection (FIS targets a role's calls) and IAM by the
calling principal. LocalStack 4.14.0 signs every call a service makes on a role's
behalf with credentials from ``sts:AssumeRole`` on moto's STS backend: Step Functions
tasks (the state machine's role), EventBridge targets with a ``RoleArn``, and Lambda
functions (their execution role). So the access key of a request names the role
session, and moto's STS backend maps it back to the role.

A request signed with the account's own credentials (the tests' ``test`` key, or an
account id used as key by LocalStack's internal clients) has no role: :func:`caller_of`
returns None. The fault injector (:mod:`.faults`) matches ``caller_role`` with it;
IAM enforcement (:mod:`.iam`) needs the same answer, hence one module for both.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Caller:
    """A role session: the role's ARN and the session's ``assumed-role`` ARN."""

    access_key_id: str
    role_arn: str
    session_arn: str


# Access key -> Caller (or None for "no role"). A key is only ever used after the
# AssumeRole that created it returned, so a key that resolves to no role now never
# will later: both answers can be cached for the life of the process.
_cache: dict[str, Caller | None] = {}
_lock = threading.Lock()


def access_key_of(context: Any) -> str | None:
    """The access key id a request was signed with (SigV4 or SigV2), or None."""
    from localstack.utils.aws.request_context import extract_access_key_id_from_auth_header

    return extract_access_key_id_from_auth_header(context.request.headers)


def resolve(access_key_id: str, account_id: str, partition: str = "aws") -> Caller | None:
    """The role session behind ``access_key_id`` in moto's STS backend, or None."""
    with _lock:
        if access_key_id in _cache:
            return _cache[access_key_id]
    from moto.sts.models import sts_backends

    assumed = sts_backends[account_id][partition].get_assumed_role_from_access_key(access_key_id)
    caller = (
        None
        if assumed is None
        else Caller(access_key_id, role_arn=assumed.role_arn, session_arn=assumed.arn)
    )
    with _lock:
        _cache[access_key_id] = caller
    return caller


def caller_of(context: Any) -> Caller | None:
    """The role session that signed this (parsed) request, or None for the account itself."""
    access_key_id = access_key_of(context)
    if not access_key_id or not context.account_id:
        return None
    return resolve(access_key_id, context.account_id, context.partition or "aws")
