"""Benchmark the sqs-throttle example on LocalStack.

Applies examples/sqs-throttle, enqueues N requests that each run ``--seconds``,
drives the starter by invoking its Lambda (as the schedule would, but back to
back), then prints, from the target executions' own history:

* state transitions spent by queued (not yet admitted) work per blocked minute:
  queued requests are SQS messages, so this is the count of target history
  events that occurred before each execution's own start (0 by design, measured);
* transitions per admitted execution (independent of how long it queued);
* time to admission after a slot frees: for the k-th execution started beyond
  MAX, its startDate minus the k-th stopDate (the slot it took);
* peak concurrency measured from startDate/stopDate.

    .venv/bin/python scripts/bench_sqs_throttle.py --requests 30 --max 4 --seconds 2
    (set LOCALSTACK_ENDPOINT to reuse a running LocalStack)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import boto3

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "lambda_src"), str(REPO / "harness")]

from sfn_patterns.sqs_throttle import enqueue  # noqa: E402
from sfn_patterns_localstack import server  # noqa: E402
from sfn_patterns_localstack.terraform import Workspace  # noqa: E402


def _client(endpoint: str, service: str):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def _peak(executions: list[dict]) -> int:
    events = sorted(
        [(e["startDate"].timestamp(), 1) for e in executions]
        + [(e["stopDate"].timestamp(), -1) for e in executions]
    )
    peak = running = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return peak


def run(endpoint: str, requests: int, maximum: int, seconds: int, recheck: float) -> dict:
    """Apply, load, drain, measure, destroy; return the measurements."""
    prefix = f"bench-{uuid.uuid4().hex[:6]}"
    variables = {
        "name_prefix": prefix,
        "max_concurrent_executions": maximum,
        "schedule_expression": "rate(1 day)",
        "max_seconds_per_run": 30,
        "recheck_seconds": max(1, int(recheck)),
    }
    workspace = Workspace(
        REPO / "examples/sqs-throttle", endpoint, Path(tempfile.mkdtemp()), log=lambda _: None
    )
    try:
        workspace.init()
        workspace.apply(variables)
        out = workspace.outputs()
        sqs, sfn, lam = (_client(endpoint, s) for s in ("sqs", "stepfunctions", "lambda"))
        t0 = time.time()
        for i in range(requests):
            enqueue(out["queue_url"], {"seconds": seconds}, request_id=f"{prefix}-{i}", client=sqs)
        invocations = 0
        while True:
            attrs = sqs.get_queue_attributes(
                QueueUrl=out["queue_url"], AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]
            if attrs["ApproximateNumberOfMessages"] == "0":
                break
            lam.invoke(
                FunctionName=out["starter_function_name"],
                Payload=json.dumps({"max_seconds": 25}).encode(),
            )
            invocations += 1
        arns = [
            e["executionArn"]
            for page in sfn.get_paginator("list_executions").paginate(
                stateMachineArn=out["target_state_machine_arn"]
            )
            for e in page["executions"]
        ]
        while True:
            described = [sfn.describe_execution(executionArn=a) for a in arns]
            if all(d["status"] != "RUNNING" for d in described):
                break
            time.sleep(1)
        elapsed = time.time() - t0
        transitions = []
        queued_transitions = 0
        for d in described:
            history = sfn.get_execution_history(executionArn=d["executionArn"], maxResults=1000)
            events = history["events"]
            transitions.append(len(events))
            queued_transitions += sum(1 for e in events if e["timestamp"] < d["startDate"])
        starts = sorted(d["startDate"].timestamp() for d in described)
        stops = sorted(d["stopDate"].timestamp() for d in described)
        latencies = [starts[maximum + k] - stops[k] for k in range(len(starts) - maximum)]
        queued_minutes = sum(s - t0 for s in starts) / 60
        return {
            "requests": requests,
            "max": maximum,
            "executions": len(described),
            "succeeded": sum(d["status"] == "SUCCEEDED" for d in described),
            "peak_concurrency": _peak(described),
            "starter_invocations": invocations,
            "wall_seconds": round(elapsed, 1),
            "queued_request_minutes": round(queued_minutes, 2),
            "transitions_per_blocked_minute": (
                round(queued_transitions / queued_minutes, 3) if queued_minutes else 0
            ),
            "history_events_per_execution": statistics.mean(transitions) if transitions else 0,
            "admission_after_free_s": {
                "median": round(statistics.median(latencies), 2) if latencies else None,
                "max": round(max(latencies), 2) if latencies else None,
            },
        }
    finally:
        workspace.destroy(variables)
        workspace.close()


def main() -> int:
    """Parse arguments, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--max", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--recheck", type=float, default=1)
    args = parser.parse_args()
    endpoint = os.environ.get("LOCALSTACK_ENDPOINT")
    instance = None
    if not endpoint:
        instance = server.start()
        endpoint = instance.endpoint
    try:
        print(json.dumps(run(endpoint, args.requests, args.max, args.seconds, args.recheck)))
    finally:
        if instance:
            instance.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
