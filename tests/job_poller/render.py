"""Render the job-poller ASL in Python exactly as modules/job-poller/main.tf does.

Used by the unit tests (every template and variant rendered and validated
offline) and by the two-pollers test, which merges two loops into one machine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.asl import render_tftpl

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "job-poller"
FRAGMENT = TEMPLATES / "poll-loop.asl.json.tftpl"
MACHINE = TEMPLATES / "definition.asl.json.tftpl"
ACCOUNT = "123456789012"
REGION = "us-east-1"
LAMBDA_RETRY_ERRORS = [
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "RetryableJobError",
]


def max_wait_count(initial: int, interval: int, timeout: int, strategy: str) -> int:
    """The module's max_wait_count: ceil((T - W0) / P), +1 backstop with start-time."""
    return math.ceil(max(timeout - initial, 0) / interval) + (1 if strategy == "start-time" else 0)


def history_events_worst_case(waits: int, retry_max_attempts: int) -> int:
    """The module's history_events_worst_case (README "History budget")."""
    return 20 + 6 * retry_max_attempts + waits * (11 + 3 * retry_max_attempts)


def lambda_variant(
    name: str, poller: str, strategy: str, timeout: int, account: str = ACCOUNT
) -> dict[str, Any]:
    """Variant settings of the Lambda variant (generic Run Job / Get Job Status)."""
    prefix = f"arn:aws:lambda:{REGION}:{account}:function:{name}"
    path = f"$.job_poller.{poller}"
    return {
        "run_job_resource": "arn:aws:states:::lambda:invoke",
        "run_job_parameters": {
            "FunctionName": f"{prefix}-run-job",
            "Payload": {
                "context.$": "$$",
                "input.$": "$",
                "poller": poller,
                "timeout_strategy": strategy,
                "timeout_seconds": timeout,
            },
        },
        "run_job_handle_path": "$.Payload",
        "get_status_resource": "arn:aws:states:::lambda:invoke",
        "get_status_parameters": {
            "FunctionName": f"{prefix}-get-job-status",
            "Payload": {
                "context.$": "$$",
                "job.$": f"{path}.run.handle",
                "wait_count.$": f"{path}.loop.wait_count",
                "poller": poller,
                "timeout_strategy": strategy,
            },
        },
        "get_status_result_selector": {"status.$": "$.Payload.status", "result.$": "$.Payload"},
        "retry_errors": LAMBDA_RETRY_ERRORS,
        "succeeded": ["SUCCEEDED"],
        "failed": ["FAILED"],
        "running": ["RUNNING"],
    }


def sdk_variant(poller: str) -> dict[str, Any]:
    """Variant settings of the aws-sdk variant: StartExecution / DescribeExecution of a child."""
    child = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:child"
    return {
        "run_job_resource": "arn:aws:states:::aws-sdk:sfn:startExecution",
        "run_job_parameters": {"StateMachineArn": child, "Input.$": "States.JsonToString($.job)"},
        "run_job_handle_path": "$",
        "get_status_resource": "arn:aws:states:::aws-sdk:sfn:describeExecution",
        "get_status_parameters": {
            "ExecutionArn.$": f"$.job_poller.{poller}.run.handle.ExecutionArn"
        },
        "get_status_result_selector": {"status.$": "$.Status", "result.$": "$"},
        "retry_errors": ["Sfn.SfnException"],
        "succeeded": ["SUCCEEDED"],
        "failed": ["FAILED", "TIMED_OUT", "ABORTED"],
        "running": ["RUNNING"],
    }


def fragment(
    poller: str,
    variant: dict[str, Any],
    *,
    initial: int,
    interval: int,
    waits: int,
    exits: dict[str, str] | None = None,
    retry: tuple[int, int, float] = (2, 3, 2),
) -> str:
    """Render the poll-loop fragment (a JSON object of states) as text."""
    path = f"$.job_poller.{poller}"
    status_var = f"{path}.status.status"
    own = own_exits(poller)
    own.update(exits or {})

    def rules(values: list[str]) -> str:
        return json.dumps([{"Variable": status_var, "StringEquals": v} for v in values])

    return render_tftpl(
        FRAGMENT,
        {
            "name": poller,
            "state_path": path,
            "loop_limits": f'"max_wait_count": {waits}, "initial_wait_seconds": {initial}',
            "poll_interval_seconds": interval,
            "get_status_resource": variant["get_status_resource"],
            "get_status_parameters": json.dumps(variant["get_status_parameters"]),
            "get_status_result_selector": json.dumps(variant["get_status_result_selector"]),
            "retry_errors": json.dumps(variant["retry_errors"]),
            "retry_interval_seconds": retry[0],
            "retry_max_attempts": retry[1],
            "retry_backoff_rate": retry[2],
            "succeeded_rules": rules(variant["succeeded"]),
            "failed_rules": rules(variant["failed"]),
            "running_rules": rules(variant["running"]),
            "succeeded_next": own["succeeded"],
            "failed_next": own["failed"],
            "timeout_next": own["timeout"],
            "unknown_next": own["unknown"],
            "error_next": own["error"],
        },
    )


def own_exits(poller: str) -> dict[str, str]:
    """The terminal state names of the module's own machine."""
    return {
        "succeeded": f"{poller} Succeeded",
        "failed": f"{poller} Job Failed",
        "timeout": f"{poller} Timed Out",
        "unknown": f"{poller} Unknown Status",
        "error": f"{poller} Poll Error",
    }


def machine_shell(
    poller: str, variant: dict[str, Any], *, timeout: int, strategy: str, retry=(2, 3, 2)
) -> dict[str, Any]:
    """Render definition.asl.json.tftpl (Run Job + terminal states) as a dict."""
    text = render_tftpl(
        MACHINE,
        {
            "comment": f"Job poller {poller}",
            "name": poller,
            "state_path": f"$.job_poller.{poller}",
            "run_job_resource": variant["run_job_resource"],
            "run_job_parameters": json.dumps(variant["run_job_parameters"]),
            "run_job_handle_path": variant["run_job_handle_path"],
            "retry_errors": json.dumps(variant["retry_errors"]),
            "retry_interval_seconds": retry[0],
            "retry_max_attempts": retry[1],
            "retry_backoff_rate": retry[2],
            "timeout_seconds": timeout,
            "timeout_strategy": strategy,
        },
    )
    return json.loads(text)


def machine(
    poller: str,
    variant: dict[str, Any],
    *,
    initial: int,
    interval: int,
    timeout: int,
    strategy: str,
    retry: tuple[int, int, float] = (2, 3, 2),
) -> dict[str, Any]:
    """The whole definition, merged as the module merges it."""
    shell = machine_shell(poller, variant, timeout=timeout, strategy=strategy, retry=retry)
    loop = json.loads(
        fragment(
            poller,
            variant,
            initial=initial,
            interval=interval,
            waits=max_wait_count(initial, interval, timeout, strategy),
            retry=retry,
        )
    )
    shell["States"].update(loop)
    return shell
