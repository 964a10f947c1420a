"""Realistic mistakes in the semaphore's runtime, to show the explorer would catch them.

Each mutant replaces one method of the real ``CallbackSemaphore`` (or one function of the
oldest-first gate) for the duration of a context, keeping everything else as the Lambdas
run it. Where the mistake is one
condition of a write, the mutant runs the real method with the condition edited on its
way to DynamoDB (:class:`_Edited`), so the rest of the method is the runtime's own.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns.semaphore import oldest_first
from sfn_patterns.semaphore.callback import DEAD_TOKEN_ERRORS, CallbackSemaphore, Waiter
from sfn_patterns.semaphore.lease import Lease
from sfn_patterns_localstack.interleavings.clock import patched
from sfn_patterns_localstack.interleavings.protocol import Mutant

_enqueue = CallbackSemaphore._enqueue
_give_back = CallbackSemaphore._give_back
_hand_over = CallbackSemaphore._hand_over


class _Edited:
    """A DynamoDB client whose writes pass through ``edit`` (the request's keyword arguments)."""

    def __init__(self, client: Any, edit: Callable[[dict[str, Any]], None]) -> None:
        self._client = client
        self._edit = edit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def update_item(self, **request: Any) -> Any:
        self._edit(request)
        return self._client.update_item(**request)

    def transact_write_items(self, **request: Any) -> Any:
        for item in request["TransactItems"]:
            for part in item.values():
                self._edit(part)
        return self._client.transact_write_items(**request)


@contextlib.contextmanager
def _editing(
    semaphore: CallbackSemaphore, edit: Callable[[dict[str, Any]], None]
) -> Iterator[None]:
    client = semaphore.dynamodb
    semaphore.dynamodb = _Edited(client, edit)
    try:
        yield
    finally:
        semaphore.dynamodb = client


def _drop(fragment: str) -> Callable[[dict[str, Any]], None]:
    """An edit that removes ``fragment`` from a condition that has it.

    The names and values only the fragment used are dropped too, as the author of the
    shorter condition would have (DynamoDB refuses a request with unused ones).
    """

    def edit(request: dict[str, Any]) -> None:
        condition = request.get("ConditionExpression", "")
        if fragment not in condition:
            return
        request["ConditionExpression"] = condition.replace(fragment, "")
        used = " ".join(
            str(request.get(part, ""))
            for part in ("UpdateExpression", "ConditionExpression", "ProjectionExpression")
        )
        for table in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
            if table in request:
                request[table] = {
                    k: v for k, v in request[table].items() if re.search(rf"{k}\b", used)
                }

    return edit


def _enqueue_when_free(self: CallbackSemaphore, execution_arn: str, task_token: str) -> bool:
    """The enqueue drops ``holder_count >= limit OR waiting > 0``: "the fast path just failed"."""
    with _editing(self, _drop("(#count >= :limit OR #waiting > :zero) AND ")):
        return _enqueue(self, execution_arn, task_token)


def _give_back_on_stale_read(
    self: CallbackSemaphore, lease: Lease, fix_waiting: int | None = None
) -> bool:
    """The plain release trusts its read of ``waiting = 0`` and drops it from the condition."""
    guard = " AND (attribute_not_exists(#waiting) OR #waiting = :zero OR #count > :limit)"
    with _editing(self, _drop(guard)):
        return _give_back(self, lease, fix_waiting)


def _hand_over_after_waking(self: CallbackSemaphore, lease: Lease, waiter: Waiter) -> bool:
    """The waiter is woken first, "so it starts sooner", then the slot is handed over."""
    self._wake(waiter)
    return _hand_over(self, lease, waiter)


def _wake_without_describe(self: CallbackSemaphore, waiter: Waiter) -> bool:
    """A dead-token answer is taken for an ended execution, without DescribeExecution."""
    try:
        self.sfn.send_task_success(
            taskToken=waiter.task_token,
            output=json.dumps({"semaphore": "admitted", "lock_key": self.lock_key}),
        )
    except ClientError as error:
        if error.response["Error"]["Code"] not in DEAD_TOKEN_ERRORS:
            raise
        return False
    return True


def _no_stopped_holders(*_: Any, **__: Any) -> list[dict[str, Any]]:
    """The gate looks at RUNNING executions only: "a stopped execution holds nothing"."""
    return []


def _replace(name: str, function: Any) -> contextlib.AbstractContextManager[Any]:
    return patched(CallbackSemaphore, name, function)


MUTANTS: dict[str, Mutant] = {
    mutant.name: mutant
    for mutant in (
        Mutant(
            "enqueue-when-free",
            "CallbackSemaphore._enqueue drops `holder_count >= limit OR waiting > 0` (a guard "
            "dropped): a waiter queues after the last release freed the slot, and nobody "
            "wakes it",
            lambda: _replace("_enqueue", _enqueue_when_free),
        ),
        Mutant(
            "give-back-on-stale-read",
            "CallbackSemaphore._give_back trusts the release's read of `waiting = 0` instead "
            "of re-checking it in the write: a waiter that queued since is left with a free "
            "slot",
            lambda: _replace("_give_back", _give_back_on_stale_read),
        ),
        Mutant(
            "wake-before-hand-over",
            "the release sends the waiter's token before the hand-over transaction (a step "
            "moved before another): the waiter may enter before it holds the slot",
            lambda: _replace("_hand_over", _hand_over_after_waking),
        ),
        Mutant(
            "dead-token-without-describe",
            "CallbackSemaphore._wake takes TaskTimedOut for an ended execution without "
            "DescribeExecution: the slot of a waiter that is re-checking (or whose wake-up "
            "answer was lost) is passed on while it enters",
            lambda: _replace("_wake", _wake_without_describe),
        ),
        Mutant(
            "gate-counts-running-only",
            "the oldest-first gate counts only RUNNING executions (oldest_first."
            "stopped_holders finds none): a holder stopped in its critical section frees its "
            "slot while its Lambda still runs",
            lambda: patched(oldest_first, "stopped_holders", _no_stopped_holders),
        ),
    )
}
