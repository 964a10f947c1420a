"""End to end: examples/semaphore (strategy dynamodb) on LocalStack, how a leaked slot
comes back: the reconciler's sweep, the status-change event's cleanup, and a mixed fault
plan. On an apply of its own without alarms, beside test_example.py's
(example_support.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from . import example_support, fault_run
from .example_support import CRITICAL_TIMEOUT, LIMIT, SETTINGS, hold_then_stop
from .support import (
    NO_ALARMS,
    assert_lock_free,
    deployment_fixture,
    holders,
    invoke,
    lock_item,
    start,
    sweep_after,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

no_holder_left_over = example_support.no_holder_left_over


deployed = deployment_fixture("semr", alarms=NO_ALARMS, **SETTINGS)


# Stock LocalStack's disabled cleanup rule still delivers, and frees the slot itself.
@pytest.mark.needs("fix:events_rule_state")
def test_reconciler_frees_a_slot_leaked_by_an_aborted_holder(aws: Callable, deployed: dict) -> None:
    events = aws("events")
    rule = deployed["cleanup_rule_name"]
    # Without the status-change events (as where they never arrive) only the
    # reconciler can free the slot: disable the cleanup rule for this test.
    events.disable_rule(Name=rule)
    sfn = aws("stepfunctions")
    running = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 30})
    try:
        # A RUNNING holder is never released.
        wait_until(
            lambda: running in holders(lock_item(aws, deployed)).values(), 30, "running holder"
        )
        leaked = hold_then_stop(aws, deployed)
        time.sleep(1)
        item = lock_item(aws, deployed)
        assert set(holders(item).values()) == {leaked, running}, "freed without the reconciler"
        assert int(item["holder_count"]["N"]) == 2

        # Its critical-section Lambda may still run: the sweep keeps the slot until the
        # task's TimeoutSeconds has passed, and the first sweep after frees it.
        report = invoke(aws, deployed["reconciler_function_name"])
        assert report["released"] == [], report
        assert set(report["kept"]) == {leaked, running}, report
        report = sweep_after(aws, deployed, report, leaked)
        assert report["released"] == [{"execution_arn": leaked, "status": "ABORTED"}], report
        # The 30 s holder may have ended by now, releasing its own slot.
        assert set(report["kept"]) <= {running}, report
        item = lock_item(aws, deployed)
        assert leaked not in holders(item).values()
        assert int(item["holder_count"]["N"]) == len(holders(item))

        # A second sweep releases nothing twice.
        again = invoke(aws, deployed["reconciler_function_name"])
        assert again["released"] == [], again
        assert wait_done(sfn, [running], timeout=60)[running]["status"] == "SUCCEEDED"
        assert_lock_free(aws, deployed)
    finally:
        events.enable_rule(Name=rule)
        # On a failure above, the 30 s holder must not hold a slot in the next test.
        if sfn.describe_execution(executionArn=running)["status"] == "RUNNING":
            sfn.stop_execution(executionArn=running, error="Test.Abort", cause="test failed")


# Stock LocalStack keeps a stopped execution RUNNING until its Lambda returns and then
# records the section's TaskSucceeded: no Lambda can still run once it is ABORTED, so
# the slot rightly goes back at once, and the wait this test proves never happens.
@pytest.mark.needs("fix:sfn_stop")
def test_event_cleanup_frees_the_slot_of_an_aborted_holder(aws: Callable, deployed: dict) -> None:
    """The slot goes back only once the stopped holder's critical-section Lambda (5 s, run
    on after the stop) can no longer run: after its task's TimeoutSeconds."""
    leaked = hold_then_stop(aws, deployed)
    time.sleep(5)  # the Lambda has run its 5 s by now, but its task's timeout is ahead
    assert leaked in holders(lock_item(aws, deployed)).values(), "freed while it may run"
    wait_until(
        lambda: leaked not in holders(lock_item(aws, deployed)).values(),
        CRITICAL_TIMEOUT + 30,
        "the EventBridge cleanup to release the aborted holder",
    )
    assert_lock_free(aws, deployed)
    # A redelivered event is harmless: nothing left to release, count unchanged.
    event = {
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {"executionArn": leaked, "status": "ABORTED"},
    }
    result = invoke(aws, deployed["cleanup_function_name"], event)
    assert result == {
        "execution_arn": leaked,
        "held": False,
        "released": False,
        "status": "ABORTED",
    }
    assert_lock_free(aws, deployed)


def test_invariants_hold_under_a_mixed_fault_plan(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """Faults injected: the acquire and release tasks' DynamoDB calls throttled, the cleanup
    Lambda crashed, its events dropped or doubled, a holder and a waiter stopped:
    peak <= limit, each execution admitted once or ABORTED, nothing
    held after settling (fault_run.py checks each from the record)."""
    plan = fault_run.embedded_plan(aws, deployed)
    result = fault_run.run_under_faults(
        aws,
        localstack_endpoint,
        deployed,
        limit=LIMIT,
        plan=plan,
    )
    assert "throttle" in result["kinds"], result["kinds"]
