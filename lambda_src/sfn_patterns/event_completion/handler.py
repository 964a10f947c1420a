"""Lambda entry point of event completion: completion events, parks and direct completions.

Three callers, one function (they share the table and the permissions):

* **EventBridge**, with a job's completion event: the job id and status are read at
  ``JOB_ID_PATH`` and ``STATUS_PATH`` (dotted paths such as ``$.detail.statementId``);
  a status in ``TERMINAL_STATUSES`` is recorded and sent to the parked task; any
  other status, a missing id, or a job nobody waits for is ignored.
* **a Task** ``lambda:invoke.waitForTaskToken`` with ``{"action": "park", "job_id",
  "token", "max_checks"?}``: registers the token; completes the task at once if the
  job's end was already recorded; raises JobTimeoutError (the task's Catch routes it
  to the timeout exit) once a still-waiting job has been parked more than
  ``max_checks`` times.
* **a job that calls back itself** (or a test): ``{"action": "complete", "job_id",
  "status", "detail"?}``.

Configuration (environment): TOKEN_TABLE, JOB_ID_PATH, STATUS_PATH, TERMINAL_STATUSES
(JSON list), TOKEN_TTL_SECONDS.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from sfn_patterns import clients

from .errors import CompletionConfigError, JobTimeoutError
from .outcome import send_status
from .tokens import DEFAULT_TTL_SECONDS, TokenTable

log = logging.getLogger("sfn_patterns.event_completion")
log.setLevel(logging.INFO)

_CLIENTS: dict[str, Any] = {}


def _client(service: str) -> Any:
    """boto3 clients, built once per container (they cost tens of ms of CPU each)."""
    if service not in _CLIENTS:
        _CLIENTS[service] = clients.client(service)
    return _CLIENTS[service]


def read_path(document: Any, path: str) -> Any:
    """The value at a dotted JSONPath (``$.detail.state``); None when any step is missing."""
    if not path.startswith("$."):
        raise CompletionConfigError(f"path {path!r} must start with '$.'")
    value = document
    for key in path[2:].split("."):
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


class Completion:
    """The handler's logic on an explicit table, Step Functions client and configuration."""

    def __init__(
        self,
        table: TokenTable,
        sfn: Any,
        job_id_path: str = "$.detail.job_id",
        status_path: str = "$.detail.state",
        terminal_statuses: tuple[str, ...] = (),
    ) -> None:
        self.table = table
        self.sfn = sfn
        self.job_id_path = job_id_path
        self.status_path = status_path
        self.terminal = frozenset(terminal_statuses)

    def on_event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """A completion event from EventBridge."""
        job_id = read_path(event, self.job_id_path)
        status = read_path(event, self.status_path)
        if not isinstance(job_id, str) or not job_id or not isinstance(status, str):
            return {"ignored": "no job id or status in the event"}
        if status not in self.terminal:
            return {"ignored": f"status {status} is not terminal", "job_id": job_id}
        return self.complete(job_id, status, event.get("detail"))

    def complete(self, job_id: str, status: str, detail: Any) -> dict[str, Any]:
        """Record the job's end and resume the task parked on it, if one is."""
        token = self.table.record_final(job_id, status, detail)
        if token is None:
            return {"recorded": job_id, "status": status, "resumed": False}
        resumed = send_status(self.sfn, token, status, detail)
        return {"recorded": job_id, "status": status, "resumed": resumed}

    def park(
        self, job_id: str, token: str, max_checks: int | None, execution: str | None
    ) -> dict[str, Any]:
        """Register the token; answer at once when the job's end is already known."""
        parked = self.table.park(job_id, token, execution)
        if parked.final_status is not None:
            send_status(self.sfn, token, parked.final_status, parked.detail)
            return {"completed": job_id, "status": parked.final_status}
        if max_checks is not None and parked.checks > max_checks:
            raise JobTimeoutError(
                f"job {job_id} still running after {parked.checks - 1} fallback checks "
                f"(limit {max_checks})"
            )
        return {"parked": job_id, "checks": parked.checks}

    def route(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Dispatch one invocation."""
        if "detail-type" in event and "detail" in event:
            return self.on_event(event)
        action = event.get("action")
        if action == "park":
            max_checks = event.get("max_checks")
            return self.park(
                str(event["job_id"]),
                str(event["token"]),
                int(max_checks) if max_checks is not None else None,
                event.get("execution"),
            )
        if action == "complete":
            return self.complete(str(event["job_id"]), str(event["status"]), event.get("detail"))
        raise CompletionConfigError(f"unknown event: {sorted(event)}")


def from_env(environ: Mapping[str, str] | None = None) -> Completion:
    """A Completion configured from the function's environment."""
    env = os.environ if environ is None else environ
    try:
        table = env["TOKEN_TABLE"]
    except KeyError:
        raise CompletionConfigError("TOKEN_TABLE is not set") from None
    ttl = int(env.get("TOKEN_TTL_SECONDS") or DEFAULT_TTL_SECONDS)
    return Completion(
        TokenTable(table, _client("dynamodb"), ttl),
        _client("stepfunctions"),
        job_id_path=env.get("JOB_ID_PATH", "$.detail.job_id"),
        status_path=env.get("STATUS_PATH", "$.detail.state"),
        terminal_statuses=tuple(json.loads(env.get("TERMINAL_STATUSES") or "[]")),
    )


def complete(job_id: str, status: str, detail: Any = None, table: str | None = None) -> dict:
    """For a job that announces its own end: record it and resume the waiting task."""
    env = dict(os.environ)
    if table:
        env["TOKEN_TABLE"] = table
    return from_env(env).complete(job_id, status, detail)


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda handler."""
    result = from_env().route(event)
    log.info("%s", json.dumps(result, default=str))
    return result
