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

A wrapper's target (``TARGET_STATE_MACHINE_ARN``, started with the wrapper
execution's name) holds its wrapper's slot while it runs, even after the wrapper
was stopped: the gate counts RUNNING targets whose wrapper is no longer RUNNING.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns import clients

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)


def running_executions(sfn: Any, state_machine_arns: list[str]) -> list[dict[str, Any]]:
    """Every RUNNING execution of the given state machines, oldest first."""
    found: list[dict[str, Any]] = []
    for arn in state_machine_arns:
        paginator = sfn.get_paginator("list_executions")
        for page in paginator.paginate(stateMachineArn=arn, statusFilter="RUNNING"):
            found.extend(page["executions"])
    return sorted(found, key=lambda e: (e["startDate"], e["executionArn"]))


def with_orphan_targets(
    sfn: Any, executions: list[dict[str, Any]], target_arn: str | None
) -> list[dict[str, Any]]:
    """Put the RUNNING targets whose wrapper (same name) is no longer RUNNING first.

    Such a target already holds its stopped wrapper's slot, so it ranks before every
    waiter, whatever its own start date (it started after the waiters did).
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
    try:
        sfn = clients.client("stepfunctions")
        executions = with_orphan_targets(
            sfn, running_executions(sfn, machines), os.environ.get("TARGET_STATE_MACHINE_ARN")
        )
    except ClientError as error:
        if error.response["Error"]["Code"] in {"ThrottlingException", "TooManyRequestsException"}:
            LOG.warning("ListExecutions throttled: answer wait")
            return {"proceed": False, "position": None, "running": None, "limit": limit}
        raise
    decision = decide(executions, event["execution_arn"], limit)
    LOG.info("oldest-first decision for %s: %s", event["execution_arn"], decision)
    return decision
