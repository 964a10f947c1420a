"""examples/job-poller on LocalStack: three waits, every outcome, the cost formulas, destroy.

The example deploys the same pattern three times: ``lambda`` (retry polling, the
Lambda variant's default; start-time timeout), ``sdk`` (aws-sdk calls, loop-assign
polling; wait-count timeout) and ``events`` (completion = event, the sample job
announcing its end on EventBridge, with a fallback check). The configuration is
applied once for this module; all executions start together and each test asserts
on one of them.

Cost formulas are checked against execution histories, not against a Python copy:
the module outputs its cost model (fixed and per-poll transitions and history
events); the polls are counted in each history independently (failed
JobStillRunning attempts, Wait Poll states, timed-out parks), and the history's
length and billed transitions must equal what the model predicts for that count.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns.job_poller.store import execution_key
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.faults import scenarios
from sfn_patterns_localstack.roles import trust_policy
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.alarm_check import PERIOD, Inbox, alarm, prove_alarm
from tests.dashboard_check import assert_module_dashboard, deployed_body
from tests.iam_denial import (
    assert_denial_text,
    denial,
    expect_denials,
    require_enforcement,
    temporary_role,
    without_actions,
)
from tests.sfn_history import states_entered

from . import helpers

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "job-poller"
TIMEOUT = 14
# Long enough for a completion event to beat the first fallback even when the
# machine is loaded and the job runner and the completion function start cold.
FALLBACK = 16


def _per_thread(aws: Callable) -> Callable:
    """``aws`` for several threads: one client per thread and service, made under a lock.

    boto3 does not make clients from one session safely in two threads at once.
    """
    lock, made = threading.Lock(), {}

    def client(service: str, **kwargs: Any) -> Any:
        key = (threading.get_ident(), service, tuple(sorted(kwargs.items())))
        with lock:
            if key not in made:
                made[key] = aws(service, **kwargs)
            return made[key]

    return client


# The two alarm proofs (each waits whole alarm periods for ALARM and for OK again) run
# at the same time, each reading notices from its own inbox.
PROOFS = ("failed-executions", "lost-events")


@pytest.fixture(scope="module")
def inboxes(aws: Callable) -> Iterator[dict[str, Inbox]]:
    """Where the alarms notify: an SNS topic read through an SQS subscription, per proof."""
    stamp = int(time.time()) % 100000
    threaded = _per_thread(aws)
    created = {proof: Inbox.create(threaded, f"inbox-jpex-{proof}-{stamp}") for proof in PROOFS}
    yield created
    for inbox in created.values():
        inbox.delete()


@pytest.fixture(scope="module")
def example(
    localstack_endpoint: str,
    aws: Callable,
    tmp_path_factory: pytest.TempPathFactory,
    inboxes: dict[str, Inbox],
) -> Iterator[dict[str, Any]]:
    prefix = f"jpex-{int(time.time()) % 100000}"
    variables = {
        "name_prefix": prefix,
        "initial_wait_seconds": 1,
        "poll_interval_seconds": 1,
        "timeout_seconds": TIMEOUT,
        "fallback_seconds": FALLBACK,
        "force_destroy": True,
        "create_dashboard": True,
        "alarms": {
            "period_seconds": PERIOD,
            "alarm_actions": [inbox.topic_arn for inbox in inboxes.values()],
            "ok_actions": [inbox.topic_arn for inbox in inboxes.values()],
        },
    }
    workspace = Workspace(
        EXAMPLE, localstack_endpoint, tmp_path_factory.mktemp("job-poller-example")
    )
    with workspace.applied(variables) as outputs:
        yield {"workspace": workspace, "variables": variables, "outputs": outputs}
    assert leftovers(aws, prefix) == {}


CASES = {
    "lambda": {
        "ok": {"job": {"duration_seconds": 5}},
        "fail": {"job": {"duration_seconds": 1, "outcome": "fail"}},
        "unknown": {"job": {"duration_seconds": 1, "outcome": "unknown"}},
        "slow": {"job": {"duration_seconds": TIMEOUT + 12}},
        "retry": {"job": {"duration_seconds": 1, "status_errors": 1}},
        "bad": {"job": {"outcome": "explode"}},
    },
    "sdk": {
        "ok": {"job": {"duration_seconds": 6, "outcome": "succeed"}},
        "fail": {"job": {"duration_seconds": 1, "outcome": "fail"}},
        # Far longer than the 13 polls take, however loaded the machine.
        "slow": {"job": {"duration_seconds": 60, "outcome": "succeed"}},
    },
    # 10-s jobs: still running when the park first checks, so their end comes as an
    # event (or, dropped, through the fallback), not from that first check, and ending
    # well inside the 14-s loop timeout. 4 s and then 6 s (with an 8-s timeout) were too
    # short on a loaded machine: the run-job and status functions' starts let the first
    # check find the job already ended. The file's wall is set by the 60-s sdk job.
    "events": {
        "delivered": {"job": {"duration_seconds": 10}},
        "dropped": {"job": {"duration_seconds": 10, "emit_event": False}},
        "fail": {"job": {"duration_seconds": 10, "outcome": "fail"}},
        "unknown": {"job": {"duration_seconds": 10, "outcome": "unknown"}},
        "slow": {"job": {"duration_seconds": 3 * TIMEOUT}},
    },
}


# The Lambda and events variants' slow jobs outlive their pollers (that is the case
# they test) by up to this much after they start.
JOBS_END_WITHIN = 3 * TIMEOUT + 10


@pytest.fixture(scope="module")
def runs(example: dict[str, Any], aws: Callable) -> Iterator[dict[str, dict]]:
    sfn = aws("stepfunctions")
    arns = {name: example["outputs"][f"{name}_state_machine_arn"] for name in CASES}
    # One short job per poller first: the cases then meet warm Lambdas, so their
    # timings (polls, the first park's check, the event's arrival) are the pollers'
    # and not cold starts'.
    helpers.wait_all(
        sfn,
        {
            name: helpers.start(sfn, arn, {"job": {"duration_seconds": 0}})
            for name, arn in arns.items()
        },
        timeout=120,
    )
    started_at = time.monotonic()
    started = {
        f"{variant}-{case}": helpers.start(sfn, arns[variant], payload)
        for variant, cases in CASES.items()
        for case, payload in cases.items()
    }
    yield {**helpers.wait_all(sfn, started, timeout=120), "_arns": started}
    # Before the example is destroyed: a job still running would write its status
    # after its role is gone (an IAM denial no test declared).
    time.sleep(max(0.0, started_at + JOBS_END_WITHIN - time.monotonic()))


def _why_not(run: dict) -> list[str]:
    """The failure, timeout and abort events of a run's history, with their details."""
    return [
        f"{event['type']}: {details}"
        for event in run.get("events", [])
        for key, details in event.items()
        if key.endswith(("FailedEventDetails", "TimedOutEventDetails", "AbortedEventDetails"))
    ]


