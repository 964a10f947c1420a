"""The wrapper runs a target in another account through target_role_arn (ASL Credentials).

LocalStack keeps accounts apart by access key: the target and its role are made in
account 111111111111, the semaphore in the default 000000000000. Without
Credentials the wrapper's StartExecution finds no such state machine; with them
the target runs in the other account, named like the wrapper execution.

The deployment (strategy callback, limit 1) also proves the callback strategy's own
alarm, oldest-waiter-age: a second deployment of that strategy only for it would cost
a whole apply.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest

from sfn_patterns_localstack.roles import account_root_trust, allow, delete_role
from sfn_patterns_localstack.server import ENVIRONMENT
from tests.alarm_check import PERIOD, Inbox, prove_alarm
from tests.iam_denial import ACCOUNT, denial, expect_denials

from .support import (
    deploy,
    holders,
    invoke,
    lock_item,
    start,
    sweep_after,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

OTHER_ACCOUNT = "111111111111"
OLDEST_WAITER_SECONDS = 5  # this deployment's oldest-waiter-age threshold (default 900)
# TimeoutSeconds of the critical section's task (and its Lambda's timeout), past the
# alarm test's 120 s holder: stopped, it keeps its slot until this has passed since its
# task was scheduled, since its Lambda runs on after the stop.
CRITICAL_TIMEOUT = 130


@pytest.fixture(scope="module")
def other_account(localstack_endpoint: str) -> Iterator[dict[str, str]]:
    def client(service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=localstack_endpoint,
            region_name="us-east-1",
            aws_access_key_id=OTHER_ACCOUNT,
            aws_secret_access_key="test",
        )

    iam, sfn = client("iam"), client("stepfunctions")
    name = f"xacct-{uuid.uuid4().hex[:6]}"
    # Assumed by the semaphore's wrapper role in the test's own account.
    role = iam.create_role(
        RoleName=name, AssumeRolePolicyDocument=json.dumps(account_root_trust(ACCOUNT))
    )["Role"]["Arn"]
    # What the module README says the role needs: start the target, follow and stop its
    # executions, and the .sync integration's managed rule.
    executions = f"arn:aws:states:us-east-1:{OTHER_ACCOUNT}:execution:{name}:*"
    iam.put_role_policy(
        RoleName=name,
        PolicyName="run-target",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    allow(
                        "states:StartExecution",
                        f"arn:aws:states:us-east-1:{OTHER_ACCOUNT}:stateMachine:{name}",
                    ),
                    allow(["states:DescribeExecution", "states:StopExecution"], executions),
                    allow(
                        ["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                        f"arn:aws:events:us-east-1:{OTHER_ACCOUNT}:rule/"
                        "StepFunctionsGetEventsForStepFunctionsExecutionRule",
                    ),
                ],
            }
        ),
    )
    target = sfn.create_state_machine(
        name=name,
        roleArn=role,
        definition=json.dumps(
            {
                "StartAt": "Work",
                "States": {
                    "Work": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
                    "Done": {"Type": "Pass", "Parameters": {"account": OTHER_ACCOUNT}, "End": True},
                },
            }
        ),
    )["stateMachineArn"]
    try:
        yield {"role_arn": role, "target_arn": target, "sfn": sfn}
    finally:
        sfn.delete_state_machine(stateMachineArn=target)
        delete_role(iam, name)


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    other_account: dict,
    tmp_path_factory: pytest.TempPathFactory,
    *,
    destroy_deployments: bool,
    inbox: Inbox,
) -> Iterator[dict[str, Any]]:
    with deploy(
        localstack_endpoint,
        aws,
        tmp_path_factory.mktemp("semaphore-xacct-tf"),
        "semx",
        destroy=destroy_deployments,
        strategy="callback",
        max_concurrency=1,
        critical_section_timeout_seconds=CRITICAL_TIMEOUT,
        target_role_arn=other_account["role_arn"],
        external_target_state_machine_arn=other_account["target_arn"],
        alarms={
            "period_seconds": PERIOD,
            "alarm_actions": [inbox.topic_arn],
            "ok_actions": [inbox.topic_arn],
            "thresholds": {"oldest_waiter_seconds": OLDEST_WAITER_SECONDS},
        },
    ) as outputs:
        yield outputs


def test_wrapper_runs_a_target_in_another_account(
    aws: Callable, deployed: dict, other_account: dict
) -> None:
    run_target = json.loads(deployed["wrapper_definition"])["States"]["Run target"]
    assert run_target["Credentials"] == {"RoleArn": other_account["role_arn"]}
    assert run_target["Parameters"]["StateMachineArn"] == other_account["target_arn"]

    sfn = aws("stepfunctions")
    arns = [start(sfn, deployed["wrapper_state_machine_arn"], {"n": i}) for i in range(2)]
    done = wait_done(sfn, arns, timeout=90)
    for arn in arns:
        assert done[arn]["status"] == "SUCCEEDED", done[arn]
        assert json.loads(done[arn]["output"]) == {"account": OTHER_ACCOUNT}
        # The target ran in the other account, named like the wrapper execution.
        target_execution = (
            other_account["target_arn"].replace(":stateMachine:", ":execution:")
            + ":"
            + arn.rsplit(":", 1)[1]
        )
        described = other_account["sfn"].describe_execution(executionArn=target_execution)
        assert described["status"] == "SUCCEEDED"
    # Limit 1: the two targets ran one after the other.
    lifetimes = sorted(
        (d["startDate"].timestamp(), d["stopDate"].timestamp())
        for d in (
            other_account["sfn"].describe_execution(
                executionArn=other_account["target_arn"].replace(":stateMachine:", ":execution:")
                + ":"
                + arn.rsplit(":", 1)[1]
            )
            for arn in arns
        )
    )
    assert lifetimes[0][1] <= lifetimes[1][0] + 0.05


def test_without_credentials_the_other_account_is_not_reached(
    aws: Callable, deployed: dict, other_account: dict
) -> None:
    """The control: the same wrapper definition minus Credentials fails to start the target.

    Under IAM enforcement the wrapper's role is refused (it may only assume the target
    role), as on AWS; without enforcement the target is not found in this account.
    """
    definition = json.loads(deployed["wrapper_definition"])
    del definition["States"]["Run target"]["Credentials"]
    sfn = aws("stepfunctions")
    role = aws("iam").get_role(RoleName=deployed["wrapper_role_arn"].rsplit("/", 1)[1])["Role"]
    machine = sfn.create_state_machine(
        name=f"{deployed['prefix']}-nocreds", definition=json.dumps(definition), roleArn=role["Arn"]
    )["stateMachineArn"]
    # Under enforcement (or audit, which records it) the wrapper role's start is refused.
    refused = denial(
        deployed["wrapper_role_arn"], "states:StartExecution", other_account["target_arn"]
    )
    try:
        with expect_denials(refused):  # not checked under SFNP_IAM=off: nothing records
            arn = start(sfn, machine, {})
            described = wait_done(sfn, [arn], timeout=60)[arn]
        assert described["status"] == "FAILED"
        reported = described.get("cause", "") + described.get("error", "")
        if ENVIRONMENT["SFNP_IAM"] == "enforce":
            # As on AWS: the wrapper's own role may not start anything in that account.
            assert "AccessDenied" in reported
            assert (
                f"assumed-role/{deployed['wrapper_role_arn'].rsplit('/', 1)[1]}/" in reported
                and "is not authorized to perform: states:StartExecution" in reported
            )
        else:
            assert "StateMachineDoesNotExist" in reported
    finally:
        sfn.delete_state_machine(stateMachineArn=machine)
    # The failed execution released what it took.
    item = aws("dynamodb").get_item(
        TableName=deployed["lock_table_name"], Key={"pk": {"S": deployed["lock_key"]}}
    )["Item"]
    assert item["holder_count"] == {"N": "0"}


def test_a_waiter_kept_waiting_fires_the_oldest_waiter_alarm(
    aws: Callable, deployed: dict, inbox: Inbox
) -> None:
    """A holder keeps the one slot; its waiter's age, measured by a reconciler sweep, passes
    the threshold: ALARM. Cleared as an operator would: the holder stops, the waiter is
    admitted, and the next sweep finds nobody waiting."""
    sfn = aws("stepfunctions")
    machine = deployed["embedded_state_machine_arn"]
    holder = start(sfn, machine, {"sleep_seconds": 120, "n": 1})
    wait_until(lambda: holder in holders(lock_item(aws, deployed)).values(), 60, "the holder")
    waiter = start(sfn, machine, {"sleep_seconds": 0, "n": 2})

    def keep_waiting() -> None:
        wait_until(
            lambda: int(lock_item(aws, deployed)["waiting"]["N"]) == 1, 60, "the waiter to park"
        )
        time.sleep(OLDEST_WAITER_SECONDS + 2)
        report = invoke(aws, deployed["reconciler_function_name"])
        assert report["queue_length"] == 1, report

    def admit() -> None:
        sfn.stop_execution(executionArn=holder, error="Test.Stop", cause="the slot is needed")
        assert wait_done(sfn, [holder], timeout=60)[holder]["status"] == "ABORTED"
        # Its Lambda runs on: the slot is handed over after its task's timeout, by the
        # event cleanup (a deadline within a minute) or by the first sweep after it.
        report = invoke(aws, deployed["reconciler_function_name"])
        if holder in report["kept"]:
            sweep_after(aws, deployed, report, holder)
        assert wait_done(sfn, [waiter], timeout=60)[waiter]["status"] == "SUCCEEDED"
        assert invoke(aws, deployed["reconciler_function_name"])["queue_length"] == 0

    try:
        prove_alarm(
            aws,
            inbox,
            deployed["alarms"]["oldest-waiter-age"]["name"],
            inject=keep_waiting,
            clear=admit,
        )
    finally:
        for arn in (holder, waiter):
            if sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
                sfn.stop_execution(executionArn=arn, error="Test.Cleanup", cause="test ended")
