"""What the strategy-dynamodb LocalStack tests share: examples/semaphore's settings,
a leaked slot, and the wait for a free lock before each test (test_example.py and
test_example_recovery.py each apply their own, so that they run side by side).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .support import holders, in_critical_section, lock_item, start, wait_done, wait_until

LIMIT = 3
# TimeoutSeconds of the embedded and target machines: the timed-out-holder test waits
# this long. The longest execution any other test means to finish is the reconciler
# test's 30-second holder, stopped about 15 s after it starts.
EXECUTION_TIMEOUT = 45
# TimeoutSeconds of the critical section's task (and its Lambda's timeout), longer than
# any holder here sleeps: a holder stopped in it keeps its slot this long after the task
# was scheduled, since its Lambda runs on after the stop.
CRITICAL_TIMEOUT = 60


# examples/semaphore's variables for both files (each adds its own name and alarms).
SETTINGS: dict[str, Any] = {
    "strategy": "dynamodb",
    "max_concurrency": LIMIT,
    "wait_min_seconds": 1,
    "wait_max_seconds": 3,
    "acquire_timeout_seconds": 300,
    "execution_timeout_seconds": EXECUTION_TIMEOUT,
    "critical_section_timeout_seconds": CRITICAL_TIMEOUT,
}


@pytest.fixture(autouse=True)
def no_holder_left_over(request: pytest.FixtureRequest, aws: Callable) -> None:
    """Start each test with every slot free, so one failed test does not fail the next."""
    if "deployed" not in request.fixturenames:
        return
    deployed = request.getfixturevalue("deployed")
    wait_until(lambda: not holders(lock_item(aws, deployed)), EXECUTION_TIMEOUT + 15, "a free lock")


def hold_then_stop(aws: Callable, deployed: dict) -> str:
    """Start an execution that sits in the critical section, then StopExecution it."""
    sfn = aws("stepfunctions")
    arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 5})
    wait_until(
        lambda: arn in holders(lock_item(aws, deployed)).values(), 30, "the execution to hold"
    )
    in_critical_section(sfn, arn)
    sfn.stop_execution(executionArn=arn, error="Test.Abort", cause="leak a slot")
    # ABORTED at once (the harness's sfn_stop fix); its 5 s task runs on, as on AWS.
    assert wait_done(sfn, [arn], timeout=60)[arn]["status"] == "ABORTED"
    return arn
