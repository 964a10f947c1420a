"""examples/job-poller on LocalStack: both variants, every outcome, clean re-plan, destroy.

The configuration is applied once for this module; all executions start
together (waits are 1 s) and each test asserts on one of them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.leftovers import leftovers
from sfn_patterns_localstack.terraform import Workspace

from . import helpers

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "job-poller"
TIMEOUT = 6


@pytest.fixture(scope="module")
def example(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    prefix = f"jpex-{int(time.time()) % 100000}"
    variables = {
        "name_prefix": prefix,
        "initial_wait_seconds": 1,
        "poll_interval_seconds": 1,
        "timeout_seconds": TIMEOUT,
        "force_destroy": True,
    }
    workspace = Workspace(
        EXAMPLE, localstack_endpoint, tmp_path_factory.mktemp("job-poller-example")
    )
    with workspace.applied(variables) as outputs:
        yield {"workspace": workspace, "variables": variables, "outputs": outputs}
    assert leftovers(aws, prefix) == {}


CASES = {
    "lambda": {
        "ok": {"job": {"duration_seconds": 2}},
        "fail": {"job": {"duration_seconds": 1, "outcome": "fail"}},
        "unknown": {"job": {"duration_seconds": 1, "outcome": "unknown"}},
        "slow": {"job": {"duration_seconds": TIMEOUT + 4}},
        "retry": {"job": {"duration_seconds": 1, "status_errors": 1}},
        "bad": {"job": {"outcome": "explode"}},
    },
    "sdk": {
        "ok": {"job": {"duration_seconds": 2, "outcome": "succeed"}},
        "fail": {"job": {"duration_seconds": 1, "outcome": "fail"}},
        "slow": {"job": {"duration_seconds": TIMEOUT + 6, "outcome": "succeed"}},
    },
}


@pytest.fixture(scope="module")
def runs(example: dict[str, Any], aws: Callable) -> dict[str, dict]:
    sfn = aws("stepfunctions")
    arns = {
        "lambda": example["outputs"]["lambda_state_machine_arn"],
        "sdk": example["outputs"]["sdk_state_machine_arn"],
    }
    started = {
        f"{variant}-{case}": helpers.start(sfn, arns[variant], payload)
        for variant, cases in CASES.items()
        for case, payload in cases.items()
    }
    return helpers.wait_all(sfn, started)


def test_outputs_are_static_and_plan_time_known(example: dict[str, Any]) -> None:
    outputs = example["outputs"]
    assert outputs["lambda_state_machine_arn"] == outputs["lambda_state_machine_arn_static"]
    assert outputs["lambda_max_wait_count"] == TIMEOUT - 1 + 1  # ceil((6-1)/1) + 1 backstop
    assert outputs["sdk_max_wait_count"] == TIMEOUT - 1
    fragment = json.loads(outputs["poll_loop_fragment_json"])
    assert "job Start" in fragment and "job Run Job" not in fragment


def test_lambda_job_succeeds_after_polling(runs: dict[str, dict]) -> None:
    run = runs["lambda-ok"]
    assert run["status"] == "SUCCEEDED", run
    loop = helpers.output(run)["job_poller"]["job"]
    assert loop["status"]["status"] == "SUCCEEDED"
    assert loop["run"]["handle"]["job_id"].endswith("/job")
    entered = helpers.entered_states(run["events"])
    assert entered[:4] == ["job Run Job", "job Start", "job Wait Initial", "job Get Status"]
    assert entered[-1] == "job Succeeded"
    assert "job Wait Poll" in entered  # a 2-s job outlives the 1-s initial wait


def test_lambda_job_failure_goes_to_fail_state(runs: dict[str, dict]) -> None:
    run = runs["lambda-fail"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.JobFailed"
    assert helpers.entered_states(run["events"])[-1] == "job Job Failed"


def test_unknown_status_fails_clearly_instead_of_looping(runs: dict[str, dict]) -> None:
    run = runs["lambda-unknown"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.UnknownStatus"
    assert "MYSTERY_STATE" in run["cause"]
    assert helpers.entered_states(run["events"]).count("job Get Status") <= 3


def test_start_time_strategy_times_out_from_the_lambda(runs: dict[str, dict]) -> None:
    run = runs["lambda-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    # The Lambda's clock fired (JobTimeoutError), not the counter backstop.
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    elapsed = (run["stopDate"] - run["startDate"]).total_seconds()
    assert TIMEOUT <= elapsed < TIMEOUT + 6


def test_retryable_error_is_retried_then_succeeds(runs: dict[str, dict]) -> None:
    run = runs["lambda-retry"]
    assert run["status"] == "SUCCEEDED", run
    assert helpers.task_failures(run["events"]) == ["RetryableJobError"]
    # The failed attempt was rescheduled within the same Get Status state.
    types = [e["type"] for e in run["events"]]
    failed_at = types.index("TaskFailed")
    assert types[failed_at + 1] == "TaskScheduled"


def test_run_job_error_is_caught_and_carries_the_cause(runs: dict[str, dict]) -> None:
    run = runs["lambda-bad"]
    assert run["status"] == "FAILED"
    assert run["error"] == "AdapterError"
    assert "explode" in run["cause"]
    assert helpers.entered_states(run["events"]) == ["job Run Job", "job Poll Error"]


def test_sdk_variant_polls_child_execution_to_success(runs: dict[str, dict]) -> None:
    run = runs["sdk-ok"]
    assert run["status"] == "SUCCEEDED", run
    loop = helpers.output(run)["job_poller"]["child"]
    assert loop["status"]["status"] == "SUCCEEDED"
    assert loop["status"]["result"]["ExecutionArn"] == loop["run"]["handle"]["ExecutionArn"]
    types = {e["type"] for e in run["events"]}
    assert not any("Lambda" in t for t in types)


def test_sdk_variant_failed_child(runs: dict[str, dict]) -> None:
    run = runs["sdk-fail"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.JobFailed"


def test_wait_count_strategy_times_out_in_the_sdk_variant(runs: dict[str, dict]) -> None:
    run = runs["sdk-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    entered = helpers.entered_states(run["events"])
    assert entered.count("child Count") == TIMEOUT - 1  # max_wait_count
    assert entered[-1] == "child Timed Out"
    assert helpers.task_failures(run["events"]) == []
    # History budget: 17 fixed events + 11 per loop iteration + 2 for the Fail state.
    assert len(run["events"]) == 17 + 11 * (TIMEOUT - 1) + 2


def test_second_plan_shows_no_changes(example: dict[str, Any]) -> None:
    code, plan = example["workspace"].plan_exit_code(example["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
