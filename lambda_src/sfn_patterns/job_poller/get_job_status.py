"""Get Job Status: ask the adapter, normalise the status, enforce the start-time timeout.

Payload: ``{"context": $$, "poller": name, "job": handle, "timeout_strategy": ...,
"polling": "loop" | "retry", "completion": "poll" | "event", ...}``. The status is
checked *before* the deadline, so a job that finished just after it still counts as
finished; only a job that is still running past ``timeout_seconds`` raises
JobTimeoutError, which the loop's Catch routes to its timeout exit.

Three ways to report a running job, one per state machine shape:

* ``polling = "loop"``: return ``RUNNING``; the Choice loops through a Wait.
* ``polling = "retry"``: raise JobStillRunning; the Task's Retry polls again.
* ``completion = "event"`` (invoked ``.waitForTaskToken``): register the task token
  under the job's id first, then check once; a finished job's outcome is sent to the
  token at once, a running one stays parked until its completion event arrives (see
  :mod:`sfn_patterns.event_completion`) or the task times out and checks again.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from sfn_patterns import clients, metrics

from . import adapters, store
from .errors import FAILED, RUNNING, SUCCEEDED, AdapterError, JobStillRunning, JobTimeoutError
from .run_job import request_from_event

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

KNOWN = (SUCCEEDED, FAILED, RUNNING)


def normalise(status: Any) -> str:
    """Upper-case a known status; keep anything else verbatim so the Choice rejects it."""
    text = str(status)
    return text.upper() if text.upper() in KNOWN else text


def check(event: dict[str, Any], metadata: Any = "env") -> dict[str, Any]:
    """One status check: ``{"status", "detail", "elapsed_seconds"}`` or JobTimeoutError."""
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
        metrics.emit("job-poller", {"LoopTimeouts": 1})
        raise JobTimeoutError(
            f"poller {request['poller']!r}: job still RUNNING after {elapsed:.1f} s "
            f"(timeout_seconds={limit}, start-time strategy)"
        )
    return answer


def job_id_of(handle: Any) -> str:
    """The id the job's completion events carry: the start adapter's ``job_id``."""
    job_id = handle.get("job_id") if isinstance(handle, dict) else None
    if not isinstance(job_id, str) or not job_id:
        raise AdapterError(
            f"completion = event needs the start adapter's handle to hold the job's id as "
            f"'job_id' (the id its completion events carry); got {handle!r}"
        )
    return job_id


def park_and_check(
    event: dict[str, Any], metadata: Any = "env", tokens: Any = None, sfn: Any = None
) -> dict[str, Any]:
    """Event completion: register the token, then check once (so no end is ever missed).

    Registering first matters: a job that ends after the registration has its event
    find the token; one that ended before is seen by the check that follows.
    Imported here, not at the top: a prebuilt package made for polling needs no
    ``sfn_patterns.event_completion``.
    """
    from sfn_patterns.event_completion.outcome import send_status
    from sfn_patterns.event_completion.tokens import TokenTable

    token = event.get("token")
    if not isinstance(token, str) or not token:
        raise AdapterError("completion = event needs the task token in the payload ('token')")
    job_id = job_id_of(event.get("job"))
    table = tokens or TokenTable(os.environ["TOKEN_TABLE"])
    execution = ((event.get("context") or {}).get("Execution") or {}).get("Id")
    parked = table.park(job_id, token, execution)
    client = sfn or clients.client("stepfunctions")
    answer = check(event, metadata)
    if parked.checks > 1:
        # A fallback check (the park timed out and re-checks): finding the job finished
        # means its completion event never resumed this execution, lost or late.
        lost = answer["status"] != RUNNING and parked.final_status is None
        metrics.emit("job-poller", {"FallbackChecks": 1, "LostCompletionEvents": int(lost)})
    if answer["status"] != RUNNING:
        send_status(client, token, answer["status"], answer)
        return {"completed": job_id, "status": answer["status"]}
    if parked.final_status is not None:
        # The completion event came first and the adapter has not caught up yet.
        send_status(client, token, parked.final_status, parked.detail)
        return {"completed": job_id, "status": parked.final_status}
    max_checks = event.get("max_checks")
    if max_checks is not None and parked.checks > int(max_checks):
        metrics.emit("job-poller", {"LoopTimeouts": 1})
        raise JobTimeoutError(
            f"poller {event.get('poller')!r}: job {job_id} still RUNNING after "
            f"{parked.checks - 1} fallback checks (wait-count strategy, limit {max_checks})"
        )
    return {"parked": job_id, "checks": parked.checks}


def handler(event: dict[str, Any], context: Any, metadata: Any = "env") -> dict[str, Any]:
    """Return the status (loop), raise JobStillRunning (retry) or park (event)."""
    LOG.info("get job status: %s", json.dumps(event, default=str)[:4000])
    if event.get("completion") == "event":
        return park_and_check(event, metadata)
    answer = check(event, metadata)
    if event.get("polling") == "retry" and answer["status"] == RUNNING:
        raise JobStillRunning(
            f"poller {event.get('poller')!r}: job still RUNNING"
            + (f" after {answer['elapsed_seconds']} s" if answer["elapsed_seconds"] else "")
        )
    return answer
