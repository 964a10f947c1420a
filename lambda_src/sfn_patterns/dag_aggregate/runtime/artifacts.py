"""Run artifacts: one versioned JSON document per run id in S3, like dbt's run_results.json.

The runtime writes it when a run starts (every task ``pending`` or already
``success``) and when it ends; ``sfn-patterns dag status`` and the demo report read
it, and ``sfn-patterns dag retry`` lists from it what a retry will run. The schema is
``run_results.v1.schema.json`` next to this file (documented in
modules/dag-aggregate/README.md); a change that breaks a reader gets a new version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from sfn_patterns.dag_aggregate.runtime.store import (
    FAILED,
    SUCCEEDED,
    RunState,
    TaskState,
)

SCHEMA_VERSION = "sfn-patterns/dag-aggregate/run-results/v1"
SCHEMA_FILE = "run_results.v1.schema.json"
KEY_PREFIX = "dag-aggregate/runs/"
# Task statuses in the document (dbt's words where they exist).
SUCCESS, ERROR, SKIPPED, PENDING, RUNNING = "success", "error", "skipped", "pending", "running"


def artifact_key(run_id: str, prefix: str = KEY_PREFIX) -> str:
    """S3 key of a run's document (the run id is URL-quoted, so any id is one key)."""
    return f"{prefix}{quote(run_id, safe='')}/run_results.json"


_FRACTION = re.compile(r"\.(\d+)")


def parse_time(value: str) -> datetime | None:
    """An ISO 8601 timestamp (``Z`` or an offset, any fraction digits), or None.

    Step Functions writes ``...T12:00:00.123Z``; Python 3.9's ``fromisoformat``
    takes neither ``Z`` nor fractions other than 3 or 6 digits.
    """
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], value.strip(), count=1)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _seconds(start: str | None, end: str | None) -> float | None:
    begin, finish = parse_time(start or ""), parse_time(end or "")
    if begin is None or finish is None:
        return None
    return round((finish - begin).total_seconds(), 3)


def _status(task: TaskState, run: RunState) -> str:
    if task.status == SUCCEEDED:
        return SUCCESS
    if task.status == FAILED:
        return ERROR
    if task.name in run.active:
        return RUNNING
    return SKIPPED if run.ended else PENDING


def document(
    run: RunState,
    tasks: Mapping[str, TaskState],
    selected: Collection[str],
    *,
    execution_name: Any,
    plan_key: str,
    plan_tasks: int,
    generated_at: str,
    generator: str,
) -> dict[str, Any]:
    """The run_results document of ``run`` from its task items (only selected tasks)."""
    results = []
    counts = {SUCCESS: 0, ERROR: 0, SKIPPED: 0, PENDING: 0, RUNNING: 0}
    for name in sorted(selected):
        task = tasks.get(name) or TaskState(name=name)
        status = _status(task, run)
        counts[status] += 1
        ran = task.status in (SUCCEEDED, FAILED) or status == RUNNING
        results.append(
            {
                "task": name,
                "status": status,
                "attempt": task.attempt,
                "invocation": task.invocation,
                "execution_name": execution_name(run.run_id, name, task.attempt) if ran else None,
                "started_at": task.started_at,
                "finished_at": task.finished_at,
                "execution_time": _seconds(task.started_at, task.finished_at),
                "statement_id": task.statement_id,
                "rows_affected": task.rows,
                "error": task.error,
                "cause": task.cause,
                "waiting_on": sorted(task.waiting_on) if status in (SKIPPED, PENDING) else [],
            }
        )
    failure = run.failure
    return {
        "metadata": {
            "schema_version": SCHEMA_VERSION,
            "generated_at": generated_at,
            "generator": generator,
        },
        "run_id": run.run_id,
        "status": run.status,
        "invocation": run.invocation,
        "coordinator_execution": run.execution,
        "started_at": run.started_at or None,
        "finished_at": run.finished_at or None,
        "elapsed_time": _seconds(run.started_at, run.finished_at),
        "selection": {"select": list(run.selection.select), "exclude": list(run.selection.exclude)},
        "plan": {"key": plan_key, "tasks": plan_tasks},
        "counts": counts,
        "failure": None
        if failure is None
        else {"task": failure.task, "error": failure.error, "cause": failure.cause},
        "results": results,
    }


class ArtifactWriter:
    """Puts run documents into the plan bucket (``s3`` is a boto3 S3 client)."""

    def __init__(self, s3: Any, bucket: str, prefix: str = KEY_PREFIX) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.prefix = prefix

    def write(self, doc: Mapping[str, Any]) -> str:
        """Write (overwrite) the run's document; returns its key."""
        key = artifact_key(str(doc["run_id"]), self.prefix)
        self.s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=json.dumps(doc, indent=1, sort_keys=True).encode(),
            ContentType="application/json",
        )
        return key
