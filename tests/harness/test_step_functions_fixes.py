"""The harness's fixes to LocalStack 4.14.0 Step Functions, against the real service.

* StopExecution of an execution parked on a task token ends it ABORTED at once (plain
  4.14.0 leaves it RUNNING until the token's timeout, then FAILS it with States.Timeout).
* StopExecution ends an execution at once whatever it is doing: a running Lambda task,
  a Retry back-off, a Wait, a Map or Parallel, a ``.sync`` child (plain 4.14.0 leaves it
  RUNNING until the blocking call returns, and records what that call returned).
* A definition is parsed once, not once per execution (``sfn_parse_cache``), and its
  parsed program is shared safely by concurrent executions.
* JSONPath variables can be read (``$var``): a counter's reads, the Choice on it and
  an intrinsic function's argument, answered in Python (``sfn_variable_sample``); what
  4.14.0 still evaluates with JSONata runs on the Java 21 and the jars bootstrap
  installs offline.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sfn_patterns_localstack.roles import (
    allow,
    delete_role,
    events_to_queue_policy,
    function_logs_statements,
    service_role,
)

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
TAG = uuid.uuid4().hex[:8]
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sfn-fixes-{TAG}"  # the machines' role (``roles``)


def _arn(service: str, resource: str) -> str:
    return f"arn:aws:{service}:us-east-1:{ACCOUNT}:{resource}"


@pytest.fixture(scope="module", autouse=True)
def roles(aws: Callable) -> Iterator[None]:
    """The machines' and the slow function's roles: what their states and handler call."""
    iam = aws("iam")
    queues = [_arn("sqs", "tokens-*"), _arn("sqs", "stop-*")]
    service_role(
        iam,
        ROLE.rsplit("/", 1)[-1],
        "states",
        [
            allow("sqs:SendMessage", queues),
            allow("lambda:InvokeFunction", [_arn("lambda", "function:fix-slow-*")]),
            # startExecution.sync:2 of the child (stateMachine:fix-*), and its managed rule.
            allow("states:StartExecution", _arn("states", "stateMachine:fix-*")),
            allow(
                ["states:DescribeExecution", "states:StopExecution"],
                _arn("states", "execution:fix-*:*"),
            ),
            allow(
                ["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                _arn("events", "rule/StepFunctionsGetEventsForStepFunctionsExecutionRule"),
            ),
            # The aws-sdk error-name test's Task (DescribeStatement has no resource type).
            allow("redshift-data:DescribeStatement", "*"),
        ],
    )
    service_role(
        iam,
        f"fix-slow-{TAG}",
        "lambda",
        [*function_logs_statements(["fix-slow-*"]), allow("sqs:SendMessage", queues)],
    )
    yield
    delete_role(iam, ROLE.rsplit("/", 1)[-1])
    delete_role(iam, f"fix-slow-{TAG}")


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


# A Lambda that says it has started (on the queue in its event, with its task token if
# it has one), then holds for ``seconds`` and returns or fails.
SLOW_HANDLER = """
import json, time, boto3
def handler(event, context):
    if event.get("queue"):
        boto3.client("sqs").send_message(
            QueueUrl=event["queue"],
            MessageBody=json.dumps({"case": event["case"], "token": event.get("token")}),
        )
    time.sleep(event.get("seconds", 0))
    if event.get("fail"):
        raise RuntimeError("failed on purpose")
    return {"slept": event.get("seconds", 0)}
