"""End to end: examples/semaphore (strategy dynamodb) on LocalStack, with real executions:
its alarms and dashboard, the limit, stopped wrappers, timed-out and failing holders, and
the wait loop's history. test_example_recovery.py has the reconciler, the event cleanup
and a fault plan, on an apply of its own (example_support.py).

One apply per module (module-scoped fixture); the last test checks that a
second plan is empty, and teardown destroys everything and checks nothing is left.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from sfn_patterns.semaphore.lease import holder_attribute
from sfn_patterns_localstack.executions import history
from tests.alarm_check import PERIOD, Inbox, prove_alarm
from tests.dashboard_check import assert_module_dashboard, deployed_body
from tests.sfn_history import states_entered

from . import example_support
from .example_support import CRITICAL_TIMEOUT, EXECUTION_TIMEOUT, LIMIT, SETTINGS, hold_then_stop
from .support import (
    assert_lock_free,
    deploy,
    holders,
    lock_item,
    max_overlap,
    start,
    stopped_wrappers_keep_the_limit,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

no_holder_left_over = example_support.no_holder_left_over


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    tmp_path_factory: pytest.TempPathFactory,
    inbox: Inbox,
) -> Iterator[dict[str, Any]]:
    with deploy(
        localstack_endpoint,
        aws,
        tmp_path_factory.mktemp("semaphore-tf"),
        "sem",
        alarms={
            "period_seconds": PERIOD,
            "alarm_actions": [inbox.topic_arn],
            "ok_actions": [inbox.topic_arn],
        },
        create_dashboard=True,
        **SETTINGS,
    ) as outputs:
        # The slots leaked here go back through the event cleanup. The reconciler's
        # schedule (every 5 minutes on the wall clock) would free one first, now and then.
        aws("events").disable_rule(Name=outputs["reconciler_rule_name"])
        yield outputs


def test_max_overlap_counts_concurrent_intervals() -> None:
    assert max_overlap([(0, 1), (1, 2), (2, 3)]) == 1
    assert max_overlap([(0, 3), (1, 4), (2, 5), (2.5, 2.6)]) == 4


def test_a_leaked_slot_fires_the_slots_reclaimed_alarm(
    aws: Callable, deployed: dict, inbox: Inbox
) -> None:
    # A holder stopped in its critical section never releases: the cleanup function
    # (on its status-change event) reclaims the slot and reports it (SlotsReclaimed).
    # First of the deployment's tests: no earlier reclaim has put the alarm in ALARM,
    # so its proof does not wait periods for OK before it starts.
    def leak() -> None:
        leaked = hold_then_stop(aws, deployed)
        wait_until(
            lambda: leaked not in holders(lock_item(aws, deployed)).values(),
            CRITICAL_TIMEOUT + 30,
            "the cleanup to reclaim the slot",
        )

    prove_alarm(
        aws,
        inbox,
        deployed["alarms"]["slots-reclaimed"]["name"],
        inject=leak,
        clear=lambda: None,  # no further leak: the alarm returns to OK by itself
    )


def test_the_dashboard_charts_what_the_dynamodb_strategy_prints(
    aws: Callable, deployed: dict
) -> None:
    """Strategy dynamodb without a queue: the reconciler's sweep prints the slots held and
    the leaks it reclaimed (so does the cleanup); no waiters, hand-overs or waiter age."""
    assert_module_dashboard(
        deployed_body(aws, deployed["dashboard_name"]),
        module=deployed["prefix"],
        pattern="semaphore",
        metrics={"SlotsHeld", "SlotsReclaimed"},
        alarm_arns=[a["arn"] for a in deployed["alarms"].values()],
    )


def test_twenty_executions_never_exceed_the_limit(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    dynamodb = aws("dynamodb")
    samples: list[tuple[int, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            item = lock_item(aws, deployed)
            samples.append((int(item["holder_count"]["N"]), len(holders(item))))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        arns = [
            start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 1, "n": i})
            for i in range(20)
        ]
        done = wait_done(sfn, arns, timeout=300)
    finally:
        stop.set()
        sampler.join(timeout=5)
    elapsed = time.monotonic() - started

    statuses = {arn: d["status"] for arn, d in done.items()}
    assert set(statuses.values()) == {"SUCCEEDED"}, statuses

    intervals = []
    for arn in arns:
        record = dynamodb.get_item(
            TableName=deployed["record_table_name"],
            Key={"execution_id": {"S": arn}},
            ConsistentRead=True,
        )["Item"]
        intervals.append((float(record["entered_at"]["N"]), float(record["left_at"]["N"])))
    peak = max_overlap(intervals)
    print(f"\n20 executions at limit {LIMIT}: peak {peak} holders, {elapsed:.1f} s")
    assert peak <= LIMIT
    # A counting semaphore, not a mutex: several holders did run together.
    assert peak >= 2
    assert samples, "the sampler never read the lock item"
    assert max(count for count, _ in samples) <= LIMIT
    assert max(n for _, n in samples) <= LIMIT
    assert_lock_free(aws, deployed)


def test_stopped_wrapper_stops_its_target_before_the_slot_goes_back(
    aws: Callable, deployed: dict
) -> None:
    stopped_wrappers_keep_the_limit(aws, deployed, LIMIT)
    assert_lock_free(aws, deployed)


def assert_released(aws: Callable, deployed: dict, arns: list[str]) -> None:
    """``arns`` hold no slot, and the count is the holders left (a timed-out holder runs
    alongside: the whole lock is checked free once both scenarios end)."""
    item = lock_item(aws, deployed)
    assert not set(arns) & set(holders(item).values()), item
    assert int(item["holder_count"]["N"]) == len(holders(item)), item


def failure_in_critical_section_releases_and_reraises(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    arn = start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 0, "fail": "boom"})
    described = wait_done(sfn, [arn], timeout=60)[arn]
    assert described["status"] == "FAILED"
    # The critical section's own error, re-raised after the release.
    assert described.get("error") == "RuntimeError", described
    assert "boom" in described.get("cause", "")
    assert_released(aws, deployed, [arn])


def reacquire_by_the_holder_is_idempotent(aws: Callable, deployed: dict) -> None:
    """A holder whose acquire write already landed (retried write, re-entry) proceeds once."""
    sfn = aws("stepfunctions")
    name = f"reacquire-{uuid.uuid4().hex[:8]}"
    machine = deployed["embedded_state_machine_arn"]
    arn = machine.replace(":stateMachine:", ":execution:") + f":{name}"
    aws("dynamodb").update_item(
        TableName=deployed["lock_table_name"],
        Key={"pk": {"S": deployed["lock_key"]}},
        UpdateExpression="SET holder_count = holder_count + :one, #h = :lease",
        ExpressionAttributeNames={"#h": holder_attribute(arn)},
        ExpressionAttributeValues={
            ":one": {"N": "1"},
            ":lease": {
                "M": {
                    "execution_arn": {"S": arn},
                    "acquired_at": {"S": "2030-01-01T00:00:00Z"},
                    "lease_seconds": {"N": "60"},
                }
            },
        },
    )
    started = sfn.start_execution(
        stateMachineArn=machine, name=name, input=json.dumps({"sleep_seconds": 0})
    )
    assert started["executionArn"] == arn
    described = wait_done(sfn, [arn], timeout=60)[arn]
    assert described["status"] == "SUCCEEDED", described
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    entered = states_entered(history)
    # The acquire failed its condition once, the holder check said "held", no wait.
    assert entered.count("Semaphore: Acquire") == 1
    assert "Semaphore: Check holder" in entered
    assert "Semaphore: Wait for a slot" not in entered
    assert_released(aws, deployed, [arn])


def wrapper_runs_the_target_inside_the_semaphore(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    wrapper = deployed["wrapper_state_machine_arn"]
    ok = start(sfn, wrapper, {"sleep_seconds": 0, "n": 1})
    bad = start(sfn, wrapper, {"sleep_seconds": 0, "fail": "target broke"})
    done = wait_done(sfn, [ok, bad], timeout=120)
    assert done[ok]["status"] == "SUCCEEDED", done[ok]
    output = json.loads(done[ok]["output"])
    # The wrapper returns the target's output: the target recorded its own execution.
    target_execution = output["work"]["recorded"]["execution_id"]
    assert ":execution:" in target_execution
    assert deployed["target_state_machine_arn"].split(":")[-1] in target_execution
    assert output["n"] == 1
    assert done[bad]["status"] == "FAILED", done[bad]
    # The target's States.TaskFailed cannot be re-raised by a Fail state (States.Runtime):
    # it comes back under the module's own name, the original in the cause.
    assert done[bad]["error"] == "Semaphore.CriticalSectionFailed", done[bad]
    cause = json.loads(done[bad]["cause"])
    assert cause["Error"] == "States.TaskFailed"
    assert "target broke" in cause["Cause"]
    assert_released(aws, deployed, [ok, bad])


def event_cleanup_frees_the_slot_of_a_timed_out_holder(aws: Callable, deployed: dict) -> None:
    sfn = aws("stepfunctions")
    arn = start(
        sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": EXECUTION_TIMEOUT + 5}
    )
    wait_until(lambda: arn in holders(lock_item(aws, deployed)).values(), 30, "the holder")
    assert wait_done(sfn, [arn], EXECUTION_TIMEOUT + 30)[arn]["status"] == "TIMED_OUT"
    wait_until(
        lambda: arn not in holders(lock_item(aws, deployed)).values(),
        CRITICAL_TIMEOUT + 30,
        "the EventBridge cleanup to release the timed-out holder",
    )


def test_quick_scenarios_release_while_a_holder_times_out(aws: Callable, deployed: dict) -> None:
    """The timed-out holder's 45 s are spent running the quick scenarios on the other slots.

    Scenario A: a holder outlives EXECUTION_TIMEOUT, ends TIMED_OUT, and the event
    cleanup frees its slot. Scenario B, on the two other slots, one after another: a
    failing critical section releases and re-raises; a holder's re-acquire is
    idempotent; the wrapper runs its target inside the semaphore. Each has its own
    executions and assertions; each of B's checks its executions released their slots
    (the timed-out holder still counts), and the whole lock is free at the end.
    """

    def quick() -> None:
        failure_in_critical_section_releases_and_reraises(aws, deployed)
        reacquire_by_the_holder_is_idempotent(aws, deployed)
        wrapper_runs_the_target_inside_the_semaphore(aws, deployed)

    with ThreadPoolExecutor(max_workers=2) as pool:
        scenarios = [
            pool.submit(event_cleanup_frees_the_slot_of_a_timed_out_holder, aws, deployed),
            pool.submit(quick),
        ]
        for scenario in scenarios:
            scenario.result()
    assert_lock_free(aws, deployed)


def test_wait_loop_history_matches_the_plan_time_budget(aws: Callable, deployed: dict) -> None:
    """Events per wait in a real history equal the module's plan-time figure (16)."""
    sfn = aws("stepfunctions")
    machine = deployed["embedded_state_machine_arn"]
    holding = [start(sfn, machine, {"sleep_seconds": 8, "n": i}) for i in range(LIMIT)]
    wait_until(lambda: len(holders(lock_item(aws, deployed))) == LIMIT, 30, "full")
    waiter = start(sfn, machine, {"sleep_seconds": 0})
    wait_done(sfn, [*holding, waiter], 90)
    events = history(sfn, waiter)
    starts = [
        i
        for i, e in enumerate(events)
        if e.get("stateEnteredEventDetails", {}).get("name") == "Semaphore: Acquire"
    ]
    assert len(starts) >= 2, "the waiter never waited"
    per_wait = deployed["wait_history_events"]["per_wait"]
    for first, second in itertools.pairwise(starts):
        assert second - first == per_wait, [e["type"] for e in events[first:second]]
    assert_lock_free(aws, deployed)


def test_second_plan_is_empty(deployed: dict) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
