"""Step Functions error names (fixes.sfn_sdk_error_names), in-process.

The optimised Step Functions integration's error for a refused StartExecution, built
by LocalStack 4.14.0's own ``StateTaskServiceSfn._from_error`` from a botocore error.
(The aws-sdk names are checked on a real execution in test_step_functions_fixes.py;
a throttled nested start end to end in tests/semaphore/test_callback.py.)
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.fixes import sfn_sdk_error_names


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    assert sfn_sdk_error_names.apply() is True


def _name(code: str) -> tuple[str, str]:
    """(the failure's error name, its TaskFailed event's error) for a refused start."""
    from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service.state_task_service_sfn import (  # noqa: E501
        StateTaskServiceSfn,
    )

    error = ClientError(
        {
            "Error": {"Code": code, "Message": "m"},
            "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "r"},
        },
        "StartExecution",
    )
    state = SimpleNamespace(
        _get_sfn_resource=lambda: "startExecution.sync:2", _get_sfn_resource_type=lambda: "states"
    )
    env = SimpleNamespace(
        next_state_name="Run target", event_history_context=SimpleNamespace(source_event_id=0)
    )
    event = StateTaskServiceSfn._from_error(state, env, error)
    return event.error_name.error_name, event.event_details["taskFailedEventDetails"]["error"]


@pytest.mark.parametrize(
    ("code", "name"),
    [
        # plain 4.14.0: StepFunctions.ThrottlingExceptionException
        ("ThrottlingException", "StepFunctions.ThrottlingException"),
        ("ExecutionAlreadyExists", "StepFunctions.ExecutionAlreadyExistsException"),
        ("ExecutionLimitExceeded", "StepFunctions.ExecutionLimitExceededException"),
    ],
)
def test_an_optimised_start_error_has_one_exception_suffix(code: str, name: str) -> None:
    assert _name(code) == (name, name)
