"""The module with a wait-count timeout and a DynamoDB store, plus two pollers in one machine.

tests/job_poller/two_pollers applies the module (Lambda variant, sample job) and
a second machine that chains two poll loops, ``fast`` (start-time, 3 s) and
``slow`` (wait-count, 8 s), from the same templates: each loop keeps its own
timeout, counter and metadata keys.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns.job_poller.store import execution_key
from sfn_patterns_localstack.leftovers import leftovers
from sfn_patterns_localstack.terraform import Workspace

from . import helpers, render

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

CONFIG = Path(__file__).resolve().parent / "two_pollers"
OWN_TIMEOUT, FAST_TIMEOUT, SLOW_TIMEOUT = 4, 3, 8


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    variables = {
        "name_prefix": f"jp2-{int(time.time()) % 100000}",
        "timeout_seconds": OWN_TIMEOUT,
        "fast_timeout_seconds": FAST_TIMEOUT,
        "slow_timeout_seconds": SLOW_TIMEOUT,
    }
    workspace = Workspace(CONFIG, localstack_endpoint, tmp_path_factory.mktemp("job-poller-two"))
    with workspace.applied(variables) as outputs:
        yield {"workspace": workspace, "variables": variables, "outputs": outputs}
    assert leftovers(aws, variables["name_prefix"]) == {}


CASES = {
    "own-ok": ("state_machine_arn", {"job": {"duration_seconds": 2}}),
    "own-slow": ("state_machine_arn", {"job": {"duration_seconds": OWN_TIMEOUT + 5}}),
    # A 5-s slow job would time out in the fast loop (3 s) but not in the slow one (8 s).
    "via-lambda": ("via_lambda_arn", {"job": {"duration_seconds": 2, "status_errors": 1}}),
    "two-ok": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": 5}}},
    ),
    "two-fast-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": FAST_TIMEOUT + 4}, "slow": {}}},
    ),
    "two-slow-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": SLOW_TIMEOUT + 5}}},
    ),
}


@pytest.fixture(scope="module")
def runs(deployed: dict[str, Any], aws: Callable) -> dict[str, dict]:
    sfn = aws("stepfunctions")
    started = {
        name: helpers.start(sfn, deployed["outputs"][output], payload)
        for name, (output, payload) in CASES.items()
    }
    return {**helpers.wait_all(sfn, started, timeout=120), "_arns": started}


def test_module_with_dynamodb_store_succeeds(runs: dict[str, dict]) -> None:
    run = runs["own-ok"]
    assert run["status"] == "SUCCEEDED", run
    assert helpers.output(run)["job_poller"]["job"]["status"]["status"] == "SUCCEEDED"


def test_wait_count_strategy_times_out_in_the_lambda_variant(runs: dict[str, dict]) -> None:
    run = runs["own-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    assert "wait-count" in run["cause"]
    entered = helpers.entered_states(run["events"])
    assert entered.count("job Count") == OWN_TIMEOUT - 1  # ceil((4 - 1) / 1)
    assert helpers.task_failures(run["events"]) == []  # the counter, not a Lambda, fired


def test_lambda_arn_adapter_is_invoked_synchronously(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["via-lambda"]
    assert run["status"] == "SUCCEEDED", run
    # The adapter Lambda's RetryableJobError came back through the generic Lambda.
    assert helpers.task_failures(run["events"]) == ["RetryableJobError"]
    assert helpers.output(run)["job_poller"]["job"]["run"]["handle"]["job_id"].endswith("/job")
    assert deployed["outputs"]["via_lambda_store"] == [None, None]


def test_two_pollers_each_keep_their_own_timeout(runs: dict[str, dict]) -> None:
    run = runs["two-ok"]
    assert run["status"] == "SUCCEEDED", run
    loops = helpers.output(run)["job_poller"]
    assert loops["fast"]["status"]["status"] == loops["slow"]["status"]["status"] == "SUCCEEDED"
    # The slow loop ran longer than the fast loop's whole timeout, and that was fine.
    entered = helpers.entered_states(run["events"])
    assert entered.count("slow Count") > FAST_TIMEOUT - 1
    assert loops["slow"]["loop"]["max_wait_count"] == SLOW_TIMEOUT - 1
    assert loops["fast"]["loop"]["max_wait_count"] == FAST_TIMEOUT - 1 + 1


def test_first_poller_times_out_without_touching_the_second(runs: dict[str, dict]) -> None:
    run = runs["two-fast-timeout"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    assert "poller fast" in run["cause"]
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    assert "slow Run Job" not in helpers.entered_states(run["events"])


def test_second_poller_times_out_on_its_own_counter(runs: dict[str, dict]) -> None:
    run = runs["two-slow-timeout"]
    assert run["status"] == "FAILED"
    assert "poller slow" in run["cause"]
    entered = helpers.entered_states(run["events"])
    assert entered.count("fast Count") < FAST_TIMEOUT
    assert entered.count("slow Count") == SLOW_TIMEOUT - 1


def test_metadata_keys_are_namespaced_by_poller(
    runs: dict[str, dict], deployed: dict[str, Any], aws: Callable
) -> None:
    key = execution_key(runs["_arns"]["two-ok"])
    table = deployed["outputs"]["metadata_table_name"]
    items = aws("dynamodb").scan(TableName=table)["Items"]
    mine = sorted((i["pk"]["S"], i["sk"]["S"]) for i in items if i["pk"]["S"].startswith(key))
    # fast (start-time) recorded its start; slow (wait-count) needs no store for its timeout.
    assert mine == [
        (f"{key}#fast", "start"),
        (f"{key}#fast", "status"),
        (f"{key}#slow", "status"),
    ]
    start = next(i for i in items if (i["pk"]["S"], i["sk"]["S"]) == (f"{key}#fast", "start"))
    document = json.loads(start["doc"]["S"])
    assert document["timeout_seconds"] == FAST_TIMEOUT
    assert document["execution_arn"] == runs["_arns"]["two-ok"]


def test_module_definition_equals_the_python_rendering(deployed: dict[str, Any]) -> None:
    """Terraform's templatefile and tests/job_poller/render.py produce the same machine."""
    prefix = deployed["variables"]["name_prefix"]
    variant = render.lambda_variant(
        prefix, "job", "wait-count", OWN_TIMEOUT, account="000000000000"
    )
    expected = render.machine(
        "job",
        variant,
        initial=1,
        interval=1,
        timeout=OWN_TIMEOUT,
        strategy="wait-count",
        retry=(1, 2, 2),
    )
    actual = json.loads(deployed["outputs"]["definition"])
    assert actual["States"] == expected["States"]
    assert actual["StartAt"] == expected["StartAt"]


def test_history_cap_is_rejected_at_plan_time(deployed: dict[str, Any]) -> None:
    variables = {
        **deployed["variables"],
        "initial_wait_seconds": 0,
        "poll_interval_seconds": 1,
        "timeout_seconds": 100000,
    }
    code, plan = deployed["workspace"].plan_exit_code(variables)
    assert code == 1, plan
    flat = " ".join(plan.split())
    assert "exceeds 25,000 events" in flat
    # 20 + 6 x 2 retries + 100000 iterations x (11 + 3 x 2) events.
    assert "100000 loop iterations" in flat
    assert f"= {20 + 6 * 2 + 100000 * (11 + 3 * 2)}" in flat


def test_second_plan_shows_no_changes(deployed: dict[str, Any]) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