"""
HOLD = 15  # seconds each blocking call takes when nobody stops it


@pytest.fixture(scope="module")
def slow_function(aws: Callable) -> str:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("app.py", SLOW_HANDLER)
    name = f"fix-slow-{uuid.uuid4().hex[:8]}"
    client = aws("lambda")
    client.create_function(
        FunctionName=name,
        Runtime="python3.11",
        Role=f"arn:aws:iam::{ACCOUNT}:role/fix-slow-{TAG}",
        Handler="app.handler",
        Code={"ZipFile": archive.getvalue()},
        Timeout=60,
    )
    client.get_waiter("function_active_v2").wait(FunctionName=name)
    yield name
    client.delete_function(FunctionName=name)


def _blocking_states(function: str, started: str, child: str) -> dict[str, tuple[dict, str]]:
    """Per case: the state that blocks when the stop comes, and how the test sees it blocked."""

    def invoke(case: str, **extra: Any) -> dict:
        payload = {"case": case, "queue": started, "seconds": HOLD, **extra}
        return {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": function, "Payload": payload},
        }

    return {
        "lambda": (invoke("lambda"), "message"),
        "token": (
            {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
                "Parameters": {
                    "FunctionName": function,
                    "Payload": {
                        "case": "token",
                        "queue": started,
                        "seconds": HOLD,
                        "token.$": "$$.Task.Token",
                    },
                },
                "TimeoutSeconds": 60,
            },
            "message",
        ),
        "retry": (
            {
                **invoke("retry", seconds=0, fail=True),
                "Retry": [
                    {"ErrorEquals": ["States.ALL"], "IntervalSeconds": HOLD, "MaxAttempts": 1}
                ],
            },
            "TaskFailed",
        ),
        "wait": ({"Type": "Wait", "Seconds": HOLD}, "WaitStateEntered"),
        "map": (
            {
                "Type": "Map",
                "ItemsPath": "$.items",
                "ItemProcessor": {
                    "StartAt": "Work",
                    "States": {"Work": {**invoke("map"), "End": True}},
                },
            },
            "message",
        ),
        "parallel": (
            {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": "Work", "States": {"Work": {**invoke("parallel"), "End": True}}},
                    {
                        "StartAt": "Hold",
                        "States": {"Hold": {"Type": "Wait", "Seconds": HOLD, "End": True}},
                    },
                ],
            },
            "message",
        ),
        "sync": (
            {
                "Type": "Task",
                "Resource": "arn:aws:states:::states:startExecution.sync:2",
                "Parameters": {"StateMachineArn": child, "Input": {}},
            },
            "TaskSubmitted",
        ),
    }


def _history(sfn: Any, execution: str) -> list[dict]:
    return sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]


def _stop_when_blocked(
    sfn: Any,
    sqs: Any,
    started: str,
    pending: dict[str, tuple[str, str]],
    stop: Callable[[str, str], None],
) -> dict:
    """Call ``stop(case, arn)`` as soon as each execution in ``pending`` (case: (arn, sign))
    shows its sign.

    Each case is stopped the moment it is seen blocked, not once all are: on a loaded
    runner the slowest case (a Lambda cold start) can take longer to block than the
    fastest one (a Wait) blocks for. Returns the Lambdas' start messages by case (the
    token case's carries its token).
    """
    bodies: dict[str, dict] = {}
    deadline = time.monotonic() + 60
    while pending and time.monotonic() < deadline:
        blocked: set[str] = set()  # a Map's items each send a message
        for message in sqs.receive_message(
            QueueUrl=started, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", []):
            body = json.loads(message["Body"])
            bodies[body["case"]] = body
            if pending.get(body["case"], ("", ""))[1] == "message":
                blocked.add(body["case"])
        for case, (execution, sign) in pending.items():
            if sign != "message" and any(e["type"] == sign for e in _history(sfn, execution)):
                blocked.add(case)
        for case in blocked:
            stop(case, pending.pop(case)[0])
        time.sleep(0.2)
    assert not pending, f"never blocked: {sorted(pending)}"
    return bodies


def _aborted_events(sqs: Any, queue: str, expected: int) -> list[str]:
    """Execution ARNs of the ABORTED status-change events delivered to ``queue``."""
    arns: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        messages = sqs.receive_message(
            QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1
        ).get("Messages", [])
        arns += [json.loads(m["Body"])["detail"]["executionArn"] for m in messages]
        if len(arns) >= expected and not messages:  # and one quiet second for duplicates
            break
    return arns


def _machines(aws: Callable, function: str, queues: dict[str, str]) -> dict[str, str]:
    """One machine per case: its blocking state, then ``After`` (an SQS send)."""
    child = machine(
        aws, {"StartAt": "Hold", "States": {"Hold": {"Type": "Wait", "Seconds": HOLD, "End": True}}}
    )
    after = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sqs:sendMessage",
        "Parameters": {"QueueUrl": queues["after"], "MessageBody": {"case.$": "$$.Execution.Name"}},
        "End": True,
    }
    return {
        case: machine(
            aws,
            {
                "StartAt": "Block",
                "States": {
                    # A Wait state has no ResultPath (asl-validator refuses one).
                    "Block": {
                        **state,
                        **({} if state["Type"] == "Wait" else {"ResultPath": None}),
                        "Next": "After",
                    },
                    "After": after,
                },
            },
        )
        for case, (state, _) in _blocking_states(function, queues["started"], child).items()
    }


def test_stopping_an_execution_ends_it_at_once_whatever_it_is_doing(
    aws: Callable, slow_function: str
) -> None:
    """ABORTED when StopExecution returns, and nothing after: no event, no next state.

    Each case's machine blocks in one kind of state, then would enter ``After`` (an SQS
    send). Oracles: the status and history read right after StopExecution, the same
    history once the blocking call has had time to return, the ``after`` queue (empty),
    the status-change events EventBridge delivered (one ABORTED each), and a late
    SendTaskSuccess to the token of the stopped callback task.
    """
    sfn, sqs, events = aws("stepfunctions"), aws("sqs"), aws("events")
    tag = uuid.uuid4().hex[:8]
    queues = {
        name: sqs.create_queue(QueueName=f"stop-{name}-{tag}")["QueueUrl"]
        for name in ("started", "after", "changes")
    }
    arns = _machines(aws, slow_function, queues)
    rule = f"stop-changes-{tag}"
    events.put_rule(
        Name=rule,
        EventPattern=json.dumps(
            {
                "source": ["aws.states"],
                "detail-type": ["Step Functions Execution Status Change"],
                "detail": {"status": ["ABORTED"], "stateMachineArn": list(arns.values())},
            }
        ),
    )
    changes_arn = sqs.get_queue_attributes(QueueUrl=queues["changes"], AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    sqs.set_queue_attributes(
        QueueUrl=queues["changes"],
        Attributes={
            "Policy": events_to_queue_policy(changes_arn, [events.describe_rule(Name=rule)["Arn"]])
        },
    )
    events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": changes_arn}])
    signs = {case: sign for case, (_, sign) in _blocking_states("f", "q", "c").items()}
    executions = {
        case: sfn.start_execution(
            stateMachineArn=arn, name=f"{case}-{tag}", input=json.dumps({"items": [1, 2]})
        )["executionArn"]
        for case, arn in arns.items()
    }
    at_stop: dict[str, list[str]] = {}

    def stop(case: str, execution: str) -> None:
        sfn.stop_execution(executionArn=execution, error="Stopped", cause=case)
        described = sfn.describe_execution(executionArn=execution)
        at_stop[case] = [e["type"] for e in _history(sfn, execution)]
        assert (described["status"], at_stop[case][-1]) == ("ABORTED", "ExecutionAborted"), case
        assert "stopDate" in described

    started = _stop_when_blocked(
        sfn, sqs, queues["started"], {c: (e, signs[c]) for c, e in executions.items()}, stop
    )

    time.sleep(HOLD + 3)  # every blocking call has returned by now
    for case, execution in executions.items():
        assert [e["type"] for e in _history(sfn, execution)] == at_stop[case], case
        assert sfn.describe_execution(executionArn=execution)["status"] == "ABORTED", case
    assert sqs.receive_message(QueueUrl=queues["after"], WaitTimeSeconds=1).get("Messages") is None
    with pytest.raises(sfn.exceptions.ClientError, match=r"InvalidToken|TaskTimedOut"):
        sfn.send_task_success(taskToken=started["token"]["token"], output="{}")
    delivered = _aborted_events(sqs, queues["changes"], len(executions))
    assert sorted(delivered) == sorted(executions.values())  # one ABORTED event each
    events.remove_targets(Rule=rule, Ids=["queue"])
    events.delete_rule(Name=rule)


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


def test_a_token_task_submitted_after_its_timeout_records_nothing_more(
    aws: Callable, slow_function: str
) -> None:
    """fixes.sfn_task_timeout, on a real execution: the invoke that stores the token
    returns after the state's TimeoutSeconds (a cold or loaded Lambda). On AWS the state
    has timed out and that is all; plain 4.14.0 then records TaskSubmitted, waits on the
    token again, and records TaskSucceeded when a SendTaskSuccess comes, after the
    Catch has moved the execution on.
    """
    sqs = aws("sqs")
    queue = sqs.create_queue(QueueName=f"tokens-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    park = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": slow_function,
            "Payload": {"case": "late", "queue": queue, "seconds": 3, "token.$": "$$.Task.Token"},
        },
        "TimeoutSeconds": 1,
        "Catch": [{"ErrorEquals": ["States.Timeout"], "Next": "Later"}],
        "End": True,
    }
    later = {"Type": "Wait", "Seconds": 5, "End": True}
    arn = machine(aws, {"StartAt": "Park", "States": {"Park": park, "Later": later}})
    sfn = aws("stepfunctions")
    execution = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    token = json.loads(
        sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"][0]["Body"]
    )["token"]
    time.sleep(3.5)  # the invoke has returned (3 s), the Wait runs until about 6 s
    with contextlib.suppress(sfn.exceptions.TaskTimedOut):  # AWS's answer; 4.14.0 accepts it
        sfn.send_task_success(taskToken=token, output='{"late": true}')
    assert wait_done(sfn, execution)["status"] == "SUCCEEDED"
    types = [e["type"] for e in sfn.get_execution_history(executionArn=execution)["events"]]
    timed_out = types.index("TaskTimedOut")
    assert "TaskSucceeded" not in types
    assert "TaskSubmitted" not in types[timed_out:], types


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
    described = wait_done(sfn, execution, timeout=60)
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


def test_an_aws_sdk_error_is_named_after_its_error_code(
    aws: Callable, localstack_endpoint: str
) -> None:
    """AWS names an aws-sdk Task's error ``<Service>.<ErrorCode>``, modelled or not.

    The Redshift Data API's botocore model lists no ThrottlingException; 4.14.0 names
    it ``RedshiftData.RedshiftDataException``, which no Retry written for AWS matches.
    """
    from sfn_patterns_localstack.emulation.faults import client as faults

    arn = machine(
        aws,
        {
            "StartAt": "Describe",
            "States": {
                "Describe": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::aws-sdk:redshiftdata:describeStatement",
                    "Parameters": {"Id": str(uuid.uuid4())},
                    "Catch": [
                        {
                            "ErrorEquals": ["RedshiftData.ThrottlingException"],
                            "ResultPath": "$.caught",
                            "Next": "Caught",
                        }
                    ],
                    "End": True,
                },
                "Caught": {"Type": "Pass", "End": True},
            },
        },
    )
    with faults.applied(
        localstack_endpoint,
        {
            "seed": 1,
            "faults": [
                {
                    "service": "redshift-data",
                    "operation": "DescribeStatement",
                    "kind": "throttle",
                    "first": 1,
                }
            ],
        },
    ):
        sfn = aws("stepfunctions")
        described = wait_done(sfn, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"])["caught"]["Error"] == "RedshiftData.ThrottlingException"
