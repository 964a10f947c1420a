"""Ready-made fault plans: the mixes the suite and the benchmarks load, built in one place.

tests/semaphore/fault_run.py (the invariants under faults) and scripts/bench_faults.py
(what the faults cost) load the same semaphore mix; each used to spell it out, so a
change to one could silently leave the other measuring something else. The same goes
for the job poller's and the sqs-throttle starter's mixes.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    conflicts: bool = False,
) -> dict[str, Any]:
    """DynamoDB throttling and conflicts, lost wake-ups, crashed Lambdas, lost/doubled cleanups.

    * every DynamoDB call of ``roles`` throttled at ``rate``; with ``conflicts`` every
      write also refused for a transaction conflict at ``rate`` (strategy callback: its
      lock item is written by transactions and single writes of many executions at
      once; the other strategies write no transaction, so none can meet one);
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
        if conflicts:
            plan.append(
                {
                    "service": "dynamodb",
                    "operation": "*",
                    "kind": "transaction_conflict",
                    "caller_role": role,
                    "probability": rate,
                }
            )
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


def job_poller_mix(
    *,
    status: Sequence[tuple[dict[str, Any], int, float]],
    completion_rule: str | None,
    completion_role: str | None,
    rate: float,
    seed: int | str,
    certain_events: bool = True,
) -> dict[str, Any]:
    """Status checks failed, completion events lost, doubled or late, wake-ups answered 500.

    What a job poller meets: its own status checks throttled or failing, its
    completion events dropped, doubled or late, and the completion function's
    SendTaskSuccess answered 500.

    * ``status``: ``(fault, n, probability)`` per status-check fault (the variant's
      function by ARN pattern, or DescribeExecution by the state machine's role): it
      fires on each of the first ``n`` matching calls that an earlier fault of the
      plan did not take (a fault's n counts the calls an earlier one took too), then
      on ``probability`` of the calls;
    * ``completion_rule``'s events dropped, doubled and 3 s late, and
      ``completion_role``'s SendTaskSuccess answered 500, each at ``rate``; with
      ``certain_events`` also on their first 1, 2, 3 and 1 calls, so a short run
      meets every kind whatever the draw.
    """
    completion: list[tuple[dict[str, Any], int, float]] = []
    if completion_rule:
        events = {"service": "events", "operation": "PutEvents", "resource": completion_rule}
        completion += [
            ({**events, "kind": "event_drop"}, 1, rate),
            ({**events, "kind": "event_duplicate"}, 2, rate),
            ({**events, "kind": "event_delay", "seconds": 3}, 3, rate),
        ]
    if completion_role:
        send = {"service": "stepfunctions", "operation": "SendTaskSuccess"}
        completion.append(
            ({**send, "kind": "internal_error", "caller_role": completion_role}, 1, rate)
        )
    if not certain_events:
        completion = [(fault, 0, p) for fault, _, p in completion]
    targets = [*status, *completion]
    certain = [{**fault, "first": n} for fault, n, _ in targets if n]
    random = [{**fault, "probability": p} for fault, _, p in targets if p]
    return {"seed": seed, "faults": certain + random}


def sqs_throttle_mix(
    *,
    starter_role: str,
    queue_url: str,
    starter_function: str,
    seed: int | str,
    throttle: dict[str, Any],
    stale_list: dict[str, Any],
    duplicate_delivery: dict[str, Any],
    kill: dict[str, Any],
    conflict: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Starts throttled, stale lists, doubled deliveries, the starter killed mid-run.

    The starter's StartExecution throttled, its ListExecutions answered from a view 5 s
    old, the queue's messages delivered twice, the starter killed 2 s into a run, and
    (``conflict``) its ledger writes refused for a transaction conflict. Each of
    ``throttle``, ``stale_list``, ``duplicate_delivery``, ``kill`` and ``conflict``
    says when its fault fires, in the plan's own fields: ``{"probability": p}``,
    ``{"first": n, "after_seconds": s}``, or ``{}`` for every matching call.
    """
    conflicts = (
        []
        if conflict is None
        else [
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "transaction_conflict",
                "caller_role": starter_role,
                **conflict,
            }
        ]
    )
    starts = {"service": "stepfunctions", "caller_role": starter_role}
    return {
        "seed": seed,
        "faults": [
            {**starts, "operation": "StartExecution", "kind": "throttle", **throttle},
            {
                **starts,
                "operation": "ListExecutions",
                "kind": "stale_list",
                "seconds": 5,
                **stale_list,
            },
            {
                "service": "sqs",
                "operation": "ReceiveMessage",
                "kind": "duplicate_delivery",
                "resource": queue_url,
                **duplicate_delivery,
            },
            {
                "service": "lambda",
                "operation": "Invoke",
                "kind": "kill",
                "seconds": 2,
                "resource": starter_function,
                **kill,
            },
            *conflicts,
        ],
    }
