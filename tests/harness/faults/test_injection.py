"""Each fault kind fires on LocalStack, through real clients, and only for matching calls.

Every test loads its plan through the route (``/_sfnp/faults``) and clears it in a
fixture's teardown, so the other tests of the session's LocalStack run fault-free.
Clients retry nothing (``total_max_attempts=1``): the tests see each answer.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from click.testing import CliRunner

from sfn_patterns_localstack.commands import localstack_group
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.faults.plan import PlanError
from sfn_patterns_localstack.roles import allow, events_to_queue_policy, function_role, service_role

pytestmark = pytest.mark.integration
NO_RETRIES = Config(retries={"total_max_attempts": 1, "mode": "standard"})


@pytest.fixture
def plan(localstack_endpoint: str) -> Iterator[Callable[..., None]]:
    """Load ``plan(*faults, seed=...)`` for this test; cleared however the test ends."""

    def load(*fault_list: dict[str, Any], seed: int = 1) -> None:
        faults.set_plan(localstack_endpoint, {"seed": seed, "faults": list(fault_list)})

    try:
        yield load
    finally:
        faults.clear(localstack_endpoint)


@pytest.fixture
def raw(localstack_endpoint: str) -> Callable[..., Any]:
    """boto3 clients that do not retry."""

    def make(service: str, **kwargs: Any) -> Any:
        options = {
            "endpoint_url": localstack_endpoint,
            "region_name": "us-east-1",
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
            "config": NO_RETRIES,
        }
        options.update(kwargs)
        return boto3.client(service, **options)

    return make


def _error(call: Callable[[], Any]) -> tuple[str, int]:
    with pytest.raises(ClientError) as raised:
        call()
    error = raised.value.response
    return error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def tables(aws: Callable) -> Iterator[Callable[[], str]]:
    dynamodb = aws("dynamodb")
    made: list[str] = []

    def make() -> str:
        name = _name("faults")
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        made.append(name)
        return name

    yield make
    for name in made:
        dynamodb.delete_table(TableName=name)


def test_a_bad_plan_is_refused_naming_the_field(localstack_endpoint: str) -> None:
    with pytest.raises(PlanError, match=r"faults\[0\]\.probability: must be between"):
        faults.set_plan(
            localstack_endpoint,
            {
                "seed": 1,
                "faults": [
                    {"service": "sqs", "operation": "*", "kind": "throttle", "probability": 2}
                ],
            },
        )
    assert faults.state(localstack_endpoint)["plan"] is None


def test_throttled_put_item_is_provisioned_throughput_exceeded(plan, raw, tables) -> None:
    table, other = tables(), tables()
    dynamodb = raw("dynamodb")
    plan(
        {
            "service": "dynamodb",
            "operation": "PutItem",
            "kind": "throttle",
            "resource": table,
            "first": 2,
        }
    )

    def put(name: str, value: str) -> Any:
        return dynamodb.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": value}})

    assert _error(lambda: put(table, "first")) == ("ProvisionedThroughputExceededException", 400)
    put(other, "other table")  # another resource: not throttled, and not counted
    assert dynamodb.get_item(TableName=table, Key={"pk": {"S": "k"}}).get("Item") is None
    assert _error(lambda: put(table, "second")) == ("ProvisionedThroughputExceededException", 400)
    put(table, "third")  # first=2: the third goes through
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": "k"}})["Item"]
    assert item["v"] == {"S": "third"}


def test_a_transaction_conflict_refuses_writes_and_transactions_only(plan, raw, tables) -> None:
    """What DynamoDB answers a call that meets a transaction on its item; reads pass."""
    table = tables()
    dynamodb = raw("dynamodb")
    conflict = {"service": "dynamodb", "operation": "*", "kind": "transaction_conflict"}
    plan({**conflict, "resource": table})
    key = {"pk": {"S": "k"}}
    put = {"Put": {"TableName": table, "Item": {**key, "v": {"S": "t"}}}}
    check = {
        "ConditionCheck": {
            "TableName": table,
            "Key": {"pk": {"S": "other"}},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }
    assert _error(lambda: dynamodb.put_item(TableName=table, Item=key)) == (
        "TransactionConflictException",
        400,
    )
    with pytest.raises(ClientError) as raised:
        dynamodb.transact_write_items(TransactItems=[put, check])
    answer = raised.value.response
    assert answer["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in answer["CancellationReasons"]] == ["TransactionConflict", "None"]
    # Nothing was written, and a plain read is answered (it sees the last commit).
    assert "Item" not in dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)
    # The runtime's clients send a conflicted call again (sfn_patterns.clients):
    # with the conflict gone after the first two calls, both writes go through.
    from sfn_patterns import clients

    plan({**conflict, "resource": table, "first": 2})
    runtime = clients.client(
        "dynamodb",
        endpoint_url=dynamodb.meta.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    runtime.put_item(TableName=table, Item=key)
    runtime.transact_write_items(TransactItems=[put, check])
    item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    assert item["v"] == {"S": "t"}


def test_answer_lost_takes_effect_and_answers_500(plan, raw, tables) -> None:
    """The write lands; its caller sees InternalServerError, and a retry is a duplicate."""
    table = tables()
    dynamodb = raw("dynamodb")
    plan(
        {
            "service": "dynamodb",
            "operation": "PutItem",
            "kind": "answer_lost",
            "resource": table,
            "first": 1,
        }
    )

    def put() -> Any:
        return dynamodb.put_item(
            TableName=table,
            Item={"pk": {"S": "k"}},
            ConditionExpression="attribute_not_exists(pk)",
        )

    assert _error(put) == ("InternalServerError", 500)
    assert dynamodb.get_item(TableName=table, Key={"pk": {"S": "k"}}).get("Item") is not None
    # The SDK's retry of the same conditional write meets its own first attempt.
    assert _error(put) == ("ConditionalCheckFailedException", 400)


def test_internal_error_and_unavailable_are_5xx(plan, raw, tables) -> None:
    table = tables()
    dynamodb = raw("dynamodb")
    plan(
        {
            "service": "dynamodb",
            "operation": "DescribeTable",
            "kind": "internal_error",
            "resource": table,
            "first": 1,
        },
        {
            "service": "dynamodb",
            "operation": "DescribeTable",
            "kind": "unavailable",
            "resource": table,
            "first": 2,
        },
    )
    describe = lambda: dynamodb.describe_table(TableName=table)  # noqa: E731
    assert _error(describe) == ("InternalServerError", 500)
    assert _error(describe) == ("ServiceUnavailable", 503)  # fault 0 spent: fault 1's 2nd call
    assert describe()["Table"]["TableName"] == table


def test_latency_is_added_to_matching_calls_only(plan, raw, tables) -> None:
    table, other = tables(), tables()
    dynamodb = raw("dynamodb")
    plan(
        {
            "service": "dynamodb",
            "operation": "DescribeTable",
            "kind": "latency",
            "seconds": 3,
            "resource": table,
        }
    )

    def timed(name: str) -> float:
        started = time.monotonic()
        dynamodb.describe_table(TableName=name)
        return time.monotonic() - started

    assert timed(table) >= 3.0
    assert timed(other) < 2.5


@pytest.fixture(scope="module")
def machine(aws: Callable) -> Iterator[str]:
    """A state machine that waits 3 s."""
    sfn = aws("stepfunctions")
    definition = {
        "StartAt": "Wait",
        "States": {"Wait": {"Type": "Wait", "Seconds": 3, "End": True}},
    }
    arn = sfn.create_state_machine(
        name=_name("faults"),
        definition=json.dumps(definition),
        roleArn="arn:aws:iam::000000000000:role/faults-test",
    )["stateMachineArn"]
    yield arn
    sfn.delete_state_machine(stateMachineArn=arn)


def _wait_stopped(sfn: Any, arn: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.5)
    raise AssertionError(f"{arn} still running after {timeout} s")


def test_start_execution_throttled_starts_nothing(plan, raw, machine) -> None:
    sfn = raw("stepfunctions")
    plan(
        {
            "service": "stepfunctions",
            "operation": "StartExecution",
            "kind": "throttle",
            "resource": machine,
            "first": 1,
        }
    )
    name = _name("run")
    start = lambda: sfn.start_execution(stateMachineArn=machine, name=name)  # noqa: E731
    assert _error(start) == ("ThrottlingException", 400)
    listed = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert name not in [e["name"] for e in listed]
    arn = start()["executionArn"]  # the retry with the same name starts it, once
    assert arn.endswith(f":{name}")


def test_stale_list_executions(plan, raw, machine) -> None:
    sfn = raw("stepfunctions")
    old = sfn.start_execution(stateMachineArn=machine, name=_name("old"))["executionArn"]
    described = _wait_stopped(sfn, old)
    assert described["status"] == "SUCCEEDED"
    new = sfn.start_execution(stateMachineArn=machine, name=_name("new"))["executionArn"]
    # A view from 1 s after "old" started: it was running, "new" did not exist.
    then = described["startDate"] + datetime.timedelta(seconds=1)
    age = (datetime.datetime.now(datetime.UTC) - then).total_seconds()
    plan(
        {
            "service": "stepfunctions",
            "operation": "ListExecutions",
            "kind": "stale_list",
            "seconds": age,
            "resource": machine,
        }
    )
    listed = sfn.list_executions(stateMachineArn=machine)["executions"]
    by_arn = {e["executionArn"]: e for e in listed}
    assert new not in by_arn
    assert by_arn[old]["status"] == "RUNNING" and "stopDate" not in by_arn[old]
    running = sfn.list_executions(stateMachineArn=machine, statusFilter="RUNNING")["executions"]
    assert old in [e["executionArn"] for e in running]
    assert new not in [e["executionArn"] for e in running]
    succeeded = sfn.list_executions(stateMachineArn=machine, statusFilter="SUCCEEDED")
    assert old not in [e["executionArn"] for e in succeeded["executions"]]
    faults.clear(sfn.meta.endpoint_url)
    fresh = {
        e["executionArn"]: e for e in sfn.list_executions(stateMachineArn=machine)["executions"]
    }
    assert fresh[old]["status"] == "SUCCEEDED" and new in fresh


HANDLER = """
import json, os, time
def handler(event, context):
    time.sleep(event.get("sleep", 0))
    if event.get("mark"):
        with open(event["mark"], "a") as out:
            out.write("ran\\n")
    return {"echo": event.get("echo")}