def _model(example: dict[str, Any], name: str) -> dict[str, Any]:
    return example["outputs"]["cost_models"][name]


def _assert_cost(run: dict, model: dict[str, Any], polls: int) -> None:
    """The history of a job that succeeded after ``polls`` polls, against the cost model."""
    events = run["events"]
    types = [e["type"] for e in events]
    assert len(events) == (
        model["history_events_fixed"] + polls * model["history_events_per_poll"]
    ), types
    assert helpers.transitions(events) == (
        model["transitions_fixed"] + polls * model["transitions_per_poll"]
    )


def test_outputs_are_static_and_plan_time_known(example: dict[str, Any]) -> None:
    outputs = example["outputs"]
    assert outputs["lambda_state_machine_arn"] == outputs["lambda_state_machine_arn_static"]
    assert outputs["lambda_max_wait_count"] == TIMEOUT - 1 + 1  # ceil((14-1)/1) + 1 backstop
    assert outputs["sdk_max_wait_count"] == TIMEOUT - 1
    fragment = json.loads(outputs["poll_loop_fragment_json"])
    assert set(fragment) == {"job Wait Initial", "job Get Status", "job Check"}
    shapes = {name: model["shape"] for name, model in outputs["cost_models"].items()}
    assert shapes == {"lambda": "retry", "sdk": "loop-assign", "events": "event"}


# --- lambda: retry polling ------------------------------------------------------------


