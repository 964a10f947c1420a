"""End to end: examples/sqs-throttle on LocalStack, with real executions.

One apply per module. The starter is driven by invoking its Lambda (or, where a
fault must be injected, the same Starter class in-process against LocalStack)
instead of waiting for the schedule. Concurrency is measured from the target
executions' own startDate/stopDate. The last test runs the deployed starter under
LocalStack's fault injector on the same deployment.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sfn_patterns.sqs_throttle import enqueue, execution_arn, execution_name
from sfn_patterns.sqs_throttle.starter import Config, Starter
from sfn_patterns_localstack import starter_runs
from sfn_patterns_localstack.clients import session_clients
from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.faults import scenarios
from sfn_patterns_localstack.executions import peak_overlap
from tests.alarm_check import Inbox, alarm, prove_alarm
from tests.dashboard_check import assert_module_dashboard, deployed_body
from tests.iam_denial import (
    assert_denial_text,
    denial,
    denied,
    expect_denials,
    require_enforcement,
    temporary_role,
    without_actions,
)

from .deployment import MAX, deploy, invoke_starter, queue_depth

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    tmp_path_factory: pytest.TempPathFactory,
    inbox: Inbox,
) -> Iterator[dict[str, Any]]:
    # The example's own test: it destroys, and checks that nothing is left.
    with deploy(
        localstack_endpoint,
        aws,
        tmp_path_factory.mktemp("sqs-throttle-tf"),
        inbox.topic_arn,
        destroy=True,
    ) as outputs:
        yield outputs


# --- helpers ---------------------------------------------------------------------------


def executions(aws: Callable, deployed: dict, names: set[str]) -> dict[str, dict]:
    """DescribeExecution of every target execution whose name is in ``names``."""
    sfn = aws("stepfunctions")
    found: dict[str, dict] = {}
    for page in sfn.get_paginator("list_executions").paginate(
        stateMachineArn=deployed["target_state_machine_arn"]
    ):
        for item in page["executions"]:
            if item["name"] in names:
                assert item["name"] not in found, f"{item['name']} listed twice"
                found[item["name"]] = sfn.describe_execution(executionArn=item["executionArn"])
    return found


def peak_concurrency(described: list[dict]) -> int:
    """Most executions running at one instant, from their own start/stop times."""
    return peak_overlap(
        [(e["startDate"].timestamp(), e["stopDate"].timestamp()) for e in described]
    )


def wait_all_done(aws: Callable, deployed: dict, names: set[str], timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = executions(aws, deployed, names)
        if len(found) == len(names) and all(e["status"] != "RUNNING" for e in found.values()):
            return found
        assert time.monotonic() < deadline, f"not done: {len(found)}/{len(names)}"
        time.sleep(1)


def in_process_starter(aws: Callable, deployed: dict, **overrides: Any) -> Starter:
    config = Config(
        queue_url=deployed["queue_url"],
        state_machine_arn=deployed["target_state_machine_arn"],
        max_concurrent=MAX,
        ledger_table=deployed["ledger_table_name"],
        max_messages=100,
        max_seconds=20,
        recheck_seconds=0.5,
    )
    return Starter(
        config,
        overrides.get("sqs") or aws("sqs"),
        overrides.get("sfn") or aws("stepfunctions"),
        aws("dynamodb"),
    )


class Lagging:
    """A Step Functions client whose ListExecutions lags: it never shows anything.

    The worst case of the API's eventual consistency; everything else is real.
    """

    def __init__(self, real: Any) -> None:
        self.real = real

    def list_executions(self, **_: Any) -> dict:
        return {"executions": []}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


# --- tests -----------------------------------------------------------------------------


def test_second_plan_is_empty(deployed: dict) -> None:
    code, plan = deployed["workspace"].plan_exit_code(deployed["variables"])
    assert code == 0, f"second plan is not empty:\n{plan}"


def test_resources_are_configured(aws: Callable, deployed: dict) -> None:
    sqs = aws("sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=deployed["queue_url"], AttributeNames=["All"])[
        "Attributes"
    ]
    assert attributes["FifoQueue"] == "true"
    assert attributes["SqsManagedSseEnabled"] == "true"
    redrive = json.loads(attributes["RedrivePolicy"])
    dlq_arn = sqs.get_queue_attributes(QueueUrl=deployed["dlq_url"], AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    assert redrive == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}

    function = aws("lambda").get_function(FunctionName=deployed["starter_function_name"])
    assert function["Concurrency"]["ReservedConcurrentExecutions"] == 1
    targets = aws("events").list_targets_by_rule(Rule=deployed["schedule_rule_name"])["Targets"]
    assert [t["Arn"] for t in targets] == [function["Configuration"]["FunctionArn"]]

    role = function["Configuration"]["Role"].rsplit("/", 1)[1]
    iam = aws("iam")
    policy = iam.get_role_policy(
        RoleName=role, PolicyName=iam.list_role_policies(RoleName=role)["PolicyNames"][0]
    )["PolicyDocument"]
    policy = json.loads(policy) if isinstance(policy, str) else policy
    statements = {s.get("Sid"): s for s in policy["Statement"]}
    assert not [a for s in policy["Statement"] for a in _list(s["Action"]) if "*" in a]
    assert _list(statements["StartTarget"]["Resource"]) == [deployed["target_state_machine_arn"]]
    assert _list(statements["DescribeTargetExecutions"]["Resource"]) == [
        deployed["target_state_machine_arn"].replace(":stateMachine:", ":execution:") + ":*"
    ]


def _list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def test_thirty_requests_never_more_than_four_running_none_lost_none_twice(
    aws: Callable, deployed: dict
) -> None:
    sqs = aws("sqs")
    run = uuid.uuid4().hex[:6]
    request_ids = [f"req-{run}-{i:02d}" for i in range(30)]
    for i, request_id in enumerate(request_ids):
        enqueue(
            deployed["queue_url"],
            {"seconds": 2, "i": i},
            request_id=request_id,
            group_id=f"g{i % 3}",
            client=sqs,
        )
    # Redelivered requests: the same request ids again, as new SQS messages (a
    # different deduplication id, so SQS does not drop them).
    for request_id in (request_ids[3], request_ids[17]):
        enqueue(
            deployed["queue_url"],
            {"seconds": 2, "duplicate": True},
            dedup_id=f"dup-{request_id}",
            request_id=request_id,
            group_id="g-dup",
            client=sqs,
        )

    names = {execution_name(r) for r in request_ids}
    reports = []
    deadline = time.monotonic() + 180
    while queue_depth(aws, deployed["queue_url"]) and time.monotonic() < deadline:
        reports.append(invoke_starter(aws, deployed, max_seconds=10))
    assert queue_depth(aws, deployed["queue_url"]) == 0, reports

    found = wait_all_done(aws, deployed, names)
    assert set(found) == names  # none lost, and one execution per request id
    assert {e["status"] for e in found.values()} == {"SUCCEEDED"}
    peak = peak_concurrency(list(found.values()))
    assert peak <= MAX, f"{peak} executions ran at once"
    assert peak == MAX  # the throttle admitted up to its bound, not one at a time

    started = [n for r in reports for n in r["started"]]
    existed = [n for r in reports for n in r["already_existed"]]
    assert sorted(started) == sorted(names)
    # Each duplicate request found its execution and was consumed, not started again
    # (unless it arrived before the original, then the original was the duplicate).
    assert len(existed) == 2
    assert set(existed) == {execution_name(request_ids[3]), execution_name(request_ids[17])}
    assert all(max(r["counts"]) <= MAX for r in reports)
    assert queue_depth(aws, deployed["dlq_url"]) == 0


def test_ledger_keeps_the_bound_when_list_executions_lags(aws: Callable, deployed: dict) -> None:
    """ListExecutions may miss just-started executions; the ledger still counts them."""
    run = uuid.uuid4().hex[:6]
    request_ids = [f"lag-{run}-{i}" for i in range(10)]
    for request_id in request_ids:
        enqueue(deployed["queue_url"], {"seconds": 2}, request_id=request_id, client=aws("sqs"))
    starter = in_process_starter(aws, deployed, sfn=Lagging(aws("stepfunctions")))
    deadline = time.monotonic() + 120
    while queue_depth(aws, deployed["queue_url"]) and time.monotonic() < deadline:
        report = starter.run(max_seconds=10)
        assert max(report.counts) <= MAX
    names = {execution_name(r) for r in request_ids}
    found = wait_all_done(aws, deployed, names)
    assert set(found) == names
    assert {e["status"] for e in found.values()} == {"SUCCEEDED"}
    assert peak_concurrency(list(found.values())) <= MAX
    # After everything finished, the next count forgets the finished executions.
    assert starter.count_running() == 0
    assert aws("dynamodb").scan(TableName=deployed["ledger_table_name"])["Count"] == 0

    # Control: without the ledger the same lagging list over-admits, so the
    # assertions above can fail.
    class NoLedger(Starter):
        def ledger(self) -> list[dict]:
            return []

    naive_ids = [f"naive-{run}-{i}" for i in range(MAX + 2)]
    # Long enough that all MAX + 2 starts land while the first still runs, however
    # loaded the machine (at 2 s, eight busy workers once spread the starts so far
    # apart that no more than MAX overlapped, and the control proved nothing).
    for request_id in naive_ids:
        enqueue(deployed["queue_url"], {"seconds": 10}, request_id=request_id, client=aws("sqs"))
    naive = NoLedger(starter.config, aws("sqs"), Lagging(aws("stepfunctions")), aws("dynamodb"))
    naive.run(max_seconds=5)
    naive_found = wait_all_done(aws, deployed, {execution_name(r) for r in naive_ids})
    assert peak_concurrency(list(naive_found.values())) > MAX
    starter.count_running()  # clean the ledger entries the naive run wrote


def test_crash_between_start_and_delete_starts_once(aws: Callable, deployed: dict) -> None:
    """The message becomes visible again after its execution started: no second start."""
    real_sqs = aws("sqs")
    handles: list[str] = []

    class CrashBeforeDelete:
        def delete_message(self, **kwargs: Any) -> dict:
            handles.append(kwargs["ReceiptHandle"])
            raise ClientError({"Error": {"Code": "InternalError", "Message": "boom"}}, "Delete")

        def __getattr__(self, name: str) -> Any:
            return getattr(real_sqs, name)

    request_id = f"crash-{uuid.uuid4().hex[:6]}"
    enqueue(deployed["queue_url"], {"seconds": 1}, request_id=request_id, client=real_sqs)
    first = in_process_starter(aws, deployed, sqs=CrashBeforeDelete()).run(max_messages=1)
    assert first.started == [execution_name(request_id)]
    assert len(handles) == 1
    # Once the execution finished, StartExecution with its name can only answer
    # ExecutionAlreadyExists (while it runs, the same name and input return the
    # same execution: also no second start).
    wait_all_done(aws, deployed, {execution_name(request_id)})
    # The visibility timeout expires (made immediate here): SQS redelivers it.
    real_sqs.change_message_visibility(
        QueueUrl=deployed["queue_url"], ReceiptHandle=handles[0], VisibilityTimeout=0
    )
    second = invoke_starter(aws, deployed, max_seconds=5)
    assert second["already_existed"] == [execution_name(request_id)]
    assert second["started"] == []
    assert queue_depth(aws, deployed["queue_url"]) == 0
    found = wait_all_done(aws, deployed, {execution_name(request_id)})
    assert len(found) == 1


def test_failed_start_keeps_the_message_and_poison_reaches_the_dlq(
    aws: Callable, deployed: dict
) -> None:
    real_sqs = aws("sqs")
    real_sfn = aws("stepfunctions")
    handles: list[str] = []

    class Recording:
        def receive_message(self, **kwargs: Any) -> dict:
            response = real_sqs.receive_message(**kwargs)
            handles.extend(m["ReceiptHandle"] for m in response.get("Messages", []))
            return response

        def __getattr__(self, name: str) -> Any:
            return getattr(real_sqs, name)

    class Throttled:
        def start_execution(self, **_: Any) -> dict:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Start"
            )

        def __getattr__(self, name: str) -> Any:
            return getattr(real_sfn, name)

    run = uuid.uuid4().hex[:6]
    enqueue(deployed["queue_url"], {"seconds": 1}, request_id=f"flaky-{run}", client=real_sqs)
    report = in_process_starter(aws, deployed, sqs=Recording(), sfn=Throttled()).run()
    assert report.failed == [execution_name(f"flaky-{run}")]
    assert report.stopped == "start_failed"
    assert queue_depth(aws, deployed["queue_url"]) == 1  # not deleted
    # The refused start keeps its ledger entry (a throttle answers the client's last
    # attempt only: an earlier one whose answer was lost may have started it), which
    # holds one slot of MAX until its grace has passed: the retry still starts.
    ledger = aws("dynamodb").scan(TableName=deployed["ledger_table_name"], ConsistentRead=True)
    assert execution_name(f"flaky-{run}") in {i["name"]["S"] for i in ledger["Items"]}
    real_sqs.change_message_visibility(
        QueueUrl=deployed["queue_url"], ReceiptHandle=handles[-1], VisibilityTimeout=0
    )
    retried = invoke_starter(aws, deployed, max_seconds=5)
    assert retried["started"] == [execution_name(f"flaky-{run}")]

    # A poison message (not JSON) ahead of a healthy one in the same FIFO group:
    # it reaches the DLQ after max_receive_count (2) receives; the healthy one starts.
    real_sqs.send_message(
        QueueUrl=deployed["queue_url"],
        MessageBody="{not json",
        MessageGroupId=f"p-{run}",
        MessageDeduplicationId=f"poison-{run}",
    )
    enqueue(
        deployed["queue_url"],
        {"seconds": 1},
        request_id=f"behind-{run}",
        group_id=f"p-{run}",
        client=real_sqs,
    )
    reports = [invoke_starter(aws, deployed, max_seconds=5) for _ in range(2)]
    started = [n for r in reports for n in r["started"]]
    assert started == [execution_name(f"behind-{run}")]
    assert sum(len(r["poison"]) for r in reports) == 2
    dead = real_sqs.receive_message(QueueUrl=deployed["dlq_url"], MaxNumberOfMessages=10)
    assert [m["Body"] for m in dead.get("Messages", [])] == ["{not json"]
    assert queue_depth(aws, deployed["queue_url"]) == 0
    wait_all_done(aws, deployed, {execution_name(f"behind-{run}"), execution_name(f"flaky-{run}")})


def test_ledger_entry_arn_matches_the_started_execution(aws: Callable, deployed: dict) -> None:
    """The ARN the starter derives for DescribeExecution is the one Step Functions gives."""
    request_id = f"arn-{uuid.uuid4().hex[:6]}"
    enqueue(deployed["queue_url"], {"seconds": 1}, request_id=request_id, client=aws("sqs"))
    report = invoke_starter(aws, deployed, max_seconds=5)
    assert report["started"] == [execution_name(request_id)]
    arn = execution_arn(deployed["target_state_machine_arn"], execution_name(request_id))
    described = aws("stepfunctions").describe_execution(executionArn=arn)
    assert described["name"] == execution_name(request_id)
    assert json.loads(described["input"]) == {"seconds": 1}
    wait_all_done(aws, deployed, {execution_name(request_id)})


def test_two_starters_at_once_never_exceed_the_limit(aws: Callable, deployed: dict) -> None:
    """A second starter (another deployment's schedule, an operator's manual run) races the
    first: the run lease admits one of them at a time, so the bound holds."""
    run = uuid.uuid4().hex[:6]
    request_ids = [f"two-{run}-{i:02d}" for i in range(3 * MAX)]
    for i, request_id in enumerate(request_ids):
        enqueue(
            deployed["queue_url"],
            {"seconds": 3},
            request_id=request_id,
            group_id=f"t{i % 4}",
            client=aws("sqs"),
        )
    go = threading.Barrier(2)
    reports: list[Any] = []

    def starter_thread() -> None:
        starter = in_process_starter(aws, deployed)
        go.wait(timeout=30)
        deadline = time.monotonic() + 120
        while queue_depth(aws, deployed["queue_url"]) and time.monotonic() < deadline:
            reports.append(starter.run(max_seconds=8))

    threads = [threading.Thread(target=starter_thread) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=150)
    names = {execution_name(r) for r in request_ids}
    found = wait_all_done(aws, deployed, names)
    assert set(found) == names
    assert {e["status"] for e in found.values()} == {"SUCCEEDED"}
    peak = peak_concurrency(list(found.values()))
    assert peak <= MAX, f"{peak} executions ran at once with two starters"
    started = [n for r in reports for n in r.started]
    assert sorted(started) == sorted(names)  # each request started exactly once
    assert any(r.stopped == "another_starter_running" for r in reports)


# --- IAM: each grant is needed, and the producer policy is enough ------------------------


@pytest.mark.iam_denial
def test_without_receive_message_the_starter_fails_and_keeps_the_request(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """ConsumeQueue is needed: without sqs:ReceiveMessage the starter's run fails with
    AWS's AccessDenied sentence naming its role, the action and the queue; the request
    stays queued and starts on the first run after the grant is back.
    """
    require_enforcement(aws, localstack_endpoint)
    request_id = f"iam-{uuid.uuid4().hex[:6]}"
    enqueue(deployed["queue_url"], {"seconds": 1}, request_id=request_id, client=aws("sqs"))
    queue_arn = aws("sqs").get_queue_attributes(
        QueueUrl=deployed["queue_url"], AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    with (
        without_actions(aws, deployed["starter_role_arn"], "sqs:ReceiveMessage"),
        expect_denials(denial(deployed["starter_role_arn"], "sqs:ReceiveMessage", queue_arn)),
    ):
        response = aws("lambda").invoke(
            FunctionName=deployed["starter_function_name"], Payload=b"{}", LogType="Tail"
        )
    error = json.loads(response["Payload"].read())
    log = base64.b64decode(response.get("LogResult", "")).decode(errors="replace")
    assert response.get("FunctionError") == "Unhandled", error
    print(f"\ndenied starter: {error['errorType']}: {error['errorMessage']}")
    assert_denial_text(
        error["errorMessage"],
        deployed["starter_role_arn"],
        "sqs:ReceiveMessage",
        queue_arn,
        code="(AccessDenied)",
    )
    assert "sqs:ReceiveMessage" in log, log
    assert queue_depth(aws, deployed["queue_url"]) == 1  # nothing received, nothing lost
    report = invoke_starter(aws, deployed, max_seconds=5)
    assert report["started"] == [execution_name(request_id)]
    wait_all_done(aws, deployed, {execution_name(request_id)})


@pytest.mark.iam_denial
def test_producer_policy_json_lets_a_producer_enqueue_and_nothing_more(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """The consumer's side of producer_policy_json: a role with only that policy enqueues a
    request that the starter then starts; it cannot take requests off the queue, and a
    role without the policy cannot enqueue.
    """
    require_enforcement(aws, localstack_endpoint)
    queue = deployed["queue_url"]
    request_id = f"producer-{uuid.uuid4().hex[:6]}"
    prefix = deployed["prefix"]
    queue_arn = f"arn:aws:sqs:*:{queue.rsplit('/', 1)[1]}"  # any region and account
    with (
        temporary_role(
            aws, f"{prefix}-producer", deployed["producer_policy_json"], module_output=True
        ) as producer,
        temporary_role(aws, f"{prefix}-stranger") as stranger,
        expect_denials(
            denial(producer, "sqs:ReceiveMessage", queue_arn),
            denial(stranger, "sqs:SendMessage", queue_arn),
        ),
    ):
        as_producer = session_clients(localstack_endpoint, producer)("sqs")
        enqueue(queue, {"seconds": 1}, request_id=request_id, client=as_producer)
        refused = denied(lambda: as_producer.receive_message(QueueUrl=queue))
        assert_denial_text(str(refused), producer, "sqs:ReceiveMessage")
        as_stranger = session_clients(localstack_endpoint, stranger)("sqs")
        refused = denied(
            lambda: enqueue(queue, {"seconds": 1}, request_id="never", client=as_stranger)
        )
        assert_denial_text(str(refused), stranger, "sqs:SendMessage")
    report = invoke_starter(aws, deployed, max_seconds=5)
    assert report["started"] == [execution_name(request_id)]
    wait_all_done(aws, deployed, {execution_name(request_id)})


def test_a_target_in_another_account_is_started_through_the_assumed_role(
    aws: Callable, deployed: dict, localstack_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """target_role_arn: the starter's Step Functions calls run as a role of the target's
    account (LocalStack scopes resources by the caller's account, as AWS does)."""
    import boto3

    from sfn_patterns.sqs_throttle import starter as starter_module

    other = "222222222222"

    def theirs(service: str) -> Any:  # a client of the other account
        return boto3.client(
            service,
            endpoint_url=localstack_endpoint,
            region_name="us-east-1",
            aws_access_key_id=other,
            aws_secret_access_key="test",
        )

    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"AWS": deployed["starter_role_arn"]},
            }
        ],
    }
    tag = uuid.uuid4().hex[:6]
    role = theirs("iam").create_role(
        RoleName=f"throttle-target-{tag}", AssumeRolePolicyDocument=json.dumps(trust)
    )["Role"]["Arn"]
    target = theirs("stepfunctions").create_state_machine(
        name=f"their-target-{tag}",
        roleArn=role,
        definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}),
    )["stateMachineArn"]
    assert f":{other}:" in target
    # What the module's target_role_policy_json grants for this target (the consumer
    # test attaches that output itself, in a Terraform-made role of another account).
    executions = target.replace(":stateMachine:", ":execution:") + ":*"
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "StartTarget",
                "Effect": "Allow",
                "Action": ["states:StartExecution", "states:ListExecutions"],
                "Resource": target,
            },
            {
                "Sid": "DescribeTargetExecutions",
                "Effect": "Allow",
                "Action": "states:DescribeExecution",
                "Resource": executions,
            },
        ],
    }
    theirs("iam").put_role_policy(
        RoleName=f"throttle-target-{tag}", PolicyName="start", PolicyDocument=json.dumps(policy)
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", localstack_endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    config = Config(
        queue_url=deployed["queue_url"],
        state_machine_arn=target,
        max_concurrent=MAX,
        ledger_table=deployed["ledger_table_name"],
        max_seconds=10,
        target_role_arn=role,
    )
    request_id = f"xacct-{tag}"
    # The ledger is the queue's, shared with the earlier tests, whose entries name
    # executions of the deployment's own target: seen through this config they do not
    # exist yet, so they would hold slots for their grace period. A starter of the own
    # target forgets them (they all ended), as the next scheduled run would.
    assert in_process_starter(aws, deployed).count_running() == 0
    enqueue(deployed["queue_url"], {"seconds": 1}, request_id=request_id, client=aws("sqs"))
    theirs_starter = Starter(config, *starter_module.clients(config))
    report = theirs_starter.run(max_seconds=5)
    assert report.started == [execution_name(request_id)]
    started = theirs("stepfunctions").list_executions(stateMachineArn=target)["executions"]
    assert [e["name"] for e in started] == [execution_name(request_id)]
    # Nothing was started in the starter's own account under that name.
    ours = aws("stepfunctions").list_executions(
        stateMachineArn=deployed["target_state_machine_arn"]
    )
    assert execution_name(request_id) not in {e["name"] for e in ours["executions"]}
    # Its execution (a Pass) has ended: the next count forgets its ledger entry, which
    # the deployment's own starter could not describe and would hold for its grace
    # period (the fault test below needs every slot).
    assert theirs_starter.count_running() == 0
    theirs("stepfunctions").delete_state_machine(stateMachineArn=target)
    theirs("iam").delete_role_policy(RoleName=f"throttle-target-{tag}", PolicyName="start")
    theirs("iam").delete_role(RoleName=f"throttle-target-{tag}")


