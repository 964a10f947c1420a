"""End to end: strategy callback on LocalStack, how slots come back: timed-out, aborted
and failed critical sections, a lost status-change event, stopped wrappers, the IAM
grants each path needs, and a mixed fault plan. On an apply of its own, beside
test_callback.py's (callback_support.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from sfn_patterns_localstack.executions import history
from sfn_patterns_localstack.roles import events_to_queue_policy
from tests.iam_denial import (
    assert_denial_text,
    denial,
    expect_denials,
    require_enforcement,
    temporary_role,
    without_actions,
    without_function_permission,
)
from tests.sfn_history import states_entered

from . import callback_support, fault_run
from .callback_support import (
    ACQUIRE,
    CRITICAL_TIMEOUT,
    LIMIT,
    TIMEOUT,
    assert_all_free,
    blocked_and_held,
    settle,
)
from .support import (
    holders,
    in_critical_section,
    invoke,
    lock_item,
    start,
    stopped_wrappers_keep_the_limit,
    sweep_after,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

deployed = callback_support.deployment("semcbr")
free_at_start = callback_support.free_at_start


def timed_out_and_aborted_holders_free_their_slots_through_the_event_cleanup(
    aws: Callable, deployed: dict
) -> None:
    sfn = aws("stepfunctions")
    machine = deployed["embedded_state_machine_arn"]
    timed_out = start(sfn, machine, {"sleep_seconds": TIMEOUT + 20})
    aborted = start(sfn, machine, {"sleep_seconds": 5})
    # Both hold a slot (by name: the wrapper scenario runs alongside, its holders count).
    wait_until(
        lambda: {timed_out, aborted} <= set(holders(lock_item(aws, deployed)).values()),
        60,
        "the two holders",
        interval=1,
    )
    # Stopped in its critical section: ABORTED at once (its Lambda runs on, as on AWS).
    sfn.stop_execution(executionArn=aborted, error="Test.Abort", cause="holder aborted")
    assert wait_done(sfn, [aborted], 30)[aborted]["status"] == "ABORTED"
    wait_until(
        lambda: aborted not in holders(lock_item(aws, deployed)).values(),
        CRITICAL_TIMEOUT + 30,
        "abort cleanup (once the aborted holder's Lambda can no longer run)",
    )
    assert wait_done(sfn, [timed_out], TIMEOUT + 30)[timed_out]["status"] == "TIMED_OUT"
    # The timed-out holder's slot went back through the event cleanup too.
    wait_until(
        lambda: timed_out not in holders(lock_item(aws, deployed)).values(),
        CRITICAL_TIMEOUT + 30,
        "timeout cleanup",
    )


def wrapper_failing_target_passes_its_error_through(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    wrapper = deployed["wrapper_state_machine_arn"]
    ok = start(sfn, wrapper, {"sleep_seconds": 0, "n": 1})
    failed = start(sfn, wrapper, {"sleep_seconds": 0, "fail": "target broke"})
    timed_out = start(sfn, wrapper, {"sleep_seconds": TIMEOUT + 5})
    done = wait_done(sfn, [ok, failed, timed_out], timeout=TIMEOUT + 60)
    assert done[ok]["status"] == "SUCCEEDED", done[ok]
    assert json.loads(done[ok]["output"])["n"] == 1
    for arn, original in ((failed, "target broke"), (timed_out, "TIMED_OUT")):
        described = done[arn]
        assert described["status"] == "FAILED", described
        # Not States.Runtime: the module's own name, the original kept in the cause.
        assert described["error"] == "Semaphore.CriticalSectionFailed", described
        cause = json.loads(described["cause"])
        assert cause["Error"].startswith("States."), cause
        assert original in cause["Cause"], cause


def test_timed_out_aborted_and_failed_critical_sections_free_their_slots(
    aws: Callable, deployed: dict
) -> None:
    """Two scenarios that each wait out the machines' TimeoutSeconds, run at once.

    Each has its own executions and assertions (five executions on three slots: the
    wrapper's quick ones leave within seconds, so every holder is admitted long before
    its timeout); waiting the 40 s once instead of twice. Afterwards nothing is held.
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        scenarios = [
            pool.submit(
                timed_out_and_aborted_holders_free_their_slots_through_the_event_cleanup,
                aws,
                deployed,
            ),
            pool.submit(wrapper_failing_target_passes_its_error_through, aws, deployed),
        ]
        for scenario in scenarios:
            scenario.result()
    settle(aws, deployed)


