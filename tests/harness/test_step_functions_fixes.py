"""The harness's fixes to LocalStack 4.9.2 Step Functions, against the real service.

* StopExecution of an execution parked on a task token ends it ABORTED at once (plain
  4.9.2 leaves it RUNNING until the token's timeout, then FAILS it with States.Timeout).
* A definition is parsed once, not once per execution (``sfn_parse_cache``), and its
  parsed program is shared safely by concurrent executions.
* JSONPath variables can be read (``$var``): bootstrap installs Java 21 and the JSONata
  jars offline, and the harness links them into LocalStack.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::000000000000:role/sfn-test"


def machine(aws: Callable, definition: dict) -> str:
    return aws("stepfunctions").create_state_machine(
        name=f"fix-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]


def wait_done(sfn: object, arn: str, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(0.1)


@pytest.mark.parametrize("timeouts", [{"TimeoutSeconds": 30}, {"HeartbeatSeconds": 20}, {}])
def test_stopping_an_execution_parked_on_a_token_aborts_it_at_once(
    aws: Callable, timeouts: dict
) -> None:
    sqs = aws("sqs")
    queue = sqs.create_queue(QueueName=f"tokens-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    arn = machine(
        aws,
        {
            "StartAt": "Park",
            "States": {
                "Park": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                    "Parameters": {"QueueUrl": queue, "MessageBody": {"token.$": "$$.Task.Token"}},
                    **timeouts,
                    "End": True,
                }
            },
        },
    )
    sfn = aws("stepfunctions")
    execution = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    message = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"][0]
    token = json.loads(message["Body"])["token"]  # it is parked now
    stopped_at = time.monotonic()
    sfn.stop_execution(executionArn=execution, error="Stopped", cause="test")
    described = wait_done(sfn, execution, timeout=10)
    assert described["status"] == "ABORTED"
    assert time.monotonic() - stopped_at < 10  # unfixed: RUNNING until the token times out
    events = [e["type"] for e in sfn.get_execution_history(executionArn=execution)["events"]]
    assert events[-1] == "ExecutionAborted"
    assert "TaskTimedOut" not in events
    with pytest.raises(sfn.exceptions.ClientError, match=r"InvalidToken|TaskTimedOut"):
        sfn.send_task_success(taskToken=token, output="{}")


def test_a_parked_task_still_resumes_and_times_out_as_before(aws: Callable) -> None:
    sqs = aws("sqs")
    queue = sqs.create_queue(QueueName=f"tokens-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    park = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": queue, "MessageBody": {"token.$": "$$.Task.Token"}},
        "TimeoutSeconds": 2,
        "End": True,
    }
    arn = machine(aws, {"StartAt": "Park", "States": {"Park": park}})
    sfn = aws("stepfunctions")
    resumed = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    token = json.loads(
        sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"][0]["Body"]
    )
    sfn.send_task_success(taskToken=token["token"], output='{"ok": 1}')
    assert json.loads(wait_done(sfn, resumed)["output"]) == {"ok": 1}
    timed_out = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    described = wait_done(sfn, timed_out)
    assert described["status"] == "FAILED"
    assert described.get("error") == "States.Timeout"


def test_workflow_variables_can_be_read(aws: Callable) -> None:
    arn = machine(
        aws,
        {
            "QueryLanguage": "JSONPath",
            "StartAt": "Init",
            "States": {
                "Init": {"Type": "Pass", "Assign": {"count": 0}, "Next": "Inc"},
                "Inc": {
                    "Type": "Pass",
                    "Assign": {"count.$": "States.MathAdd($count, 1)"},
                    "Next": "Check",
                },
                "Check": {
                    "Type": "Choice",
                    "Choices": [{"Variable": "$count", "NumericEquals": 1, "Next": "Read"}],
                    "Default": "Wrong",
                },
                "Read": {"Type": "Pass", "Parameters": {"seen.$": "$count"}, "End": True},
                "Wrong": {"Type": "Fail", "Error": "VariableNotRead"},
            },
        },
    )
    sfn = aws("stepfunctions")
    execution = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    described = wait_done(sfn, execution, timeout=60)  # the first read starts the JVM
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"]) == {"seen": 1}


def test_executions_sharing_one_parsed_definition_keep_their_own_data(aws: Callable) -> None:
    """The parse cache shares one program and its JSONPaths between executions.

    Twelve executions of one machine run at once, each through Parameters, a Map
    with concurrent iterations, ResultPath and OutputPath; each output must be
    built from its own input only (the oracle is the input, not the machine).
    """
    arn = machine(
        aws,
        {
            "StartAt": "Shape",
            "States": {
                "Shape": {
                    "Type": "Pass",
                    "Parameters": {"id.$": "$.id", "items.$": "$.items"},
                    "Next": "Each",
                },
                "Each": {
                    "Type": "Map",
                    "ItemsPath": "$.items",
                    "MaxConcurrency": 4,
                    "ItemSelector": {"owner.$": "$.id", "value.$": "$$.Map.Item.Value"},
                    "ItemProcessor": {
                        "StartAt": "Wait",
                        "States": {
                            "Wait": {"Type": "Wait", "Seconds": 1, "Next": "Tag"},
                            "Tag": {
                                "Type": "Pass",
                                "Parameters": {"owner.$": "$.owner", "value.$": "$.value"},
                                "End": True,
                            },
                        },
                    },
                    "ResultPath": "$.tagged",
                    "OutputPath": "$.tagged",
                    "End": True,
                },
            },
        },
    )
    sfn = aws("stepfunctions")
    inputs = {f"run-{i}": [f"run-{i}-item-{j}" for j in range(i % 4 + 2)] for i in range(12)}
    executions = {
        run: sfn.start_execution(
            stateMachineArn=arn, input=json.dumps({"id": run, "items": items})
        )["executionArn"]
        for run, items in inputs.items()
    }
    for run, execution in executions.items():
        described = wait_done(sfn, execution, timeout=60)
        assert described["status"] == "SUCCEEDED", described
        assert json.loads(described["output"]) == [
            {"owner": run, "value": item} for item in inputs[run]
        ]


def test_a_definition_that_does_not_parse_is_refused_every_time(aws: Callable) -> None:
    """Only parsed programs are cached: a broken definition fails on each attempt."""
    sfn = aws("stepfunctions")
    broken = json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "Nxt": "B"}}})
    for _ in range(2):
        with pytest.raises(sfn.exceptions.InvalidDefinition):
            sfn.create_state_machine(
                name=f"fix-{uuid.uuid4().hex[:8]}", definition=broken, roleArn=ROLE
            )
