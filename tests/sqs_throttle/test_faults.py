"""sqs-throttle under injected faults: the starter keeps its promises (issue 28).

examples/sqs-throttle is applied once; the deployed starter Lambda runs as the
schedule would run it (the test invokes it), while LocalStack injects, from one seeded
plan:

* ``ThrottlingException`` on a share of the starter's StartExecution calls (matched by
  the starter's role: the test's own calls are untouched);
* ListExecutions answered from a view 5 s old (same role);
* SQS redeliveries: a received message made visible again at once;
* the starter's process killed in the middle of a run.

The invariants are read from what happened, not from the starter's reports: the
target's executions (names, start and stop times), the queues, the fault log.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns.sqs_throttle import enqueue, execution_name
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.executions import peak_overlap
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sqs-throttle"
MAX = 3
REQUESTS = 9
SECONDS = 6  # each execution runs this long: longer than an admission takes
SEED = 28


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    prefix = f"thf-{uuid.uuid4().hex[:6]}"
    variables = {
        "name_prefix": prefix,
        "max_concurrent_executions": MAX,
        "schedule_expression": "rate(1 day)",  # the test runs the starter itself
        "max_seconds_per_run": 20,
        "recheck_seconds": 1,
        # The smallest the module allows: a message whose start failed is retried
        # 30 s later, not 2 minutes.
        "visibility_timeout_seconds": 30,
    }
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path_factory.mktemp("thf-tf"))
    try:
        workspace.init()
        workspace.apply(variables)
        yield {"prefix": prefix, **workspace.outputs()}
    finally:
        try:
            workspace.destroy(variables)
        finally:
            workspace.close()
    assert leftovers(aws, prefix) == {}


def _plan(deployed: dict[str, Any]) -> dict[str, Any]:
    role = deployed["starter_role_arn"]
    return {
        "seed": SEED,
        "faults": [
            {
                "service": "stepfunctions",
                "operation": "StartExecution",
                "kind": "throttle",
                "caller_role": role,
                "probability": 0.4,
            },
            {
                "service": "stepfunctions",
                "operation": "ListExecutions",
                "kind": "stale_list",
                "caller_role": role,
                "seconds": 5,
            },
            {
                "service": "sqs",
                "operation": "ReceiveMessage",
                "kind": "duplicate_delivery",
                "resource": deployed["queue_url"],
                "probability": 0.3,
            },
            # A run started 12 s in dies 2 s into its invoke (warm: counting, admitting).
            {
                "service": "lambda",
                "operation": "Invoke",
                "kind": "kill",
                "seconds": 2,
                "resource": deployed["starter_function_name"],
                "after_seconds": 12,
                "first": 1,
            },
        ],
    }


def _run_starter(aws: Callable, deployed: dict[str, Any]) -> str:
    """One synchronous run of the deployed starter: how it stopped, "crashed" or "busy"."""
    try:
        answer = aws("lambda").invoke(
            FunctionName=deployed["starter_function_name"],
            Payload=json.dumps({"max_seconds": 6}).encode(),
        )
    except ClientError as error:  # reserved concurrency 1: a run is still going
        if error.response["Error"]["Code"] != "TooManyRequestsException":
            raise
        return "busy"
    if "FunctionError" in answer:
        return "crashed"
    return json.loads(answer["Payload"].read())["stopped"]


def _depth(aws: Callable, url: str) -> int:
    attributes = aws("sqs").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def _executions(aws: Callable, arn: str) -> list[dict[str, Any]]:
    sfn = aws("stepfunctions")
    listed = [
        item
        for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn)
        for item in page["executions"]
    ]
    return [sfn.describe_execution(executionArn=item["executionArn"]) for item in listed]


def test_the_bound_holds_and_every_request_runs_once_under_faults(
    aws: Callable, deployed: dict[str, Any], localstack_endpoint: str
) -> None:
    run = uuid.uuid4().hex[:6]
    request_ids = [f"f-{run}-{i:02d}" for i in range(REQUESTS)]
    for i, request_id in enumerate(request_ids):
        enqueue(
            deployed["queue_url"],
            {"seconds": SECONDS},
            request_id=request_id,
            group_id=f"g{i % 5}",
            client=aws("sqs"),
        )
    names = {execution_name(r) for r in request_ids}

    outcomes: list[str] = []
    faults.set_plan(localstack_endpoint, _plan(deployed))
    try:
        deadline = time.monotonic() + 150  # a killed run holds the lease ~36 s
        while _depth(aws, deployed["queue_url"]) and time.monotonic() < deadline:
            outcome = _run_starter(aws, deployed)
            outcomes.append(outcome)
            if outcome in ("crashed", "busy", "another_starter_running", "start_failed"):
                time.sleep(2)  # a dead run's lease, or a message hidden after a failed start
        log = faults.log(localstack_endpoint)
    finally:
        faults.clear(localstack_endpoint)

    print("runs:", outcomes, "faults:", [(e["kind"], round(e["elapsed"], 1)) for e in log])
    # Every fault kind of the plan was injected (else this run proved nothing).
    injected = {entry["kind"] for entry in log}
    assert injected == {"throttle", "stale_list", "duplicate_delivery", "kill"}, (log, outcomes)
    assert "crashed" in outcomes

    assert _depth(aws, deployed["queue_url"]) == 0, outcomes
    deadline = time.monotonic() + 60
    while True:
        described = _executions(aws, deployed["target_state_machine_arn"])
        if all(e["status"] != "RUNNING" for e in described) or time.monotonic() > deadline:
            break
        time.sleep(1)
    ours = [e for e in described if e["name"] in names]
    # Each request started exactly once (one execution per name, no other execution),
    # none lost (every one ran to success, the dead-letter queue is empty).
    assert sorted(e["name"] for e in described) == sorted(names)
    assert len(ours) == REQUESTS
    assert {e["status"] for e in ours} == {"SUCCEEDED"}
    assert _depth(aws, deployed["dlq_url"]) == 0
    # Never more than MAX running, from the executions' own start and stop times.
    peak = peak_overlap([(e["startDate"].timestamp(), e["stopDate"].timestamp()) for e in ours])
    assert peak <= MAX, f"{peak} executions ran at once"
    assert peak == MAX  # the bound was reached: the test exercised admission at the limit
