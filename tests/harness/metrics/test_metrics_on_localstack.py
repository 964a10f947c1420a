"""On LocalStack: the metrics AWS publishes reach CloudWatch, and an alarm on them fires,
notifies SNS (read here through an SQS subscription) and recovers.

Oracles: the alarm's own StateUpdatedTimestamp and history, the SNS notification's
body (the shape AWS documents), and the metric data read back with GetMetricData;
never the harness's code.
"""

from __future__ import annotations

import datetime
import io
import json
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator

import pytest

from tests.alarm_check import PERIOD, Inbox, prove_alarm

pytestmark = pytest.mark.integration

HANDLER = """
import json, time
def handler(event, context):
    print(json.dumps({
        "_aws": {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [{
            "Namespace": "sfnp-test", "Dimensions": [["Module"]],
            "Metrics": [{"Name": "Widgets", "Unit": "Count"}]}]},
        "Module": event.get("module", "m1"), "Widgets": event.get("widgets", 1)}))
    if event.get("fail"):
        raise RuntimeError("asked to fail")
    return "ok"
"""


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def names() -> str:
    return f"sfnp-metrics-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def function(aws: Callable, names: str) -> str:
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "lambda.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    role = aws("iam").create_role(RoleName=names, AssumeRolePolicyDocument=json.dumps(trust))
    logs = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": f"arn:aws:logs:*:*:log-group:/aws/lambda/{names}*",
            }
        ],
    }
    aws("iam").put_role_policy(RoleName=names, PolicyName="logs", PolicyDocument=json.dumps(logs))
    client = aws("lambda")
    client.create_function(
        FunctionName=names,
        Runtime="python3.12",
        Role=role["Role"]["Arn"],
        Handler="app.handler",
        Code={"ZipFile": _zip(HANDLER)},
        Timeout=10,
    )
    client.get_waiter("function_active_v2").wait(FunctionName=names)
    yield names
    client.delete_function(FunctionName=names)
    aws("iam").delete_role_policy(RoleName=names, PolicyName="logs")
    aws("iam").delete_role(RoleName=names)


@pytest.fixture(scope="module")
def inbox(aws: Callable, names: str) -> Inbox:
    """An SNS topic and the SQS queue subscribed to it (with the queue policy it needs)."""
    created = Inbox.create(aws, names)
    yield created
    created.delete()


def _datapoints(aws: Callable, namespace: str, name: str, dims: dict, stat: str) -> list[float]:
    now = datetime.datetime.now(datetime.UTC)
    result = aws("cloudwatch").get_metric_data(
        MetricDataQueries=[
            {
                "Id": "m",
                "MetricStat": {
                    "Metric": {
                        "Namespace": namespace,
                        "MetricName": name,
                        "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
                    },
                    "Period": 300,
                    "Stat": stat,
                },
            }
        ],
        StartTime=now - datetime.timedelta(minutes=5),
        EndTime=now + datetime.timedelta(minutes=1),
    )
    return result["MetricDataResults"][0]["Values"]


def _wait_for(probe: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"no {what} within {timeout:.0f} s")


def test_lambda_metrics_and_emf_reach_cloudwatch(aws: Callable, function: str) -> None:
    aws("lambda").invoke(FunctionName=function, Payload=json.dumps({"widgets": 3}))
    dims = {"FunctionName": function}
    _wait_for(lambda: _datapoints(aws, "AWS/Lambda", "Duration", dims, "Maximum"), 10, "Duration")
    assert _datapoints(aws, "AWS/Lambda", "Invocations", dims, "Sum") == [1.0]
    assert _datapoints(aws, "AWS/Lambda", "Errors", dims, "Sum") == []
    # The EMF line the handler printed is a metric under its own namespace and dimension.
    assert _datapoints(aws, "sfnp-test", "Widgets", {"Module": "m1"}, "Sum") == [3.0]
    # A dimension value is matched whole: a prefix of the function's name finds nothing.
    assert (
        _datapoints(aws, "AWS/Lambda", "Invocations", {"FunctionName": function[:-1]}, "Sum") == []
    )


