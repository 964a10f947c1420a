"""Ready-made fault plans: the mixes the suite and the benchmarks load, built in one place.

tests/semaphore/fault_run.py (the invariants under faults) and scripts/bench_faults.py
(what the faults cost) load the same semaphore mix; each used to spell it out, so a
change to one could silently leave the other measuring something else.
"""

from __future__ import annotations

from typing import Any, Literal


def semaphore_mix(
    *,
    roles: list[str],
    functions: list[str],
    rate: float,
    seed: int | str,
    cleanup_rule: str | None = None,
    cleanup: Literal["first-dropped", "at-rate"] = "first-dropped",
    stale_list: bool = True,
) -> dict[str, Any]:
    """DynamoDB throttling, lost wake-ups, crashed semaphore Lambdas, lost/doubled cleanups.

    * every DynamoDB call of ``roles`` throttled at ``rate``;
    * their SendTaskSuccess answered 500 at ``rate`` (a wake-up lost, once the SDK's
      retries are used up) or delivered with its answer lost (the SDK sends it again:
      a duplicate), DescribeExecution throttled at twice ``rate``, and with
      ``stale_list`` ListExecutions answered from a view 3 s old at twice ``rate``;
    * each of ``functions`` (acquire, release, cleanup, gate) killed mid-invoke at
      ``rate`` / 2, 0.3 s in;
    * the cleanup rule's events (``cleanup_rule``): ``first-dropped``, the first one
      dropped and every later one delivered twice (a run that stops executions: the
      reconciler must free what the lost one would have); ``at-rate``, each dropped at
      ``rate`` and doubled at twice ``rate``.

    A rate of 0 still lists every fault (each never fires), except ``first-dropped``'s
    drop, which does not depend on the rate.
    """
    plan: list[dict[str, Any]] = []
    for role in roles:
        if stale_list:
            plan.append(
                {
                    "service": "stepfunctions",
                    "operation": "ListExecutions",
                    "kind": "stale_list",
                    "caller_role": role,
                    "seconds": 3,
                    "probability": min(1.0, 2 * rate),
                }
            )
        plan += [
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "throttle",
                "caller_role": role,
                "probability": rate,
            },
            {
                "service": "stepfunctions",
                "operation": "SendTaskSuccess",
                "kind": "internal_error",
                "caller_role": role,
                "probability": rate,
            },
            # Delivered, but its caller sees a 500: the SDK sends it again (a duplicate).
            {
                "service": "stepfunctions",
                "operation": "SendTaskSuccess",
                "kind": "answer_lost",
                "caller_role": role,
                "probability": rate,
            },
            {
                "service": "stepfunctions",
                "operation": "DescribeExecution",
                "kind": "throttle",
                "caller_role": role,
                "probability": min(1.0, 2 * rate),
            },
        ]
    plan += [
        {
            "service": "lambda",
            "operation": "Invoke",
            "kind": "kill",
            "resource": function,
            "probability": rate / 2,
            "seconds": 0.3,
        }
        for function in functions
    ]
    if cleanup_rule:
        events = {"service": "events", "operation": "PutEvents", "resource": cleanup_rule}
        if cleanup == "first-dropped":
            plan += [
                {**events, "kind": "event_drop", "first": 1},
                {**events, "kind": "event_duplicate", "probability": 1.0},
            ]
        else:
            plan += [
                {**events, "kind": "event_drop", "probability": min(1.0, rate)},
                {**events, "kind": "event_duplicate", "probability": min(1.0, 2 * rate)},
            ]
    return {"seed": seed, "faults": plan}
