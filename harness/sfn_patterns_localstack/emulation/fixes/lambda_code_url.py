"""GetFunction presigns its code URL with one S3 client per endpoint, not a new one per call.

LocalStack 4.14.0 answers every Lambda ``GetFunction`` (Terraform reads each function
on every refresh, plan and apply) with a presigned URL of the code archive, made by a
new ``boto3.client("s3", ...)`` each time (``lambda_models.S3Code.generate_presigned_url``,
the same as 4.9.2's): building a client costs far more than the signature (0.5
CPU-second of LocalStack's on tests/dag_aggregate/test_dependency_on_localstack.py,
emulation/profiler.py, measured on 4.9.2). The client's inputs are constants but the
endpoint, so one client per endpoint (clients are thread-safe) signs the same URL: same
bucket, key, version, credentials and region; only the signing time differs, as
between two calls before. AWS has no such cost to emulate: the URL is all it returns.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

_clients: dict[str, Any] = {}
_lock = threading.Lock()


def s3_client(endpoint_url: str) -> Any:
    """LocalStack's presigning client for ``endpoint_url``, made once."""
    client = _clients.get(endpoint_url)
    if client is not None:
        return client
    import boto3
    from localstack import config
    from localstack.constants import AWS_REGION_US_EAST_1, INTERNAL_AWS_SECRET_ACCESS_KEY

    with _lock:
        client = _clients.get(endpoint_url)
        if client is None:
            client = _clients[endpoint_url] = boto3.client(
                "s3",
                region_name=AWS_REGION_US_EAST_1,
                aws_access_key_id=config.INTERNAL_RESOURCE_ACCOUNT,
                aws_secret_access_key=INTERNAL_AWS_SECRET_ACCESS_KEY,
                endpoint_url=endpoint_url,
            )
    return client


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.lambda_.invocation import lambda_models
    except ImportError:
        return False
    original = getattr(lambda_models.S3Code, "generate_presigned_url", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning("sfn-patterns code URL patch not applied (localstack %s)", version.__version__)
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def generate_presigned_url(self: Any, endpoint_url: str) -> str:
        params = {"Bucket": self.s3_bucket, "Key": self.s3_key}
        if self.s3_object_version:
            params["VersionId"] = self.s3_object_version
        return s3_client(endpoint_url).generate_presigned_url("get_object", Params=params)

    generate_presigned_url._sfnp_patched = True  # type: ignore[attr-defined]
    lambda_models.S3Code.generate_presigned_url = generate_presigned_url
    return True
