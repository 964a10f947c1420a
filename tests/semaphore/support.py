"""Helpers shared by the semaphore's LocalStack tests (one apply per configuration)."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.executions import history, peak_overlap, wait_stopped
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "semaphore"
# The module's alarms (24 for the callback strategy: about 6 CPU-seconds and 20 s of a
# deployment's apply, plan and destroy, measured on LocalStack) are proven in
# test_example.py; a file that tests no alarm does not apply, plan and destroy them.
NO_ALARMS = {"create": False}


@contextmanager
def deploy(
    endpoint: str, aws: Callable, scratch: Path, tag: str, destroy: bool = True, **variables: Any
) -> Iterator[dict[str, Any]]:
    """Apply examples/semaphore with ``variables``, yield its outputs, then (``destroy``)
    destroy and check leftovers (conftest.destroy_deployments says when a test may not)."""
    prefix = f"{tag}-{uuid.uuid4().hex[:6]}"
    variables = {"name_prefix": prefix, **variables}
    workspace = Workspace(EXAMPLE, endpoint, scratch)
    with workspace.applied(variables, destroy=destroy) as outputs:
        yield {"prefix": prefix, "variables": variables, "workspace": workspace, **outputs}
    if destroy:
        assert leftovers(aws, prefix) == {}


def deployment_fixture(tag: str, **variables: Any) -> Any:
    """A module-scoped ``deployed`` fixture: one apply of examples/semaphore with
    ``variables`` per test file that assigns it (``deployed = deployment_fixture(...)``),
    named by ``tag``, its reconciler's schedule disabled.

    Why per file: files run on different workers at once, and the semaphore's tests wait out
    critical-section timeouts for minutes; one file holding them all set the length of
    the whole suite. The schedule (every 5 minutes on the wall clock) would otherwise
    free a leaked slot before a test's own sweep or cleanup, now and then.
    """

    @pytest.fixture(scope="module")
    def deployed(
        localstack_endpoint: str,
        aws: Callable,
        tmp_path_factory: pytest.TempPathFactory,
        destroy_deployments: bool,
    ) -> Iterator[dict[str, Any]]:
        with deploy(
            localstack_endpoint,
            aws,
            tmp_path_factory.mktemp(f"{tag}-tf"),
            tag,
            destroy=destroy_deployments,
            **variables,
        ) as outputs:
            aws("events").disable_rule(Name=outputs["reconciler_rule_name"])
            yield outputs

    return deployed


def lock_item(aws: Callable, deployed: dict) -> dict[str, Any]:
    return aws("dynamodb").get_item(
        TableName=deployed["lock_table_name"],
        Key={"pk": {"S": deployed["lock_key"]}},
        ConsistentRead=True,
    )["Item"]


def holders(item: dict[str, Any]) -> dict[str, str]:
    """holder attribute -> execution ARN."""
    return {k: v["M"]["execution_arn"]["S"] for k, v in item.items() if k.startswith("h_")}


def wait_until(
    predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.5
) -> Any:
    """The predicate's first true value, polled every ``interval`` seconds.

    Each poll is one to three LocalStack calls, and the tests wait minutes in all:
    polling twice a second, not four times, halves what the waiting costs LocalStack.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def in_critical_section(sfn: Any, arn: str) -> None:
    """Wait until ``arn``'s critical-section Lambda is invoked, not only its lease written.

    The acquire writes the lease before its SendTaskSuccess: an execution stopped in
    between has a dead token, and the acquire gives the lease back itself ("gone"). A
    stop after the section's state was entered but before its TaskScheduled leaves the
    Lambda uninvoked, and the cleanup rightly frees the slot at once. So a test that
    means to stop a holder whose Lambda runs on waits for the section's TaskScheduled
    (recorded just before the invocation is made).
    """

    def scheduled() -> bool:
        events = history(sfn, arn)
        entered = [
            i
            for i, e in enumerate(events)
            if e.get("stateEnteredEventDetails", {}).get("name") == "Critical section"
        ]
        return bool(entered) and any(e["type"] == "TaskScheduled" for e in events[entered[0] :])

    wait_until(scheduled, 60, "the holder's critical-section task scheduled")


