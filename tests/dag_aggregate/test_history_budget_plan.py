"""A DAG whose execution history could exceed 25,000 events fails `terraform plan` with the numbers.

The module runs the planner at plan time; the planner's budget check
(sfn_patterns_cli.dag_aggregate.history, its counts checked against LocalStack
histories in test_history_on_localstack.py) refuses such a DAG, and the plan shows
its message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

from .. import result_cache
from . import helpers
from .helpers import write_sql

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

MODULE = Path(__file__).resolve().parents[2] / "modules" / "dag-aggregate"
HELPERS = Path(helpers.__file__)

CONFIG = """
provider "aws" {{
  region = "us-east-1"
}}

variable "sql_dir" {{
  type = string
}}

variable "strategy" {{
  type = string
}}

variable "completion" {{
  type = string
}}

variable "python_executable" {{
  type = string
}}

module "dag" {{
  source            = "{module}"
  name              = "budget"
  sql_dir           = var.sql_dir
  strategy          = var.strategy
  python_executable = var.python_executable
  # No alarms: a plan that goes through would plan them all, and no test here reads one.
  alarms = {{ create = false }}
  poll = {{
    completion            = var.completion
    initial_wait_seconds  = 0
    poll_interval_seconds = 1
    timeout_seconds       = 3600
  }}
  redshift = {{
    database           = "dev"
    cluster_identifier = "local"
    db_user            = "etl"
  }}
}}
"""


# The cases: test -> (SQL files, strategy, completion).
TWO_LEVELS = {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a"}
CASES: dict[str, tuple[dict[str, str], str, str]] = {
    "level_polls": (TWO_LEVELS, "simple-level", "poll"),
    "level_events": (TWO_LEVELS, "simple-level", "event"),
    "slow_task": ({"slow": "-- sfn: timeout=86400\nSELECT 1 AS x"}, "dependency", "poll"),
}


@pytest.fixture(scope="module")
def planned(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """case -> (exit code, output with line breaks collapsed) of its `terraform plan`.

    The plans depend only on the code and on this file and its helpers:
    tests/result_cache.py keeps them under exactly those inputs, and the checks below
    run on the kept outputs all the same.
    """
    name = (
        f"dag-aggregate history budget plans {result_cache.files_digest(Path(__file__), HELPERS)}"
    )
    yield from result_cache.built_once(request, name, lambda: _plan_all(request))


def _plan_all(request: pytest.FixtureRequest) -> dict[str, tuple[int, str]]:
    config = request.getfixturevalue("tmp_path_factory").mktemp("dag-budget")
    (config / "main.tf").write_text(CONFIG.format(module=os.path.relpath(MODULE, config)))
    workspace = Workspace(
        config, request.getfixturevalue("localstack_endpoint"), config / "scratch"
    )
    workspace.init()
    results = {}
    for case, (files, strategy, completion) in CASES.items():
        code, output = workspace.plan_exit_code(
            {
                "sql_dir": str(write_sql(config / "sql" / case, files)),
                "strategy": strategy,
                "completion": completion,
                "python_executable": sys.executable,
            }
        )
        results[case] = (code, " ".join(output.split()))  # Terraform wraps long messages
    return results


def test_one_second_polls_fail_the_plan_of_a_level_strategy(planned: dict[str, Any]) -> None:
    code, output = planned["level_polls"]
    assert code == 1, output
    assert "the execution's worst-case history exceeds the 25,000-event limit" in output
    # 2 tasks on 2 levels polling every second for an hour: 6 + 2 x 6 + 2 x (24 + 18)
    # + 7200 x 11 + 5 (a timeout's cancel).
    assert "2 tasks x (24 + 18 execute retries) + 7200 polls in all" in output
    assert "= 79307 events" in output


def test_with_events_the_same_dag_plans(planned: dict[str, Any]) -> None:
    assert CASES["level_events"][:2] == CASES["level_polls"][:2]
    code, output = planned["level_events"]
    assert code == 2, output  # changes to apply, no error


def test_a_task_execution_over_the_limit_fails_the_dependency_plan(
    planned: dict[str, Any],
) -> None:
    code, output = planned["slow_task"]
    assert code == 1, output
    assert "a task execution's worst-case history exceeds the 25,000-event limit" in output
    assert "task slow: 31 + 36 retries (execute, report) + 86400 polls" in output
