"""Free leaked semaphore slots: a scheduled sweep and an EventBridge cleanup.

Two entry points, deployed as two functions of the ``semaphore`` bundle:

* ``reconcile_handler`` (scheduled): reads the lock item, asks DescribeExecution
  for every holder and releases the holders whose execution is no longer
  RUNNING. It works where Step Functions status events never arrive.
* ``cleanup_handler`` (EventBridge "Step Functions Execution Status Change" with
  status FAILED, TIMED_OUT or ABORTED): releases that one execution's lease.

Both release with ``lease.release_lease``: a conditional remove on the lease's
own stored values, so they are safe to run twice, concurrently, or against a
holder that releases itself at the same moment.

With fairness fifo both also clean the ticket queue: they remove the ticket of
an execution that is no longer RUNNING (the cleanup: of the execution that
ended) and step ``served`` over abandoned tickets at the head of the queue, so a
waiter that was stopped or timed out never blocks the executions behind it.

With strategy callback both hand a dead holder's slot to the oldest waiter (the
same transaction a release uses, :mod:`callback`) and remove an ended waiter from
the queue; the reconciler also hands slots that are free while waiters are parked
(a releaser that crashed between its writes) and drops dead waiters at the head.

An ended holder's tasks may still run (a Lambda invocation does not stop with its
execution): both give its slot back only once none can (:mod:`inflight`: each task it
scheduled has ended in its history, or its timeout has passed). The cleanup leaves a
slot whose work may still run to the sweeps, which free it at the first sweep after.

A stopped wrapper execution (every strategy) gives its slot back only once its
target has ended: both stop the target execution (named like the wrapper's) and
wait for its end first. The cleanup fails while the target still runs, so
EventBridge retries it; the reconciler keeps the slot until a later sweep.

Race with a delayed acquire (the AWS Step Functions semaphore sample misses it):
an acquire write still in flight when the execution stops can land after the
cleanup ran. The sweep sees
that lease on its next run and, because the execution is not RUNNING (it can
never become RUNNING again), releases it then.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from typing import Any, Callable

from botocore.exceptions import ClientError

from sfn_patterns import clients, metrics
from sfn_patterns.semaphore.callback import (
    UNDESCRIBABLE_ERRORS,
    UNKNOWN,
    CallbackSemaphore,
    from_environment,
    iso,
    parse_iso,
    utcnow,
)
from sfn_patterns.semaphore.inflight import may_still_run
from sfn_patterns.semaphore.lease import (
    Lease,
    holder_attribute,
    leases,
    queue_counters,
    release_lease,
    remove_waiter,
    skip_abandoned_tickets,
    waiters,
)

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)

TERMINAL = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
# The event cleanup waits this long at most for an ended holder's work to pass its
# deadline (its function's timeout is 120 s); a later deadline is left to the sweeps.
CLEANUP_WORK_WAIT_SECONDS = 60
# DescribeExecution failed for a reason that says nothing about the execution
# (throttling, a 5xx): keep its lease and its ticket until a sweep that can tell.
UNANSWERED = "UNANSWERED"
# The errors that mean the execution cannot be described at all (deleted, its
# history expired, no permission): only these make it UNKNOWN.
UNDESCRIBABLE = UNDESCRIBABLE_ERRORS


def _status(sfn: Any, execution_arn: str) -> str:
    """The execution's status; UNKNOWN when it cannot be described, UNANSWERED for now."""
    try:
        return clients.execution_status(sfn, execution_arn)
    except ClientError as error:
        code = error.response["Error"]["Code"]
        LOG.warning("cannot describe %s: %s", execution_arn, code)
        return UNKNOWN if code in UNDESCRIBABLE else UNANSWERED


def target_execution(execution_arn: str) -> str | None:
    """The target execution a wrapper execution started (same name), or None."""
    wrapper = os.environ.get("WRAPPER_STATE_MACHINE_ARN")
    target = os.environ.get("TARGET_STATE_MACHINE_ARN")
    if not wrapper or not target:
        return None
    prefix = wrapper.replace(":stateMachine:", ":execution:") + ":"
    if not execution_arn.startswith(prefix):
        return None
    return target.replace(":stateMachine:", ":execution:") + ":" + execution_arn[len(prefix) :]