# --- alarms ------------------------------------------------------------------------------


def test_every_signal_has_its_alarm_on_the_deployed_resources(
    aws: Callable, deployed: dict
) -> None:
    alarms = deployed["alarms"]
    assert set(alarms) == {
        "starter-errors",
        "starter-throttles",
        "starter-duration",
        "starter-not-running",
        "dlq-messages",
        "queue-oldest-message",
        "ledger-read-throttles",
        "ledger-write-throttles",
        "ledger-system-errors",
        "schedule-failed-invocations",
    }
    # Each alarm watches a resource the deployment has (names from its own outputs).
    dlq_name = deployed["dlq_url"].rsplit("/", 1)[1]
    queue_name = deployed["queue_url"].rsplit("/", 1)[1]
    watched = {
        "starter-errors": ("AWS/Lambda", "Errors", deployed["starter_function_name"]),
        "starter-not-running": ("AWS/Lambda", "Invocations", deployed["starter_function_name"]),
        "dlq-messages": ("AWS/SQS", "ApproximateNumberOfMessagesVisible", dlq_name),
        "queue-oldest-message": ("AWS/SQS", "ApproximateAgeOfOldestMessage", queue_name),
        "schedule-failed-invocations": (
            "AWS/Events",
            "FailedInvocations",
            deployed["schedule_rule_name"],
        ),
    }
    for key, (namespace, metric, resource) in watched.items():
        found = alarm(aws, alarms[key]["name"])
        assert found["AlarmArn"] == alarms[key]["arn"]
        assert (found["Namespace"], found["MetricName"]) == (namespace, metric)
        assert [d["Value"] for d in found["Dimensions"]] == [resource]
        assert (
            found["AlarmActions"]
            == found["OKActions"]
            == [deployed["variables"]["alarms"]["alarm_actions"][0]]
        )
    timeout_ms = (deployed["variables"]["max_seconds_per_run"] + 30) * 1000
    assert alarm(aws, alarms["starter-duration"]["name"])["Threshold"] == 0.9 * timeout_ms


