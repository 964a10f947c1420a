"""Realistic mistakes in the dag dispatcher's runtime, to show the explorer would catch them.

Each mutant wraps one method of the real class (``RunStore``, ``Scheduler``) for the
duration of a context, changing one thing a reviewer could plausibly let through, and
keeps everything else as the Lambda runs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from sfn_patterns.dag_aggregate.runtime import dispatch
from sfn_patterns.dag_aggregate.runtime import store as runtime_store
from sfn_patterns.dag_aggregate.runtime.dispatch import Scheduler
from sfn_patterns.dag_aggregate.runtime.store import PENDING, TASK_PREFIX, ConditionFailed, RunStore
from sfn_patterns_localstack.interleavings.clock import patched
from sfn_patterns_localstack.interleavings.protocol import Mutant


@contextlib.contextmanager
def _rewritten_transactions(rewrite: Callable[[list[dict[str, Any]]], None]) -> Iterator[None]:
    """``RunStore._transact`` with each request's items passed through ``rewrite`` first."""
    real = RunStore._transact

    def transact(self: RunStore, items: list[dict[str, Any]]) -> None:
        rewrite(items)
        real(self, items)

    with patched(RunStore, "_transact", transact):
        yield


def _claims_ignore_the_limit(items: list[dict[str, Any]]) -> None:
    """A claim's run-item condition keeps ``status = RUNNING`` but drops the slot count."""
    for item in items:
        update = item.get("Update", {})
        condition = update.get("ConditionExpression", "")
        if "size(active) <= :max" in condition:
            update["ConditionExpression"] = "#s = :running"
            del update["ExpressionAttributeValues"][":max"]


def _claims_delete_unconditionally(items: list[dict[str, Any]]) -> None:
    """A claim deletes its ready items without checking they are still there."""
    values = [item.get("Update", {}).get("ExpressionAttributeValues", {}) for item in items]
    if not any(":max" in v for v in values):
        return
    for item in items:
        delete = item.get("Delete")
        if delete is not None and delete.get("ConditionExpression") == "attempt = :a":
            del delete["ConditionExpression"]
            del delete["ExpressionAttributeValues"]


def _releases_skip_the_pending_check(items: list[dict[str, Any]]) -> None:
    """A release queues a child without checking that it is still pending at that attempt."""
    if any("Put" in item for item in items):
        items[:] = [item for item in items if "ConditionCheck" not in item]


def _launch_before_claim(
    self: Scheduler, run: Any, claimer: str, count: int, races: int
) -> tuple[Any, dict[str, Any]]:
    """The executions start as soon as the tasks are picked, before the claim is written."""
    picks = self._picks(run.run_id, count, races)
    if not picks:
        return self.store.get_run(run.run_id), {}
    for task, entry in picks.items():
        self.launcher.start_task(
            dispatch.execution_name(run.run_id, task, entry.attempt),
            {"run_id": run.run_id, "task_id": task, "attempt": entry.attempt},
        )
    try:
        return self.store.claim(run.run_id, picks, self.max_concurrency, claimer), picks
    except ConditionFailed as lost:
        return (runtime_store.decode_run(run.run_id, lost.item) if lost.item else None), {}


def _unblock_read_modify_write(self: RunStore, run_id: str, child: str, parent: str) -> Any:
    """The child's ``waiting_on`` is read, the parent taken out, and the rest written back."""
    key = self._key(run_id, TASK_PREFIX + child)
    item = self._call("get_item", TableName=self.table, Key=key, ConsistentRead=True).get("Item")
    if item is None:
        raise ConditionFailed(None)
    task = runtime_store.decode_task(item)
    if task.status != PENDING or parent not in task.waiting_on:
        raise ConditionFailed(item)
    rest = sorted(task.waiting_on - {parent})
    values: dict[str, Any] = {":pending": {"S": PENDING}}
    if rest:
        values[":w"] = {"SS": rest}
    return runtime_store.decode_task(
        self._update(
            run_id,
            TASK_PREFIX + child,
            UpdateExpression="SET waiting_on = :w" if rest else "REMOVE waiting_on",
            ConditionExpression="#s = :pending",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues=values,
        )
    )


MUTANTS: dict[str, Mutant] = {
    mutant.name: mutant
    for mutant in (
        Mutant(
            "claim-ignores-limit",
            "RunStore.claim's condition drops `size(active) <= :max`: a dispatcher whose run "
            "item image shows a free slot claims it even if another claim took it since",
            lambda: _rewritten_transactions(_claims_ignore_the_limit),
        ),
        Mutant(
            "claim-deletes-unconditionally",
            "RunStore.claim deletes its ready items without `attempt = :a` (a delete is "
            "idempotent, so why check): two dispatchers that read the same ready item both "
            "claim it",
            lambda: _rewritten_transactions(_claims_delete_unconditionally),
        ),
        Mutant(
            "release-skips-pending-check",
            "RunStore.release queues a child that has no ready item and holds no slot, "
            "without checking that its task item is still pending at that attempt (the "
            "ready item and the slot look like enough): a replayed report queues a child "
            "that has already run, and it runs again",
            lambda: _rewritten_transactions(_releases_skip_the_pending_check),
        ),
        Mutant(
            "launch-before-claim",
            "Scheduler._try_claim starts the picked tasks' executions before their claim is "
            "written (a step moved before another, to save a round trip): a pick whose claim "
            "loses runs without a slot",
            lambda: patched(Scheduler, "_try_claim", _launch_before_claim),
        ),
        Mutant(
            "unblock-read-modify-write",
            "RunStore.unblock reads the child, takes the parent out of the `waiting_on` it "
            "read and writes the rest back (a check done on a stale read): two parents that "
            "finish together each write back the other",
            lambda: patched(RunStore, "unblock", _unblock_read_modify_write),
        ),
    )
}
