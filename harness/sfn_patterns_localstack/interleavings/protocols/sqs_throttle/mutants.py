"""Realistic mistakes in the throttle's runtime, to show the explorer would catch them.

Each mutant replaces one method of the real class (``Ledger``, ``Starter``) for the
duration of a context with a copy that differs by the one mistake its name says, keeping
everything else as the Lambda runs it. They are named so that a failure's replay command
can apply them again (``--mutant NAME``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from sfn_patterns.sqs_throttle import starter as starter_module
from sfn_patterns.sqs_throttle.ledger import LEDGER_KEY, LeaseLost, Ledger
from sfn_patterns.sqs_throttle.naming import execution_name
from sfn_patterns.sqs_throttle.starter import (
    LOG,
    PERMANENT_ERRORS,
    STOPPING_OUTCOMES,
    RunReport,
    Starter,
    _error_code,
    request_id_of,
)
from sfn_patterns_localstack.interleavings.clock import patched
from sfn_patterns_localstack.interleavings.protocol import Mutant


def _record_unfenced(
    self: Ledger,
    name: str,
    now: float,
    owner: str,
    lease_seconds: float,
    *,
    start_by: float | None = None,
) -> None:
    """The record renews the lease "as it is ours anyway": no ``#owner = :me`` condition."""
    self.dynamodb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": self.table, "Item": self._lease_item(owner, now, lease_seconds)}},
            {"Put": {"TableName": self.table, "Item": self.entry_item(name, now, start_by)}},
        ]
    )


def _admit_until_on_stale_count(
    self: Starter, deadline: float, budget: int, report: RunReport
) -> None:
    """Admissions are not added to the count read at the last recount."""
    running = self._recount(report)
    report.running_at_start = running
    while not report.stopped:
        if report.receives >= budget:
            report.stopped = "max_messages"
        elif self.clock() >= deadline:
            report.stopped = "max_seconds"
        elif running >= self.config.max_concurrent:
            report.stopped = self._wait_for_a_slot(deadline)
            if not report.stopped:
                running = self._recount(report)
        else:
            message = self._receive_one()
            if message is None:
                report.stopped = "queue_empty"
                continue
            report.receives += 1
            outcome = self.admit(message, report)
            report.stopped = STOPPING_OUTCOMES.get(outcome, "")


def _admit_deleting_first(self: Starter, message: dict, report: RunReport) -> str:
    """The message is deleted as soon as it is recorded, before its execution is started."""
    try:
        name = execution_name(request_id_of(message))
        body = message["Body"]
        json.loads(body)
    except ValueError:
        report.poison.append(message.get("MessageId", "?"))
        self._release_now(message)
        return "poison"
    try:
        self.store.record(name, self.clock(), self.owner, self.lease_seconds, start_by=self.ends_at)
    except LeaseLost:
        self._release_now(message)
        return "lease_lost"
    self.sqs.delete_message(QueueUrl=self.config.queue_url, ReceiptHandle=message["ReceiptHandle"])
    try:
        self.sfn.start_execution(
            stateMachineArn=self.config.state_machine_arn, name=name, input=body
        )
    except Exception as error:
        code = _error_code(error)
        if code == "ExecutionAlreadyExists":
            report.already_existed.append(name)
            return "existed"
        LOG.warning("start of %s failed: %s", name, error)
        if code in PERMANENT_ERRORS:
            self.store.forget(name)
            report.poison.append(name)
            return "poison"
        report.failed.append(name)
        return "failed"
    report.started.append(name)
    return "started"


# Refusals of StartExecution taken as "certainly not started" by the mutant below.
_REFUSALS = frozenset({"ThrottlingException", "ExecutionLimitExceeded"})


