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

A caller may leave out the tasks of some states (``ignore_states``): the oldest-first
gate leaves out its own invocations, which only read, so a waiter stopped while asking
the gate holds nothing. A task is named by the ``*StateEntered`` event its
``previousEventId`` is (for a retried task: the failure of its earlier attempt, whose
chain leads back to that attempt's scheduled event, and so on); a task whose state
cannot be found that way is counted.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Collection, Iterator
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
#: The end events of an attempt that failed: a retried task's scheduled event follows one.
FAILED_ATTEMPT = ENDED - {"TaskSucceeded", "LambdaFunctionSucceeded", "ActivitySucceeded"}
# Attempts followed back to a task's state entry; past them the task is counted.
MAX_ATTEMPTS = 50


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


def open_tasks(
    events: list[dict[str, Any]], ignore_states: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The scheduled events of ``events`` whose work has no end event.

    Tasks scheduled by a state named in ``ignore_states`` are left out.
    """
    by_id = {event.get("id"): event for event in events}
    ended: set[Any] = set()
    for event in events:
        if event.get("type") not in ENDED:
            continue
        scheduled = _attempt_scheduled(event, by_id)
        if scheduled is not None:
            ended.add(scheduled.get("id"))
    return [
        e
        for e in events
        if e.get("type") in SCHEDULED
        and e.get("id") not in ended
        and not (ignore_states and scheduling_state(e, by_id) in ignore_states)
    ]


def scheduling_state(event: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> str | None:
    """The name of the state that scheduled a task (None: not found in the history)."""
    scheduled: dict[str, Any] | None = event
    for _ in range(MAX_ATTEMPTS):
        previous = by_id.get((scheduled or {}).get("previousEventId"))
        kind = str((previous or {}).get("type", ""))
        if previous is not None and kind.endswith("StateEntered"):
            name = (previous.get("stateEnteredEventDetails") or {}).get("name")
            return None if name is None else str(name)
        if previous is None or kind not in FAILED_ATTEMPT:
            return None
        scheduled = _attempt_scheduled(previous, by_id)  # the earlier attempt's own
        if scheduled is None:
            return None
    return None


def _attempt_scheduled(
    end: dict[str, Any], by_id: dict[Any, dict[str, Any]]
) -> dict[str, Any] | None:
    """The scheduled event an end event's chain leads to (None: not within ``MAX_HOPS``)."""
    link: dict[str, Any] | None = end
    for _ in range(MAX_HOPS):
        link = by_id.get((link or {}).get("previousEventId"))
        if link is None:
            return None
        if link.get("type") in SCHEDULED:
            return link
    return None


def task_deadline(event: dict[str, Any]) -> dt.datetime | None:
    """When a scheduled task's work has ended at the latest; None when nothing bounds it."""
    details = event.get(SCHEDULED[event["type"]]) or {}
    scheduled = timestamp(event["timestamp"])
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


def work_ends(
    sfn: Any, execution_arn: str, unbounded: dt.datetime, ignore_states: Collection[str] = ()
) -> dt.datetime | None:
    """When the last task of an ended execution can still be running; None: none can.

    ``unbounded`` stands for a task without a known end, and for an execution whose
    history cannot be read (the lease's expiry). A transient error (throttling, 5xx)
    raises: the caller keeps the slot and asks again later. The tasks of the states in
    ``ignore_states`` are not counted.
    """
    try:
        events = list(history(sfn, execution_arn))
    except ClientError as error:
        code = error.response["Error"]["Code"]
        if code not in UNDESCRIBABLE_ERRORS:
            raise
        LOG.warning("cannot read the history of %s: %s", execution_arn, code)
        return unbounded
    deadlines = [task_deadline(event) for event in open_tasks(events, ignore_states)]
    if not deadlines:
        return None
    return max(unbounded if d is None else d for d in deadlines)


def may_still_run(
    sfn: Any,
    execution_arn: str,
    now: dt.datetime,
    unbounded: dt.datetime,
    ignore_states: Collection[str] = (),
) -> dt.datetime | None:
    """The moment an ended execution's work may run until, if that is after ``now``; else None."""
    ends = work_ends(sfn, execution_arn, unbounded, ignore_states)
    if ends is not None and ends > now:
        LOG.info("%s may still run a task until %s: its slot is kept", execution_arn, ends)
        return ends
    return None


def timestamp(value: Any) -> dt.datetime:
    """A history event's timestamp (botocore gives a datetime; a JSON stub, an ISO string)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, (int, float)):
        return dt.datetime.fromtimestamp(value, dt.timezone.utc)
    parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
