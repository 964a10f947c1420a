"""What the strategy-callback LocalStack tests share: the deployment, its settings, and
the waits and checks on the lock and queue tables (test_callback.py and
test_callback_recovery.py each apply their own, so that they run side by side).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .support import NO_ALARMS, deployment_fixture, holders, lock_item, wait_until

LIMIT = 3
FALLBACK = 8
TIMEOUT = 40  # TimeoutSeconds of the embedded and target machines
# TimeoutSeconds of the critical section's task (and its Lambda's timeout): longer than
# any holder here sleeps short of TIMEOUT. A holder stopped in its critical section keeps
# its slot this long after the task was scheduled: its Lambda runs on after the stop.
CRITICAL_TIMEOUT = 50
ACQUIRE = "Semaphore: Acquire"
RECHECK = "Semaphore: Re-check"


def deployment(tag: str) -> Any:
    """The ``deployed`` fixture of a strategy-callback file (alarms off), named by ``tag``."""
    return deployment_fixture(
        tag,
        strategy="callback",
        max_concurrency=LIMIT,
        fallback_seconds=FALLBACK,
        acquire_timeout_seconds=300,
        execution_timeout_seconds=TIMEOUT,
        critical_section_timeout_seconds=CRITICAL_TIMEOUT,
        alarms=NO_ALARMS,
    )


def queue_items(aws: Callable, deployed: dict) -> list[dict[str, Any]]:
    return aws("dynamodb").scan(TableName=deployed["queue_table_name"], ConsistentRead=True)[
        "Items"
    ]


def assert_all_free(aws: Callable, deployed: dict) -> None:
    """Count 0, no lease, nobody waiting, and the queue table empty."""
    item = lock_item(aws, deployed)
    assert item["holder_count"] == {"N": "0"}, item
    assert item["waiting"] == {"N": "0"}, item
    assert holders(item) == {}, item
    assert queue_items(aws, deployed) == []


def no_holder_and_no_waiter(aws: Callable, deployed: dict) -> bool:
    """Count 0 and the queue table empty (what settle and each test's start wait for)."""
    item = lock_item(aws, deployed)
    return item["holder_count"] == {"N": "0"} and not queue_items(aws, deployed)


def settle(aws: Callable, deployed: dict, timeout: float = 90 + CRITICAL_TIMEOUT) -> None:
    """Wait for the event cleanup (asynchronous) to finish, then check nothing leaked."""
    wait_until(lambda: no_holder_and_no_waiter(aws, deployed), timeout, "the semaphore to be free")
    assert_all_free(aws, deployed)


def blocked_and_held(aws: Callable, deployed: dict, count: int, waiting: int) -> None:
    def reached() -> bool:
        item = lock_item(aws, deployed)
        return int(item["holder_count"]["N"]) == count and int(item["waiting"]["N"]) == waiting

    wait_until(reached, 60, f"{count} holders and {waiting} waiters")


@pytest.fixture(autouse=True)
def free_at_start(request: pytest.FixtureRequest, aws: Callable) -> None:
    """Start each test with the semaphore free, so one failed test does not fail the next."""
    if "deployed" not in request.fixturenames:
        return
    deployed = request.getfixturevalue("deployed")
    wait_until(
        lambda: no_holder_and_no_waiter(aws, deployed),
        TIMEOUT + 30,
        "the semaphore to be free before the test",
    )
