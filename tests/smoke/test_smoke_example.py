"""End to end: examples/smoke applied to LocalStack (through a saved plan) runs real handler
code from lambda_src/."""

from __future__ import annotations

import json
import shutil
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


def _as_a_fresh_apply_runner(config_dir: Path) -> None:
    """Take away the zips the plan built, as a CI apply job given only the plan has none."""
    built = sorted((config_dir / ".build" / "lambda").glob("*.zip"))
    assert [zip_file.name for zip_file in built] == [f"{_prefix}-echo.zip"]
    shutil.rmtree(config_dir / ".build")


_prefix = f"smoke-{int(time.time()) % 100000}"


def test_smoke_example_applies_from_a_saved_plan_runs_replans_clean_and_destroys(
    localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    """Planned to a file, applied from it where the plan's .build/lambda is gone (a
    separate apply job): lambda-function builds the zip again at apply, to the planned
    hash, and the function runs the code the plan packed."""
    prefix = _prefix
    variables = {"name_prefix": prefix}
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path / "tf")
    with workspace.applied(variables, before_apply=_as_a_fresh_apply_runner) as outputs:
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
