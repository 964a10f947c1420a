"""Read Step Functions executions: their histories, when they stop, how they overlap.

The demo, the tests and the benchmarks all ask the same questions of executions that
LocalStack (or AWS) ran; one copy of each answer lives here, so an oracle the tests
rely on is written once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any


def history(sfn: Any, execution_arn: str) -> list[dict[str, Any]]:
    """Every history event of one execution, oldest first."""
    events: list[dict[str, Any]] = []
    for page in sfn.get_paginator("get_execution_history").paginate(executionArn=execution_arn):
        events += page["events"]
    return events


def wait_stopped(
    sfn: Any,
    arns: Sequence[str],
    timeout: float,
    interval: float = 0.5,
    on_stop: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Describe each execution once it has stopped (those running at the deadline: left out).

    Why one call per interval: waiting for all of N executions needs only the first
    one still running, and the others are described once it has stopped. Describing
    every pending execution each round cost N calls per interval (a test of 24
    executions asked about 50 a second, and LocalStack answered each one).
    """
    done: dict[str, dict[str, Any]] = {}
    pending = list(dict.fromkeys(arns))
    deadline = time.monotonic() + timeout
    while pending:
        arn = pending[0]
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            done[arn] = described
            pending.pop(0)
            if on_stop is not None:
                on_stop(arn, described)
            continue
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    return done


def job_starts_and_decisions(events: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """How often a job poller's execution started its job and decided the job's outcome.

    Started: its ``<poller> Run Job`` Task exited; decided: it entered its
    ``<poller> Succeeded`` or ``<poller> Failed`` state. Under lost, late or doubled
    events and retried calls, each must stay 1 (the fault tests and bench_faults).
    """
    started = sum(
        1
        for e in events
        if e["type"] == "TaskStateExited"
        and e["stateExitedEventDetails"]["name"].endswith(" Run Job")
    )
    decided = sum(
        1
        for e in events
        if e["type"].endswith("StateEntered")
        and e["stateEnteredEventDetails"]["name"].endswith((" Succeeded", " Failed"))
    )
    return started, decided


def count_transitions(events: Sequence[dict[str, Any]]) -> int:
    """State transitions billed for an execution (entered states, as AWS counts them)."""
    return sum(1 for event in events if event["type"].endswith("StateEntered"))


def peak_overlap(intervals: Sequence[tuple[float, float]]) -> int:
    """Most intervals open at one instant (an end at t sorts before a start at t)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return peak
