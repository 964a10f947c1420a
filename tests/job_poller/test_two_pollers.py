"""The module's variants beyond the example, on one deployment: a wait-count timeout and a
DynamoDB store, two pollers in one machine, the Lambda-ARN adapter, and the aws-sdk
variant completed by Step Functions' own events and acting in another account.

tests/job_poller/two_pollers applies, in one configuration (one apply, one second
plan, one destroy for this whole file):

* main.tf: the module (Lambda variant, sample job) and a second machine that chains
  two poll loops, ``fast`` (start-time) and ``slow`` (wait-count), from the same
  templates: each loop keeps its own timeout, counter and metadata keys; and a
  module instance whose adapter is a Lambda ARN;
* sdk_events.tf: two aws-sdk pollers of a child state machine (the job): ``events``
  parks on a task token until the child's "Step Functions Execution Status Change"
  event resumes it (the event-completion function), with a DescribeExecution
  fallback; ``cross_account`` starts and polls a child in account 111111111111
  through a role there (ASL ``Credentials``), the way the module README documents.

Every execution of both halves starts at once (their waits overlap); each test
asserts on one of them.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from sfn_patterns.job_poller.store import execution_key
from sfn_patterns_cli.templating import render_tftpl, templates_root
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.faults import scenarios
from sfn_patterns_localstack.roles import allow, delete_role, trust_policy
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
# How long the jobs run that a wait-count loop must time out on: its polls would have to
# take over 5 s each (SLOW_TIMEOUT - 1 polls of 1 s) for the job to end first. A
# sleeping job costs no CPU.
WAIT_COUNT_JOB = 60
OTHER_ACCOUNT = "111111111111"
# The aws-sdk pollers (sdk_events.tf). A fallback long enough for the status-change
# event to beat it on a loaded machine (8 s was beaten once in a full run with five
# LocalStacks and checkov on 2 cores); the loop timeout stays above it, so a job whose
# event is lost still ends by the fallback.
SDK_TIMEOUT, SDK_FALLBACK = 20, 15
CHILD = {
    "StartAt": "Run",
    "States": {
        "Run": {"Type": "Wait", "SecondsPath": "$.duration_seconds", "End": True},
    },
}


@pytest.fixture(scope="module")
def prefix() -> str:
    """The deployment's name prefix (the other account's role trusts a role named by it)."""
    return f"jp2-{int(time.time()) % 100000}"


def _other(endpoint: str, service: str) -> Any:
    """A client acting in the other account (LocalStack maps the access key to it)."""
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=OTHER_ACCOUNT,
        aws_secret_access_key="test",
    )


@pytest.fixture(scope="module")
def other_account(localstack_endpoint: str, prefix: str) -> Iterator[dict[str, str]]:
    """The other account's job (a child machine) and the role the poller acts through."""
    iam, sfn = _other(localstack_endpoint, "iam"), _other(localstack_endpoint, "stepfunctions")
    runner = iam.create_role(
        RoleName=f"{prefix}-child",
        AssumeRolePolicyDocument=trust_policy("states"),
    )["Role"]["Arn"]
    child = sfn.create_state_machine(
        name=f"{prefix}-child", definition=json.dumps(CHILD), roleArn=runner
    )["stateMachineArn"]
    # The trust policy the module README documents: the poller's state machine role
    # (in the poller's account) may assume this role.
    poller_role = f"arn:aws:iam::000000000000:role/{prefix}-cross-job-poller"
    role = iam.create_role(
        RoleName=f"{prefix}-jobs",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"AWS": poller_role},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    # and, as the README says, allows the start and describe actions on the job there.
    iam.put_role_policy(
        RoleName=f"{prefix}-jobs",
        PolicyName="child-jobs",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    allow("states:StartExecution", child),
                    allow(
                        "states:DescribeExecution",
                        child.replace(":stateMachine:", ":execution:") + ":*",
                    ),
                ],
            }
        ),
    )
    yield {"child": child, "role": role, "poller_role": poller_role}
    sfn.delete_state_machine(stateMachineArn=child)
    for name in (f"{prefix}-child", f"{prefix}-jobs"):
        delete_role(iam, name)


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    prefix: str,
    other_account: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    *,
    destroy_deployments: bool,
) -> Iterator[dict[str, Any]]:
    variables = {
        "name_prefix": prefix,
        "timeout_seconds": OWN_TIMEOUT,
        "fast_timeout_seconds": FAST_TIMEOUT,
        "slow_timeout_seconds": SLOW_TIMEOUT,
        "sdk_timeout_seconds": SDK_TIMEOUT,
        "sdk_fallback_seconds": SDK_FALLBACK,
        "other_account_child_arn": other_account["child"],
        "other_account_role_arn": other_account["role"],
    }
    workspace = Workspace(CONFIG, localstack_endpoint, tmp_path_factory.mktemp("job-poller-two"))
    with workspace.applied(variables, destroy=destroy_deployments) as outputs:
        yield {"workspace": workspace, "variables": variables, "outputs": outputs}
        if destroy_deployments:
            # A timed-out execution's job runs on (the slow ones WAIT_COUNT_JOB) and
            # then writes its final status with its role: destroyed before that, the
            # role is gone and the write is denied, as it would be in an account. Wait
            # for every job the tests started to end first.
            tables = [outputs["metadata_table_name"], *outputs["via_lambda_store"][1:]]
            _wait_for_jobs(aws("dynamodb"), [t for t in tables if t], WAIT_COUNT_JOB + 60)
    if destroy_deployments:
        assert leftovers(aws, prefix) == {}


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
    # 6 s: still running at the first check, however late it comes (a 3-s job had
    # already ended at the first check once, under a loaded run: no poll to count).
    "own-ok": ("state_machine_arn", {"job": {"duration_seconds": 6}}),
    # The wait-count jobs run WAIT_COUNT_JOB seconds: a counter counts polls, and on a
    # loaded machine each poll takes longer than its interval (a job 5 s over the
    # timeout ended before the 7th poll at a load of 28 on 2 cores; a 24-s job before
    # the 7th 1-s poll in another loaded run).
    "own-slow": ("state_machine_arn", {"job": {"duration_seconds": WAIT_COUNT_JOB}}),
    # An 8-s slow job would time out in the fast loop (6 s) but not in the slow one (12 s).
    "via-lambda": ("via_lambda_arn", {"job": {"duration_seconds": 2, "status_errors": 1}}),
    "two-ok": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": 8}}},
    ),
    # A job that outlives the fast loop's timeout by far: one 4 s longer ended between
    # two polls of a loaded CI run (a poll at 5 s saw it running, the next, past 10 s,
    # saw it done), so the loop succeeded instead of timing out.
    "two-fast-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": WAIT_COUNT_JOB}, "slow": {}}},
    ),
    "two-slow-timeout": (
        "two_pollers_arn",
        {"jobs": {"fast": {"duration_seconds": 1}, "slow": {"duration_seconds": WAIT_COUNT_JOB}}},
    ),
    # The aws-sdk pollers' child jobs (sdk_events.tf).
    "sdk-delivered": ("events_state_machine_arn", {"job": {"duration_seconds": 2}}),
    "sdk-failed": (
        "events_state_machine_arn",
        {"job": {"duration_seconds": 1, "outcome": "fail"}},
    ),
    "sdk-slow": ("events_state_machine_arn", {"job": {"duration_seconds": 60}}),
    "sdk-cross": ("cross_account_state_machine_arn", {"job": {"duration_seconds": 2}}),
}
# Waited for with the events lost (after the others): the slow park outlives them.
LATE = ("sdk-slow",)