def test_the_dashboard_body_has_the_documented_structure(aws: Callable, deployed: dict) -> None:
    rows = assert_module_dashboard(
        deployed_body(aws, deployed["dashboard_name"]),
        module=deployed["prefix"],
        pattern="sqs-throttle",
        # What the starter prints (running against MAX, admitted per tick),
        # and the poison messages it sets aside.
        metrics={"Running", "MaxConcurrent", "Admitted", "Poison"},
        alarm_arns=[a["arn"] for a in deployed["alarms"].values()],
    )
    watched = {row[3] for row in rows if row[0].startswith("AWS/")}
    queues = {deployed[k].rsplit("/", 1)[1] for k in ("queue_url", "dlq_url")}
    assert watched == {deployed["starter_function_name"], *queues}


# The starter's dead man's switch and the queue's oldest-message alarm are proved on a
# deployment of their own (test_alarms_on_localstack.py): each needs the starter left
# to the test for a minute or more.
def test_a_poison_message_fires_the_dlq_alarm(aws: Callable, deployed: dict, inbox: Inbox) -> None:
    sqs = aws("sqs")
    # An earlier test's poison may still be there: start from an empty DLQ.
    sqs.purge_queue(QueueUrl=deployed["dlq_url"])
    run = uuid.uuid4().hex[:6]

    def poison() -> None:
        sqs.send_message(
            QueueUrl=deployed["queue_url"],
            MessageBody="{not json",
            MessageGroupId=f"alarm-{run}",
            MessageDeduplicationId=f"alarm-poison-{run}",
        )
        # max_receive_count = 2: two runs receive it, and SQS moves it to the DLQ.
        for _ in range(3):
            invoke_starter(aws, deployed, max_seconds=2)
        assert queue_depth(aws, deployed["dlq_url"]) == 1

    prove_alarm(
        aws,
        inbox,
        deployed["alarms"]["dlq-messages"]["name"],
        inject=poison,
        # What an operator does once the cause is fixed: redrive or delete it.
        clear=lambda: sqs.purge_queue(QueueUrl=deployed["dlq_url"]),
    )


