"""The aws-sdk variant on LocalStack: event completion on Step Functions' own events, and
tasks acting in another account through Credentials.

tests/job_poller/sdk_events applies two pollers of a child state machine (the job):
``events`` parks on a task token until the child's "Step Functions Execution Status
Change" event resumes it (the event-completion function), with a DescribeExecution
fallback; ``cross_account`` starts and polls a child in account 111111111111 through
a role there (ASL ``Credentials``), the way the module README documents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from sfn_patterns_localstack.roles import allow, delete_role
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.sfn_history import states_entered

from . import helpers

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

CONFIG = Path(__file__).resolve().parent / "sdk_events"
OTHER_ACCOUNT = "111111111111"
# A fallback long enough for the status-change event to beat it on a loaded machine
# (8 s was beaten once in a full run with five LocalStacks and checkov on 2 cores); the
# loop timeout stays above it, so a job whose event is lost still ends by the fallback.
TIMEOUT, FALLBACK = 20, 15
CHILD = {
    "StartAt": "Run",
    "States": {
        "Run": {"Type": "Wait", "SecondsPath": "$.duration_seconds", "End": True},
    },
}


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
def other_account(localstack_endpoint: str) -> Iterator[dict[str, str]]:
    """The other account's job (a child machine) and the role the poller acts through."""
    prefix = f"jpx-{int(time.time()) % 100000}"
    iam, sfn = _other(localstack_endpoint, "iam"), _other(localstack_endpoint, "stepfunctions")
    runner = iam.create_role(
        RoleName=f"{prefix}-child",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "states.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
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
    yield {"prefix": prefix, "child": child, "role": role, "poller_role": poller_role}
    sfn.delete_state_machine(stateMachineArn=child)
    for name in (f"{prefix}-child", f"{prefix}-jobs"):
        delete_role(iam, name)


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    other_account: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Any]]:
    variables = {
        "name_prefix": other_account["prefix"],
        "timeout_seconds": TIMEOUT,
        "fallback_seconds": FALLBACK,
        "other_account_child_arn": other_account["child"],
        "other_account_role_arn": other_account["role"],
    }
    workspace = Workspace(CONFIG, localstack_endpoint, tmp_path_factory.mktemp("jp-sdk-events"))
    with workspace.applied(variables) as outputs:
        yield {"workspace": workspace, "variables": variables, "outputs": outputs}
    assert leftovers(aws, other_account["prefix"]) == {}


@pytest.fixture(scope="module")
def runs(deployed: dict[str, Any], aws: Callable) -> dict[str, dict]:
    sfn, events = aws("stepfunctions"), aws("events")
    outputs = deployed["outputs"]
    first = {
        "delivered": (outputs["events_state_machine_arn"], {"duration_seconds": 2}),
        "failed": (outputs["events_state_machine_arn"], {"duration_seconds": 1, "outcome": "fail"}),
        "slow": (outputs["events_state_machine_arn"], {"duration_seconds": 60}),
        "cross": (outputs["cross_account_state_machine_arn"], {"duration_seconds": 2}),
    }
    # One instant job first: the completion function is then warm for the cases.
    warm = {"job": {"duration_seconds": 0}}
    helpers.wait_all(
        sfn, {"warm": helpers.start(sfn, outputs["events_state_machine_arn"], warm)}, timeout=90
    )
    started = {name: helpers.start(sfn, arn, {"job": job}) for name, (arn, job) in first.items()}
    done = helpers.wait_all(sfn, {k: v for k, v in started.items() if k != "slow"}, timeout=90)
    # Events lost: with the rule's target removed, only the fallback check can see the
    # end. (LocalStack 4.9.2 still delivers to a DISABLED rule, so disabling it would
    # not do.)
    rule = outputs["events_rule_name"]
    targets = events.list_targets_by_rule(Rule=rule)["Targets"]
    events.remove_targets(Rule=rule, Ids=[t["Id"] for t in targets])
    try:
        dropped = helpers.start(
            sfn, outputs["events_state_machine_arn"], {"job": {"duration_seconds": 1}}
        )
        done.update(helpers.wait_all(sfn, {"dropped": dropped, "slow": started["slow"]}, 90))
    finally:
        events.put_targets(Rule=rule, Targets=targets)
    return done


def test_the_status_change_event_resumes_the_execution(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["delivered"]
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
    run = runs["failed"]
    assert run["status"] == "FAILED" and run["error"] == "JobPoller.JobFailed"


def test_without_events_the_fallback_describe_completes(
    runs: dict[str, dict], deployed: dict[str, Any]
) -> None:
    run = runs["dropped"]
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
    run = runs["slow"]
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
    run = runs["cross"]
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


def test_second_plan_shows_no_changes(deployed: dict[str, Any]) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"
