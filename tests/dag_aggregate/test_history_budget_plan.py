"""A DAG whose execution history could exceed 25,000 events fails `terraform plan` with the numbers.

The module runs the planner at plan time; the planner's budget check
(sfn_patterns_cli.dag_aggregate.history, its counts checked against LocalStack
histories in test_history_on_localstack.py) refuses such a DAG, and the plan shows
its message.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

from .helpers import write_sql

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

MODULE = Path(__file__).resolve().parents[2] / "modules" / "dag-aggregate"

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


@pytest.fixture(scope="module")
def workspace(localstack_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    config = tmp_path_factory.mktemp("dag-budget")
    (config / "main.tf").write_text(CONFIG.format(module=os.path.relpath(MODULE, config)))
    workspace = Workspace(config, localstack_endpoint, config / "scratch")
    workspace.init()
    return workspace


def _plan(workspace: Workspace, sql_dir: Path, strategy: str, completion: str) -> tuple[int, str]:
    code, output = workspace.plan_exit_code(
        {
            "sql_dir": str(sql_dir),
            "strategy": strategy,
            "completion": completion,
            "python_executable": sys.executable,
        }
    )
    return code, " ".join(output.split())


def test_one_second_polls_fail_the_plan_of_a_level_strategy(
    workspace: Workspace, tmp_path: Path
) -> None:
    sql = write_sql(tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a"})
    code, output = _plan(workspace, sql, "simple-level", "poll")
    assert code == 1, output
    assert "the execution's worst-case history exceeds the 25,000-event limit" in output
    # 2 tasks on 2 levels polling every second for an hour: 6 + 2 x 6 + 2 x (24 + 18)
    # + 7200 x 11 + 5 (a timeout's cancel).
    assert "2 tasks x (24 + 18 execute retries) + 7200 polls in all" in output
    assert "= 79307 events" in output


def test_with_events_the_same_dag_plans(workspace: Workspace, tmp_path: Path) -> None:
    sql = write_sql(tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a"})
    code, output = _plan(workspace, sql, "simple-level", "event")
    assert code == 2, output  # changes to apply, no error


def test_a_task_execution_over_the_limit_fails_the_dependency_plan(
    workspace: Workspace, tmp_path: Path
) -> None:
    sql = write_sql(tmp_path / "sql", {"slow": "-- sfn: timeout=86400\nSELECT 1 AS x"})
    code, output = _plan(workspace, sql, "dependency", "poll")
    assert code == 1, output
    assert "a task execution's worst-case history exceeds the 25,000-event limit" in output
    assert "task slow: 31 + 36 retries (execute, report) + 86400 polls" in output
