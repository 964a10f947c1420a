"""Render the semaphore's ASL the way modules/semaphore assembles it in HCL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.asl import render_tftpl

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "semaphore"
END_MARKER = "__SEMAPHORE_END__"
PREFIX = "Semaphore: "
SM_ARN = "arn:aws:states:us-east-1:000000000000:stateMachine:"

ACQUIRE_VARS: dict[str, Any] = {
    "prefix": PREFIX,
    "partition": "aws",
    "function_arn": "arn:aws:lambda:us-east-1:000000000000:function:demo-semaphore",
    "fallback_seconds": 300,
    "table_name": "demo-semaphore",
    "lock_key": "semaphore",
    "gate_function_arn": "arn:aws:lambda:us-east-1:000000000000:function:demo-oldest-first-gate",
    "limit": 3,
    "lease_seconds": 86400,
    "wait_min_seconds": 5,
    "wait_max_seconds": 15,
    "acquire_timeout_seconds": 3600,
}


def acquire_states(
    strategy: str = "dynamodb", acquired_next: str = "Critical section", fairness: str = "none"
) -> dict:
    if strategy == "dynamodb":
        name = "fifo_acquire" if fairness == "fifo" else "acquire"
    elif strategy == "callback":
        name = "callback_acquire"
    else:
        name = "oldest_first_acquire"
    text = render_tftpl(
        TEMPLATES / f"{name}.states.json.tftpl", {**ACQUIRE_VARS, "acquired_next": acquired_next}
    )
    return json.loads(text)


def release_states(strategy: str = "dynamodb", release_next: str | None = None) -> dict:
    name = {
        "dynamodb": "release",
        "callback": "callback_release",
        "oldest-first": "oldest_first_release",
    }[strategy]
    text = render_tftpl(
        TEMPLATES / f"{name}.states.json.tftpl",
        {
            "prefix": PREFIX,
            "partition": "aws",
            "function_arn": ACQUIRE_VARS["function_arn"],
            "release_next": release_next or END_MARKER,
            "table_name": ACQUIRE_VARS["table_name"],
            "lock_key": ACQUIRE_VARS["lock_key"],
        },
    )
    reraise = json.loads(render_tftpl(TEMPLATES / "reraise.states.json.tftpl", {"prefix": PREFIX}))
    # As modules/semaphore/main.tf does: the marker Next becomes End; Re-raise merged in.
    return {**json.loads(text.replace(f'"Next": "{END_MARKER}"', '"End": true')), **reraise}


def start_state(strategy: str) -> str:
    """The acquire fragment's first state (module output acquire_start_state)."""
    return f"{PREFIX}Acquire" if strategy == "callback" else f"{PREFIX}Prepare"


def embedded_machine(strategy: str = "dynamodb", fairness: str = "none") -> dict:
    """A caller's machine: acquire, one Lambda task under the Catch, release."""
    critical = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": "worker", "Payload.$": "$"},
        "ResultPath": "$.work",
        "Catch": [
            {
                "ErrorEquals": ["States.ALL"],
                "ResultPath": "$.semaphore_error",
                "Next": f"{PREFIX}Release after failure",
            }
        ],
        "Next": f"{PREFIX}Release",
    }
    return {
        "StartAt": start_state(strategy),
        "States": {
            **acquire_states(strategy, fairness=fairness),
            "Critical section": critical,
            **release_states(strategy),
        },
    }


def wrapper_machine(
    strategy: str = "dynamodb", target: str = SM_ARN + "target", fairness: str = "none"
) -> dict:
    wrapper = json.loads(
        render_tftpl(
            TEMPLATES / "wrapper.states.json.tftpl",
            {"prefix": PREFIX, "partition": "aws", "target_state_machine_arn": target},
        )
    )
    return {
        "Comment": "wrapper",
        "StartAt": start_state(strategy),
        "States": {
            **acquire_states(strategy, acquired_next="Run target", fairness=fairness),
            **wrapper,
            **release_states(strategy, release_next="Return target output"),
        },
    }
