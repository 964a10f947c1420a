"""Runs of a deployed dependency-strategy DAG: start, retry, wait, and read run results.

What ``sfn-patterns dag run | retry | status`` do, kept apart from the click layer so
tests and scripts can call it. The coordinator state machine's input carries
``run_id``, ``select``, ``exclude`` and ``retry``; the runtime writes each run's
document (schema ``run_results.v1.schema.json`` in the runtime package) to the S3
location the coordinator's ``sfn-patterns:run-results`` tag names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from sfn_patterns.dag_aggregate.runtime.artifacts import SCHEMA_VERSION, artifact_key
from sfn_patterns_cli.dag_aggregate.errors import PlanError

RUN_RESULTS_TAG = "sfn-patterns:run-results"
COORDINATOR_COMMENT = "dag-aggregate dependency strategy"


class RunError(PlanError):
    """A run cannot be started, found or read (CLI: one line, exit status 2)."""


def check_coordinator(sfn: Any, state_machine_arn: str) -> None:
    """Refuse a state machine that is not a dependency-strategy coordinator.

    The level strategies run every task level by level: they cannot select or retry.
    """
    definition = json.loads(
        sfn.describe_state_machine(stateMachineArn=state_machine_arn)["definition"]
    )
    if not str(definition.get("Comment", "")).startswith(COORDINATOR_COMMENT):
        raise RunError(
            f"{state_machine_arn} is not a dependency-strategy coordinator: selection and "
            'retry need modules/dag-aggregate with strategy = "dependency" (the level '
            "strategies run every task, level by level)"
        )


def start_run(
    sfn: Any,
    state_machine_arn: str,
    *,
    run_id: str | None = None,
    select: Sequence[str] = (),
    exclude: Sequence[str] = (),
    retry: bool = False,
) -> str:
    """Start a coordinator execution; returns its ARN."""
    check_coordinator(sfn, state_machine_arn)
    data: dict[str, Any] = {}
    if run_id:
        data["run_id"] = run_id
    if select:
        data["select"] = list(select)
    if exclude:
        data["exclude"] = list(exclude)
    if retry:
        data["retry"] = True
    return sfn.start_execution(stateMachineArn=state_machine_arn, input=json.dumps(data))[
        "executionArn"
    ]


def wait(sfn: Any, execution_arn: str, timeout: float, interval: float = 2.0) -> dict[str, Any]:
    """Poll DescribeExecution until the execution ends (or raise after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        if time.monotonic() > deadline:
            raise RunError(f"{execution_arn} still runs after {timeout:.0f} s")
        time.sleep(interval)


def run_results_location(sfn: Any, state_machine_arn: str) -> str:
    """``s3://bucket/prefix/`` from the coordinator's ``sfn-patterns:run-results`` tag."""
    tags = sfn.list_tags_for_resource(resourceArn=state_machine_arn).get("tags", [])
    for tag in tags:
        if tag.get("key") == RUN_RESULTS_TAG:
            return str(tag["value"])
    raise RunError(
        f"{state_machine_arn} has no {RUN_RESULTS_TAG} tag; pass --run-results s3://BUCKET/PREFIX/"
    )


def run_results_uri(location: str, run_id: str) -> str:
    """The document of ``run_id`` under a run-results location (``s3://bucket/prefix/``)."""
    uri = urlparse(location if location.endswith("/") else location + "/")
    return f"s3://{uri.netloc}/{artifact_key(run_id, uri.path.lstrip('/'))}"


def read_run_results(s3: Any, location: str, run_id: str) -> dict[str, Any]:
    """A run's document from S3, checked for the schema version this CLI reads."""
    uri = urlparse(run_results_uri(location, run_id))
    if uri.scheme != "s3" or not uri.netloc:
        raise RunError(f"run results location must be s3://BUCKET/PREFIX/, got {location!r}")
    try:
        body = s3.get_object(Bucket=uri.netloc, Key=uri.path.lstrip("/"))["Body"].read()
    except Exception as err:
        code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
        if code in ("NoSuchKey", "404", "NoSuchBucket"):
            raise RunError(
                f"no run results for run {run_id!r} at {uri.geturl()} (never started?)"
            ) from None
        raise
    document = json.loads(body)
    version = document.get("metadata", {}).get("schema_version")
    if version != SCHEMA_VERSION:
        raise RunError(f"{uri.geturl()}: schema {version!r}, this CLI reads {SCHEMA_VERSION}")
    return document


def to_retry(document: Mapping[str, Any]) -> list[str]:
    """Tasks a retry runs: those that failed or were skipped (descendants of failures)."""
    return [r["task"] for r in document["results"] if r["status"] in ("error", "skipped")]


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def format_status(document: Mapping[str, Any]) -> str:
    """A run's document as text: one summary line, then one line per task."""
    counts = ", ".join(f"{k} {v}" for k, v in document["counts"].items() if v)
    lines = [
        f"run {document['run_id']}: {document['status']} (invocation "
        f"{document['invocation']}; {counts}; elapsed {_cell(document.get('elapsed_time'))} s)"
    ]
    failure = document.get("failure")
    if failure:
        lines.append(f"first failure: {failure['task']}: {failure['error']}: {failure['cause']}")
    header = ("task", "status", "attempt", "started_at", "seconds", "rows", "statement", "error")
    rows = [header]
    for result in document["results"]:
        rows.append(
            (
                result["task"],
                result["status"],
                _cell(result["attempt"]),
                _cell(result["started_at"]),
                _cell(result["execution_time"]),
                _cell(result["rows_affected"]),
                _cell(result["statement_id"]),
                _cell(result["error"])
                + (
                    f" (waiting on {', '.join(result['waiting_on'])})"
                    if result["waiting_on"]
                    else ""
                ),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return "\n".join(lines)
