"""The semaphore under a mixed fault plan: one run, its invariants, from the record.

Shared by the strategies' LocalStack test files, each on its own module-scoped
deployment of examples/semaphore: the plan is loaded on the session's LocalStack for
the run and cleared in ``finally``. The faults are matched by the calling roles of the
semaphore's own code (its Lambdas, or the state machine for the DynamoDB tasks), so
the demo critical section and the test's own reads run fault-free.

The oracles are not the semaphore's code: the critical section's own enter and leave
times (record table), the executions' statuses, stop dates and histories, the lock
item and the queue table after settling, and the injector's log.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.faults import scenarios
from sfn_patterns_localstack.executions import history
from tests.sfn_history import states_entered

from .support import holders, invoke, lock_item, max_overlap, records, start, wait_done, wait_until

SEED = 28
SECTION = "Critical section"
# The reconciler's schedule, played by the test (the fault injector does not reach
# scheduled-rule deliveries, and the module's every-5-minutes rule is disabled here):
# it frees what a dropped cleanup event left held, under the same faults.
RECONCILE_EVERY = 10.0


@contextlib.contextmanager
def _schedule(aws: Callable, function: str | None, every: float) -> Iterator[None]:
    """Invoke ``function`` every ``every`` seconds until the block ends (as a rate rule)."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a crashed run: the next tick retries
                aws("lambda").invoke(FunctionName=function, Payload=b"{}")

    thread = threading.Thread(target=tick, daemon=True)
    if function:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if function:
            thread.join(timeout=120)


def function_role(aws: Callable, function_name: str) -> str:
    """The execution role of a deployed Lambda (the caller the faults match)."""
    return aws("lambda").get_function(FunctionName=function_name)["Configuration"]["Role"]


def machine_role(aws: Callable, machine_arn: str) -> str:
    """The role of a deployed state machine (its aws-sdk tasks call as this role)."""
    return aws("stepfunctions").describe_state_machine(stateMachineArn=machine_arn)["roleArn"]


def mixed_plan(
    *,
    roles: list[str],
    functions: list[str],
    cleanup_rule: str | None,
    rate: float = 0.2,
    seed: int | str = SEED,
    conflicts: bool = False,
) -> dict[str, Any]:
    """DynamoDB throttling, lost wake-ups, crashed semaphore Lambdas, lost/doubled cleanups.

    The mix is :func:`scenarios.semaphore_mix` (scripts/bench_faults.py loads it too):
    stale ListExecutions included, the cleanup rule's first event dropped and every
    later one delivered twice (a run stops two executions: two cleanup events; the
    reconciler must free what the dropped one would have).
    """
    return scenarios.semaphore_mix(
        roles=roles,
        functions=functions,
        rate=rate,
        seed=seed,
        cleanup_rule=cleanup_rule,
        conflicts=conflicts,
    )


def embedded_plan(aws: Callable, deployed: dict) -> dict[str, Any]:
    """:func:`mixed_plan` for a deployment whose acquire and release run in the embedded
    state machine (the dynamodb and fifo strategies): its role's calls and the cleanup
    function's are faulted, the cleanup function crashed, its rule's events dropped or
    doubled."""
    cleanup = deployed["cleanup_function_name"]
    return mixed_plan(
        roles=[
            machine_role(aws, deployed["embedded_state_machine_arn"]),
            function_role(aws, cleanup),
        ],
        functions=[cleanup],
        cleanup_rule=deployed["cleanup_rule_name"],
    )


def _queue_items(aws: Callable, deployed: dict) -> list[dict[str, Any]]:
    table = deployed.get("queue_table_name")
    if not table:
        return []
    return aws("dynamodb").scan(TableName=table, ConsistentRead=True)["Items"]


