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
from sfn_patterns_cli.templating import render_tftpl, templates_root
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests import result_cache
from tests.sfn_history import states_entered

from . import helpers

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

CONFIG = Path(__file__).resolve().parent / "two_pollers"
# Generous margins: the first executions after an apply meet cold Lambdas on a
# loaded machine, and the fast loop's clock starts before its job does.
OWN_TIMEOUT, FAST_TIMEOUT, SLOW_TIMEOUT = 8, 6, 12


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
        # A timed-out execution's job runs on (the slow one 3 x SLOW_TIMEOUT) and then
        # writes its final status with its role: destroyed before that, the role is
        # gone and the write is denied, as it would be in an account. Wait for every
        # job the tests started to end first.
        tables = [outputs["metadata_table_name"], *outputs["via_lambda_store"][1:]]
        _wait_for_jobs(aws("dynamodb"), [t for t in tables if t], 3 * SLOW_TIMEOUT + 60)
    assert leftovers(aws, variables["name_prefix"]) == {}


def _wait_for_jobs(ddb: Any, tables: list[str], timeout: float) -> None:
    """Until no sample job's status in ``tables`` is still RUNNING (or ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        running = [
            item["pk"]["S"]
            for table in tables
            for page in ddb.get_paginator("scan").paginate(TableName=table)
            for item in page["Items"]
            if item.get("sk", {}).get("S") == "status"
            and json.loads(item["doc"]["S"]).get("status") == "RUNNING"
        ]
        if not running:
            return
        assert time.monotonic() < deadline, f"sample jobs still running: {running}"
        time.sleep(2)


CASES = {
    "own-ok": ("state_machine_arn", {"job": {"duration_seconds": 3}}),
    # The wait-count jobs run 3 timeouts: a counter counts polls, and on a loaded
    # machine each poll takes longer than its interval (a job 5 s over the timeout
    # ended before the 7th poll at a load of 28 on 2 cores).
    "own-slow": ("state_machine_arn", {"job": {"duration_seconds": 3 * OWN_TIMEOUT}}),
    # An 8-s slow job would time out in the fast loop (6 s) but not in the slow one (12 s).
    "via-lambda": ("via_lambda_arn", {"job": {"duration_seconds": 2, "status_errors": 1}}),
    "two-ok": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": 8}}},
    ),
    "two-fast-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": FAST_TIMEOUT + 4}, "slow": {}}},
    ),
    "two-slow-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": 3 * SLOW_TIMEOUT}}},
    ),
}


@pytest.fixture(scope="module")
def runs(deployed: dict[str, Any], aws: Callable) -> dict[str, dict]:
    sfn = aws("stepfunctions")
    # One instant job per machine first, so the cases meet warm Lambdas: their
    # timeouts then measure the loops, not cold starts.
    warm = {"job": {"duration_seconds": 0}, "jobs": {"fast": {}, "slow": {}}}
    outputs = deployed["outputs"]
    helpers.wait_all(
        sfn,
        {
            name: helpers.start(sfn, outputs[name], warm)
            for name in ("state_machine_arn", "via_lambda_arn", "two_pollers_arn")
        },
        timeout=120,
    )
    started = {
        name: helpers.start(sfn, deployed["outputs"][output], payload)
        for name, (output, payload) in CASES.items()
    }
    return {**helpers.wait_all(sfn, started, timeout=120), "_arns": started}


def test_module_with_dynamodb_store_succeeds(runs: dict[str, dict]) -> None:
    run = runs["own-ok"]
    assert run["status"] == "SUCCEEDED", run
    assert helpers.output(run)["job_poller"]["job"]["status"]["status"] == "SUCCEEDED"


def test_the_loop_costs_what_the_module_says(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    """polling = "loop": history length and transitions from the module's cost model."""
    run = runs["own-ok"]
    model = deployed["outputs"]["cost_model"]
    assert model["shape"] == "loop"
    polls = states_entered(run["events"]).count("job Count")
    assert polls >= 1  # a 3-s job outlives the 1-s initial wait
    assert (
        len(run["events"])
        == model["history_events_fixed"] + polls * model["history_events_per_poll"]
    )
    assert helpers.transitions(run["events"]) == (
        model["transitions_fixed"] + polls * model["transitions_per_poll"]
    )