# Stock LocalStack keeps a stopped execution RUNNING until its Lambda returns and then
# records the section's TaskSucceeded: no Lambda can still run once it is ABORTED, so
# the slot rightly goes back at once, and the wait this test proves never happens.
@pytest.mark.needs("fix:sfn_stop")
def test_reconciler_hands_over_a_slot_whose_event_was_lost(aws: Callable, deployed: dict) -> None:
    events = aws("events")
    sfn = aws("stepfunctions")
    rule = deployed["cleanup_rule_name"]
    targets = events.list_targets_by_rule(Rule=rule)["Targets"]
    events.remove_targets(Rule=rule, Ids=[t["Id"] for t in targets])
    try:
        machine = deployed["embedded_state_machine_arn"]
        # The first holder is stopped (ABORTED at once, its 3 s task runs on); the
        # others hold long enough for the reconciler to act before they release.
        holding = [
            start(sfn, machine, {"sleep_seconds": 3 if i == 0 else 20, "n": i})
            for i in range(LIMIT)
        ]
        blocked_and_held(aws, deployed, LIMIT, 0)
        waiter = start(sfn, machine, {"sleep_seconds": 0})
        blocked_and_held(aws, deployed, LIMIT, 1)
        in_critical_section(sfn, holding[0])
        sfn.stop_execution(executionArn=holding[0], error="Test.Abort", cause="event lost")
        assert wait_done(sfn, [holding[0]], 30)[holding[0]]["status"] == "ABORTED"
        time.sleep(1)
        assert holding[0] in holders(lock_item(aws, deployed)).values(), "freed without reconciler"
        # Its 3 s Lambda may still run until its task's timeout: the first sweep keeps the
        # slot, the first after the timeout frees it.
        report = invoke(aws, deployed["reconciler_function_name"])
        assert report["released"] == [] and holding[0] in report["kept"], report
        report = sweep_after(aws, deployed, report, holding[0])
        # The waiter has this slot, or one a 20 s holder released meanwhile (seen).
        [released] = report["released"]
        assert (released["execution_arn"], released["status"]) == (holding[0], "ABORTED")
        assert released["handed_to"] in ([], [waiter]), report
        assert wait_done(sfn, [waiter], 30)[waiter]["status"] == "SUCCEEDED"
        done = wait_done(sfn, holding[1:], 60)
        assert {d["status"] for d in done.values()} == {"SUCCEEDED"}
        assert_all_free(aws, deployed)
    finally:
        events.put_targets(Rule=rule, Targets=targets)


def test_stopped_wrapper_stops_its_target_before_the_slot_goes_back(
    aws: Callable, deployed: dict
) -> None:
    stopped_wrappers_keep_the_limit(aws, deployed, LIMIT)
    settle(aws, deployed)


# --- IAM: each grant is needed, and the caller policy is enough -----------------------------

STATES_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "states.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ],
}


def first_task_failure(sfn: Any, arn: str, timeout: float = 60) -> dict[str, Any]:
    """The details of the execution's first TaskFailed event (waits for it)."""

    def failed() -> dict[str, Any] | None:
        for event in history(sfn, arn):
            if event["type"] == "TaskFailed":
                return event["taskFailedEventDetails"]
        return None

    return wait_until(failed, timeout, f"a failed task in {arn}")


