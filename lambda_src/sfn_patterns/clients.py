"""boto3 clients for the runtime: botocore's ``standard`` retry mode, bounded attempts.

Every AWS client the runtime's handlers build comes from here, so a throttled or
briefly failing call (``ThrottlingException``, ``ProvisionedThroughputExceededException``,
``TooManyRequestsException``, 5xx, a reset connection) is retried with exponential
backoff and full jitter a bounded number of times, and then raised: the handler fails,
and the Step Functions Task that invoked it retries or fails with a named error. A
retry mode left to the environment (``legacy`` unless ``AWS_RETRY_MODE`` says
otherwise) retries fewer errors and follows no budget of ours.

``standard`` rather than ``adaptive``: adaptive mode's client-side rate limiter
sleeps before sending once it has seen a throttle, which in a short-lived Lambda
spends the function's own timeout waiting; the Step Functions Retry above it is the
place for long waits. The pattern packages share this module (it is in every zip);
pynamodb models (status_table) take the same budget through ``max_retry_attempts``.
"""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config

# Total attempts of one call, the first included (botocore's ``total_max_attempts``;
# its ``max_attempts`` counts retries only): at most three retries, whose backoffs
# (random below 1, 2 and 4 s: full jitter) stay far inside any handler's timeout.
MAX_ATTEMPTS = 4
RETRIES = {"mode": "standard", "total_max_attempts": MAX_ATTEMPTS}


def config() -> Config:
    """The botocore Config every runtime client uses (a new object: Config merges)."""
    return Config(retries=dict(RETRIES))


def client(service: str, session: Any = None, **kwargs: Any) -> Any:
    """A boto3 client for ``service`` with the bounded standard retries.

    ``session`` is a ``boto3.session.Session`` (for credentials of an assumed role);
    ``kwargs`` go to ``client()`` (credentials, region).
    """
    return (session or boto3).client(service, config=config(), **kwargs)
