"""Step Functions calls with one session per role, as on AWS, not one per call (LocalStack 4.14.0).

Profiled on the 500-task dag-aggregate run (py-spy, LocalStack's process holding the
GIL), a tenth of the emulator's time went to ``boto_client_for``: for every Task
state it calls (a Lambda invoke, an SDK integration), LocalStack's Step Functions
makes an internal STS ``AssumeRole`` request through its own gateway and then builds
a new botocore client with those credentials, which no client cache can reuse since
the keys are new each time. The profile was taken on 4.9.2; 4.14.0's
``boto_client_for`` (``asl/utils/boto_client.py``) and ``connect_to.with_assumed_role``
are the same code, so every Task still pays for both.

AWS assumes the state machine's role and reuses the session. So one assumed-role
session per (role, region, service principal) is kept for up to ``KEEP_SECONDS``
(well inside the assumed role's default hour), assumed under a lock (two tasks that
start at once, the branches of a Parallel, share it), with one client per service
made from it. The IAM emulation then sees one caller per role, whose ``aws:userid``
conditions such as ``redshift-data:statement-owner-iam-userid`` compare (a statement
executed by one session, described by another, is another owner's statement).
botocore's clients are thread-safe, and LocalStack already shares clients between
threads.

A Task's ``Credentials: {RoleArn}``: on AWS the state machine's role assumes that
role (its identity policy must allow ``sts:AssumeRole`` on it, and the role's trust
policy must name the state machine's role); LocalStack 4.14.0 (``Credentials._eval_body``
yields the bare ARN, which ``boto_client_for`` hands to ``with_assumed_role``) assumes
it directly as the Step Functions service principal, so a trust policy written for
AWS refuses it. Here the Task's credentials carry the execution role (``_ChainedArn``)
and the session is assumed through the execution role's session, as AWS does.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
KEEP_SECONDS = 900.0


class _ChainedArn(str):
    """A Task's ``Credentials`` role ARN that knows the execution role assuming it."""

    via: str


class _Session:
    """One assumed-role session and the clients made from it."""

    def __init__(self, made_at: float, factory: Any) -> None:
        self.made_at = made_at
        self.factory = factory
        self.clients: dict[str, Any] = {}


class _CachingConnect:
    """Stands in for ``connect_to`` inside LocalStack's Step Functions client module only."""

    def __init__(self, connect_to: Any) -> None:
        self._connect_to = connect_to
        self._lock = threading.Lock()
        self._sessions: dict[tuple, _Session] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connect_to, name)

    def with_assumed_role(self, **kwargs: Any) -> _RoleClients:
        return _RoleClients(self, kwargs)

    def _session(self, kwargs: dict[str, Any]) -> _Session:
        """The kept session of this role (assumed now if none is fresh); hold the lock."""
        role = kwargs.get("role_arn")
        key = (
            str(role),
            getattr(role, "via", None),
            kwargs.get("region_name"),
            kwargs.get("service_principal"),
            id(kwargs.get("config")),
        )
        now = time.monotonic()
        kept = self._sessions.get(key)
        if kept is not None and now - kept.made_at < KEEP_SECONDS:
            return kept
        via = getattr(role, "via", None)
        if via:
            # The execution role's own session assumes the Task's role (AWS's chain).
            outer = self._session({**kwargs, "role_arn": via})
            sts = outer.factory.get_client(service="sts")
            credentials = sts.assume_role(
                RoleArn=str(role), RoleSessionName=f"session-{uuid.uuid4().hex[:8]}"
            )["Credentials"]
            factory = self._connect_to(
                region_name=kwargs.get("region_name"),
                aws_access_key_id=credentials["AccessKeyId"],
                aws_secret_access_key=credentials["SecretAccessKey"],
                aws_session_token=credentials["SessionToken"],
                endpoint_url=kwargs.get("endpoint_url"),
                config=kwargs.get("config"),
            )
        else:
            factory = self._connect_to.with_assumed_role(**kwargs)
        kept = _Session(now, factory)
        self._sessions[key] = kept
        return kept

    def client(self, kwargs: dict[str, Any], service: str) -> Any:
        """The kept client of this service for the role's session."""
        # Under one lock: a role is assumed once even when tasks start together. The
        # AssumeRole request is served in-process, in a few milliseconds.
        with self._lock:
            session = self._session(kwargs)
            made = session.clients.get(service)
            if made is None:
                made = session.factory.get_client(service=service)
                session.clients[service] = made
            return made


class _RoleClients:
    """What ``with_assumed_role`` returns, as far as ``boto_client_for`` uses it."""

    def __init__(self, owner: _CachingConnect, kwargs: dict[str, Any]) -> None:
        self._owner = owner
        self._kwargs = kwargs

    def get_client(self, service: str) -> Any:
        return self._owner.client(self._kwargs, service)


def _chain_task_credentials(credentials_class: Any) -> None:
    """Make ``Credentials: {RoleArn}`` name the execution role that assumes the role."""
    original = credentials_class._eval_body

    def _eval_body(self: Any, env: Any) -> None:
        original(self, env)
        computed = env.stack[-1]
        execution_role = getattr(getattr(env, "aws_execution_details", None), "role_arn", None)
        if execution_role and isinstance(getattr(computed, "role_arn", None), str):
            chained = _ChainedArn(computed.role_arn)
            chained.via = execution_role
            computed.role_arn = chained

    credentials_class._eval_body = _eval_body
    credentials_class._sfnp_chained = True


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.state.state_execution.state_task import (  # noqa: E501
            credentials,
        )
        from localstack.services.stepfunctions.asl.utils import boto_client
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION or not hasattr(boto_client, "connect_to"):
        LOG.warning("sfn-patterns client cache not applied (localstack %s)", version.__version__)
        return False
    if not isinstance(boto_client.connect_to, _CachingConnect):
        boto_client.connect_to = _CachingConnect(boto_client.connect_to)
    if not getattr(credentials.Credentials, "_sfnp_chained", False):
        _chain_task_credentials(credentials.Credentials)
    return True
