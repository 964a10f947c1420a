"""The token table: one item per job id, holding the parked task token and the job's end.

Item (``pk`` = job id): ``token`` (the task token of the latest park), ``checks``
(parks so far, the wait-count timeout's counter), ``parked_at``, ``execution``,
and, once the completion event arrived, ``final_status``, ``detail`` (the
event's detail, JSON) and ``finished_at``. Every item carries ``expires_at``
(DynamoDB TTL), so the table holds only recent jobs.

The two writers never lose a completion, whatever their order: ``park`` sets the
token and returns the new item (so it sees a final status already recorded),
``record_final`` sets the final status and returns the old item (so it sees the
token already parked). Each is one atomic UpdateItem on the same key.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sfn_patterns import clients

DEFAULT_TTL_SECONDS = 7 * 86400
# Step Functions' own limit on a task token; DynamoDB keys may hold 2048 bytes.
MAX_JOB_ID_BYTES = 1024


@dataclass(frozen=True)
class Parked:
    """What ``park`` found: how many parks this job has had, and its end if already known."""

    checks: int
    final_status: str | None = None
    detail: Any | None = None


def _job_key(job_id: Any) -> dict[str, dict[str, str]]:
    if not isinstance(job_id, str) or not job_id:
        raise ValueError(f"job id must be a non-empty string, not {job_id!r}")
    if len(job_id.encode("utf-8")) > MAX_JOB_ID_BYTES:
        raise ValueError(f"job id is longer than {MAX_JOB_ID_BYTES} bytes")
    return {"pk": {"S": job_id}}


class TokenTable:
    """Park and complete tokens in one DynamoDB table (low-level client, no resource layer)."""

    def __init__(
        self, table: str, client: Any = None, ttl_seconds: int = DEFAULT_TTL_SECONDS
    ) -> None:
        self.table = table
        self.client = client or clients.client("dynamodb")
        self.ttl_seconds = ttl_seconds

    def park(self, job_id: str, token: str, execution: str | None = None) -> Parked:
        """Register ``token`` as the job's current waiter; count the park."""
        key = _job_key(job_id)
        now = int(time.time())
        names = {"#t": "token", "#p": "parked_at", "#e": "expires_at", "#c": "checks"}
        values: dict[str, Any] = {
            ":t": {"S": token},
            ":p": {"N": str(now)},
            ":e": {"N": str(now + self.ttl_seconds)},
            ":one": {"N": "1"},
        }
        update = "SET #t = :t, #p = :p, #e = :e ADD #c :one"
        if execution:
            names["#x"] = "execution"
            values[":x"] = {"S": execution}
            update = "SET #t = :t, #p = :p, #e = :e, #x = :x ADD #c :one"
        item = self.client.update_item(
            TableName=self.table,
            Key=key,
            UpdateExpression=update,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )["Attributes"]
        final = item.get("final_status", {}).get("S")
        detail = json.loads(item["detail"]["S"]) if final and "detail" in item else None
        return Parked(checks=int(item["checks"]["N"]), final_status=final, detail=detail)

    def record_final(self, job_id: str, status: str, detail: Any) -> str | None:
        """Record the job's end; return the token of the task parked on it, if any.

        Idempotent: a redelivered event writes the same values again.
        """
        key = _job_key(job_id)
        now = int(time.time())
        old = self.client.update_item(
            TableName=self.table,
            Key=key,
            UpdateExpression="SET #s = :s, #d = :d, #f = :f, #e = :e",
            ExpressionAttributeNames={
                "#s": "final_status",
                "#d": "detail",
                "#f": "finished_at",
                "#e": "expires_at",
            },
            ExpressionAttributeValues={
                ":s": {"S": status},
                ":d": {"S": json.dumps(detail, default=str)},
                ":f": {"N": str(now)},
                ":e": {"N": str(now + self.ttl_seconds)},
            },
            ReturnValues="ALL_OLD",
        ).get("Attributes", {})
        return old.get("token", {}).get("S")