def test_step_functions_execution_metrics(aws: Callable, names: str) -> None:
    sfn = aws("stepfunctions")
    role = f"arn:aws:iam::000000000000:role/{names}"
    definitions = {
        "ok": {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "End": True}}},
        "fail": {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "c"}}},
    }
    arns, executions = {}, []
    for kind, definition in definitions.items():  # both run at once
        arn = sfn.create_state_machine(
            name=f"{names}-{kind}", definition=json.dumps(definition), roleArn=role
        )["stateMachineArn"]
        arns[kind] = arn
        executions.append(sfn.start_execution(stateMachineArn=arn)["executionArn"])
    for execution in executions:
        _wait_for(
            lambda e=execution: sfn.describe_execution(executionArn=e)["status"] != "RUNNING",
            30,
            "execution end",
        )
    ok, fail = {"StateMachineArn": arns["ok"]}, {"StateMachineArn": arns["fail"]}
    _wait_for(lambda: _datapoints(aws, "AWS/States", "ExecutionsFailed", fail, "Sum"), 10, "metric")
    assert _datapoints(aws, "AWS/States", "ExecutionsStarted", fail, "Sum") == [1.0]
    assert _datapoints(aws, "AWS/States", "ExecutionsSucceeded", fail, "Sum") == []
    _wait_for(
        lambda: _datapoints(aws, "AWS/States", "ExecutionsSucceeded", ok, "Sum"), 10, "metric"
    )
    assert _datapoints(aws, "AWS/States", "ExecutionsFailed", ok, "Sum") == []
    # The Wait state's second is in the run time (the history's own timestamps bound it).
    (elapsed,) = _datapoints(aws, "AWS/States", "ExecutionTime", ok, "Maximum")
    assert elapsed >= 1000.0
    for arn in arns.values():
        sfn.delete_state_machine(stateMachineArn=arn)


@pytest.fixture(scope="module", autouse=True)
def waiting_message(aws: Callable, names: str) -> Iterator[float]:
    """A queue holding one message, sent before this module's first test.

    Why here: the age test needs the message to have waited through two gauge reports
    (11 s); sent first, it ages while the tests before that one run.
    """
    url = aws("sqs").create_queue(QueueName=f"{names}-age")["QueueUrl"]
    sent = time.time()
    aws("sqs").send_message(QueueUrl=url, MessageBody="waiting")
    yield sent
    aws("sqs").delete_queue(QueueUrl=url)


def test_age_of_the_oldest_message(aws: Callable, names: str, waiting_message: float) -> None:
    sent = waiting_message
    dims = {"QueueName": f"{names}-age"}
    # The gauges come every 5 s (server.ENVIRONMENT): two reports, ages growing.
    time.sleep(max(0.0, sent + 11 - time.time()))
    ages = _datapoints(aws, "AWS/SQS", "ApproximateAgeOfOldestMessage", dims, "Maximum")
    assert ages and 4.0 <= max(ages) <= time.time() - sent + 1
    # One message all along; the reports may straddle a 300-s bucket's edge (two values).
    visible = _datapoints(aws, "AWS/SQS", "ApproximateNumberOfMessagesVisible", dims, "Maximum")
    assert visible and set(visible) == {1.0}, visible


def test_an_alarm_fires_notifies_and_recovers(aws: Callable, function: str, inbox: Inbox) -> None:
    cloudwatch = aws("cloudwatch")
    alarm = f"{function}-errors"
    cloudwatch.put_metric_alarm(
        AlarmName=alarm,
        Namespace="AWS/Lambda",
        MetricName="Errors",
        Dimensions=[{"Name": "FunctionName", "Value": function}],
        Statistic="Sum",
        Period=PERIOD,
        EvaluationPeriods=1,
        Threshold=0,
        ComparisonOperator="GreaterThanThreshold",
        TreatMissingData="notBreaching",
        AlarmActions=[inbox.topic_arn],
        OKActions=[inbox.topic_arn],
    )
    try:
        # OK first (no errors yet: missing data is not breaching), then one error.
        prove_alarm(
            aws,
            inbox,
            alarm,
            inject=lambda: aws("lambda").invoke(
                FunctionName=function, Payload=json.dumps({"fail": True})
            ),
            clear=lambda: None,  # no more errors: the datum ages out, back to OK
            period=PERIOD,
        )
    finally:
        cloudwatch.delete_alarms(AlarmNames=[alarm])


def test_alarm_tags_are_kept_as_tags_not_inside_the_alarm(aws: Callable, names: str) -> None:
    # LocalStack kept PutMetricAlarm's Tags inside the alarm: ListTagsForResource saw
    # none, and DescribeAlarms over CBOR (the Terraform provider's protocol) failed.
    cloudwatch = aws("cloudwatch")
    alarm = f"{names}-tagged"
    cloudwatch.put_metric_alarm(
        AlarmName=alarm,
        Namespace="AWS/Lambda",
        MetricName="Errors",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=0,
        ComparisonOperator="GreaterThanThreshold",
        Tags=[{"Key": "team", "Value": "orders"}],
    )
    try:
        (found,) = cloudwatch.describe_alarms(AlarmNames=[alarm])["MetricAlarms"]
        tags = cloudwatch.list_tags_for_resource(ResourceARN=found["AlarmArn"])["Tags"]
        assert tags == [{"Key": "team", "Value": "orders"}]
    finally:
        cloudwatch.delete_alarms(AlarmNames=[alarm])