FAULT_REQUESTS = 3 * MAX
FAULT_SECONDS = 6  # each execution runs this long: longer than an admission takes
SEED = 28
# A healthy request may be received several times under this plan (redelivered,
# throttled, in a killed run): the poison tests' max_receive_count of 2 would
# dead-letter it. The run uses the module's default, and puts the example's back.
FAULT_MAX_RECEIVE_COUNT = 5


def _fault_plan(deployed: dict[str, Any]) -> dict[str, Any]:
    return scenarios.sqs_throttle_mix(
        starter_role=deployed["starter_role_arn"],
        queue_url=deployed["queue_url"],
        starter_function=deployed["starter_function_name"],
        seed=SEED,
        throttle={"probability": 0.4},
        stale_list={},
        duplicate_delivery={"probability": 0.3},
        # A run started 12 s in dies 2 s into its invoke (warm: counting, admitting).
        kill={"after_seconds": 12, "first": 1},
        # Its lease and ledger writes (transactions among them) meet a conflict.
        conflict={"probability": 0.3},
    )


def _target_executions_since(aws: Callable, arn: str, since: float) -> list[dict[str, Any]]:
    """Every execution of the target started at or after ``since`` (the earlier tests'
    executions of this deployment are not this run's)."""
    sfn = aws("stepfunctions")
    listed = [
        item
        for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn)
        for item in page["executions"]
        if item["startDate"].timestamp() >= since
    ]
    return [sfn.describe_execution(executionArn=item["executionArn"]) for item in listed]


