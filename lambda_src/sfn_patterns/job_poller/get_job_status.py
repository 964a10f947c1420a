"""Get Job Status: ask the adapter, normalise the status, enforce the start-time timeout.

Payload: ``{"context": $$, "poller": name, "job": handle, "timeout_strategy": ...,
"polls": n}``. The status is checked *before* the deadline, so a job that
finished just after it still counts as finished; only a job that is still
running past ``timeout_seconds`` raises JobTimeoutError, which the loop's Catch
routes to its timeout exit.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from . import adapters, store
from .errors import FAILED, RUNNING, SUCCEEDED, AdapterError, JobTimeoutError
from .run_job import request_from_event

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

KNOWN = (SUCCEEDED, FAILED, RUNNING)


def normalise(status: Any) -> str:
    """Upper-case a known status; keep anything else verbatim so the Choice rejects it."""
    text = str(status)
    return text.upper() if text.upper() in KNOWN else text


def handler(event: dict[str, Any], context: Any, metadata: Any = "env") -> dict[str, Any]:
    """Return ``{"status", "detail", "elapsed_seconds"}`` or raise JobTimeoutError."""
    LOG.info("get job status: %s", json.dumps(event, default=str)[:4000])
    request = request_from_event(event)
    request["job"] = event.get("job")
    result = adapters.load(os.environ.get("JOB_STATUS_ADAPTER", ""), "status")(request)
    if not isinstance(result, dict) or "status" not in result:
        raise AdapterError(f"status adapter returned {result!r}, not an object with 'status'")
    status = normalise(result["status"])
    answer: dict[str, Any] = {"status": status, "detail": result, "elapsed_seconds": None}
    if event.get("timeout_strategy") != "start-time":
        return answer
    metadata_store = store.from_env() if metadata == "env" else metadata
    if metadata_store is None:
        raise AdapterError("timeout_strategy start-time needs METADATA_STORE s3 or dynamodb")
    started = metadata_store.get(request["execution_key"], request["poller"], "start")
    if started is None:
        raise AdapterError(
            f"no start time recorded for poller {request['poller']!r} of "
            f"{request['execution_arn']}: Run Job must run first"
        )
    elapsed = time.time() - float(started["started_at"])
    answer["elapsed_seconds"] = round(elapsed, 3)
    limit = started.get("timeout_seconds")
    if status == RUNNING and limit is not None and elapsed >= float(limit):
        raise JobTimeoutError(
            f"poller {request['poller']!r}: job still RUNNING after {elapsed:.1f} s "
            f"(timeout_seconds={limit}, start-time strategy)"
        )
    return answer
