"""The starter's short run lease on moto: a stalled run taken over admits nothing more.

The ledger's own tests show the transaction; this one shows what the starter does
with it: the message it held goes back at once for the new holder, and its report
says why it stopped. Then what a start that failed leaves in the ledger, and how long
the next count holds its slot.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from sfn_patterns.sqs_throttle.naming import execution_name
from sfn_patterns.sqs_throttle.producer import build_message
from sfn_patterns.sqs_throttle.starter import LEASE_MARGIN_SECONDS, Config, Starter

# Runtime-library tests: also run on Python 3.9 and 3.13 (tests/tooling/test_python_versions.py).
pytestmark = pytest.mark.runtime

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:lease"


class Executions:
    """Step Functions reduced to what the starter calls (moto here serves SQS and DynamoDB)."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def start_execution(self, stateMachineArn: str, name: str, input: str) -> dict:
        self.started.append(name)
        return {"executionArn": f"{stateMachineArn}:{name}".replace("stateMachine", "execution")}

    def list_executions(self, **_: Any) -> dict:
        return {"executions": [{"name": n} for n in self.started]}

    def describe_execution(self, executionArn: str, includedData: str = "ALL_DATA") -> dict:
        if executionArn.rsplit(":", 1)[1] not in self.started:
            error = {"Code": "ExecutionDoesNotExist", "Message": executionArn}
            raise ClientError({"Error": error}, "DescribeExecution")
        return {"status": "RUNNING"}


class Failing(Executions):
    """Every StartExecution fails: with ``error``, or answered by a client error ``code``.

    A client error comes as botocore raises it after its re-sends (the last attempt's
    answer, with the attempts in its metadata).
    """

    def __init__(self, code: str = "", error: Exception | None = None) -> None:
        super().__init__()
        self.code, self.error = code, error

    def start_execution(self, stateMachineArn: str, name: str, input: str) -> dict:
        if self.error is not None:
            raise self.error
        answer = {
            "Error": {"Code": self.code, "Message": "refused"},
            "ResponseMetadata": {"RetryAttempts": 3, "MaxAttemptsReached": True},
        }
        raise ClientError(answer, "StartExecution")


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        sqs, dynamodb = boto3.client("sqs"), boto3.client("dynamodb")
        name = f"lease-{uuid.uuid4().hex[:6]}"
        queue_url = sqs.create_queue(
            QueueName=f"{name}.fifo",
            Attributes={"FifoQueue": "true", "VisibilityTimeout": "300"},
        )["QueueUrl"]
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "name", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "name", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        config = Config(
            queue_url=queue_url,
            state_machine_arn=MACHINE,
            max_concurrent=4,
            ledger_table=name,
            recheck_seconds=5,
        )
        yield {"sqs": sqs, "sfn": Executions(), "dynamodb": dynamodb, "config": config}


class Clock:
    """Time that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _starter(aws: dict[str, Any], clock: Clock, sqs: Any = None) -> Starter:
    return Starter(
        aws["config"], sqs or aws["sqs"], aws["sfn"], aws["dynamodb"], clock=clock, sleep=None
    )


class StallsAtReceive:
    """SQS whose first receive stalls past the run's lease, and another starter takes over."""

    def __init__(self, real: Any, clock: Clock, other: Starter) -> None:
        self.real, self.clock, self.other = real, clock, other

    def receive_message(self, **kwargs: Any) -> dict:
        answer = self.real.receive_message(**kwargs)
        self.clock.now += 5 + LEASE_MARGIN_SECONDS + 1
        assert self.other.store.acquire_run_lease(self.other.owner, self.clock(), 20) is None
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_run_taken_over_starts_nothing_and_hands_its_message_back(
    aws: dict[str, Any],
) -> None:
    config = aws["config"]
    aws["sqs"].send_message(QueueUrl=config.queue_url, **build_message({}, request_id="r-1"))
    clock = Clock()
    other = _starter(aws, clock)
    stalled = _starter(aws, clock, StallsAtReceive(aws["sqs"], clock, other))

    report = stalled.run()

    assert report.stopped == "lease_lost"
    assert report.started == [] and report.receives == 1
    assert aws["sfn"].started == []
    assert other.store.entries() == []
    # Handed back (visibility 0), not left invisible for the queue's 300 s: the new
    # holder starts it on its own run.
    assert other.run().started == aws["sfn"].started == [execution_name("r-1")]


