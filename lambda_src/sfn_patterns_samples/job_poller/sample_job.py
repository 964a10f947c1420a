"""A sample asynchronous job (an asynchronous job runner) and the adapter that drives it.

The job is a Lambda invoked asynchronously (``InvocationType=Event``): it writes
``RUNNING``, sleeps, then writes its final status to the metadata store, exactly
as a typical job runner writes ``status.txt`` to S3. What it does comes from the
state input, so tests and demos steer it without redeploying::

    {"job": {"duration_seconds": 3, "outcome": "succeed" | "fail" | "unknown",
             "status_errors": 1, "emit_event": true}}

``jobs.<poller>`` overrides ``job`` for one poller when a machine has several.
``status_errors: n`` makes the first n status calls raise RetryableJobError, to
show the Task's Retry at work.

When the module waits for completion events (``completion = "event"``), the job
announces its end as AWS services do: an EventBridge event on the default bus
(source ``sfn-patterns.sample-job``, detail-type ``Sample Job State Change``,
detail ``{"job_id", "state"}``, ``resources`` = this function's ARN).
``emit_event: false`` keeps it quiet, to show the fallback check at work.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

import boto3

from sfn_patterns.job_poller import store
from sfn_patterns.job_poller.errors import (
    FAILED,
    RUNNING,
    SUCCEEDED,
    AdapterError,
    RetryableJobError,
)

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

OUTCOMES = {"succeed": SUCCEEDED, "fail": FAILED, "unknown": "MYSTERY_STATE"}
MAX_DURATION_SECONDS = 600
EVENT_SOURCE = "sfn-patterns.sample-job"
EVENT_DETAIL_TYPE = "Sample Job State Change"


def job_spec(state_input: Any, poller: str) -> dict[str, Any]:
    """The sample job's settings for one poller, validated."""
    state_input = state_input if isinstance(state_input, dict) else {}
    jobs = state_input.get("jobs") or {}
    spec = dict((jobs[poller] if poller in jobs else state_input.get("job")) or {})
    duration = float(spec.get("duration_seconds", 1))
    outcome = spec.get("outcome", "succeed")
    if outcome not in OUTCOMES:
        raise AdapterError(f"sample job outcome must be one of {sorted(OUTCOMES)}, not {outcome!r}")
    if not 0 <= duration <= MAX_DURATION_SECONDS:
        raise AdapterError(f"sample job duration_seconds must be 0-{MAX_DURATION_SECONDS}")
    return {
        "duration_seconds": duration,
        "outcome": outcome,
        "status_errors": int(spec.get("status_errors", 0)),
        "emit_event": bool(spec.get("emit_event", True)),
    }


def _store() -> store.MetadataStore:
    metadata = store.from_env()
    if metadata is None:
        raise AdapterError("the sample job needs METADATA_STORE s3 or dynamodb")
    return metadata


def start(request: dict[str, Any], metadata: Any = None, lambda_client: Any = None) -> dict:
    """Adapter ``start``: write RUNNING, then invoke the runner asynchronously."""
    spec = job_spec(request.get("input"), request["poller"])
    metadata = metadata or _store()
    key, poller = request["execution_key"], request["poller"]
    # Written here, before the async invoke, so the first poll never finds no status.
    metadata.put(key, poller, "status", {"status": RUNNING, "at": time.time()})
    (lambda_client or boto3.client("lambda")).invoke(
        FunctionName=os.environ["SAMPLE_JOB_FUNCTION"],
        InvocationType="Event",
        Payload=json.dumps({"execution_key": key, "poller": poller, **spec}).encode("utf-8"),
    )
    return {"job_id": f"{key}/{poller}", "status_errors": spec["status_errors"]}


def status(request: dict[str, Any], metadata: Any = None) -> dict[str, Any]:
    """Adapter ``status``: read the status the runner wrote (after any injected errors)."""
    metadata = metadata or _store()
    key, poller = request["execution_key"], request["poller"]
    planned_errors = int((request.get("job") or {}).get("status_errors", 0))
    if planned_errors:
        raised = (metadata.get(key, poller, "status-errors") or {}).get("count", 0)
        if raised < planned_errors:
            metadata.put(key, poller, "status-errors", {"count": raised + 1})
            raise RetryableJobError(f"injected transient error {raised + 1}/{planned_errors}")
    document = metadata.get(key, poller, "status")
    if document is None:
        raise AdapterError(f"sample job {key}/{poller} has no status: was it started?")
    return {"status": document["status"], "reason": document.get("reason")}


def announce(job_id: str, state: str, function_arn: str, events_client: Any = None) -> None:
    """Publish the job's end on the default event bus, as an AWS service would."""
    (events_client or boto3.client("events")).put_events(
        Entries=[
            {
                "Source": EVENT_SOURCE,
                "DetailType": EVENT_DETAIL_TYPE,
                "Resources": [function_arn],
                "Detail": json.dumps({"job_id": job_id, "state": state}),
            }
        ]
    )


def runner_handler(
    event: dict[str, Any], context: Any, metadata: Any = None, events_client: Any = None
) -> dict:
    """The job itself: run for ``duration_seconds``, record the outcome, announce it.

    It never raises on a failed outcome: an async invoke that raises is retried
    by Lambda, which would run the job twice; the failure is data, not an error.
    ``at`` is when the job ended: the benchmark measures how soon the state machine
    noticed from it.
    """
    LOG.info("sample job: %s", json.dumps(event))
    metadata = metadata or _store()
    key, poller = event["execution_key"], event["poller"]
    time.sleep(float(event.get("duration_seconds", 1)))
    final = OUTCOMES[event.get("outcome", "succeed")]
    document = {"status": final, "at": time.time()}
    if final == FAILED:
        document["reason"] = "the sample job was asked to fail"
    metadata.put(key, poller, "status", document)
    if os.environ.get("SAMPLE_JOB_EVENTS") == "1" and event.get("emit_event", True):
        announce(f"{key}/{poller}", final, context.invoked_function_arn, events_client)
    return document


def adapter_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The same adapter as a Lambda, for the ``job_adapter`` = Lambda ARN mode."""
    action = event.get("action")
    if action == "start":
        return start(event)
    if action == "status":
        return status(event)
    raise AdapterError(f"action must be start or status, not {action!r}")