def test_wait_count_strategy_times_out_in_the_lambda_variant(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["own-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    assert "wait-count" in run["cause"]
    entered = states_entered(run["events"])
    assert entered.count("job Count") == deployed["outputs"]["max_wait_count"]
    assert helpers.task_failures(run["events"]) == []  # the counter, not a Lambda, fired
    # Every poll used, no retry: the model's worst case without retries, less one
    # event (a Fail state ends in 2 events, a Succeed state in 3).
    model = deployed["outputs"]["cost_model"]
    polls = model["max_polls"]
    assert (
        len(run["events"])
        == model["history_events_fixed"] + polls * model["history_events_per_poll"] - 1
    )


def test_lambda_arn_adapter_is_invoked_synchronously(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["via-lambda"]
    assert run["status"] == "SUCCEEDED", run
    # The adapter Lambda's RetryableJobError came back through the generic Lambda
    # (then, retry polling being the default, the job was still running a while).
    failures = helpers.task_failures(run["events"])
    assert failures[0] == "RetryableJobError"
    assert set(failures[1:]) <= {"JobStillRunning"}
    assert helpers.output(run)["job_poller"]["job"]["run"]["handle"]["job_id"].endswith("/job")
    assert deployed["outputs"]["via_lambda_store"] == [None, None]


def test_two_pollers_each_keep_their_own_timeout(runs: dict[str, dict]) -> None:
    run = runs["two-ok"]
    assert run["status"] == "SUCCEEDED", run
    loops = helpers.output(run)["job_poller"]
    assert loops["fast"]["status"]["status"] == loops["slow"]["status"]["status"] == "SUCCEEDED"
    # The slow loop ran longer than the fast loop's whole timeout, and that was fine.
    # Measured on the history's clock, not by loop count: a loaded machine makes each
    # loop slower, so fewer loops fit in the job's 8 s.
    events = run["events"]
    checks = [
        e["timestamp"]
        for e in events
        if e["type"].endswith("StateEntered")
        and e["stateEnteredEventDetails"]["name"] == "slow Check"
    ]
    assert len(checks) >= 2  # it polled, found the job running, and polled again
    ran = (checks[-1] - helpers.entered_at(events, "slow Run Job")).total_seconds()
    assert ran > FAST_TIMEOUT, ran
    assert loops["slow"]["loop"]["max_wait_count"] == SLOW_TIMEOUT - 1
    assert loops["fast"]["loop"]["max_wait_count"] == FAST_TIMEOUT - 1 + 1


def test_first_poller_times_out_without_touching_the_second(runs: dict[str, dict]) -> None:
    run = runs["two-fast-timeout"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    assert "poller fast" in run["cause"]
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    assert "slow Run Job" not in states_entered(run["events"])


def test_second_poller_times_out_on_its_own_counter(runs: dict[str, dict]) -> None:
    run = runs["two-slow-timeout"]
    assert run["status"] == "FAILED"
    assert "poller slow" in run["cause"]
    entered = states_entered(run["events"])
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


def test_python_renders_the_fragment_exactly_as_terraform(deployed: dict[str, Any]) -> None:
    """dag-aggregate renders these templates in Python: both renderers must agree."""
    fragment = deployed["outputs"]["fragment"]
    variables = dict(fragment["vars"])
    variables.update({f"{exit}_next": state for exit, state in fragment["exits"].items()})
    text = render_tftpl(templates_root() / "job-poller" / fragment["template"], variables)
    assert json.loads(text) == json.loads(fragment["json"])


# The configuration's variables with a one-second poll for 100,000 seconds.
BUDGET_VARIABLES = {
    "name_prefix": "jp2-budget",
    "timeout_seconds": 100000,
    "fast_timeout_seconds": FAST_TIMEOUT,
    "slow_timeout_seconds": SLOW_TIMEOUT,
    "initial_wait_seconds": 0,
    "poll_interval_seconds": 1,
}


@pytest.fixture(scope="module")
def budget_plan(request: pytest.FixtureRequest) -> Iterator[Any]:
    """(exit code, output) of `terraform plan` of this configuration, never applied,
    with BUDGET_VARIABLES.

    The check is the module's, on its inputs: the plan a user runs before applying
    shows it, and it depends only on the code, this file and the configuration, so
    tests/result_cache.py keeps it under exactly those inputs (the checks run on it
    all the same).
    """
    inputs = [Path(__file__), *sorted(CONFIG.glob("*.tf"))]
    name = f"job-poller two pollers budget plan {result_cache.files_digest(*inputs)}"
    yield from result_cache.built_once(request, name, lambda: _plan_budget(request))


def _plan_budget(request: pytest.FixtureRequest) -> tuple[int, str]:
    with Workspace(
        CONFIG,
        request.getfixturevalue("localstack_endpoint"),
        request.getfixturevalue("tmp_path_factory").mktemp("job-poller-two-budget"),
    ).initialized() as workspace:
        return workspace.plan_exit_code(BUDGET_VARIABLES)


def test_history_budget_is_checked_at_plan_time_with_the_numbers(budget_plan: Any) -> None:
    code, plan = budget_plan
    assert code == 1, plan
    flat = " ".join(plan.split())
    assert "exceeds the 25,000-event limit" in flat
    # The loop, retries 2: 20 + 3 x 2 x 2 + 100000 polls x (11 + 3 x 2 x 1) events.
    assert "100000 polls (ceil((timeout_seconds 100000 - initial_wait_seconds 0)" in flat
    assert f"= {20 + 12 + 100000 * (11 + 6)} events" in flat


def test_second_plan_shows_no_changes(deployed: dict[str, Any]) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