@pytest.fixture(scope="module")
def runs(deployed: dict[str, Any], aws: Callable) -> dict[str, dict]:
    sfn, events = aws("stepfunctions"), aws("events")
    # One instant job per machine with Lambdas first, so the cases meet warm Lambdas:
    # their timeouts then measure the loops, not cold starts (the completion function
    # of the event poller is warm for its cases).
    warm = {"job": {"duration_seconds": 0}, "jobs": {"fast": {}, "slow": {}}}
    outputs = deployed["outputs"]
    helpers.wait_all(
        sfn,
        {
            name: helpers.start(sfn, outputs[name], warm)
            for name in (
                "state_machine_arn",
                "via_lambda_arn",
                "two_pollers_arn",
                "events_state_machine_arn",
            )
        },
        timeout=120,
    )
    started = {
        name: helpers.start(sfn, outputs[output], payload)
        for name, (output, payload) in CASES.items()
    }
    done = helpers.wait_all(sfn, {k: v for k, v in started.items() if k not in LATE}, timeout=120)
    # Events lost: with the rule's target removed, only the fallback check can see the
    # end. (Stock LocalStack 4.14.0 still delivers to a DISABLED rule, so disabling it
    # would not do on a LOCALSTACK_ENDPOINT run; the harness's
    # emulation/fixes/events_rule_state.py stops that.)
    rule = outputs["events_rule_name"]
    targets = events.list_targets_by_rule(Rule=rule)["Targets"]
    events.remove_targets(Rule=rule, Ids=[t["Id"] for t in targets])
    try:
        dropped = helpers.start(
            sfn, outputs["events_state_machine_arn"], {"job": {"duration_seconds": 1}}
        )
        late = {name: started[name] for name in LATE}
        done.update(helpers.wait_all(sfn, {"sdk-dropped": dropped, **late}, 90))
    finally:
        events.put_targets(Rule=rule, Targets=targets)
    return {**done, "_arns": started}


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
    assert polls >= 1  # a 6-s job outlives the 1-s initial wait
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
    # On failure, say why: the execution's error and cause, and each failed or timed-out
    # attempt (task_retry allows two; a load-induced third failure shows here).
    assert run["status"] == "SUCCEEDED", (
        run.get("error"),
        run.get("cause"),
        [
            (e["type"], e.get("taskFailedEventDetails", e.get("taskTimedOutEventDetails", {})))
            for e in run["events"]
            if e["type"].endswith(("Failed", "TimedOut"))
        ],
    )
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
    # loop slower, so fewer loops fit in the job's 8 s (in one CI run the first check
    # came after the job had ended: one check, no RUNNING answer to count).
    events = run["events"]
    checks = [
        e["timestamp"]
        for e in events
        if e["type"].endswith("StateEntered")
        and e["stateEnteredEventDetails"]["name"] == "slow Check"
    ]
    ran = (checks[-1] - helpers.entered_at(events, "slow Run Job")).total_seconds()
    assert ran > FAST_TIMEOUT, ran
    assert states_entered(events).count("slow Count") == len(checks) - 1  # its own counter
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


