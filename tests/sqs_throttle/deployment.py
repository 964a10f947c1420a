"""examples/sqs-throttle as the LocalStack tests apply it, and the starter as they drive it.

Two files apply it: test_example.py (the pattern's promises, the teardown) and
test_alarms_on_localstack.py (the alarms that need the starter left alone for
minutes). Each is mostly waiting (alarm periods, executions); on one deployment they
were one file of nearly eight minutes, the longest of a run, so they are two
deployments on two workers.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns_localstack import queues
from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.alarm_check import PERIOD

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sqs-throttle"
MAX = 4
OLDEST_MESSAGE_SECONDS = 15  # the queue-oldest-message threshold of these deployments


def example_variables(prefix: str, topic_arn: str) -> dict[str, Any]:
    """The example's variables: MAX at once, the test as the schedule, 10-s alarms."""
    return {
        "name_prefix": prefix,
        "max_concurrency": MAX,
        # The test drives the starter itself; a daily tick never interferes.
        "schedule_expression": "rate(1 day)",
        "max_seconds_per_run": 20,
        "recheck_seconds": 1,
        "max_receive_count": 2,
        # The smallest the module allows: a message whose start failed (the fault
        # test's throttled starts) is retried 30 s later, not 2 minutes.
        "visibility_timeout_seconds": 30,
        "create_dashboard": True,
        # Alarms on 10 s periods; the dead man's switch on 10 s too, since the test,
        # not the daily rule, runs the starter.
        "alarms": {
            "period_seconds": PERIOD,
            "dead_man_period_seconds": PERIOD,
            "alarm_actions": [topic_arn],
            "ok_actions": [topic_arn],
            # A request waiting this long fires queue-oldest-message (default an hour).
            "thresholds": {"oldest_message_seconds": OLDEST_MESSAGE_SECONDS},
        },
    }


@contextmanager
def deploy(
    endpoint: str, aws: Callable, scratch: Path, topic_arn: str, *, destroy: bool
) -> Iterator[dict[str, Any]]:
    """Apply the example; yield its outputs with ``prefix``, ``variables``, ``workspace``.

    With ``destroy``, destroy it afterwards and check that nothing is left, in the
    account or in the state.
    """
    prefix = f"thr-{uuid.uuid4().hex[:6]}"
    variables = example_variables(prefix, topic_arn)
    workspace = Workspace(EXAMPLE, endpoint, scratch)
    try:
        workspace.init()
        workspace.apply(variables)
        yield {
            "prefix": prefix,
            "variables": variables,
            "workspace": workspace,
            **workspace.outputs(),
        }
    finally:
        try:
            if destroy:
                workspace.destroy(variables)
        finally:
            workspace.close()
    if destroy:
        assert leftovers(aws, prefix) == {}
        assert workspace.state()["resources"] == []


def invoke_starter(aws: Callable, deployed: dict, **event: Any) -> dict:
    """One synchronous run of the deployed starter Lambda."""
    client = aws("lambda")
    for _ in range(30):
        try:
            response = client.invoke(
                FunctionName=deployed["starter_function_name"],
                Payload=json.dumps(event).encode(),
                LogType="Tail",
            )
        except ClientError as error:  # reserved concurrency 1: a run is still going
            if error.response["Error"]["Code"] != "TooManyRequestsException":
                raise
            time.sleep(1)
            continue
        payload = json.loads(response["Payload"].read())
        assert "FunctionError" not in response, (
            payload,
            base64.b64decode(response.get("LogResult", "")).decode(errors="replace"),
        )
        return payload
    raise AssertionError("starter stayed throttled for 30 s")


def queue_depth(aws: Callable, url: str) -> int:
    """Messages in the queue, visible or in flight."""
    return queues.depth(aws("sqs"), url)
