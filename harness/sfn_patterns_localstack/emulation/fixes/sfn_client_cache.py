"""Step Functions reuses a task's AWS client per role, not one per call (LocalStack 4.9.2).

Profiled on the 500-task dag-aggregate run (py-spy, LocalStack's process holding the
GIL), a tenth of the emulator's time went to ``boto_client_for``: for every Task
state it calls (a Lambda invoke, an SDK integration), LocalStack's Step Functions
makes an internal STS ``AssumeRole`` request through its own gateway and then builds
a new botocore client with those credentials, which no client cache can reuse since
the keys are new each time.

AWS assumes the state machine's role once per execution and reuses the session; in
LocalStack the credentials only name the account, and it enforces neither their
expiry nor the role's policies. So one client per (service, region, role) is kept
for up to ``KEEP_SECONDS`` (well inside the assumed role's default hour). botocore's
clients are thread-safe, and LocalStack already shares clients between threads.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

LOG = logging.getLogger(__name__)
KEEP_SECONDS = 900.0


class _CachingConnect:
    """Stands in for ``connect_to`` inside LocalStack's Step Functions client module only."""

    def __init__(self, connect_to: Any) -> None:
        self._connect_to = connect_to
        self._lock = threading.Lock()
        self._clients: dict[tuple, tuple[float, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connect_to, name)

    def with_assumed_role(self, **kwargs: Any) -> _RoleClients:
        return _RoleClients(self, kwargs)

    def client(self, kwargs: dict[str, Any], service: str) -> Any:
        key = (
            service,
            kwargs.get("role_arn"),
            kwargs.get("region_name"),
            kwargs.get("service_principal"),
            id(kwargs.get("config")),
        )
        now = time.monotonic()
        with self._lock:
            kept = self._clients.get(key)
            if kept and now - kept[0] < KEEP_SECONDS:
                return kept[1]
        made = self._connect_to.with_assumed_role(**kwargs).get_client(service=service)
        with self._lock:
            self._clients[key] = (now, made)
        return made


class _RoleClients:
    """What ``with_assumed_role`` returns, as far as ``boto_client_for`` uses it."""

    def __init__(self, owner: _CachingConnect, kwargs: dict[str, Any]) -> None:
        self._owner = owner
        self._kwargs = kwargs

    def get_client(self, service: str) -> Any:
        return self._owner.client(self._kwargs, service)


def apply() -> bool:
    """Patch LocalStack 4.9.2 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.utils import boto_client
    except ImportError:
        return False
    if version.__version__ != "4.9.2" or not hasattr(boto_client, "connect_to"):
        LOG.warning("sfn-patterns client cache not applied (localstack %s)", version.__version__)
        return False
    if not isinstance(boto_client.connect_to, _CachingConnect):
        boto_client.connect_to = _CachingConnect(boto_client.connect_to)
    return True
