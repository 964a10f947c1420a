"""End to end: examples/smoke applied to LocalStack runs real handler code from lambda_src/."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.leftovers import leftovers
from sfn_patterns_localstack.terraform.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "smoke"


def _wait_for_execution(sfn, execution_arn: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.5)
    raise AssertionError(f"{execution_arn} still RUNNING after {timeout} s")


def test_smoke_example_applies_runs_replans_clean_and_destroys(
    localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    prefix = f"smoke-{int(time.time()) % 100000}"
    variables = {"name_prefix": prefix}
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path / "tf")
    with workspace.applied(variables) as outputs:
        assert outputs["state_machine_arn"] == outputs["state_machine_arn_static"]

        sfn = aws("stepfunctions")
        started = sfn.start_execution(
            stateMachineArn=outputs["state_machine_arn"], input=json.dumps({"order": 7})
        )
        described = _wait_for_execution(sfn, started["executionArn"])
        assert described["status"] == "SUCCEEDED", described
        echo = json.loads(described["output"])["echo"]
        # The Lambda received the context object ("Payload.$": "$$"): it saw its execution.
        assert echo["execution_id"] == started["executionArn"]
        assert echo["input"] == {"order": 7}
        assert echo["function_name"] == outputs["function_name"]

        code, plan = workspace.plan_exit_code(variables)
        assert code == 0, f"second plan is not empty:\n{plan}"

    assert leftovers(aws, prefix) == {}
