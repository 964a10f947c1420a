"""Bad input to modules/dag-aggregate fails `terraform plan` with a message a user can act on."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

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
  type    = string
  default = "parent-level"
}}

variable "max_concurrency" {{
  type    = number
  default = 2
}}

variable "python_executable" {{
  type = string
}}

variable "external_tables" {{
  type    = list(string)
  default = []
}}

module "dag" {{
  source            = "{module}"
  name              = "plan-errors"
  sql_dir           = var.sql_dir
  strategy          = var.strategy
  max_concurrency   = var.max_concurrency
  python_executable = var.python_executable
  external_tables   = var.external_tables
  # No alarms: a plan that goes through would plan them all, and no test here reads one.
  alarms = {{ create = false }}
  redshift = {{
    database           = "dev"
    cluster_identifier = "local"
    db_user            = "etl"
  }}
}}
"""


@pytest.fixture(scope="module")
def workspace(localstack_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    config = tmp_path_factory.mktemp("dag-plan-errors")
    # A relative source keeps the module inside its package (the repository), so
    # its own ../ references resolve as they do for users' git sources.
    (config / "main.tf").write_text(CONFIG.format(module=os.path.relpath(MODULE, config)))
    workspace = Workspace(config, localstack_endpoint, config / "scratch")
    workspace.init()
    return workspace


def _sql_dir(root: Path, files: dict[str, str]) -> str:
    root.mkdir()
    for name, sql in files.items():
        (root / f"{name}.sql").write_text(sql)
    return str(root)


def _plan_output(workspace: Workspace, **variables: object) -> tuple[int, str]:
    code, output = workspace.plan_exit_code(variables)
    return code, " ".join(output.split())  # Terraform wraps long messages


def test_a_cycle_fails_the_plan_naming_the_cycle(workspace: Workspace, tmp_path: Path) -> None:
    sql_dir = _sql_dir(
        tmp_path / "sql",
        {
            "a": "SELECT * FROM agg.b",
            "b": "SELECT * FROM agg.c",
            "c": "SELECT * FROM agg.a",
        },
    )
    code, output = _plan_output(workspace, sql_dir=sql_dir)
    assert code == 1
    assert "cycle: a -> c -> b -> a" in output


def test_a_misspelled_table_fails_the_plan_naming_file_line_table_and_closest_task(
    workspace: Workspace, tmp_path: Path
) -> None:
    sql_dir = _sql_dir(
        tmp_path / "sql",
        {
            "daily_revenue": "SELECT 1 AS x",
            "kpi": "SELECT x\nFROM raw.events, agg.daily_revnue",
        },
    )
    code, output = _plan_output(workspace, sql_dir=sql_dir, external_tables=["raw.*"])
    assert code == 1
    assert "kpi.sql:2: unresolved table agg.daily_revnue" in output
    assert "did you mean agg.daily_revenue?" in output
    # Declared, the same read is an external source and the plan goes through.
    code, output = _plan_output(
        workspace, sql_dir=sql_dir, external_tables=["raw.*", "agg.daily_revnue"]
    )
    assert code == 2, output


def test_terraform_plan_calls_the_planner_once_for_every_strategy(
    workspace: Workspace, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.log"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\necho "$1 $2" >> {calls}\nexec {sys.executable} "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    sql_dir = _sql_dir(tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a"})
    for strategy in ("simple-level", "parent-level", "dependency"):
        calls.write_text("")
        code, output = _plan_output(
            workspace, sql_dir=sql_dir, strategy=strategy, python_executable=str(python)
        )
        assert code == 2, output
        planner = [line for line in calls.read_text().splitlines() if "planner.py" in line]
        assert len(planner) == 1, (strategy, planner)
        assert planner[0].endswith("planner.py module-data"), planner


def test_invalid_sql_fails_the_plan_naming_file_and_position(
    workspace: Workspace, tmp_path: Path
) -> None:
    sql_dir = _sql_dir(tmp_path / "sql", {"a": "SELECT 1", "broken": "SELEC * FRM agg.a,,"})
    code, output = _plan_output(workspace, sql_dir=sql_dir)
    assert code == 1
    assert "broken.sql:1:" in output and "invalid SQL" in output


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"strategy": "fastest"}, 'must be "simple-level", "parent-level" or "dependency"'),
        ({"max_concurrency": 0}, "max_concurrency must be a whole number from 1 to 40"),
        ({"sql_dir": "/nonexistent/sql"}, "sql_dir must be an existing directory"),
    ],
)
def test_bad_variables_fail_validation(
    workspace: Workspace, tmp_path: Path, variables: dict, message: str
) -> None:
    values = {"sql_dir": _sql_dir(tmp_path / "sql", {"a": "SELECT 1"}), **variables}
    code, output = _plan_output(workspace, **values)
    assert code == 1
    assert message in output