# --- the aws-sdk variant: completion = event on Step Functions' events; another account


def test_the_status_change_event_resumes_the_execution(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["sdk-delivered"]
    assert run["status"] == "SUCCEEDED", run
    assert helpers.count(run["events"], "TaskTimedOut") == 0
    status = helpers.output(run)["job_poller"]["child"]["status"]
    # The event's detail, not DescribeExecution's answer.
    assert status["status"] == "SUCCEEDED" and "stateMachineArn" in status["result"]
    model = deployed["outputs"]["events_cost_model"]
    assert model["shape"] == "event-sdk"
    assert len(run["events"]) == model["history_events_fixed"]
    assert helpers.transitions(run["events"]) == model["transitions_fixed"]


def test_a_failed_job_event_ends_in_the_failed_exit(runs: dict[str, dict]) -> None:
    run = runs["sdk-failed"]
    assert run["status"] == "FAILED" and run["error"] == "JobPoller.JobFailed"


def test_without_events_the_fallback_describe_completes(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["sdk-dropped"]
    assert run["status"] == "SUCCEEDED", run
    polls = helpers.count(run["events"], "TaskTimedOut")
    assert polls >= 1
    assert states_entered(run["events"]).count("child Get Status") == polls
    # The model prices the usual path, where an event resumes the park; when the
    # fallback check itself finds the end, no park follows it, so it costs less.
    model = deployed["outputs"]["events_cost_model"]
    assert len(run["events"]) < (
        model["history_events_fixed"] + polls * model["history_events_per_poll"]
    )
    assert helpers.transitions(run["events"]) < (
        model["transitions_fixed"] + polls * model["transitions_per_poll"]
    )


def test_the_park_counts_fallback_checks_and_times_out(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["sdk-slow"]
    assert run["status"] == "FAILED" and run["error"] == "JobPoller.Timeout"
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    model = deployed["outputs"]["events_cost_model"]
    assert helpers.count(run["events"], "TaskTimedOut") == model["max_polls"]


def test_tasks_act_in_the_other_account(
    runs: dict[str, dict],
    deployed: dict[str, Any],
    other_account: dict[str, str],
    localstack_endpoint: str,
) -> None:
    run = runs["sdk-cross"]
    assert run["status"] == "SUCCEEDED", run
    handle = helpers.output(run)["job_poller"]["child"]["run"]["handle"]
    assert f":{OTHER_ACCOUNT}:execution:" in handle["ExecutionArn"]
    described = _other(localstack_endpoint, "stepfunctions").describe_execution(
        executionArn=handle["ExecutionArn"]
    )
    assert described["status"] == "SUCCEEDED"
    scheduled = [
        e["taskScheduledEventDetails"] for e in run["events"] if e["type"] == "TaskScheduled"
    ]
    assert scheduled and all(
        s.get("taskCredentials") == {"roleArn": other_account["role"]} for s in scheduled
    )
    # The role the other account trusts is the poller's state machine role.
    assert deployed["outputs"]["cross_account_role_arn"] == other_account["poller_role"]


# The configuration's variables with a one-second poll for 100,000 seconds.
BUDGET_VARIABLES = {
    "name_prefix": "jp2-budget",
    "timeout_seconds": 100000,
    "fast_timeout_seconds": FAST_TIMEOUT,
    "slow_timeout_seconds": SLOW_TIMEOUT,
    "initial_wait_seconds": 0,
    "poll_interval_seconds": 1,
    # Never applied: the other account's job and role need only be well-formed ARNs.
    "other_account_child_arn": f"arn:aws:states:us-east-1:{OTHER_ACCOUNT}:stateMachine:budget",
    "other_account_role_arn": f"arn:aws:iam::{OTHER_ACCOUNT}:role/budget",
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


# The aws-sdk poller completed by events, under a mixed fault plan: its own planned
# outcome per job, and each decided once.
# Six jobs, six completion events: the first three meet the certain event faults (a
# drop, a duplicate, a delay: a fault's n counts the events an earlier one took), the
# rest meet them at random.
SDK_FAULT_CASES = {
    "ok": {"duration_seconds": 2},
    "ok-2": {"duration_seconds": 3},
    "ok-3": {"duration_seconds": 2},
    "ok-4": {"duration_seconds": 4},
    "fail": {"duration_seconds": 1, "outcome": "fail"},
    "fail-2": {"duration_seconds": 2, "outcome": "fail"},
}


def test_sdk_events_report_each_outcome_once_and_correctly_under_faults(
    runs: dict[str, dict], deployed: dict[str, Any], aws: Callable, localstack_endpoint: str
) -> None:
    """Under faults, the aws-sdk completion mode with events: the fallback's DescribeExecution
    throttled and 5xx, the child's status-change events dropped, doubled or 3 s late, the
    completion function's SendTaskSuccess answered 500. A dropped event costs one fallback
    (SDK_FALLBACK s); a doubled one must not decide a job twice."""
    sfn, outputs = aws("stepfunctions"), deployed["outputs"]
    machine = outputs["events_state_machine_arn"]
    rule = outputs["events_rule_name"]
    role = sfn.describe_state_machine(stateMachineArn=machine)["roleArn"]
    (target,) = aws("events").list_targets_by_rule(Rule=rule)["Targets"]
    completion_role = aws("lambda").get_function(FunctionName=target["Arn"])["Configuration"][
        "Role"
    ]
    describe = {"service": "stepfunctions", "operation": "DescribeExecution", "caller_role": role}
    # The fallback check's first attempt throttled, its first retry 500 (a fault's n
    # counts the calls an earlier fault took too), then the config's task_retry (2
    # retries) succeeds. No random status faults: a third failure would exhaust that
    # budget, which test_example's limit test proves separately.
    plan = scenarios.job_poller_mix(
        status=[
            ({**describe, "kind": "throttle"}, 1, 0),
            ({**describe, "kind": "internal_error"}, 2, 0),
        ],
        completion_rule=rule,
        completion_role=completion_role,
        rate=0.25,
        seed=28,
    )
    with faults.applied(localstack_endpoint, plan):
        started = {
            name: helpers.start(sfn, machine, {"job": job}) for name, job in SDK_FAULT_CASES.items()
        }
        done = helpers.wait_all(sfn, started, timeout=3 * SDK_TIMEOUT)
        log = faults.log(localstack_endpoint)
    for name, run in done.items():
        helpers.assert_reported_once(
            name, run, fails=SDK_FAULT_CASES[name].get("outcome") == "fail"
        )
    kinds = Counter((e["operation"], e["kind"]) for e in log)
    print(f"\naws-sdk poller under faults: {dict(kinds)}")
    # The run met the faults it is about (else it proved nothing). The status checks
    # run only after a dropped event, so their faults are the fallback's.
    assert {
        ("PutEvents", "event_drop"),
        ("PutEvents", "event_duplicate"),
        ("PutEvents", "event_delay"),
        ("SendTaskSuccess", "internal_error"),
        ("DescribeExecution", "throttle"),
        ("DescribeExecution", "internal_error"),
    } <= set(kinds), kinds


def test_second_plan_shows_no_changes(deployed: dict[str, Any]) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