@pytest.fixture
def redrive_for_faults(aws: Callable, deployed: dict) -> Iterator[None]:
    """The queue's maxReceiveCount at FAULT_MAX_RECEIVE_COUNT for one test, then back."""
    sqs = aws("sqs")
    url = deployed["queue_url"]
    policy = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"][
        "RedrivePolicy"
    ]
    raised = {**json.loads(policy), "maxReceiveCount": FAULT_MAX_RECEIVE_COUNT}
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": json.dumps(raised)})
    try:
        yield
    finally:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": policy})


def test_the_bound_holds_and_every_request_runs_once_under_faults(
    aws: Callable, deployed: dict[str, Any], localstack_endpoint: str, redrive_for_faults: None
) -> None:
    # The earlier tests left poison in the dead-letter queue; this run must add none.
    aws("sqs").purge_queue(QueueUrl=deployed["dlq_url"])
    assert queue_depth(aws, deployed["queue_url"]) == 0
    since = time.time() - 1
    run = uuid.uuid4().hex[:6]
    request_ids = [f"f-{run}-{i:02d}" for i in range(FAULT_REQUESTS)]
    for i, request_id in enumerate(request_ids):
        enqueue(
            deployed["queue_url"],
            {"seconds": FAULT_SECONDS},
            request_id=request_id,
            group_id=f"g{i % 5}",
            client=aws("sqs"),
        )
    names = {execution_name(r) for r in request_ids}

    with faults.applied(localstack_endpoint, _fault_plan(deployed)):
        outcomes = starter_runs.run_until_empty(
            aws("lambda"),
            aws("sqs"),
            deployed["queue_url"],
            deployed["starter_function_name"],
            timeout=150,
        )
        log = faults.log(localstack_endpoint)

    print("runs:", outcomes, "faults:", [(e["kind"], round(e["elapsed"], 1)) for e in log])
    # Every fault kind of the plan was injected (else this run proved nothing).
    injected = {entry["kind"] for entry in log}
    wanted = {"throttle", "stale_list", "duplicate_delivery", "kill", "transaction_conflict"}
    assert injected == wanted, (log, outcomes)
    assert "crashed" in outcomes

    assert queue_depth(aws, deployed["queue_url"]) == 0, outcomes
    deadline = time.monotonic() + 60
    while True:
        described = _target_executions_since(aws, deployed["target_state_machine_arn"], since)
        if all(e["status"] != "RUNNING" for e in described) or time.monotonic() > deadline:
            break
        time.sleep(1)
    ours = [e for e in described if e["name"] in names]
    # Each request started exactly once (one execution per name, no other execution
    # started during the run), none lost (every one ran to success, the dead-letter
    # queue is empty).
    assert sorted(e["name"] for e in described) == sorted(names)
    assert len(ours) == FAULT_REQUESTS
    assert {e["status"] for e in ours} == {"SUCCEEDED"}
    assert queue_depth(aws, deployed["dlq_url"]) == 0
    # Never more than MAX running, from the executions' own start and stop times.
    assert peak_concurrency(ours) <= MAX, f"{peak_concurrency(ours)} executions ran at once"
    # The bound was reached: the test exercised admission at the limit.
    assert peak_concurrency(ours) == MAX
