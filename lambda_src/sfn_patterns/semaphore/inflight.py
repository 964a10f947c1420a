"""Whether an ended holder's work can still be running: the rule before its slot goes back.

Why: a Lambda invocation, and the work of a ``.sync`` or ``.waitForTaskToken`` task, does
not stop when its execution is stopped, fails (a Parallel branch failing beside a running
one) or times out: Step Functions only discards the result. A holder's slot given back at
once lets a new holder enter while the old one's critical section still runs, so more
critical sections run than the limit. The cleanup and the reconciler therefore give the
slot of an execution that is no longer ``RUNNING`` back only when none of its tasks can
still be running:

* every task it scheduled has ended in its history (``TaskSucceeded``, ``TaskFailed``,
  ``TaskTimedOut``, ``TaskStartFailed``, ``TaskSubmitFailed`` and their ``LambdaFunction``
  and ``Activity`` counterparts); a task still open when the execution ended has no end
  event, ever;
* or the task's ``timeoutInSeconds`` (its state's ``TimeoutSeconds``) has passed since
  it was scheduled;
* or, for a request-response task (a Lambda ``invoke``, an AWS SDK call) without a
  shorter ``TimeoutSeconds``, :data:`REQUEST_RESPONSE_BOUND_SECONDS` since it was
  scheduled: Lambda's largest function timeout, which also bounds any single API call
  a task makes.

A ``.sync``, ``.waitForTaskToken`` or activity task without a ``TimeoutSeconds`` has no
known end: its slot is kept until the lease expires (``lease_seconds``), as is the slot
of an execution whose history cannot be read (deleted, expired, no permission).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns.semaphore.callback import UNDESCRIBABLE_ERRORS

LOG = logging.getLogger()

#: Lambda's largest function timeout: a request-response task ends within it.
REQUEST_RESPONSE_BOUND_SECONDS = 900

#: History events that schedule a unit of work, and their details' key.
SCHEDULED = {
    "TaskScheduled": "taskScheduledEventDetails",
    "LambdaFunctionScheduled": "lambdaFunctionScheduledEventDetails",
    "ActivityScheduled": "activityScheduledEventDetails",
}
#: History events that end the unit of work their chain of ``previousEventId`` leads to.
ENDED = frozenset(
    {
        "TaskSucceeded",
        "TaskFailed",
        "TaskTimedOut",
        "TaskStartFailed",
        "TaskSubmitFailed",
        "LambdaFunctionSucceeded",
        "LambdaFunctionFailed",
        "LambdaFunctionTimedOut",
        "LambdaFunctionStartFailed",
        "ActivitySucceeded",
        "ActivityFailed",
        "ActivityTimedOut",
    }
)
# An end event points at its start (or submit) event, which points at the scheduled one.
MAX_HOPS = 4


def history(sfn: Any, execution_arn: str) -> Iterator[dict[str, Any]]:
    """Every event of the execution's history, newest first, without its data."""
    kwargs: dict[str, Any] = {}
    while True:
        page = sfn.get_execution_history(
            executionArn=execution_arn,
            reverseOrder=True,
            includeExecutionData=False,
            maxResults=1000,
            **kwargs,
        )
        yield from page.get("events", [])
        if not page.get("nextToken"):
            return
        kwargs = {"nextToken": page["nextToken"]}


def open_tasks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scheduled events of ``events`` whose work has no end event."""
    by_id = {event.get("id"): event for event in events}
    ended: set[Any] = set()
    for event in events:
        if event.get("type") not in ENDED:
            continue
        link = event
        for _ in range(MAX_HOPS):
            link = by_id.get(link.get("previousEventId"))
            if link is None:
                break
            if link.get("type") in SCHEDULED:
                ended.add(link.get("id"))
                break
    return [e for e in events if e.get("type") in SCHEDULED and e.get("id") not in ended]


def task_deadline(event: dict[str, Any]) -> dt.datetime | None:
    """When a scheduled task's work has ended at the latest; None when nothing bounds it."""
    details = event.get(SCHEDULED[event["type"]]) or {}
    scheduled = _timestamp(event["timestamp"])
    timeout = details.get("timeoutInSeconds")
    resource = str(details.get("resource", ""))
    request_response = event["type"] == "LambdaFunctionScheduled" or (
        event["type"] == "TaskScheduled" and "." not in resource
    )
    if request_response:  # one call, which a longer TimeoutSeconds does not lengthen
        bound = REQUEST_RESPONSE_BOUND_SECONDS
        seconds = bound if timeout is None else min(int(timeout), bound)
        return scheduled + dt.timedelta(seconds=seconds)
    if timeout is not None:
        return scheduled + dt.timedelta(seconds=int(timeout))
    return None


def work_ends(sfn: Any, execution_arn: str, unbounded: dt.datetime) -> dt.datetime | None:
    """When the last task of an ended execution can still be running; None: none can.

    ``unbounded`` stands for a task without a known end, and for an execution whose
    history cannot be read (the lease's expiry). A transient error (throttling, 5xx)
    raises: the caller keeps the slot and asks again later.
    """
    try:
        events = list(history(sfn, execution_arn))
    except ClientError as error:
        code = error.response["Error"]["Code"]
        if code not in UNDESCRIBABLE_ERRORS:
            raise
        LOG.warning("cannot read the history of %s: %s", execution_arn, code)
        return unbounded
    deadlines = [task_deadline(event) for event in open_tasks(events)]
    if not deadlines:
        return None
    return max(unbounded if d is None else d for d in deadlines)


def may_still_run(
    sfn: Any, execution_arn: str, now: dt.datetime, unbounded: dt.datetime
) -> dt.datetime | None:
    """The moment an ended execution's work may run until, if that is after ``now``; else None."""
    ends = work_ends(sfn, execution_arn, unbounded)
    if ends is not None and ends > now:
        LOG.info("%s may still run a task until %s: its slot is kept", execution_arn, ends)
        return ends
    return None


def _timestamp(value: Any) -> dt.datetime:
    """A history event's timestamp (botocore gives a datetime; a JSON stub, an ISO string)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, (int, float)):
        return dt.datetime.fromtimestamp(value, dt.timezone.utc)
    parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