def _admit_forgetting_refusals(self: Starter, message: dict, report: RunReport) -> str:
    """A start refused (a throttle, a limit) drops its entry: the refusal taken as proof."""
    try:
        name = execution_name(request_id_of(message))
        body = message["Body"]
        json.loads(body)
    except ValueError:
        report.poison.append(message.get("MessageId", "?"))
        self._release_now(message)
        return "poison"
    try:
        self.store.record(name, self.clock(), self.owner, self.lease_seconds, start_by=self.ends_at)
    except LeaseLost:
        self._release_now(message)
        return "lease_lost"
    outcome = "started"
    try:
        self.sfn.start_execution(
            stateMachineArn=self.config.state_machine_arn, name=name, input=body
        )
    except Exception as error:
        code = _error_code(error)
        if code == "ExecutionAlreadyExists":
            outcome = "existed"
        else:
            LOG.warning("start of %s failed: %s", name, error)
            if code in _REFUSALS or code in PERMANENT_ERRORS:
                self.store.forget(name)
            if code in PERMANENT_ERRORS:
                report.poison.append(name)
                self._release_now(message)
                return "poison"
            report.failed.append(name)
            return "failed"
    try:
        self.sqs.delete_message(
            QueueUrl=self.config.queue_url, ReceiptHandle=message["ReceiptHandle"]
        )
    except Exception as error:
        LOG.warning("delete of %s failed (it will be redelivered): %s", name, error)
    (report.started if outcome == "started" else report.already_existed).append(name)
    return outcome


def _entries_since_their_record(self: Ledger) -> list[tuple[str, float]]:
    """Every entry is taken as started at its record, not by its run's end."""
    found: list[tuple[str, float]] = []
    kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True}
    while True:
        page = self.dynamodb.scan(**kwargs)
        found.extend(
            (item[LEDGER_KEY]["S"], float(item["recorded_at"]["N"]))
            for item in page.get("Items", [])
            if not item[LEDGER_KEY]["S"].startswith("#")
        )
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _count_trusting_the_list(self: Starter) -> int:
    """A ledger entry the list does not show is taken as finished: no DescribeExecution."""
    listed = self.listed_running()
    for name, _start_by in self.ledger():
        if name not in listed:
            self.store.forget(name)
    return len(listed)


def _request_id_from_dedup_id(message: dict) -> str:
    """The SQS deduplication id is taken as the request's idempotency key."""
    dedup = (message.get("Attributes") or {}).get("MessageDeduplicationId")
    return str(dedup) if dedup else request_id_of(message)


@contextlib.contextmanager
def _replace(owner: type, name: str, function: Any) -> Iterator[None]:
    with patched(owner, name, function):
        yield


MUTANTS: dict[str, Mutant] = {
    mutant.name: mutant
    for mutant in (
        Mutant(
            "record-unfenced",
            "Ledger.record renews the run lease without `#owner = :me`: a run taken over "
            "after it counted still records and starts, on its stale count",
            lambda: _replace(Ledger, "record", _record_unfenced),
        ),
        Mutant(
            "admit-on-stale-count",
            "Starter._admit_until does not add its admissions to the count it read: it "
            "admits against a count taken before its own starts",
            lambda: _replace(Starter, "_admit_until", _admit_until_on_stale_count),
        ),
        Mutant(
            "delete-before-start",
            "Starter.admit deletes the message right after recording it, before "
            "StartExecution (a step moved before another): a crash in between loses it",
            lambda: _replace(Starter, "admit", _admit_deleting_first),
        ),
        Mutant(
            "name-from-dedup-id",
            "starter.request_id_of prefers the message's deduplication id to its request_id "
            "attribute: a request sent twice with two deduplication ids starts twice",
            lambda: _replace(starter_module, "request_id_of", _request_id_from_dedup_id),
        ),
        Mutant(
            "forget-refused-start",
            "Starter.admit drops the ledger entry of a start refused with a throttle or a "
            "limit, as certainly not started: an earlier attempt of the call, its answer "
            "lost, did start it (a check on a partial answer)",
            lambda: _replace(Starter, "admit", _admit_forgetting_refusals),
        ),
        Mutant(
            "grace-from-record",
            "Ledger.entries gives each entry's time of recording, not the end of the run "
            "that recorded it: a run paused past the grace still starts after its entry "
            "was forgotten",
            lambda: _replace(Ledger, "entries", _entries_since_their_record),
        ),
        Mutant(
            "trust-the-list",
            "Starter.count_running takes a ledger entry missing from ListExecutions as "
            "finished, without DescribeExecution: a check on an eventually consistent read",
            lambda: _replace(Starter, "count_running", _count_trusting_the_list),
        ),
    )
}
