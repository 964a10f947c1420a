"""strategy = "oldest-first": a ListExecutions gate: the oldest running executions hold the slots.

An execution may proceed when it is among the ``SEMAPHORE_LIMIT`` oldest RUNNING
executions of the holder state machines (``STATE_MACHINE_ARNS``), by start date.

Known limits, kept on purpose so callers can choose with open eyes:

* ListExecutions is eventually consistent ("best effort"): a just-started or
  just-finished execution may be missing or still listed;
* it is throttled (a shared regional token bucket), so many blocked executions
  polling it slow each other down; a throttled call answers "wait";
* it is check-then-act: two executions may both see themselves admitted;
* a slot is held until the execution stops RUNNING, not until it releases.

A holder that ended (stopped, timed out, failed) may still run its critical work: a
Lambda invocation, or the work behind a ``.sync`` or ``.waitForTaskToken`` task, does
not stop with its execution. So the gate also counts the holder executions that ended
``ABORTED``, ``TIMED_OUT`` or ``FAILED`` within ``SEMAPHORE_LEASE_SECONDS`` and whose
history shows a task without its end whose deadline has not passed (:mod:`inflight`:
its ``TimeoutSeconds``, 900 s for a request-response task without one; a task without
a known end, or a history that cannot be read, counts until ``SEMAPHORE_LEASE_SECONDS``
after the stop). The gate's own invocations (the state ``SEMAPHORE_GATE_STATE``) only
read, and are not counted: a waiter stopped while asking holds nothing. The calls stay
bounded: one ``ListExecutions`` page per status and 1,000 ended executions of each holder
machine, and one ``GetExecutionHistory`` per execution that ended within the window.

A wrapper's target (``TARGET_STATE_MACHINE_ARN``, started with the wrapper
execution's name) holds its wrapper's slot while it runs, even after the wrapper
was stopped: the gate counts RUNNING targets whose wrapper is no longer RUNNING. A
stopped wrapper (``WRAPPER_STATE_MACHINE_ARN``) is therefore followed through its
target, not through its history.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns import clients
from sfn_patterns.semaphore.callback import utcnow
from sfn_patterns.semaphore.inflight import REQUEST_RESPONSE_BOUND_SECONDS, may_still_run, timestamp

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

#: The statuses of an execution that ended without reaching its end: it may have been
#: stopped (or have failed, or timed out) inside its critical section.
ENDED_STATUSES = ("ABORTED", "TIMED_OUT", "FAILED")
#: The gate's state as the acquire fragment names it (with the default prefix).
DEFAULT_GATE_STATE = "Semaphore: Acquire"
#: How long after its stop an ended holder is looked at, without SEMAPHORE_LEASE_SECONDS.
DEFAULT_LEASE_SECONDS = REQUEST_RESPONSE_BOUND_SECONDS


def running_executions(sfn: Any, state_machine_arns: list[str]) -> list[dict[str, Any]]:
    """Every RUNNING execution of the given state machines, oldest first."""
    found: list[dict[str, Any]] = []
    for arn in state_machine_arns:
        paginator = sfn.get_paginator("list_executions")
        for page in paginator.paginate(stateMachineArn=arn, statusFilter="RUNNING"):
            found.extend(page["executions"])
    return sorted(found, key=lambda e: (e["startDate"], e["executionArn"]))


def ended_since(
    sfn: Any, state_machine_arns: list[str], since: dt.datetime
) -> list[dict[str, Any]]:
    """The executions of the given state machines that ended (``ENDED_STATUSES``) since ``since``.

    ListExecutions orders by start date, and an execution that started long ago may have
    ended a moment ago: every page is read (1,000 executions a page).
    """
    found: list[dict[str, Any]] = []
    for arn in state_machine_arns:
        paginator = sfn.get_paginator("list_executions")
        for status in ENDED_STATUSES:
            pages = paginator.paginate(
                stateMachineArn=arn, statusFilter=status, PaginationConfig={"PageSize": 1000}
            )
            for page in pages:
                found.extend(
                    e
                    for e in page["executions"]
                    if e.get("stopDate") is not None and timestamp(e["stopDate"]) >= since
                )
    return found


def stopped_holders(
    sfn: Any,
    state_machine_arns: list[str],
    now: dt.datetime,
    lease_seconds: int,
    gate_state: str,
) -> list[dict[str, Any]]:
    """The holder executions that ended within ``lease_seconds`` and whose work may still run.

    Each is read from its history (:func:`inflight.may_still_run`), leaving out the
    gate's own invocations (``gate_state``); a task without a known end counts until
    ``lease_seconds`` after the stop. Oldest first.
    """
    lease = dt.timedelta(seconds=lease_seconds)
    holding = []
    for execution in ended_since(sfn, state_machine_arns, now - lease):
        stopped = timestamp(execution["stopDate"])
        ends = may_still_run(
            sfn, execution["executionArn"], now, stopped + lease, ignore_states={gate_state}
        )
        if ends is not None:
            LOG.info(
                "%s ended %s but may run a task until %s: it keeps its slot",
                execution["executionArn"],
                execution.get("status"),
                ends,
            )
            holding.append(execution)
    return sorted(holding, key=lambda e: (e["startDate"], e["executionArn"]))


def with_orphan_targets(
    sfn: Any, executions: list[dict[str, Any]], target_arn: str | None
) -> list[dict[str, Any]]:
    """Put the RUNNING targets whose wrapper (same name) is no longer RUNNING first.

    Such a target already holds its stopped wrapper's slot, so it ranks before every
    waiter, whatever its own start date (it started after the waiters did), as do the
    ended holders whose work may still run (:func:`stopped_holders`), which the handler
    puts before both.
    """
    if not target_arn:
        return executions
    names = {e["name"] for e in executions}
    orphans = [e for e in running_executions(sfn, [target_arn]) if e["name"] not in names]
    return orphans + executions


def decide(executions: list[dict[str, Any]], execution_arn: str, limit: int) -> dict[str, Any]:
    """Proceed when ``execution_arn`` is among the ``limit`` oldest ``executions``."""
    arns = [e["executionArn"] for e in executions]
    position = arns.index(execution_arn) if execution_arn in arns else None
    return {
        "proceed": position is not None and position < limit,
        "position": position,
        "running": len(arns),
        "limit": limit,
    }


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Answer ``{"proceed": bool, ...}`` for the calling execution."""
    limit = int(os.environ["SEMAPHORE_LIMIT"])
    machines = [arn for arn in os.environ.get("STATE_MACHINE_ARNS", "").split(",") if arn]
    if event.get("state_machine_arn") and event["state_machine_arn"] not in machines:
        machines.append(event["state_machine_arn"])
    target = os.environ.get("TARGET_STATE_MACHINE_ARN")
    # A stopped wrapper holds its slot through its target (with_orphan_targets).
    wrapper = os.environ.get("WRAPPER_STATE_MACHINE_ARN") if target else None
    try:
        sfn = clients.client("stepfunctions")
        # RUNNING first: one that ends after this read is among the ended ones read next
        # (the other order misses a holder stopped between the two reads).
        running = running_executions(sfn, machines)
        stopped = stopped_holders(
            sfn,
            [arn for arn in machines if arn != wrapper],
            utcnow(),
            int(os.environ.get("SEMAPHORE_LEASE_SECONDS") or DEFAULT_LEASE_SECONDS),
            os.environ.get("SEMAPHORE_GATE_STATE") or DEFAULT_GATE_STATE,
        )
        counted = {e["executionArn"] for e in stopped}
        running = [e for e in running if e["executionArn"] not in counted]
        executions = stopped + with_orphan_targets(sfn, running, target)
    except ClientError as error:
        if error.response["Error"]["Code"] in {"ThrottlingException", "TooManyRequestsException"}:
            LOG.warning("Step Functions throttled the gate's reads: answer wait")
            return {"proceed": False, "position": None, "running": None, "limit": limit}
        raise
    decision = decide(executions, event["execution_arn"], limit)
    LOG.info("oldest-first decision for %s: %s", event["execution_arn"], decision)
    return decision
