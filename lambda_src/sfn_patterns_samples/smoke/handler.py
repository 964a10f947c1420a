"""Echo the Step Functions context object back, so tests can see what the Lambda saw.

The state machine passes ``"Payload.$": "$$"`` (the context object), as the AWS guidance
recommends: the Lambda then knows its execution ARN without extra plumbing.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import boto3

LOG = logging.getLogger()
LOG.setLevel(logging.INFO)


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the execution ID and input the Lambda received, and prove boto3 works."""
    LOG.info("received event: %s", json.dumps(event))
    execution_id = event.get("Execution", {}).get("Id")
    state_input = event.get("Execution", {}).get("Input", {})
    if state_input.get("fail"):
        raise RuntimeError(f"asked to fail: {state_input['fail']}")
    # A real AWS call from inside the handler, with no endpoint in code: under
    # LocalStack, AWS_ENDPOINT_URL routes it; on AWS the default endpoint does.
    identity = boto3.client("sts").get_caller_identity()
    return {
        "execution_id": execution_id,
        "input": state_input,
        "function_name": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"),
        "account": identity["Account"],
        "remaining_ms": context.get_remaining_time_in_millis(),
    }