def wait_done(sfn: Any, arns: list[str], timeout: float) -> dict[str, dict]:
    """Describe ``arns`` once stopped; fail if one still runs after ``timeout`` seconds.

    The poll interval fits the wait: a wait sized in minutes (two dozen executions, a
    40-s TimeoutSeconds) is about executions that take that long, and a DescribeExecution
    each second, not twice a second, halves its calls; the oracles are the executions'
    own dates, never when a poll saw them. Short waits keep half a second.
    """
    done = wait_stopped(sfn, arns, timeout, interval=1.0 if timeout >= 60 else 0.5)
    missing = [arn for arn in arns if arn not in done]
    assert not missing, f"{len(missing)} executions still RUNNING after {timeout} s"
    return done


def start(sfn: Any, machine_arn: str, payload: dict) -> str:
    return sfn.start_execution(stateMachineArn=machine_arn, input=json.dumps(payload))[
        "executionArn"
    ]


def invoke(aws: Callable, function_name: str, payload: dict | None = None) -> dict:
    response = aws("lambda").invoke(
        FunctionName=function_name, Payload=json.dumps(payload or {}).encode()
    )
    body = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, body
    return body


# The tests' name for the library's interval sweep (one implementation for all).
max_overlap = peak_overlap


def assert_lock_free(aws: Callable, deployed: dict) -> None:
    item = lock_item(aws, deployed)
    assert item["holder_count"] == {"N": "0"}, item
    assert holders(item) == {}, item


def sweep_after(aws: Callable, deployed: dict, report: dict, arn: str) -> dict:
    """The reconciler's first sweep after ``arn``'s work may have ended, by ``report``.

    ``report`` is a sweep's that kept ``arn`` while a task of it may still run
    (``work_running``: the moment it ends at the latest); the sweep runs a second past it.
    """
    [until] = [w["until"] for w in report.get("work_running", []) if w["execution_arn"] == arn]
    moment = dt.datetime.fromisoformat(until.replace("Z", "+00:00"))
    time.sleep(max(0.0, (moment - dt.datetime.now(dt.UTC)).total_seconds()) + 1)
    return invoke(aws, deployed["reconciler_function_name"])


def records(aws: Callable, deployed: dict, arns: list[str]) -> dict[str, tuple[float, float]]:
    """execution ARN -> (entered_at, left_at) the demo critical section recorded."""
    dynamodb = aws("dynamodb")
    found = {}
    for arn in arns:
        item = dynamodb.get_item(
            TableName=deployed["record_table_name"],
            Key={"execution_id": {"S": arn}},
            ConsistentRead=True,
        )["Item"]
        found[arn] = (float(item["entered_at"]["N"]), float(item["left_at"]["N"]))
    return found


def stopped_wrappers_keep_the_limit(aws: Callable, deployed: dict, limit: int) -> list[str]:
    """Stop every wrapper that holds a slot while its target runs; targets never exceed limit.

    The oracle is the target executions' own lifetimes (start and stop dates): a
    stopped wrapper's slot may go back only once its target has ended, so at no
    moment do more than ``limit`` targets run. Returns the stopped wrappers.
    """
    sfn = aws("stepfunctions")
    wrapper = deployed["wrapper_state_machine_arn"]
    target = deployed["target_state_machine_arn"]
    arns = [start(sfn, wrapper, {"sleep_seconds": 10, "n": i}) for i in range(limit + 2)]

    def running_targets() -> list[dict]:
        return sfn.list_executions(stateMachineArn=target, statusFilter="RUNNING")["executions"]

    wait_until(lambda: len(running_targets()) == limit, 60, "the targets to run")
    prefix = target.replace(":stateMachine:", ":execution:") + ":"
    running_names = {e["name"] for e in running_targets()}
    stopped = [arn for arn in arns if arn.rsplit(":", 1)[1] in running_names]
    for arn in stopped:
        sfn.stop_execution(executionArn=arn, error="Test.Stop", cause="stop the wrapper")
    done = wait_done(sfn, arns, timeout=150)
    for arn in arns:
        assert done[arn]["status"] == ("ABORTED" if arn in stopped else "SUCCEEDED"), done[arn]
    lifetimes = []
    for arn in arns:
        described = sfn.describe_execution(executionArn=prefix + arn.rsplit(":", 1)[1])
        assert described["status"] != "RUNNING", described
        if arn in stopped:
            assert described["status"] == "ABORTED", described
        lifetimes.append((described["startDate"].timestamp(), described["stopDate"].timestamp()))
    assert peak_overlap(lifetimes) <= limit
    return stopped
