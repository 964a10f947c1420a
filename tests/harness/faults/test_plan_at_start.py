"""A plan named by SFNP_FAULTS is in force from LocalStack's first request, logged to a file."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sfn_patterns_localstack import server
from sfn_patterns_localstack.emulation.faults import client as faults

pytestmark = pytest.mark.integration


def test_plan_from_the_environment_and_the_log_file(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "seed": 9,
                "faults": [
                    {"service": "sqs", "operation": "ListQueues", "kind": "throttle", "first": 1}
                ],
            }
        )
    )
    log = tmp_path / "faults.jsonl"
    instance = server.start(extra_env={"SFNP_FAULTS": str(plan), "SFNP_FAULTS_LOG": str(log)})
    try:
        sqs = boto3.client(
            "sqs",
            endpoint_url=instance.endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(retries={"total_max_attempts": 1}),
        )
        with pytest.raises(ClientError) as raised:
            sqs.list_queues()
        assert raised.value.response["Error"]["Code"] == "RequestThrottled"
        sqs.list_queues()  # first=1
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert [(e["service"], e["operation"], e["kind"]) for e in lines] == [
            ("sqs", "ListQueues", "throttle")
        ]
        assert faults.log(instance.endpoint) == lines
        assert faults.state(instance.endpoint)["plan"]["seed"] == 9
    finally:
        instance.stop()


def test_a_bad_plan_at_start_stops_localstack_naming_the_field(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"seed": 1, "faults": [{"service": "sqs", "kind": "throttle"}]}))
    with pytest.raises(RuntimeError, match=r"exited with code 3") as raised:
        server.start(extra_env={"SFNP_FAULTS": str(plan)}, timeout=90).stop()
    assert "faults[0].operation: required" in str(raised.value)
