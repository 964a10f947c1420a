"""A service's valid regions are read from one botocore session, not a new one per service.

LocalStack 4.9.2 builds each service's store (``RegionBundle``, on the service's first
request in an account) with ``aws_stack.get_valid_regions_for_service``, which makes
a new ``boto3.Session()`` and asks it three times for the regions of an endpoint
prefix. A new session has an empty loader, so every service first reads botocore's
``endpoints.json`` (1.9 MB), lists the data directories (``isdir`` on every service
folder) and loads the service's model. Profiled on tests/job_poller/test_example.py
(emulation/profiler.py): 3.5 CPU-seconds of LocalStack's 13 in that path.

The answer depends on nothing but the service name and botocore's data, so one
session, kept for the process, gives the same lists (the function keeps LocalStack's
per-name ``lru_cache``); a lock keeps two first requests from loading at once.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

LOG = logging.getLogger(__name__)

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
    """Patch LocalStack 4.9.2 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services import stores
        from localstack.utils.aws import aws_stack
    except ImportError:
        return False
    if version.__version__ != "4.9.2" or not hasattr(stores, "get_valid_regions_for_service"):
        LOG.warning("sfn-patterns region lookup not applied (localstack %s)", version.__version__)
        return False
    # stores imported the function by name; the other callers read aws_stack's attribute
    # at call time or import it later (the DynamoDB providers), after this patch.
    aws_stack.get_valid_regions_for_service = valid_regions_for_service
    stores.get_valid_regions_for_service = valid_regions_for_service
    return True
