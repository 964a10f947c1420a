"""Benchmark the semaphore on LocalStack: cost of blocking, and admission latency.

Applies examples/semaphore (limit 1 by default), starts N executions at once,
each holding the slot for --hold seconds, and reads every execution's history:

* transitions per blocked minute: states entered before admission, divided by
  the minutes spent before admission (the cost of waiting, per execution);
* time to admission after a release: for each admission, the time since the
  latest release before it (how long a free slot stays unused).

Usage: .venv/bin/python scripts/bench_semaphore.py -n 5 --hold 3 [--wait-min 1 --wait-max 3]
Set LOCALSTACK_ENDPOINT to use a running LocalStack; otherwise one is started.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import boto3

from sfn_patterns_localstack.terraform import Workspace

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "semaphore"
ACQUIRED = "Critical section"
RELEASE = "Semaphore: Release"


def _client(endpoint: str, service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def _history(sfn: Any, arn: str) -> list[dict[str, Any]]:
    events, token = [], None
    while True:
        kwargs = {"executionArn": arn, "maxResults": 1000}
        if token:
            kwargs["nextToken"] = token
        page = sfn.get_execution_history(**kwargs)
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


def measure(sfn: Any, arn: str) -> dict[str, Any]:
    """Start, admission and release times and transitions before admission."""
    events = _history(sfn, arn)
    start = events[0]["timestamp"].timestamp()
    entered = [
        (e["timestamp"].timestamp(), e["stateEnteredEventDetails"]["name"])
        for e in events
        if e["type"].endswith("StateEntered")
    ]
    admitted = next(t for t, name in entered if name == ACQUIRED)
    released = next(t for t, name in entered if name == RELEASE)
    return {
        "start": start,
        "admitted": admitted,
        "released": released,
        "transitions_before": sum(1 for t, _ in entered if t < admitted),
    }


def run(endpoint: str, n: int, hold: float, *, wait_min: int, wait_max: int, limit: int) -> None:
    """Apply the example, run ``n`` executions, print the measurements, destroy."""
    prefix = f"bench-{uuid.uuid4().hex[:6]}"
    variables = {
        "name_prefix": prefix,
        "semaphore_limit": limit,
        "wait_min_seconds": wait_min,
        "wait_max_seconds": wait_max,
        "acquire_timeout_seconds": 3600,
    }
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace(EXAMPLE, endpoint, Path(scratch), log=lambda line: None)
        try:
            workspace.init()
            workspace.apply(variables)
            machine = workspace.outputs()["embedded_state_machine_arn"]
            sfn = _client(endpoint, "stepfunctions")
            arns = [
                sfn.start_execution(
                    stateMachineArn=machine, input=json.dumps({"sleep_seconds": hold})
                )["executionArn"]
                for _ in range(n)
            ]
            deadline = time.monotonic() + 60 + n * (hold + wait_max) * 3
            while time.monotonic() < deadline:
                statuses = [sfn.describe_execution(executionArn=a)["status"] for a in arns]
                if "RUNNING" not in statuses:
                    break
                time.sleep(1)
            if set(statuses) != {"SUCCEEDED"}:
                raise SystemExit(f"not all executions succeeded: {statuses}")
            rows = [measure(sfn, arn) for arn in arns]
        finally:
            workspace.destroy(variables)
            workspace.close()

    blocked = [r for r in rows if r["admitted"] - r["start"] > 1.0]
    blocked_minutes = sum((r["admitted"] - r["start"]) / 60 for r in blocked)
    blocked_transitions = sum(r["transitions_before"] for r in blocked)
    releases = sorted(r["released"] for r in rows)
    delays = []
    for row in sorted(rows, key=lambda r: r["admitted"])[limit:]:
        before = [t for t in releases if t <= row["admitted"]]
        if before:
            delays.append(row["admitted"] - before[-1])
    print(f"executions: {n}, limit: {limit}, hold: {hold} s, wait: {wait_min}-{wait_max} s")
    if blocked_minutes:
        print(
            f"blocked executions: {len(blocked)}, blocked minutes: {blocked_minutes:.2f}, "
            f"transitions per blocked minute: {blocked_transitions / blocked_minutes:.1f} "
            f"(model: 5 per attempt, {5 * 60 / ((wait_min + wait_max) / 2):.1f} per minute)"
        )
    if delays:
        print(
            f"time to admission after a release: median {statistics.median(delays):.2f} s, "
            f"max {max(delays):.2f} s over {len(delays)} admissions"
        )


def main() -> None:
    """Parse arguments and run the benchmark on LocalStack."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="executions started at once")
    parser.add_argument("--limit", type=int, default=1, help="semaphore limit")
    parser.add_argument("--hold", type=float, default=3, help="seconds in the critical section")
    parser.add_argument("--wait-min", type=int, default=1)
    parser.add_argument("--wait-max", type=int, default=3)
    args = parser.parse_args()
    options = {"wait_min": args.wait_min, "wait_max": args.wait_max, "limit": args.limit}
    endpoint = os.environ.get("LOCALSTACK_ENDPOINT")
    if endpoint:
        run(endpoint, args.n, args.hold, **options)
        return
    from sfn_patterns_localstack import server

    instance = server.start()
    try:
        run(instance.endpoint, args.n, args.hold, **options)
    finally:
        instance.stop()


if __name__ == "__main__":
    main()