def run_under_faults(
    aws: Callable,
    endpoint: str,
    deployed: dict[str, Any],
    *,
    limit: int,
    plan: dict[str, Any],
    executions: int = 10,
    sleep_seconds: float = 3,
    timeout: float = 300,
    acquire_timeout: float | None = None,
) -> dict[str, Any]:
    """Start ``executions``, stop one holder and one waiter, settle; check every invariant.

    Invariants, each from the record, not from the semaphore's code:

    * peak <= limit (the critical section's own enter and leave times);
    * every execution not stopped SUCCEEDED and entered its critical section exactly
      once (its history), or, when ``acquire_timeout`` is given, failed with
      Semaphore.AcquireTimeout after waiting at least that long, never entering;
    * a stopped execution ends ABORTED and never enters after its stop;
    * after settling (the plan cleared, the reconciler run every few seconds), no slot
      is held and nobody waits. During the run the reconciler runs every RECONCILE_EVERY
      seconds, as its schedule would, under the faults.

    Returns the fault log, the peak and the executions' descriptions.
    """
    sfn = aws("stepfunctions")
    machine = deployed["embedded_state_machine_arn"]
    stopped_at: dict[str, float] = {}
    with faults.applied(endpoint, plan):
        arns = []
        for i in range(executions):
            arns.append(start(sfn, machine, {"sleep_seconds": sleep_seconds, "n": i}))
            time.sleep(0.2)

        def holder_and_waiter() -> tuple[str, str] | None:
            held = sorted(set(holders(lock_item(aws, deployed)).values()))
            if len(held) != limit:
                return None
            # The first execution that holds nothing, never entered (no record) and
            # still runs: looked up one at a time, not every execution on every poll.
            for arn in arns:
                if arn in held or records_so_far(aws, deployed, [arn]):
                    continue
                if sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
                    return held[0], arn
            return None

        # oldest-first keeps no lock item: its slots are RUNNING executions, nothing to stop.
        has_lock = bool(deployed.get("lock_table_name"))
        victims = wait_until(holder_and_waiter, 90, "holders and a waiter") if has_lock else ()
        for arn in victims:
            stopped_at[arn] = sfn.stop_execution(
                executionArn=arn, error="Test.Stop", cause="stopped under faults"
            )["stopDate"].timestamp()
        with _schedule(aws, deployed.get("reconciler_function_name"), RECONCILE_EVERY):
            done = wait_done(sfn, arns, timeout=timeout)
        log = faults.log(endpoint)

    timed_out = [arn for arn in arns if _timed_out(done[arn], acquire_timeout)]
    # A victim may have ended on its own between being picked and the stop (a loaded
    # machine): it ended before the StopExecution, SUCCEEDED, and counts as a survivor.
    stopped_at = {
        arn: at
        for arn, at in stopped_at.items()
        if not (done[arn]["status"] == "SUCCEEDED" and done[arn]["stopDate"].timestamp() < at)
    }
    for arn, described in done.items():
        expected = "ABORTED" if arn in stopped_at else "SUCCEEDED"
        assert arn in timed_out or described["status"] == expected, (
            arn,
            described["status"],
            described.get("error"),
            described.get("cause"),
            states_entered(history(sfn, arn)),
        )
    assert all(SECTION not in states_entered(history(sfn, arn)) for arn in timed_out)
    survivors = [arn for arn in arns if arn not in stopped_at and arn not in timed_out]
    entered = {arn: states_entered(history(sfn, arn)).count(SECTION) for arn in arns}
    assert {arn: entered[arn] for arn in survivors} == dict.fromkeys(survivors, 1), entered
    for arn, at in stopped_at.items():
        section = [
            e["timestamp"].timestamp()
            for e in history(sfn, arn)
            if e.get("stateEnteredEventDetails", {}).get("name") == SECTION
        ]
        assert all(t <= at for t in section), (arn, section, at)
    # A stopped holder's critical section runs on after its stop (as on AWS, a Lambda
    # task is not interrupted), and its slot stays taken until that can no longer be:
    # the bound counts it too.
    ran = records_so_far(aws, deployed, [arn for arn in arns if arn not in timed_out])
    assert set(survivors) <= set(ran)
    peak = max_overlap(list(ran.values()))
    assert peak <= limit, f"{peak} executions in the critical section at once (limit {limit})"

    # Settle: what the schedule would do, fault-free, until nothing is held. A stopped
    # holder's slot is kept until its critical-section task's timeout has passed.
    def settled() -> bool:
        if not has_lock:
            return True
        if deployed.get("reconciler_function_name"):
            invoke(aws, deployed["reconciler_function_name"])
        item = lock_item(aws, deployed)
        return (
            int(item["holder_count"]["N"]) == 0
            and holders(item) == {}
            and _queue_items(aws, deployed) == []
        )

    wait_until(settled, 90, "no slot held and nobody queued after settling", interval=5)
    kinds = Counter(entry["kind"] for entry in log)
    print(f"\nunder faults: peak {peak}, stopped {len(stopped_at)}, injected {dict(kinds)}")
    return {"log": log, "kinds": kinds, "peak": peak, "done": done, "timed_out": timed_out}


def _timed_out(described: dict[str, Any], acquire_timeout: float | None) -> bool:
    """Failed with the acquire timeout, after waiting at least as long as configured."""
    if acquire_timeout is None or described.get("error") != "Semaphore.AcquireTimeout":
        return False
    waited = (described["stopDate"] - described["startDate"]).total_seconds()
    return described["status"] == "FAILED" and waited >= acquire_timeout


def records_so_far(
    aws: Callable, deployed: dict[str, Any], arns: list[str]
) -> dict[str, tuple[float, float]]:
    """The critical-section records written so far, for those of ``arns`` that have one."""
    found = {}
    for arn in arns:
        try:
            found.update(records(aws, deployed, [arn]))
        except KeyError:
            continue
    return found