def test_a_crashed_runs_lease_blocks_the_next_for_seconds_not_its_budget(
    aws: dict[str, Any],
) -> None:
    """A killed run releases nothing; the next run waits out the short lease only."""
    clock = Clock()
    crashed = _starter(aws, clock)
    assert crashed.store.acquire_run_lease(crashed.owner, clock(), crashed.lease_seconds) is None
    nxt = _starter(aws, clock)
    assert nxt.run().stopped == "another_starter_running"
    clock.now += aws["config"].recheck_seconds + LEASE_MARGIN_SECONDS + 0.1
    # Well inside the run's 50-s time budget, the lease has run out.
    assert clock.now - 1_000.0 < aws["config"].max_seconds
    assert nxt.run().stopped == "queue_empty"


def test_the_next_run_of_the_same_function_takes_a_crashed_runs_lease_at_once(
    aws: dict[str, Any],
) -> None:
    """Reserved concurrency 1: while this run runs, an earlier run of its function is dead."""
    aws["sqs"].send_message(QueueUrl=aws["config"].queue_url, **build_message({}, request_id="r-2"))
    env = {
        "QUEUE_URL": aws["config"].queue_url,
        "TARGET_STATE_MACHINE_ARN": MACHINE,
        "MAX_CONCURRENT_EXECUTIONS": "4",
        "LEDGER_TABLE": aws["config"].ledger_table,
        "AWS_LAMBDA_FUNCTION_NAME": "starter",
        "AWS_REGION": "us-east-1",
    }
    config = Config.from_env(env)
    assert config.exclusive_group == "lambda:us-east-1:starter"
    clock = Clock()

    def starter() -> Starter:
        return Starter(config, aws["sqs"], aws["sfn"], aws["dynamodb"], clock=clock, sleep=None)

    crashed = starter()
    assert crashed.store.acquire_run_lease(crashed.owner, clock(), crashed.lease_seconds) is None
    outsider = _starter(aws, clock)  # not this function: waits the lease out
    assert outsider.run().stopped == "another_starter_running"
    clock.now += 1
    assert starter().run().started == [execution_name("r-2")]


# -- what a failed start leaves in the ledger ------------------------------------------------


def _failed_run(aws: dict[str, Any], clock: Clock, sfn: Executions, **run: Any) -> Starter:
    """A run whose one message's start fails as ``sfn`` says; the starter, after its run."""
    aws["sqs"].send_message(QueueUrl=aws["config"].queue_url, **build_message({}, request_id="r-3"))
    starter = Starter(aws["config"], aws["sqs"], sfn, aws["dynamodb"], clock=clock, sleep=None)
    report = starter.run(max_messages=1, **run)
    assert report.receives == 1 and report.started == []
    return starter


@pytest.mark.parametrize("code", ["ThrottlingException", "ExecutionLimitExceeded"])
def test_a_refused_start_keeps_its_entry_and_its_slot(aws: dict[str, Any], code: str) -> None:
    """A refusal answers the last attempt: an earlier one, its answer lost, may have started it."""
    clock = Clock()
    starter = _failed_run(aws, clock, Failing(code))
    assert starter.store.entries() == [(execution_name("r-3"), clock())]
    # The next count holds the slot while its execution may still appear.
    assert _starter(aws, clock).count_running() == 1


def test_a_request_refused_for_itself_frees_its_slot_at_once(aws: dict[str, Any]) -> None:
    """Its name or input is refused on every attempt: none of them started anything."""
    clock = Clock()
    starter = _failed_run(aws, clock, Failing("InvalidExecutionInput"))
    assert starter.store.entries() == []
    assert _starter(aws, clock).count_running() == 0


def test_an_entry_holds_its_slot_until_the_grace_after_its_run_can_end(
    aws: dict[str, Any],
) -> None:
    """A run may pause between its record and its start until its function's timeout.

    The longest timeout the module allows (max_seconds_per_run 840 + 30 s): another
    starter's count holds the entry's slot for the grace after that end, not after the
    record (which a paused run outlives).
    """
    clock = Clock()
    timeout = 870.0
    _failed_run(
        aws, clock, Failing(error=ReadTimeoutError(endpoint_url="sfn")), remaining_seconds=timeout
    )
    grace = aws["config"].ledger_grace_seconds
    other = _starter(aws, clock)
    clock.now = 1_000.0 + grace + 1  # past the grace since the record
    assert other.count_running() == 1
    clock.now = 1_000.0 + timeout + grace - 1
    assert other.count_running() == 1
    clock.now = 1_000.0 + timeout + grace
    assert other.count_running() == 0
    assert other.store.entries() == []  # forgotten: no run can start it any more
