"""ListExecutions as it was n seconds ago, computed from today's answer.

Step Functions' ListExecutions is eventually consistent: an execution started a moment
ago may be missing, and one that just stopped may still say RUNNING. A starter that
counts running executions from the listing over-admits if it trusts it. Rather than
record old answers, the stale view is derived from the current list: every execution
carries its ``startDate`` and ``stopDate``, so the list as of ``cutoff`` is exact:
those started after it are left out, those stopped after it are RUNNING again, with no
``stopDate``. The status filter and the page are applied to that view.

The provider is asked for one page of up to 1,000 executions, unfiltered (the most a
page holds): an older execution beyond them is missing from the stale view too.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

WIDE_PAGE = 1000
DEFAULT_PAGE = 100


def widened(request: dict[str, Any]) -> dict[str, Any]:
    """The request the provider gets instead: every status, one wide page, from the start."""
    wide = {k: v for k, v in request.items() if k not in ("statusFilter", "nextToken")}
    wide["maxResults"] = WIDE_PAGE
    return wide


def _utc(value: datetime.datetime) -> datetime.datetime:
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)


def as_of(executions: list[dict[str, Any]], cutoff: datetime.datetime) -> list[dict[str, Any]]:
    """The executions as they were at ``cutoff``, newest first."""
    cutoff = _utc(cutoff)
    view = []
    for execution in executions:
        if _utc(execution["startDate"]) > cutoff:
            continue
        stop = execution.get("stopDate")
        if stop is not None and _utc(stop) > cutoff:
            running = {
                k: v
                for k, v in execution.items()
                if k not in ("stopDate", "redriveCount", "redriveDate")
            }
            running["status"] = "RUNNING"
            view.append(running)
        else:
            view.append(execution)
    view.sort(key=lambda item: _utc(item["startDate"]), reverse=True)
    return view


def token_for(execution_arn: str) -> str:
    """A page token in the provider's own form (base64 of the next page's first ARN)."""
    return base64.b64encode(execution_arn.encode()).decode()


def page(executions: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
    """The answer to the original ``request`` from the stale view: filtered and paged."""
    status = request.get("statusFilter")
    items = [e for e in executions if status is None or e["status"] == status]
    start = 0
    token = request.get("nextToken")
    if token:
        arn = base64.b64decode(token).decode()
        start = next((i for i, e in enumerate(items) if e["executionArn"] == arn), len(items))
    size = request.get("maxResults") or DEFAULT_PAGE
    chosen = items[start : start + size]
    answer: dict[str, Any] = {"executions": chosen}
    if start + size < len(items):
        answer["nextToken"] = token_for(items[start + size]["executionArn"])
    return answer
