"""examples/sqs-throttle's starter and queue alarms fired on LocalStack, on their own deployment.

The dead man's switch (``starter-not-running``) first shows that a new deployment does
not page; then it and ``queue-oldest-message`` each need
the starter left to the test for a minute or more: the test is the schedule (the
rule's rate is a day), ticking, then stopped; or not ticking while a request ages. On
test_example.py's deployment they made that file the run's longest, so they run here
(test_example.py proves the DLQ alarm and that every alarm watches the deployment's
resources). One after the other: a tick of the first would admit the second's
request.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sfn_patterns.sqs_throttle import enqueue, execution_name
from tests.alarm_check import PERIOD, Inbox, prove_alarm, wait_state

from .deployment import OLDEST_MESSAGE_SECONDS, deploy, invoke_starter, queue_depth

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    tmp_path_factory: pytest.TempPathFactory,
    inbox: Inbox,
    *,
    destroy_deployments: bool,
) -> Iterator[dict[str, Any]]:
    with deploy(
        localstack_endpoint,
        aws,
        tmp_path_factory.mktemp("sqs-throttle-alarms-tf"),
        inbox.topic_arn,
        destroy=destroy_deployments,
    ) as outputs:
        yield outputs


def test_a_new_deployment_does_not_page(aws: Callable, deployed: dict) -> None:
    """The switch's first evaluation, before any tick of the schedule, finds a run: OK.

    CloudWatch treats a missing datum of this alarm as breaching, and a new alarm has
    nothing but missing data: created before the schedule's first tick (which comes up
    to one period after a deploy), it went to ALARM at its first evaluation and paged
    on every deploy. The module runs the starter once at deploy, before the alarm
    exists. The test's schedule has not ticked yet (the rule's rate is a day), so the
    deploy's run is the only datum there is: without it the first evaluation (two
    periods after the alarm's creation, on LocalStack) is ALARM, and stays so.
    """
    name = deployed["alarms"]["starter-not-running"]["name"]
    wait_state(aws, name, "OK", 3 * PERIOD)


def test_a_stopped_schedule_fires_the_dead_mans_switch(
    aws: Callable, deployed: dict, inbox: Inbox
) -> None:
    # The test is the schedule (the rule's rate is a day): a tick every 4 s, well
    # inside the alarm's 10 s period, until it "stops".
    ticking = threading.Event()
    stopped = threading.Event()

    def schedule() -> None:
        while not stopped.is_set():
            if ticking.is_set():
                aws("lambda").invoke(
                    FunctionName=deployed["starter_function_name"],
                    InvocationType="Event",
                    Payload=b'{"max_seconds": 1}',
                )
            stopped.wait(4)

    ticker = threading.Thread(target=schedule, daemon=True)
    ticking.set()
    ticker.start()
    name = deployed["alarms"]["starter-not-running"]["name"]
    try:
        prove_alarm(
            aws,
            inbox,
            name,
            inject=ticking.clear,
            clear=ticking.set,
            # Two periods on AWS; LocalStack reads EvaluationPeriods + 2 periods back
            # and evaluates every 2 periods: up to 6.
            periods_to_alarm=6,
        )
    finally:
        stopped.set()
        ticker.join()


def test_a_stalled_queue_fires_the_oldest_message_alarm(
    aws: Callable, deployed: dict, inbox: Inbox
) -> None:
    """A request nobody admits grows old: ALARM once it has waited the threshold.

    The schedule is the test here too, and it does not tick: the request waits. The
    age is SQS's own gauge (ApproximateAgeOfOldestMessage, the harness's every 5 s).
    Cleared the way the operator's fix would: the starter runs again and admits it.
    """
    request_id = f"stalled-{uuid.uuid4().hex[:6]}"

    def stall() -> None:
        enqueue(deployed["queue_url"], {"seconds": 0}, request_id=request_id, client=aws("sqs"))
        time.sleep(OLDEST_MESSAGE_SECONDS + 1)  # the alarm's threshold is reached now
        assert queue_depth(aws, deployed["queue_url"]) == 1

    def admit() -> None:
        assert invoke_starter(aws, deployed, max_seconds=5)["started"] == [
            execution_name(request_id)
        ]
        assert queue_depth(aws, deployed["queue_url"]) == 0

    prove_alarm(
        aws, inbox, deployed["alarms"]["queue-oldest-message"]["name"], inject=stall, clear=admit
    )
