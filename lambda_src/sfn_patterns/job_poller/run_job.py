"""Run Job: record the start time (start-time strategy), then start the job via the adapter.

Payload (built by the ASL template): ``{"context": $$, "poller": name, "input": $,
"timeout_strategy": ..., "timeout_seconds": N}``. The context object gives the
execution ARN, whose md5 keys the metadata. The start time is
written *before* the job starts, so a slow start counts against the timeout.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from . import adapters, store
from .errors import AdapterError

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)


def request_from_event(event: dict[str, Any]) -> dict[str, Any]:
    """The adapter request: who is polling, for which execution, with which input."""
    context = event.get("context") or {}
    execution_arn = (context.get("Execution") or {}).get("Id")
    if not execution_arn:
        raise AdapterError("the payload has no context.Execution.Id: pass the context object ($$)")
    return {
        "poller": event.get("poller") or "job",
        "execution_arn": execution_arn,
        "execution_key": store.execution_key(execution_arn),
        "attempt": (context.get("State") or {}).get("RetryCount", 0),
    }


def handler(event: dict[str, Any], context: Any, metadata: Any = "env") -> dict[str, Any]:
    """Start one job; return the adapter's handle, which the poll loop carries in its state."""
    LOG.info("run job: %s", json.dumps(event, default=str)[:4000])
    request = request_from_event(event)
    request["input"] = event.get("input")
    metadata_store = store.from_env() if metadata == "env" else metadata
    if event.get("timeout_strategy") == "start-time":
        if metadata_store is None:
            raise AdapterError("timeout_strategy start-time needs METADATA_STORE s3 or dynamodb")
        metadata_store.put(
            request["execution_key"],
            request["poller"],
            "start",
            {
                "started_at": time.time(),
                "timeout_seconds": event.get("timeout_seconds"),
                "execution_arn": request["execution_arn"],
            },
        )
    handle = adapters.load(os.environ.get("JOB_START_ADAPTER", ""), "start")(request)
    if not isinstance(handle, dict):
        raise AdapterError(f"start adapter returned {handle!r}, not a JSON object")
    return handle