"""


@pytest.fixture(scope="module")
def function(aws: Callable) -> Iterator[str]:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", HANDLER)
    name = _name("faults-fn")
    role = function_role(aws("iam"), _name("faults-fn"), [name])
    lam = aws("lambda")
    lam.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": buffer.getvalue()},
        Timeout=4,
    )
    lam.get_waiter("function_active_v2").wait(FunctionName=name)
    yield name
    lam.delete_function(FunctionName=name)


def _invoke(lam: Any, name: str, event: dict) -> tuple[dict, Any]:
    answer = lam.invoke(FunctionName=name, Payload=json.dumps(event))
    return answer, json.loads(answer["Payload"].read() or b"null")


def test_lambda_invoke_too_many_requests_and_service_exception(plan, raw, function) -> None:
    lam = raw("lambda")
    plan(
        {
            "service": "lambda",
            "operation": "Invoke",
            "kind": "throttle",
            "resource": function,
            "first": 1,
        },
        {
            "service": "lambda",
            "operation": "Invoke",
            "kind": "internal_error",
            "resource": function,
            "first": 2,
        },
    )
    invoke = lambda: lam.invoke(FunctionName=function, Payload=b'{"echo": 1}')  # noqa: E731
    assert _error(invoke) == ("TooManyRequestsException", 429)
    assert _error(invoke) == ("ServiceException", 500)
    answer, payload = _invoke(lam, function, {"echo": 3})
    assert "FunctionError" not in answer and payload == {"echo": 3}
    lam.get_function(FunctionName=function)  # other operations untouched


def test_lambda_process_killed_mid_invoke(plan, raw, function, tmp_path) -> None:
    lam = raw("lambda")
    mark = tmp_path / "ran"
    plan(
        {
            "service": "lambda",
            "operation": "Invoke",
            "kind": "kill",
            "seconds": 0.5,
            "resource": function,
            "first": 1,
        }
    )
    answer, payload = _invoke(lam, function, {"sleep": 2, "mark": str(mark)})
    assert answer["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Runtime.ExitError"
    assert not mark.exists()  # killed before it got there
    answer, payload = _invoke(lam, function, {"echo": "after"})  # a new environment
    assert "FunctionError" not in answer and payload == {"echo": "after"}


def test_lambda_timeout_loses_the_answer_of_work_done(plan, raw, function, tmp_path) -> None:
    lam = raw("lambda")
    mark = tmp_path / "ran"
    plan(
        {
            "service": "lambda",
            "operation": "Invoke",
            "kind": "timeout",
            "resource": function,
            "first": 1,
        }
    )
    started = time.monotonic()
    answer, payload = _invoke(lam, function, {"mark": str(mark), "echo": 1})
    assert time.monotonic() - started >= 3.5  # the function's 4 s timeout, not at once
    assert answer["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Sandbox.Timedout"
    assert mark.read_text() == "ran\n"  # the handler did its work
    assert _invoke(lam, function, {"echo": 2})[1] == {"echo": 2}


@pytest.fixture
def queue(aws: Callable) -> Iterator[str]:
    sqs = aws("sqs")
    url = sqs.create_queue(QueueName=_name("faults"))["QueueUrl"]
    yield url
    sqs.delete_queue(QueueUrl=url)


def test_sqs_message_delivered_twice(plan, raw, queue) -> None:
    sqs = raw("sqs")
    sent = sqs.send_message(QueueUrl=queue, MessageBody="once")["MessageId"]
    plan(
        {
            "service": "sqs",
            "operation": "ReceiveMessage",
            "kind": "duplicate_delivery",
            "resource": queue,
            "first": 1,
        }
    )

    def receive() -> list[dict]:
        return sqs.receive_message(
            QueueUrl=queue,
            VisibilityTimeout=60,
            WaitTimeSeconds=1,
            AttributeNames=["ApproximateReceiveCount"],
        ).get("Messages", [])

    first, second, third = receive(), receive(), receive()
    assert [m["MessageId"] for m in first] == [sent]
    assert [m["MessageId"] for m in second] == [sent]  # redelivered while "in flight"
    assert second[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert third == []  # first=1: the second receive's visibility timeout holds


@contextlib.contextmanager
def _rule_to_queue(aws: Callable) -> Iterator[tuple[str, str, str]]:
    """A queue and a rule that sends it the events of a source of its own: (rule, source, url)."""
    events, sqs = aws("events"), aws("sqs")
    queue = sqs.create_queue(QueueName=_name("faults"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule, source = _name("faults"), f"sfnp.faults.{uuid.uuid4().hex[:8]}"
    rule_arn = events.put_rule(Name=rule, EventPattern=json.dumps({"source": [source]}))["RuleArn"]
    sqs.set_queue_attributes(
        QueueUrl=queue, Attributes={"Policy": events_to_queue_policy(arn, [rule_arn])}
    )
    events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": arn}])
    try:
        yield rule, source, queue
    finally:
        events.remove_targets(Rule=rule, Ids=["queue"])
        events.delete_rule(Name=rule)
        sqs.delete_queue(QueueUrl=queue)


def _drain(sqs: Any, queue: str, seconds: float) -> list[str]:
    """Every event id delivered to ``queue`` within ``seconds``."""
    ids: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in sqs.receive_message(
            QueueUrl=queue, WaitTimeSeconds=1, MaxNumberOfMessages=10
        ).get("Messages", []):
            ids.append(json.loads(message["Body"])["id"])
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    return ids


EVENT_KINDS = ("event_duplicate", "event_drop", "event_delay")


def test_eventbridge_delivery_faults(plan, raw, aws) -> None:
    """Each kind on a rule and queue of its own; the three run at once (one plan holds
    the three faults, each matching its own rule only), so their windows overlap."""
    with contextlib.ExitStack() as stack:
        routes = {kind: stack.enter_context(_rule_to_queue(aws)) for kind in EVENT_KINDS}
        faults_by_kind = {
            kind: {
                "service": "events",
                "operation": "PutEvents",
                "kind": kind,
                "resource": routes[kind][0],
                "first": 1,
            }
            for kind in EVENT_KINDS
        }
        faults_by_kind["event_delay"]["seconds"] = 4
        plan(*faults_by_kind.values())

        # Clients made here: creating boto3 clients is not thread-safe.
        clients = {kind: (raw("events"), raw("sqs")) for kind in EVENT_KINDS}

        def scenario(kind: str) -> dict[str, Any]:
            events, sqs = clients[kind]
            _, source, queue = routes[kind]

            def put() -> str:
                answer = events.put_events(
                    Entries=[{"Source": source, "DetailType": "t", "Detail": "{}"}]
                )
                return answer["Entries"][0]["EventId"]

            seen: dict[str, Any] = {"faulted": put()}
            seen["early"] = _drain(sqs, queue, 2.5)
            seen["later"] = _drain(sqs, queue, 4)
            seen["normal"] = put()  # first=1: the next event is delivered once, at once
            seen["normal_drain"] = _drain(sqs, queue, 2.5)
            return seen

        with ThreadPoolExecutor(max_workers=len(EVENT_KINDS)) as pool:
            outcomes = dict(zip(EVENT_KINDS, pool.map(scenario, EVENT_KINDS), strict=True))
    for kind, seen in outcomes.items():
        faulted = seen["faulted"]
        if kind == "event_duplicate":
            assert seen["early"] == [faulted, faulted], kind
        else:
            assert seen["early"] == [], kind
        assert seen["later"] == ([faulted] if kind == "event_delay" else []), kind
        assert seen["normal_drain"] == [seen["normal"]], kind


def test_caller_role_matches_calls_signed_by_the_roles_session(plan, raw, tables, aws) -> None:
    table = tables()
    role = aws("iam").create_role(
        RoleName=_name("faults-caller"),
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )["Role"]["Arn"]
    # Allowed to read the table: what the injector answers is the fault, not a denial.
    aws("iam").put_role_policy(
        RoleName=role.rsplit("/", 1)[-1],
        PolicyName="read",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    allow(
                        "dynamodb:GetItem", f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}"
                    )
                ],
            }
        ),
    )
    credentials = aws("sts").assume_role(RoleArn=role, RoleSessionName="worker")["Credentials"]
    as_role = raw(
        "dynamodb",
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
    as_account = raw("dynamodb")
    plan({"service": "dynamodb", "operation": "GetItem", "kind": "throttle", "caller_role": role})
    key = {"pk": {"S": "k"}}
    as_account.get_item(TableName=table, Key=key)  # the account's own key: no role
    assert _error(lambda: as_role.get_item(TableName=table, Key=key))[0] == (
        "ProvisionedThroughputExceededException"
    )
    log = faults.log(as_role.meta.endpoint_url)
    assert [entry["caller"] for entry in log] == [
        f"arn:aws:sts::000000000000:assumed-role/{role.split('/')[-1]}/worker"
    ]


def test_the_log_lists_each_injected_fault(plan, raw, tables, localstack_endpoint) -> None:
    table = tables()
    dynamodb = raw("dynamodb")
    plan(
        {
            "service": "dynamodb",
            "operation": "PutItem",
            "kind": "throttle",
            "resource": table,
            "probability": 0.5,
        },
        seed=11,
    )
    outcomes = []
    for i in range(12):
        try:
            dynamodb.put_item(TableName=table, Item={"pk": {"S": str(i)}})
            outcomes.append(False)
        except ClientError:
            outcomes.append(True)
    log = faults.log(localstack_endpoint)
    assert [entry["call"] for entry in log] == [i + 1 for i, hit in enumerate(outcomes) if hit]
    assert all(
        (e["service"], e["operation"], e["kind"], e["fault"], e["resource"], e["caller"])
        == ("dynamodb", "PutItem", "throttle", 0, table, None)
        for e in log
    )
    assert 0 < len(log) < 12
    # Replaying the plan with the same seed injects the same faults.
    plan(
        {
            "service": "dynamodb",
            "operation": "PutItem",
            "kind": "throttle",
            "resource": table,
            "probability": 0.5,
        },
        seed=11,
    )
    replay = []
    for i in range(12):
        try:
            dynamodb.put_item(TableName=table, Item={"pk": {"S": str(i)}})
            replay.append(False)
        except ClientError:
            replay.append(True)
    assert replay == outcomes


def test_the_cli_sets_logs_and_clears(localstack_endpoint, raw, tables, tmp_path) -> None:
    table = tables()
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(
        json.dumps(
            {
                "seed": 3,
                "faults": [
                    {
                        "service": "dynamodb",
                        "operation": "DeleteItem",
                        "kind": "throttle",
                        "resource": table,
                        "first": 1,
                    }
                ],
            }
        )
    )
    runner = CliRunner()
    try:
        result = runner.invoke(
            localstack_group, ["faults", "set", str(plan_path), "--endpoint", localstack_endpoint]
        )
        assert result.exit_code == 0, result.output
        assert "1 fault(s) loaded" in result.output
        dynamodb = raw("dynamodb")
        delete = lambda: dynamodb.delete_item(TableName=table, Key={"pk": {"S": "x"}})  # noqa: E731
        assert _error(delete)[0] == "ProvisionedThroughputExceededException"
        logged = runner.invoke(
            localstack_group, ["faults", "log", "--endpoint", localstack_endpoint]
        )
        assert [json.loads(line)["operation"] for line in logged.output.splitlines()] == [
            "DeleteItem"
        ]
    finally:
        cleared = runner.invoke(
            localstack_group, ["faults", "clear", "--endpoint", localstack_endpoint]
        )
    assert cleared.exit_code == 0 and faults.state(localstack_endpoint)["plan"] is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"seed": 3, "faults": [{"service": "sqs"}]}))
    refused = runner.invoke(
        localstack_group, ["faults", "set", str(bad), "--endpoint", localstack_endpoint]
    )
    assert refused.exit_code != 0 and "faults[0].operation: required" in refused.output


def test_a_task_calling_lambda_as_its_role_sees_lambda_too_many_requests(
    plan, raw, aws, function
) -> None:
    """Calls between services pass the injector too, matched by the calling role."""
    function_arn = f"arn:aws:lambda:us-east-1:000000000000:function:{function}"
    role = service_role(
        aws("iam"),
        _name("faults-sfn"),
        "states",
        [allow("lambda:InvokeFunction", [function_arn, f"{function_arn}:*"])],
    )
    definition = {
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": function, "Payload": {"echo": "task"}},
                "End": True,
            }
        },
    }
    sfn = raw("stepfunctions")
    machine = sfn.create_state_machine(
        name=_name("faults-task"), definition=json.dumps(definition), roleArn=role
    )["stateMachineArn"]
    try:
        plan(
            {
                "service": "lambda",
                "operation": "Invoke",
                "kind": "throttle",
                "caller_role": role,
                "first": 1,
            }
        )
        # The account's own invoke does not match the role, nor count.
        assert _invoke(raw("lambda"), function, {"echo": "direct"})[1] == {"echo": "direct"}
        first = _wait_stopped(sfn, sfn.start_execution(stateMachineArn=machine)["executionArn"])
        assert first["status"] == "FAILED"
        assert first["error"] == "Lambda.TooManyRequestsException"
        second = _wait_stopped(sfn, sfn.start_execution(stateMachineArn=machine)["executionArn"])
        assert second["status"] == "SUCCEEDED"
        assert json.loads(second["output"])["Payload"] == {"echo": "task"}
        (entry,) = faults.log(sfn.meta.endpoint_url)
        assert entry["caller"].startswith(
            f"arn:aws:sts::000000000000:assumed-role/{role.split('/')[-1]}/"
        )
    finally:
        sfn.delete_state_machine(stateMachineArn=machine)
