"""Run the sqs-throttle starter the way its schedule would, from outside it.

The fault test and the fault benchmark both stand in for the starter's schedule: one
synchronous run after another until the queue is empty, a short pause after a run
that could not admit (a crashed run's lease, a message hidden after a failed start).
One copy here, so the benchmark measures what the test proves.
"""

from __future__ import annotations

import json
import time
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns_localstack import queues

# How a run ended that leaves work waiting a moment: pause before the next run.
STALLED = frozenset({"crashed", "busy", "another_starter_running", "start_failed", "lease_lost"})
# Nothing visible to admit while the queue still holds messages (in flight: received
# by a run that crashed, until their visibility timeout): the schedule would wait a
# tick; a shorter pause keeps runs from spinning (each a Lambda invoke) meanwhile.
IDLE = frozenset({"queue_empty", "full_no_backlog"})
IDLE_PAUSE_SECONDS = 1.0


def run_once(lam: Any, function_name: str, max_seconds: float = 6) -> str:
    """One synchronous run of the starter: its report's ``stopped``, "crashed" or "busy"."""
    try:
        answer = lam.invoke(
            FunctionName=function_name, Payload=json.dumps({"max_seconds": max_seconds}).encode()
        )
    except ClientError as error:  # reserved concurrency 1: a run is still going
        if error.response["Error"]["Code"] != "TooManyRequestsException":
            raise
        return "busy"
    if "FunctionError" in answer:
        return "crashed"
    return json.loads(answer["Payload"].read())["stopped"]


def run_until_empty(
    lam: Any, sqs: Any, queue_url: str, function_name: str, timeout: float
) -> list[str]:
    """Runs until the queue is empty or ``timeout`` seconds pass; how each one ended."""
    outcomes: list[str] = []
    deadline = time.monotonic() + timeout
    while queues.depth(sqs, queue_url) and time.monotonic() < deadline:
        outcomes.append(run_once(lam, function_name))
        if outcomes[-1] in STALLED:
            time.sleep(2)
        elif outcomes[-1] in IDLE:
            time.sleep(IDLE_PAUSE_SECONDS)
    return outcomes