def test_retry_polling_succeeds_and_costs_what_the_module_says(
    runs: dict[str, dict], example: dict[str, Any]
) -> None:
    run = runs["lambda-ok"]
    assert run["status"] == "SUCCEEDED", (run["status"], _why_not(run))
    loop = helpers.output(run)["job_poller"]["job"]
    assert loop["status"]["status"] == "SUCCEEDED"
    assert loop["run"]["handle"]["job_id"].endswith("/job")
    entered = states_entered(run["events"])
    assert entered == [
        "job Run Job",
        "job Wait Initial",
        "job Get Status",
        "job Check",
        "job Succeeded",
    ]
    # A 5-s job outlives the 1-s initial wait: Get Status retried while it ran.
    polls = helpers.count(run["events"], "TaskFailed", "JobStillRunning")
    assert polls >= 1
    _assert_cost(run, _model(example, "lambda"), polls)


def test_lambda_job_failure_goes_to_fail_state(runs: dict[str, dict]) -> None:
    run = runs["lambda-fail"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.JobFailed"
    assert states_entered(run["events"])[-1] == "job Job Failed"


def test_unknown_status_fails_clearly_instead_of_looping(runs: dict[str, dict]) -> None:
    run = runs["lambda-unknown"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.UnknownStatus"
    assert "MYSTERY_STATE" in run["cause"]
    assert states_entered(run["events"]).count("job Get Status") == 1


def test_start_time_strategy_times_out_from_the_lambda(runs: dict[str, dict]) -> None:
    run = runs["lambda-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    # The Lambda's clock fired (JobTimeoutError), not the retry count backstop.
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    elapsed = (run["stopDate"] - run["startDate"]).total_seconds()
    assert TIMEOUT <= elapsed < TIMEOUT + 15


def test_retryable_error_is_retried_then_succeeds(runs: dict[str, dict]) -> None:
    run = runs["lambda-retry"]
    assert run["status"] == "SUCCEEDED", run
    assert helpers.task_failures(run["events"])[0] == "RetryableJobError"
    types = [e["type"] for e in run["events"]]
    failed_at = types.index("TaskFailed")
    assert types[failed_at + 1] == "TaskScheduled"


def test_run_job_error_is_caught_and_carries_the_cause(runs: dict[str, dict]) -> None:
    run = runs["lambda-bad"]
    assert run["status"] == "FAILED"
    assert run["error"] == "AdapterError"
    assert "explode" in run["cause"]
    assert states_entered(run["events"]) == ["job Run Job", "job Poll Error"]


# --- sdk: loop-assign -----------------------------------------------------------------


def test_sdk_variant_polls_child_execution_to_success(
    runs: dict[str, dict], example: dict[str, Any]
) -> None:
    run = runs["sdk-ok"]
    assert run["status"] == "SUCCEEDED", run
    loop = helpers.output(run)["job_poller"]["child"]
    assert loop["status"]["status"] == "SUCCEEDED"
    assert loop["status"]["result"]["ExecutionArn"] == loop["run"]["handle"]["ExecutionArn"]
    assert not any("Lambda" in e["type"] for e in run["events"])
    entered = states_entered(run["events"])
    assert "child Count" not in entered and "child Start" not in entered
    polls = entered.count("child Wait Poll")
    assert polls >= 1
    _assert_cost(run, _model(example, "sdk"), polls)


def test_sdk_variant_failed_child(runs: dict[str, dict]) -> None:
    run = runs["sdk-fail"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.JobFailed"


def test_the_counter_variable_times_out_the_sdk_variant(
    runs: dict[str, dict], example: dict[str, Any]
) -> None:
    run = runs["sdk-slow"]
    assert run["status"] == "FAILED"
    assert run["error"] == "JobPoller.Timeout"
    entered = states_entered(run["events"])
    assert entered.count("child Wait Poll") == example["outputs"]["sdk_max_wait_count"]
    assert entered[-1] == "child Timed Out"
    assert helpers.task_failures(run["events"]) == []
    # Every poll used: the model's count, less one event (a Fail state ends the
    # execution in 2 events, a Succeed state in 3).
    model = _model(example, "sdk")
    polls = model["max_polls"]
    assert (
        len(run["events"])
        == model["history_events_fixed"] + polls * model["history_events_per_poll"] - 1
    )


# --- events: completion = event -------------------------------------------------------


def _job_end(aws: Callable, example: dict[str, Any], execution_arn: str) -> float:
    """When the sample job itself says it ended (its own clock, in its status record)."""
    table = example["outputs"]["events_metadata_table_name"]
    item = aws("dynamodb").get_item(
        TableName=table,
        Key={"pk": {"S": f"{execution_key(execution_arn)}#job"}, "sk": {"S": "status"}},
        ConsistentRead=True,
    )["Item"]
    return json.loads(item["doc"]["S"])["at"]


def test_event_delivered_resumes_the_execution_at_once(
    runs: dict[str, dict], example: dict[str, Any], aws: Callable
) -> None:
    run = runs["events-delivered"]
    assert run["status"] == "SUCCEEDED", run
    events = run["events"]
    # No fallback: the completion event itself resumed the first park.
    assert helpers.count(events, "TaskTimedOut") == 0
    resumed = json.loads(
        next(
            e
            for e in events
            if e["type"] == "TaskSucceeded"
            and "invoke.waitForTaskToken" in e["taskSucceededEventDetails"]["resource"]
        )["taskSucceededEventDetails"]["output"]
    )
    assert resumed["result"]["state"] == "SUCCEEDED"  # the event's detail, not a status call
    _assert_cost(run, _model(example, "events"), 0)
    delay = helpers.entered_at(events, "job Check").timestamp() - _job_end(
        aws, example, runs["_arns"]["events-delivered"]
    )
    # "At once" means well before the fallback check (FALLBACK s) would have found it;
    # a tighter bound only measures how loaded the machine is (3.1 s seen on 2 busy cores).
    assert 0 <= delay < FALLBACK / 2, f"the job's end was noticed {delay:.2f} s after it"


def test_event_dropped_the_fallback_check_completes(
    runs: dict[str, dict], example: dict[str, Any]
) -> None:
    run = runs["events-dropped"]
    assert run["status"] == "SUCCEEDED", run
    events = run["events"]
    fallbacks = helpers.count(events, "TaskTimedOut")
    assert fallbacks >= 1
    elapsed = (run["stopDate"] - run["startDate"]).total_seconds()
    assert elapsed >= FALLBACK
    _assert_cost(run, _model(example, "events"), fallbacks)


def test_failed_and_unknown_endings_in_event_mode(runs: dict[str, dict]) -> None:
    failed = runs["events-fail"]
    assert failed["status"] == "FAILED" and failed["error"] == "JobPoller.JobFailed"
    # An unknown final status is not a completion event: the fallback check finds it.
    unknown = runs["events-unknown"]
    assert unknown["status"] == "FAILED" and unknown["error"] == "JobPoller.UnknownStatus"
    assert helpers.count(unknown["events"], "TaskTimedOut") >= 1


def test_event_mode_times_out_after_its_fallback_checks(
    runs: dict[str, dict], example: dict[str, Any]
) -> None:
    run = runs["events-slow"]
    assert run["status"] == "FAILED" and run["error"] == "JobPoller.Timeout"
    assert helpers.task_failures(run["events"])[-1] == "JobTimeoutError"
    assert helpers.count(run["events"], "TaskTimedOut") == _model(example, "events")["max_polls"]
    elapsed = (run["stopDate"] - run["startDate"]).total_seconds()
    assert TIMEOUT <= elapsed < TIMEOUT + FALLBACK + 8


def _sample_event(job_id: str, state: str, function_arn: str) -> dict[str, Any]:
    return {
        "Source": "sfn-patterns.sample-job",
        "DetailType": "Sample Job State Change",
        "Resources": [function_arn],
        "Detail": json.dumps({"job_id": job_id, "state": state}),
    }


def test_events_for_unknown_or_old_tokens_are_ignored(
    runs: dict[str, dict], example: dict[str, Any], aws: Callable
) -> None:
    outputs = example["outputs"]
    function = outputs["events_completion_function_name"]
    sample_arn = aws("lambda").get_function(
        FunctionName=f"{example['variables']['name_prefix']}-events-sample-job"
    )["Configuration"]["FunctionArn"]
    delivered = helpers.output(runs["events-delivered"])["job_poller"]["job"]["run"]["handle"]
    # Through EventBridge: a job nobody waits for. Its end is recorded (a late park
    # would find it) and nothing else happens.
    stranger = f"stranger-{time.time_ns()}"
    aws("events").put_events(Entries=[_sample_event(stranger, "SUCCEEDED", sample_arn)])
    tokens = aws("dynamodb")
    deadline = time.monotonic() + 30
    item = None
    while item is None and time.monotonic() < deadline:
        item = tokens.get_item(
            TableName=outputs["events_token_table_name"], Key={"pk": {"S": stranger}}
        ).get("Item")
        time.sleep(0.3)
    assert item is not None and item["final_status"]["S"] == "SUCCEEDED" and "token" not in item
    # Directly: the same event again for a job whose execution has ended (its token is
    # old). The function answers without error and resumes nothing.
    event = {
        "source": "sfn-patterns.sample-job",
        "detail-type": "Sample Job State Change",
        "resources": [sample_arn],
        "detail": {"job_id": delivered["job_id"], "state": "SUCCEEDED"},
    }
    response = aws("lambda").invoke(FunctionName=function, Payload=json.dumps(event).encode())
    answer = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, answer
    assert answer == {"recorded": delivered["job_id"], "status": "SUCCEEDED", "resumed": False}
    # The finished execution is untouched.
    described = aws("stepfunctions").describe_execution(
        executionArn=runs["_arns"]["events-delivered"]
    )
    assert described["status"] == "SUCCEEDED"


# --- IAM: the state machine's grant is needed --------------------------------------------


@pytest.mark.iam_denial
def test_without_invoke_job_lambdas_the_poller_fails_with_access_denied(
    example: dict[str, Any], runs: dict[str, dict], aws: Callable, localstack_endpoint: str
) -> None:
    """InvokeJobLambdas is needed: without lambda:InvokeFunction the Run Job task is refused,
    and the execution fails with AWS's AccessDenied sentence naming the machine's role,
    the action and the Run Job function, through the poller's own error path.

    Runs after ``runs`` (every case done), so no other execution sees the revoked grant.
    """
    require_enforcement(aws, localstack_endpoint)
    sfn = aws("stepfunctions")
    machine = example["outputs"]["lambda_state_machine_arn"]
    role = sfn.describe_state_machine(stateMachineArn=machine)["roleArn"]
    run_job = example["outputs"]["lambda_function_names"][0]  # run_job_function_name
    with (
        without_actions(aws, role, "lambda:InvokeFunction"),
        expect_denials(denial(role, "lambda:InvokeFunction", f"*:function:{run_job}")),
    ):
        arn = helpers.start(sfn, machine, {"job": {"duration_seconds": 0}})
        run = helpers.wait_all(sfn, {"denied": arn}, timeout=60)["denied"]
    assert run["status"] == "FAILED", run
    text = f"{run.get('error')} {run.get('cause')}"
    print(f"\ndenied execution: {text}")
    assert_denial_text(text, role, "lambda:InvokeFunction", code="AccessDenied")
    assert run_job in text, text
    assert states_entered(run["events"])[0] == "job Run Job"
    assert "job Get Status" not in states_entered(run["events"])
    # The grant back, the same machine runs again (the revocation was the only cause).
    again = helpers.start(sfn, machine, {"job": {"duration_seconds": 0}})
    assert helpers.wait_all(sfn, {"again": again}, timeout=60)["again"]["status"] == "SUCCEEDED"


def test_an_embedding_machine_runs_the_loop_with_the_embedder_policy_alone(
    example: dict[str, Any], aws: Callable, localstack_endpoint: str
) -> None:
    """poll_loop_embedder_policy_json is enough, and used: a machine of the caller's own
    that embeds the Lambda variant's loop (here: its whole definition, under another
    name), with that output as its role's only policy, runs a job to success. The
    policy is attached as a module output (``module_output``): each action it grants
    must allow a call in the run.
    """
    require_enforcement(aws, localstack_endpoint)
    sfn = aws("stepfunctions")
    definition = sfn.describe_state_machine(
        stateMachineArn=example["outputs"]["lambda_state_machine_arn"]
    )["definition"]
    assert json.loads(example["outputs"]["poll_loop_fragment_json"]).keys() <= set(
        json.loads(definition)["States"]
    )
    trust = json.loads(trust_policy("states"))
    with temporary_role(
        aws,
        f"{example['variables']['name_prefix']}-embedder",
        example["outputs"]["poll_loop_embedder_policy_json"],
        trust=trust,
        module_output=True,
    ) as role:
        machine = sfn.create_state_machine(
            name=f"{example['variables']['name_prefix']}-embedder",
            definition=definition,
            roleArn=role,
        )["stateMachineArn"]
        try:
            arn = helpers.start(sfn, machine, {"job": {"duration_seconds": 2}})
            run = helpers.wait_all(sfn, {"embedded": arn}, timeout=90)["embedded"]
        finally:
            sfn.delete_state_machine(stateMachineArn=machine)
    assert run["status"] == "SUCCEEDED", (run["status"], _why_not(run))
    assert "job Get Status" in states_entered(run["events"])


# --- under faults ---------------------------------------------------------------------

FAULT_CASES = {
    "lambda": {"ok": {"duration_seconds": 3}, "fail": {"duration_seconds": 2, "outcome": "fail"}},
    "sdk": {
        "ok": {"duration_seconds": 3, "outcome": "succeed"},
        "fail": {"duration_seconds": 2, "outcome": "fail"},
    },
    "events": {
        "ok": {"duration_seconds": 3},
        "ok-2": {"duration_seconds": 4},
        "fail": {"duration_seconds": 3, "outcome": "fail"},
    },
}


def _fault_plan(aws: Callable, example: dict[str, Any], rate: float) -> dict[str, Any]:
    """Status checks throttled and 5xx; completion events doubled, late or dropped."""
    outputs = example["outputs"]
    sdk_role = aws("stepfunctions").describe_state_machine(
        stateMachineArn=outputs["sdk_state_machine_arn"]
    )["roleArn"]
    completion_role = aws("lambda").get_function(
        FunctionName=outputs["events_completion_function_name"]
    )["Configuration"]["Role"]
    # The Lambda and event variants' status checks (Step Functions names the function by ARN).
    status_check = {"service": "lambda", "operation": "Invoke", "resource": "*-get-job-status"}
    sdk_describe = {
        "service": "stepfunctions",
        "operation": "DescribeExecution",
        "caller_role": sdk_role,
    }
    status = [
        ({**status_check, "kind": "throttle"}, 1, rate),
        ({**status_check, "kind": "internal_error"}, 2, rate),
        # The SDK variant's status check (DescribeExecution of the child): its first
        # call throttled, its second answered 500, and only throttles at random after
        # that (a random 500 too would put a third failure in a row within reach of
        # its 4 attempts).
        ({**sdk_describe, "kind": "throttle"}, 1, rate),
        ({**sdk_describe, "kind": "internal_error"}, 2, 0),
    ]
    return scenarios.job_poller_mix(
        status=status,
        completion_rule=outputs["events_completion_rule_name"],
        completion_role=completion_role,
        rate=rate,
        seed=28,
    )


def test_each_outcome_is_reported_once_and_correctly_under_faults(
    runs: dict[str, dict], example: dict[str, Any], aws: Callable, localstack_endpoint: str
) -> None:
    """Every completion mode, jobs that succeed and fail, under a mixed fault plan.

    Oracles: each execution's status and error against the job's own planned outcome,
    and its history: the job was started once (one Run Job success), and the outcome
    was decided once (one entry into the succeeded or failed end state).
    """
    sfn = aws("stepfunctions")
    arns = {name: example["outputs"][f"{name}_state_machine_arn"] for name in FAULT_CASES}
    with faults.applied(localstack_endpoint, _fault_plan(aws, example, rate=0.25)):
        started = {
            f"{variant}-{case}": helpers.start(sfn, arns[variant], {"job": job})
            for variant, cases in FAULT_CASES.items()
            for case, job in cases.items()
        }
        done = helpers.wait_all(sfn, started, timeout=180)
        log = faults.log(localstack_endpoint)
    kinds = Counter(entry["kind"] for entry in log)
    print(f"\njob-poller under faults: {dict(kinds)}")
    for name, run in done.items():
        variant, case = name.split("-", 1)
        fails = FAULT_CASES[variant][case].get("outcome") == "fail"
        helpers.assert_reported_once(name, run, fails=fails)
    # The run met the faults it is about (else it proved nothing).
    assert {"throttle", "internal_error", "event_delay", "event_drop", "event_duplicate"} <= set(
        kinds
    ), kinds
    callers = {(e["operation"], e["kind"]) for e in log}
    assert {
        ("DescribeExecution", "throttle"),
        ("DescribeExecution", "internal_error"),
        ("SendTaskSuccess", "internal_error"),
    } <= callers


def test_second_plan_shows_no_changes(example: dict[str, Any]) -> None:
    code, plan = example["workspace"].plan_exit_code(example["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"


# --- Limits (README "Limits"): throttling longer than a Task's retry budget ------------

# The example's task_retry: 3 retries after the first attempt.
RETRY_BUDGET_ATTEMPTS = 1 + 3


def _metadata_objects(aws: Callable, example: dict[str, Any], execution_arn: str) -> int:
    prefix = f"job-poller/{execution_key(execution_arn)}/"
    bucket = example["outputs"]["metadata_bucket_name"]
    return aws("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)["KeyCount"]


THROTTLED = {
    # function (index in lambda_function_names), states entered, job started
    "run-job": (0, ["job Run Job", "job Poll Error"], False),
    "get-status": (
        1,
        ["job Run Job", "job Wait Initial", "job Get Status", "job Poll Error"],
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(THROTTLED))
def test_throttling_longer_than_the_retry_budget_fails_with_the_named_error(
    runs: dict[str, dict],
    example: dict[str, Any],
    aws: Callable,
    localstack_endpoint: str,
    case: str,
) -> None:
    """Every invoke of one function throttled, one attempt more than the budget allows.

    Run Job: the execution fails with Lambda.TooManyRequestsException and nothing was
    started (no metadata written, so no job). Get Status: the same error, but the job
    had started and is left running (the README's limit: the poller does not cancel it).
    """
    function, states, job_started = THROTTLED[case]
    name = example["outputs"]["lambda_function_names"][function]
    sfn = aws("stepfunctions")
    with faults.applied(
        localstack_endpoint,
        {
            "seed": 28,
            "faults": [
                {
                    "service": "lambda",
                    "operation": "Invoke",
                    "kind": "throttle",
                    "resource": f"*{name}",
                    "first": RETRY_BUDGET_ATTEMPTS,
                }
            ],
        },
    ):
        arn = helpers.start(
            sfn, example["outputs"]["lambda_state_machine_arn"], {"job": {"duration_seconds": 3}}
        )
        run = helpers.wait_all(sfn, {"throttled": arn}, timeout=120)["throttled"]
        injected = faults.log(localstack_endpoint)
    assert len(injected) == RETRY_BUDGET_ATTEMPTS, injected
    assert run["status"] == "FAILED", run
    assert run["error"] == "Lambda.TooManyRequestsException"
    # Every attempt the budget allows was made, each one throttled, none more.
    throttled = [e for e in helpers.task_failures(run["events"]) if e != "JobStillRunning"]
    assert throttled == ["Lambda.TooManyRequestsException"] * RETRY_BUDGET_ATTEMPTS
    assert states_entered(run["events"]) == states
    # Run Job never ran: no metadata, no job. The same look finds a started job's.
    assert (_metadata_objects(aws, example, arn) > 0) is job_started
    assert _metadata_objects(aws, example, runs["_arns"]["lambda-ok"]) > 0


# --- alarms ------------------------------------------------------------------------------


def test_each_pollers_dashboard_charts_what_its_lambdas_print(
    aws: Callable, example: dict[str, Any]
) -> None:
    """Pattern metrics only where Get Job Status prints them (get_job_status.py): the
    lambda poller (start-time) its loop timeouts; the events poller also its fallback
    checks and lost events; the sdk poller has no Lambda, so no pattern panel."""
    outputs = example["outputs"]
    prefix = example["variables"]["name_prefix"]
    printed = {
        "lambda": {"LoopTimeouts"},
        "events": {"LoopTimeouts", "FallbackChecks", "LostCompletionEvents"},
        "sdk": set(),
    }
    assert sorted(outputs["dashboard_names"]) == sorted(printed)
    for poller, name in outputs["dashboard_names"].items():
        assert_module_dashboard(
            deployed_body(aws, name),
            module=f"{prefix}-{poller}",
            pattern="job-poller",
            metrics=printed[poller],
            alarm_arns=[a["arn"] for a in outputs["alarms"][poller].values()],
        )


def test_every_poller_has_its_alarms(aws: Callable, example: dict[str, Any]) -> None:
    alarms = example["outputs"]["alarms"]
    machine = {
        "lambda": example["outputs"]["lambda_state_machine_arn"],
        "events": example["outputs"]["events_state_machine_arn"],
        "sdk": example["outputs"]["sdk_state_machine_arn"],
    }
    for variant, arn in machine.items():
        for signal, metric in {
            "state-machine-executions-failed": "ExecutionsFailed",
            "state-machine-executions-timed-out": "ExecutionsTimedOut",
            "state-machine-executions-aborted": "ExecutionsAborted",
            "state-machine-execution-throttled": "ExecutionThrottled",
        }.items():
            found = alarm(aws, alarms[variant][signal]["name"])
            assert (found["Namespace"], found["MetricName"]) == ("AWS/States", metric)
            assert found["Dimensions"] == [{"Name": "StateMachineArn", "Value": arn}]
            assert found["Period"] == PERIOD and found["TreatMissingData"] == "notBreaching"
    # Lambdas only where the variant has them; the completion parts only with events.
    assert {"run-job-errors", "get-job-status-duration"} <= set(alarms["lambda"])
    assert not any(key.startswith("run-job") for key in alarms["sdk"])
    assert {
        "completion-errors",
        "completion-rule-failed-invocations",
        "tokens-write-throttles",
    } <= set(alarms["events"])
    rule = alarm(aws, alarms["events"]["completion-rule-failed-invocations"]["name"])
    assert rule["Dimensions"] == [
        {"Name": "RuleName", "Value": example["outputs"]["events_completion_rule_name"]}
    ]


@pytest.fixture(scope="module")
def alarm_proofs(
    aws: Callable, example: dict[str, Any], runs: dict[str, dict], inboxes: dict[str, Inbox]
) -> dict[str, BaseException | None]:
    """Both alarm proofs, at once; what each raised (None: it held).

    They touch different machines and alarms: failures on the lambda poller, the
    completion rule of the events poller. `runs` failed executions on purpose a while
    ago; each proof lets its alarm settle first.
    """
    threaded = _per_thread(aws)
    outputs = example["outputs"]

    def failed_executions() -> None:
        sfn = threaded("stepfunctions")
        arn = outputs["lambda_state_machine_arn"]

        def fail_one() -> None:
            started = helpers.start(sfn, arn, {"job": {"duration_seconds": 0, "outcome": "fail"}})
            (run,) = helpers.wait_all(sfn, {"fail": started}, timeout=60).values()
            assert run["status"] == "FAILED"

        prove_alarm(
            threaded,
            inboxes["failed-executions"],
            outputs["alarms"]["lambda"]["state-machine-executions-failed"]["name"],
            inject=fail_one,
            clear=lambda: None,  # no further failure: the alarm returns to OK by itself
        )

    def lost_events() -> None:
        # With the rule off, the job's completion event resumes nothing: the park's
        # fallback check finds the job finished and reports a lost event.
        sfn, events = threaded("stepfunctions"), threaded("events")
        rule = outputs["events_completion_rule_name"]
        arn = outputs["events_state_machine_arn"]

        def disable_and_run() -> None:
            events.disable_rule(Name=rule)
            started = helpers.start(sfn, arn, {"job": {"duration_seconds": 2}})
            (run,) = helpers.wait_all(sfn, {"job": started}, timeout=4 * FALLBACK).values()
            assert run["status"] == "SUCCEEDED"

        try:
            prove_alarm(
                threaded,
                inboxes["lost-events"],
                outputs["alarms"]["events"]["lost-completion-events"]["name"],
                inject=disable_and_run,
                clear=lambda: events.enable_rule(Name=rule),
            )
        finally:
            events.enable_rule(Name=rule)

    with ThreadPoolExecutor(max_workers=len(PROOFS)) as pool:
        futures = {
            "failed-executions": pool.submit(failed_executions),
            "lost-events": pool.submit(lost_events),
        }
    return {proof: future.exception() for proof, future in futures.items()}


def _proved(alarm_proofs: dict[str, BaseException | None], proof: str) -> None:
    error = alarm_proofs[proof]
    if error is not None:
        raise error


def test_a_failing_execution_fires_the_failed_executions_alarm(
    alarm_proofs: dict[str, BaseException | None],
) -> None:
    _proved(alarm_proofs, "failed-executions")


def test_a_disabled_completion_rule_fires_the_lost_events_alarm(
    alarm_proofs: dict[str, BaseException | None],
) -> None:
    _proved(alarm_proofs, "lost-events")