def target_client() -> Any:
    """Step Functions client for the target's account (assumes TARGET_ROLE_ARN when set)."""
    role = os.environ.get("TARGET_ROLE_ARN")
    if not role:
        return clients.client("stepfunctions")
    credentials = clients.client("sts").assume_role(
        RoleArn=role, RoleSessionName="semaphore-cleanup"
    )["Credentials"]
    return clients.client(
        "stepfunctions",
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


def stop_target(
    execution_arn: str,
    wait_seconds: float,
    client: Callable[[], Any] = target_client,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Stop a wrapper execution's target and wait for its end; return its last status.

    ``NONE`` when the execution is no wrapper or never started its target; ``RUNNING``
    when the target has not ended within ``wait_seconds`` (the caller keeps the slot).
    """
    target = target_execution(execution_arn)
    if target is None:
        return "NONE"
    sfn = client()
    deadline = time.monotonic() + wait_seconds
    stopped = False
    while True:
        try:
            status = clients.execution_status(sfn, target)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ExecutionDoesNotExist":
                return "NONE"
            raise
        if status != "RUNNING":
            return status
        if not stopped:
            LOG.info("stopping target %s of ended wrapper %s", target, execution_arn)
            sfn.stop_execution(
                executionArn=target,
                error="Semaphore.WrapperStopped",
                cause=f"The wrapper execution {execution_arn} ended; its slot is freed after this.",
            )
            stopped = True
        if time.monotonic() >= deadline:
            return status
        sleep(0.5)


def reconcile(
    dynamodb: Any, sfn: Any, table: str, lock_key: str, now: dt.datetime | None = None
) -> dict[str, Any]:
    """Release every lease whose execution is not RUNNING; return what was done.

    A holder whose execution cannot be described (deleted, history expired, no
    permission) is released only once its lease has expired. A RUNNING holder
    is never released, even past its lease: it is reported as overdue instead.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": lock_key}}, ConsistentRead=True).get(
        "Item"
    )
    if item is None:
        raise RuntimeError(f"lock item {lock_key!r} is missing from table {table}")
    report: dict[str, Any] = {
        "lock_key": lock_key,
        "holder_count": int(item.get("holder_count", {}).get("N", "0")),
        "released": [],
        "already_released": [],
        "kept": [],
        "overdue": [],
    }
    for lease in leases(item):
        status = _status(sfn, lease.execution_arn)
        expired = lease.expires_at <= now
        if status in ("RUNNING", UNANSWERED):
            report["kept"].append(lease.execution_arn)
            if expired and status == "RUNNING":
                report["overdue"].append(lease.execution_arn)
            continue
        if status == UNKNOWN and not expired:
            report["kept"].append(lease.execution_arn)
            continue
        if _keep_ended_holder(sfn, lease, now, report):
            continue
        if release_lease(dynamodb, table, lock_key, lease):
            LOG.info("released %s (%s)", lease.execution_arn, status)
            report["released"].append({"execution_arn": lease.execution_arn, "status": status})
        else:
            report["already_released"].append(lease.execution_arn)
    report["holders_seen"] = (
        len(report["kept"]) + len(report["released"]) + len(report["already_released"])
    )
    if queue_counters(item) is not None:
        report["waiters_kept"] = []
        report["waiters_removed"] = []
        for waiter in waiters(item):
            status = _status(sfn, waiter.execution_arn)
            if status in ("RUNNING", UNANSWERED) or (status == UNKNOWN and waiter.expires_at > now):
                report["waiters_kept"].append(waiter.execution_arn)
            elif remove_waiter(dynamodb, table, lock_key, waiter):
                LOG.info(
                    "removed ticket %s of %s (%s)", waiter.ticket, waiter.execution_arn, status
                )
                report["waiters_removed"].append(
                    {
                        "execution_arn": waiter.execution_arn,
                        "ticket": waiter.ticket,
                        "status": status,
                    }
                )
        report["tickets_skipped"] = skip_abandoned_tickets(
            dynamodb, table, lock_key, grace_seconds=_grace_seconds()
        )
    LOG.info("reconcile report: %s", json.dumps(report))
    return report


def _keep_ended_holder(sfn: Any, lease: Lease, now: dt.datetime, report: dict[str, Any]) -> bool:
    """Whether an ended holder's slot stays: its wrapper's target or one of its tasks may run."""
    target = stop_target(lease.execution_arn, wait_seconds=5)
    if target == "RUNNING":
        report["kept"].append(lease.execution_arn)
        report.setdefault("target_running", []).append(lease.execution_arn)
        return True
    return _own_work(lease.execution_arn, target) and _keep_for_work(sfn, lease, now, report)


def _own_work(execution_arn: str, target_status: str) -> bool:
    """Whether the execution's own tasks decide when its slot goes back (not a wrapper's).

    A wrapper's work is its target, which ``stop_target`` stops and waits for; its own
    tasks are the module's (acquire, start the target, release).
    """
    return target_status == "NONE" and target_execution(execution_arn) is None


def _keep_for_work(sfn: Any, lease: Lease, now: dt.datetime, report: dict[str, Any]) -> bool:
    """Whether an ended holder's slot is kept because a task of its execution may still run.

    Recorded in the report's ``kept`` and ``work_running`` (with the moment the work ends
    at the latest); a history that could not be read for now keeps the slot too.
    """
    try:
        ends = may_still_run(sfn, lease.execution_arn, now, lease.expires_at)
    except ClientError as error:
        LOG.warning("history of %s unanswered: %s", lease.execution_arn, error)
        report["kept"].append(lease.execution_arn)
        report.setdefault("history_unanswered", []).append(lease.execution_arn)
        return True
    if ends is None:
        return False
    report["kept"].append(lease.execution_arn)
    report.setdefault("work_running", []).append(
        {"execution_arn": lease.execution_arn, "until": iso(ends)}
    )
    return True


def _callback_status(semaphore: CallbackSemaphore, execution_arn: str) -> str:
    """The semaphore's view of an execution; UNANSWERED when DescribeExecution failed."""
    try:
        return semaphore.describe(execution_arn)
    except ClientError:
        return UNANSWERED


def reconcile_callback(
    semaphore: CallbackSemaphore, now: dt.datetime | None = None
) -> dict[str, Any]:
    """Strategy callback: hand dead holders' slots over, drop dead head waiters, fill free slots."""
    now = now or dt.datetime.now(dt.timezone.utc)
    state = semaphore.read_lock()
    report: dict[str, Any] = {
        "lock_key": semaphore.lock_key,
        "holder_count": state.count,
        "waiting": state.waiting,
        "released": [],
        "kept": [],
        "overdue": [],
        "waiters_removed": [],
    }
    for lease in state.leases.values():
        status = _callback_status(semaphore, lease.execution_arn)
        expired = lease.expires_at <= now
        if status in ("RUNNING", UNANSWERED) or (status == UNKNOWN and not expired):
            report["kept"].append(lease.execution_arn)
            if status == "RUNNING" and expired:
                report["overdue"].append(lease.execution_arn)
            continue
        if _keep_ended_holder(semaphore.sfn, lease, now, report):
            continue
        result = semaphore.release(lease.execution_arn)
        report["released"].append(
            {
                "execution_arn": lease.execution_arn,
                "status": status,
                "handed_to": result["handed_to"],
            }
        )
    # Dead waiters at the head would only be skipped at the next hand-over: drop them.
    for waiter in semaphore.oldest_waiters(limit=25):
        status = _callback_status(semaphore, waiter.execution_arn)
        if status in TERMINAL and semaphore.leave(waiter.execution_arn):
            report["waiters_removed"].append(
                {"execution_arn": waiter.execution_arn, "status": status}
            )
    report["admitted_to_free_slots"] = semaphore.fill_free_slots()
    report["queue_length"] = semaphore.queue_length()
    LOG.info("reconcile report: %s", json.dumps(report))
    return report


def wait_for_work(sfn: Any, lease: Lease, now: dt.datetime) -> dt.datetime | None:
    """None once no task of the lease's ended execution can still run; else when it may end.

    A deadline within ``CLEANUP_WORK_WAIT_SECONDS`` is waited for here (so the event
    cleanup frees the slot itself, as soon as it may); a later one is returned, and the
    caller leaves the slot to the reconciler's sweeps.
    """
    ends = may_still_run(sfn, lease.execution_arn, now, lease.expires_at)
    if ends is None:
        return None
    wait = (ends - now).total_seconds()
    if wait > CLEANUP_WORK_WAIT_SECONDS:
        return ends
    time.sleep(wait + 1)  # a second past it, for the clocks' difference
    return None


def release_execution(
    dynamodb: Any,
    table: str,
    lock_key: str,
    execution_arn: str,
    *,
    sfn: Any = None,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """Release one ended execution's lease if it holds one (idempotent).

    With ``sfn``, not while a task of the execution may still run (:mod:`inflight`):
    the lease is then kept for a reconciler sweep after ``work_running_until``.
    """
    attribute = holder_attribute(execution_arn)
    item = dynamodb.get_item(
        TableName=table,
        Key={"pk": {"S": lock_key}},
        ConsistentRead=True,
        ProjectionExpression="#holder",
        ExpressionAttributeNames={"#holder": attribute},
    ).get("Item", {})
    held = [lease for lease in leases(item) if lease.execution_arn == execution_arn]
    if held and sfn is not None:
        ends = wait_for_work(sfn, held[0], now or utcnow())
        if ends is not None:
            return {
                "execution_arn": execution_arn,
                "held": True,
                "released": False,
                "work_running_until": iso(ends),
            }
    released = bool(held) and release_lease(dynamodb, table, lock_key, held[0])
    return {"execution_arn": execution_arn, "held": bool(held), "released": released}


def leave_queue(dynamodb: Any, table: str, lock_key: str, execution_arn: str) -> dict[str, Any]:
    """Remove an ended execution's tickets and step over abandoned ones (fairness fifo).

    The execution's ticket number is not known from the event, so the whole lock
    item is read (it holds one small attribute per waiter). Returns the tickets
    removed and skipped; both empty when the semaphore has no ticket queue.
    """
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": lock_key}}, ConsistentRead=True).get(
        "Item", {}
    )
    if queue_counters(item) is None:
        return {"tickets_removed": [], "tickets_skipped": []}
    removed = [
        waiter.ticket
        for waiter in waiters(item)
        if waiter.execution_arn == execution_arn
        and remove_waiter(dynamodb, table, lock_key, waiter)
    ]
    skipped = skip_abandoned_tickets(dynamodb, table, lock_key, grace_seconds=_grace_seconds())
    return {"tickets_removed": removed, "tickets_skipped": skipped}


def _grace_seconds() -> float:
    """Seconds an unregistered head ticket must stay so before it is skipped."""
    return float(os.environ.get("SEMAPHORE_SKIP_GRACE_SECONDS", "2"))


def _config() -> tuple[str, str]:
    return os.environ["SEMAPHORE_TABLE"], os.environ["SEMAPHORE_LOCK_KEY"]


def _strategy() -> str:
    return os.environ.get("SEMAPHORE_STRATEGY", "dynamodb")


def reconcile_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Scheduled entry point: sweep the lock item, and report the semaphore's metrics."""
    if _strategy() == "callback":
        semaphore = from_environment()
        report = reconcile_callback(semaphore)
        metrics.emit("semaphore", sweep_metrics_callback(semaphore, report))
        return report
    table, lock_key = _config()
    report = reconcile(clients.client("dynamodb"), clients.client("stepfunctions"), table, lock_key)
    metrics.emit("semaphore", sweep_metrics(report))
    return report


def sweep_metrics(report: dict[str, Any]) -> dict[str, metrics.Value]:
    """Strategy dynamodb: what one sweep saw (the leases it kept are the slots held)."""
    values: dict[str, metrics.Value] = {
        "SlotsHeld": len(report["kept"]),
        # A lease whose execution ended without releasing it: a leaked slot, reclaimed.
        "SlotsReclaimed": len(report["released"]),
    }
    if "waiters_kept" in report:
        values["Waiters"] = len(report["waiters_kept"])
    return values


def sweep_metrics_callback(
    semaphore: CallbackSemaphore, report: dict[str, Any], now: dt.datetime | None = None
) -> dict[str, metrics.Value]:
    """Strategy callback: slots held and waiters after the sweep, the oldest waiter's age."""
    now = now or dt.datetime.now(dt.timezone.utc)
    oldest = semaphore.oldest_waiters(limit=1)
    age = (now - parse_iso(oldest[0].enqueued_at)).total_seconds() if oldest else 0.0
    return {
        "SlotsHeld": semaphore.read_lock().count,
        "Waiters": report["queue_length"],
        "OldestWaiterAgeSeconds": (max(age, 0.0), "Seconds"),
        "SlotsReclaimed": len(report["released"]),
        "HandOvers": sum(len(r["handed_to"]) for r in report["released"]),
    }


def cleanup_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """EventBridge entry point: release the lease of an execution that ended."""
    table, lock_key = _config()
    detail = event.get("detail") or {}
    execution_arn = detail.get("executionArn")
    status = detail.get("status")
    if not execution_arn or status not in TERMINAL:
        LOG.info("ignored event: %s", json.dumps(event, default=str))
        return {"execution_arn": execution_arn, "status": status, "released": False}
    # A wrapper's slot goes back only once its target has ended: stop it, wait.
    target_status = stop_target(execution_arn, wait_seconds=90)
    if target_status == "RUNNING":
        raise RuntimeError(
            f"the target of {execution_arn} still runs after StopExecution: "
            "its slot stays held (EventBridge retries this event)"
        )
    if _strategy() == "oldest-first":
        return {"execution_arn": execution_arn, "status": status, "target": target_status}
    # Any other holder's slot goes back only once none of its tasks can still run
    # (inflight.py); until then the reconciler's sweeps keep it and free it after.
    if _strategy() == "callback":
        semaphore = from_environment()
        lease = semaphore.read_lock().leases.get(execution_arn)
        ends = None
        if lease is not None and _own_work(execution_arn, target_status):
            ends = wait_for_work(semaphore.sfn, lease, semaphore.now())
        released = (
            {"released": False, "handed_to": []}
            if ends is not None
            else semaphore.release(execution_arn)
        )
        result = {
            "execution_arn": execution_arn,
            "status": status,
            "released": released["released"],
            "handed_to": released["handed_to"],
            "left_queue": semaphore.leave(execution_arn),
        }
        if ends is not None:
            result["work_running_until"] = iso(ends)
        if target_status != "NONE":
            result["target"] = target_status
        LOG.info("cleanup: %s", json.dumps(result))
        metrics.emit(
            "semaphore",
            {"SlotsReclaimed": int(result["released"]), "HandOvers": len(result["handed_to"])},
        )
        _retry_without_sweeps(result)
        return result
    dynamodb = clients.client("dynamodb")
    result = release_execution(
        dynamodb,
        table,
        lock_key,
        execution_arn,
        sfn=clients.client("stepfunctions") if _own_work(execution_arn, target_status) else None,
    )
    result["status"] = status
    queue = leave_queue(dynamodb, table, lock_key, execution_arn)
    if queue["tickets_removed"] or queue["tickets_skipped"]:
        result.update(queue)
    if target_status != "NONE":
        result["target"] = target_status
    LOG.info("cleanup: %s", json.dumps(result))
    metrics.emit("semaphore", {"SlotsReclaimed": int(result["released"])})
    _retry_without_sweeps(result)
    return result


def _retry_without_sweeps(result: dict[str, Any]) -> None:
    """Fail the cleanup, so EventBridge retries it, when no reconciler will free the slot.

    A slot kept because a task of the ended holder may still run is otherwise left to
    the reconciler's sweeps; with the reconciler off (``SEMAPHORE_RECONCILER=off``)
    the event's retries are what frees it once the task's deadline has passed.
    """
    until = result.get("work_running_until")
    if until and os.environ.get("SEMAPHORE_RECONCILER", "on") == "off":
        raise RuntimeError(
            f"a task of {result['execution_arn']} may run until {until}: its slot stays "
            "held (no reconciler; EventBridge retries this event)"
        )