@pytest.mark.iam_denial
def test_without_send_task_success_the_callback_function_cannot_admit(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """The callback function's WakeWaiters grant is needed: without states:SendTaskSuccess
    the free slot is taken but the caller is never resumed, and the Acquire task fails
    with the function's error, AWS's AccessDenied sentence naming the function's role.
    """
    require_enforcement(aws, localstack_endpoint)
    sfn = aws("stepfunctions")
    role = aws("lambda").get_function(FunctionName=deployed["callback_function_name"])[
        "Configuration"
    ]["Role"]
    with (
        without_actions(aws, role, "states:SendTaskSuccess"),
        expect_denials(denial(role, "states:SendTaskSuccess", "*")),
    ):
        arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0})
        failure = first_task_failure(sfn, arn)
        # Stopped before the grant comes back (the Acquire task's Retry would then pass).
        sfn.stop_execution(executionArn=arn, error="Test.Stop", cause="denial seen")
    text = f"{failure.get('error')} {failure.get('cause')}"
    print(f"\ndenied Acquire: {text}")
    assert_denial_text(text, role, "states:SendTaskSuccess", "*", code="AccessDenied")
    assert "Critical section" not in states_entered(history(sfn, arn))
    settle(aws, deployed)  # the event cleanup released the slot the denied call had taken


@pytest.mark.iam_denial
def test_without_its_function_permission_eventbridge_cannot_run_the_cleanup(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """The cleanup rule's aws_lambda_permission is needed: without it EventBridge's
    invoke is refused (the function policy allows no events.amazonaws.com call), the
    cleanup never runs and an aborted holder keeps its slot until the reconciler.

    A second target on the same rule, a queue, is the witness that EventBridge matched
    the ABORTED event and attempted its targets (in order: the function first).
    """
    require_enforcement(aws, localstack_endpoint)
    sfn, sqs, events = aws("stepfunctions"), aws("sqs"), aws("events")
    rule = deployed["cleanup_rule_name"]
    rule_arn = events.describe_rule(Name=rule)["Arn"]
    queue_url = sqs.create_queue(QueueName=f"{deployed['prefix']}-witness")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    sqs.set_queue_attributes(
        QueueUrl=queue_url, Attributes={"Policy": events_to_queue_policy(queue_arn, [rule_arn])}
    )
    events.put_targets(Rule=rule, Targets=[{"Id": "witness", "Arn": queue_arn}])
    holder = None
    try:
        cleanup = deployed["cleanup_function_name"]
        with (
            without_function_permission(aws, cleanup, "AllowHolderEndedEvents"),
            expect_denials(
                denial("events.amazonaws.com", "lambda:InvokeFunction", f"*:function:{cleanup}")
            ),
        ):
            holder = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 20})
            blocked_and_held(aws, deployed, 1, 0)
            in_critical_section(sfn, holder)
            sfn.stop_execution(executionArn=holder, error="Test.Abort", cause="holder aborted")

            def witnessed() -> bool:
                for message in sqs.receive_message(
                    QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1
                ).get("Messages", []):
                    detail = json.loads(message["Body"])["detail"]
                    if detail["executionArn"] == holder and detail["status"] == "ABORTED":
                        return True
                return False

            wait_until(witnessed, 60, "the ABORTED event at the witness queue")
            # The cleanup releases an aborted holder within seconds (its test above);
            # refused, it never runs: the slot stays held.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                assert holder in holders(lock_item(aws, deployed)).values(), "cleanup ran"
                time.sleep(1)
        report = invoke(aws, deployed["reconciler_function_name"])
        if report["released"] == []:  # its 20 s Lambda may still run
            report = sweep_after(aws, deployed, report, holder)
        assert report["released"] == [
            {"execution_arn": holder, "status": "ABORTED", "handed_to": []}
        ], report
    finally:
        events.remove_targets(Rule=rule, Ids=["witness"])
        sqs.delete_queue(QueueUrl=queue_url)
    settle(aws, deployed)


