"""A service's valid regions are read from one botocore session, not a new one per service.

LocalStack 4.14.0 builds each service's store (``RegionBundle``, on the service's first
request in an account) with ``aws_stack.get_valid_regions_for_service`` (the same as
4.9.2's), which makes a new ``boto3.Session()`` and asks it three times for the regions
of an endpoint prefix. A new session has an empty loader, so every service first reads
botocore's ``endpoints.json`` (1.9 MB), lists the data directories (``isdir`` on every
service folder) and loads the service's model. Profiled on tests/job_poller/test_example.py
(emulation/profiler.py, on 4.9.2): 3.5 CPU-seconds of LocalStack's 13 in that path. AWS
answers from its own endpoint tables; nothing of this cost is AWS's.

The answer depends on nothing but the service name and botocore's data, so one
session, kept for the process, gives the same lists (the function keeps LocalStack's
per-name ``lru_cache``); a lock keeps two first requests from loading at once.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
# The modules of LocalStack 4.14.0 that import the function by name (besides stores).
BY_NAME = (
    "localstack.services.dynamodb.provider",
    "localstack.services.dynamodb.v2.provider",
    "localstack.services.s3.provider",
)

_session: Any = None
_lock = threading.Lock()


def _regions(service_name: str) -> list[str]:
    """LocalStack's own body, on the shared session."""
    global _session  # noqa: PLW0603 - one session for the process
    import boto3

    with _lock:
        if _session is None:
            _session = boto3.Session()
        regions = list(_session.get_available_regions(service_name))
        regions.extend(_session.get_available_regions("cloudwatch", partition_name="aws-us-gov"))
        regions.extend(_session.get_available_regions("cloudwatch", partition_name="aws-cn"))
    return regions


valid_regions_for_service = functools.lru_cache(_regions)
valid_regions_for_service._sfnp_patched = True  # type: ignore[attr-defined]


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services import stores
        from localstack.utils.aws import aws_stack
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION or not hasattr(
        stores, "get_valid_regions_for_service"
    ):
        LOG.warning("sfn-patterns region lookup not applied (localstack %s)", version.__version__)
        return False
    # stores imported the function by name; cloudwatch's alarm scheduler reads aws_stack's
    # attribute at call time; the DynamoDB and S3 providers import it by name when
    # LocalStack loads them (on their service's first request, after this patch), or
    # before it: those already loaded are patched too.
    original = aws_stack.get_valid_regions_for_service
    aws_stack.get_valid_regions_for_service = valid_regions_for_service
    stores.get_valid_regions_for_service = valid_regions_for_service
    for name in BY_NAME:
        module = sys.modules.get(name)
        if getattr(module, "get_valid_regions_for_service", None) is original:
            module.get_valid_regions_for_service = valid_regions_for_service
    return True
