"""Bad input to modules/dag-aggregate fails `terraform plan` with a message a user can act on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform import Workspace

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

module "dag" {{
  source            = "{module}"
  name              = "plan-errors"
  sql_dir           = var.sql_dir
  strategy          = var.strategy
  max_concurrency   = var.max_concurrency
  python_executable = var.python_executable
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