@pytest.mark.iam_denial
def test_caller_policy_json_is_all_a_machine_needs_to_run_the_fragments(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """The consumer's side of caller_policy_json: a machine whose role has that policy and
    nothing else acquires, runs its critical section and releases; the same machine with
    a role without it is refused at its first call, lambda:InvokeFunction of the
    semaphore's function, with AWS's AccessDenied sentence for its role.
    """
    require_enforcement(aws, localstack_endpoint)
    sfn = aws("stepfunctions")
    definition = json.loads(
        sfn.describe_state_machine(stateMachineArn=deployed["embedded_state_machine_arn"])[
            "definition"
        ]
    )
    # The caller's own work needs no grant here: a Pass instead of the worker Lambda
    # (in a Parallel, which keeps the section's Catch to the release after failure).
    section = definition["States"]["Critical section"]
    definition["States"]["Critical section"] = {
        "Type": "Parallel",
        "Branches": [{"StartAt": "Work", "States": {"Work": {"Type": "Pass", "End": True}}}],
        "ResultPath": None,
        "Catch": section["Catch"],
        "Next": section["Next"],
    }
    prefix = deployed["prefix"]
    with (
        temporary_role(aws, f"{prefix}-caller", deployed["caller_policy_json"], STATES_TRUST) as ok,
        temporary_role(aws, f"{prefix}-stranger", None, STATES_TRUST) as bare,
        expect_denials(
            denial(
                bare, "lambda:InvokeFunction", f"*:function:{deployed['callback_function_name']}"
            )
        ),
    ):
        machines = {
            role: sfn.create_state_machine(
                name=f"{role.rsplit('/', 1)[1]}-machine",
                definition=json.dumps(definition),
                roleArn=role,
            )["stateMachineArn"]
            for role in (ok, bare)
        }
        try:
            allowed = start(sfn, machines[ok], {})
            refused = start(sfn, machines[bare], {})
            described = wait_done(sfn, [allowed], 60)[allowed]
            assert described["status"] == "SUCCEEDED", described
            entered = states_entered(history(sfn, allowed))
            assert entered[0] == ACQUIRE and entered[-1] == "Semaphore: Release", entered
            assert "Critical section" in entered
            failure = first_task_failure(sfn, refused)
            sfn.stop_execution(executionArn=refused, error="Test.Stop", cause="denial seen")
            text = f"{failure.get('error')} {failure.get('cause')}"
            print(f"\ndenied Acquire: {text}")
            function_arn = aws("lambda").get_function(
                FunctionName=deployed["callback_function_name"]
            )["Configuration"]["FunctionArn"]
            assert_denial_text(text, bare, "lambda:InvokeFunction", function_arn)
            assert "AccessDenied" in text, text
        finally:
            for machine in machines.values():
                sfn.delete_state_machine(stateMachineArn=machine)


def test_invariants_hold_under_a_mixed_fault_plan(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """Faults injected: DynamoDB throttling and transaction conflicts, lost and duplicated
    wake-ups, crashed acquire, release and cleanup Lambdas, throttled DescribeExecution,
    cleanup events dropped or delivered twice, and a holder and a waiter stopped
    mid-way: peak <= limit, each execution admitted once or ABORTED, nothing held after
    settling (fault_run.py checks each from the record)."""
    callback = deployed["callback_function_name"]
    cleanup = deployed["cleanup_function_name"]
    plan = fault_run.mixed_plan(
        roles=[fault_run.function_role(aws, callback), fault_run.function_role(aws, cleanup)],
        functions=[callback, cleanup],
        cleanup_rule=deployed["cleanup_rule_name"],
        conflicts=True,
    )
    result = fault_run.run_under_faults(aws, localstack_endpoint, deployed, limit=LIMIT, plan=plan)
    # The run met the faults it is about (else it proved nothing).
    wanted = {"throttle", "internal_error", "answer_lost", "kill", "event_drop", "event_duplicate"}
    wanted.add("transaction_conflict")
    assert wanted <= set(result["kinds"]), result["kinds"]
    assert result["peak"] >= 2
    assert_all_free(aws, deployed)
