"""Unit tests of the retry check (sfn_patterns_localstack.asl_retry).

The check over every definition the modules render is in
tests/terraform/test_iam_static.py (it reuses that file's plan of every module).
"""

from __future__ import annotations

import copy
import json

import pytest

from sfn_patterns_localstack.asl import render_tftpl
from sfn_patterns_localstack.asl_retry import LAMBDA_ERRORS, check
from sfn_patterns_localstack.terraform.workspace import REPO_ROOT

GOOD = {
    "ErrorEquals": [*LAMBDA_ERRORS, "Lambda.ClientExecutionTimeoutException"],
    "IntervalSeconds": 1,
    "MaxAttempts": 3,
    "BackoffRate": 2,
    "JitterStrategy": "FULL",
}
INVOKE = "arn:aws:states:::lambda:invoke"


def machine(*retriers: dict, resource: str = INVOKE) -> dict:
    task = {"Type": "Task", "Resource": resource, "End": True}
    if retriers:
        task["Retry"] = list(retriers)
    return {"StartAt": "T", "States": {"T": task}}


def problems(definition: dict) -> set[tuple[str, str]]:
    return {(f.error, f.problem.split(" (")[0]) for f in check("m", definition)}


def test_a_task_with_the_recommended_retrier_passes() -> None:
    assert check("m", machine(GOOD)) == []
    assert check("m", machine(GOOD, resource=INVOKE + ".waitForTaskToken")) == []


def test_a_task_without_retry_fails_for_each_error() -> None:
    assert problems(machine()) == {(e, "no retrier") for e in LAMBDA_ERRORS}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"JitterStrategy": "NONE"}, "its retrier has no full jitter"),
        ({"BackoffRate": 1}, "its retrier does not back off"),
        ({"MaxAttempts": 0}, "its retrier gives up at once"),
    ],
)
def test_a_retrier_without_backoff_jitter_or_attempts_fails(change: dict, problem: str) -> None:
    assert problems(machine({**GOOD, **change})) == {(e, problem) for e in LAMBDA_ERRORS}


def test_a_catch_all_retrier_first_hides_the_named_one() -> None:
    catch_all = {**GOOD, "ErrorEquals": ["States.TaskFailed"]}
    assert {p for _, p in problems(machine(catch_all, GOOD))} == {
        "first matched by ['States.TaskFailed'], which does not name it"
    }
    # The same retrier after the named one: fine (ASL wants States.ALL last anyway).
    assert check("m", machine(GOOD, {**catch_all, "ErrorEquals": ["States.ALL"]})) == []


def test_one_missing_name_is_found() -> None:
    partial = {**GOOD, "ErrorEquals": [e for e in GOOD["ErrorEquals"] if "SdkClient" not in e]}
    assert problems(machine(partial)) == {("Lambda.SdkClientException", "no retrier")}


def test_aws_sdk_and_dynamodb_tasks_need_their_throttling_errors() -> None:
    sdk = "arn:aws-us-gov:states:::aws-sdk:redshiftdata:describeStatement"
    names = ["RedshiftData.ThrottlingException", "RedshiftData.RedshiftDataException"]
    assert check("m", machine({**GOOD, "ErrorEquals": names}, resource=sdk)) == []
    assert problems(machine({**GOOD, "ErrorEquals": names[:1]}, resource=sdk)) == {
        ("RedshiftData.RedshiftDataException", "no retrier")
    }
    ddb = "arn:aws:states:::dynamodb:updateItem"
    assert {e for e, _ in problems(machine(resource=ddb))} == {
        "DynamoDB.ProvisionedThroughputExceededException",
        "DynamoDB.ThrottlingException",
        "DynamoDB.RequestLimitExceeded",
    }
    # An aws-sdk service the check knows no names for is a finding, not a pass.
    assert problems(machine(GOOD, resource="arn:aws:states:::aws-sdk:glue:startJobRun")) == {
        (
            "*",
            "no throttling error names known for this aws-sdk service: add them to "
            "sfn_patterns_localstack.asl_retry.THROTTLING",
        )
    }


def test_tasks_in_maps_and_parallel_branches_are_checked() -> None:
    inner = machine()
    definition = {
        "StartAt": "M",
        "States": {
            "M": {"Type": "Map", "ItemProcessor": copy.deepcopy(inner), "Next": "P"},
            "P": {"Type": "Parallel", "Branches": [copy.deepcopy(inner)], "End": True},
        },
    }
    assert {f.state for f in check("m", definition)} == {"M/T", "P[0]/T"}


def test_a_nested_execution_retries_a_throttled_start() -> None:
    sync = "arn:aws-cn:states:::states:startExecution.sync:2"
    assert {e for e, _ in problems(machine(resource=sync))} == {
        "StepFunctions.ThrottlingException",
        "StepFunctions.AWSStepFunctionsException",
    }
    names = ["StepFunctions.ThrottlingException", "StepFunctions.AWSStepFunctionsException"]
    assert check("m", machine({**GOOD, "ErrorEquals": names}, resource=sync)) == []


def test_other_integrations_need_nothing() -> None:
    assert check("m", machine(resource="arn:aws:states:::sns:publish")) == []


def test_the_smoke_template_retries_as_recommended() -> None:
    text = render_tftpl(
        REPO_ROOT / "templates/smoke/definition.asl.json.tftpl",
        {"function_arn": "arn:aws:lambda:us-east-1:000000000000:function:f", "partition": "aws"},
    )
    assert check("smoke", json.loads(text)) == []
