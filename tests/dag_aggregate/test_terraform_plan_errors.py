"""Bad input to modules/dag-aggregate fails `terraform plan` with a message a user can act on.

Every case is its own instance of the module in one test-only configuration, and the
cases share plans: Terraform reports every failed validation, and every failed data
source, of a plan, each naming the module instance it belongs to, and each test below
asserts its own case's message within its own instance's errors. Three plans instead
of ten: the variable validations (checked before any data source is read, so they
cannot share a plan with the planner's errors), the planner's errors, and the plans
that go through (one instance per strategy, which also plans the declared form of
the misspelled read).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

from .. import result_cache
from . import helpers
from .helpers import errors_by_instance

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

MODULE = Path(__file__).resolve().parents[2] / "modules" / "dag-aggregate"
HELPERS = Path(helpers.__file__)

HEADER = """
provider "aws" {
  region = "us-east-1"
}
"""

INSTANCE = """
module "{case}" {{
  source            = "{module}"
  name              = "plan-errors-{name}"
  python_executable = "{python}"
  # No alarms: a plan that goes through would plan them all, and no test here reads one.
  alarms = {{ create = false }}
  redshift = {{
    database           = "dev"
    cluster_identifier = "local"
    db_user            = "etl"
  }}
{settings}
}}
"""

# SQL directories: name -> {table: sql}
SQL = {
    "cycle": {
        "a": "SELECT * FROM agg.b",
        "b": "SELECT * FROM agg.c",
        "c": "SELECT * FROM agg.a",
    },
    "kpi": {
        "daily_revenue": "SELECT 1 AS x",
        "kpi": "SELECT x\nFROM raw.events, agg.daily_revnue",
    },
    "broken": {"a": "SELECT 1", "broken": "SELEC * FRM agg.a,,"},
    "one": {"a": "SELECT 1"},
}

# plan -> case -> the module's settings (sql_dir names a directory of SQL, or a path)
PLANS: dict[str, dict[str, dict[str, Any]]] = {
    # Variable validations: Terraform checks them before it reads any data source.
    "validation": {
        "bad_strategy": {"sql_dir": "one", "strategy": "fastest"},
        "bad_concurrency": {"sql_dir": "one", "max_concurrency": 0},
        "missing_dir": {"sql_dir": "/nonexistent/sql"},
    },
    # The planner's own errors (the data source that runs it at plan time).
    "planner": {
        "cycle": {"sql_dir": "cycle"},
        "misspelled": {"sql_dir": "kpi", "external_tables": ["raw.*"]},
        "invalid_sql": {"sql_dir": "broken"},
    },
    # Plans that go through, one per strategy, each running the planner through its own
    # wrapper, on the misspelled read of "misspelled" above declared external.
    "ok": {
        strategy.replace("-", "_"): {
            "sql_dir": "kpi",
            "external_tables": ["raw.*", "agg.daily_revnue"],
            "strategy": strategy,
        }
        for strategy in ("simple-level", "parent-level", "dependency")
    },
}


def _hcl(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_hcl(item) for item in value) + "]"
    return str(value)


@pytest.fixture(scope="module")
def plans(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """plan -> (exit code, output, errors by module instance); one `terraform plan` each.

    The plans depend only on the code and on this file and its helpers (the generated
    configurations, the SQL): tests/result_cache.py keeps them under exactly those
    inputs, and the checks below run on the kept outputs all the same.
    """
    name = f"dag-aggregate plan errors {result_cache.files_digest(Path(__file__), HELPERS)}"
    yield from result_cache.built_once(request, name, lambda: _plan_all(request))


def _plan_all(request: pytest.FixtureRequest) -> dict[str, Any]:
    localstack_endpoint = request.getfixturevalue("localstack_endpoint")
    root = request.getfixturevalue("tmp_path_factory").mktemp("dag-plan-errors")
    sql_dirs = {}
    for name, files in SQL.items():
        sql_dirs[name] = root / "sql" / name
        sql_dirs[name].mkdir(parents=True)
        for table, sql in files.items():
            (sql_dirs[name] / f"{table}.sql").write_text(sql)
    results = {}
    for plan, cases in PLANS.items():
        config = root / plan
        config.mkdir()
        # A relative source keeps the module inside its package (the repository), so
        # its own ../ references resolve as they do for users' git sources.
        module = os.path.relpath(MODULE, config)
        blocks = [HEADER]
        for case, settings in cases.items():
            # A Python that logs each call to this instance's own file, then runs.
            python = root / f"python-{case}"
            python.write_text(
                f'#!/bin/sh\necho "$1 $2" >> {root / f"calls-{case}.log"}\n'
                f'exec {sys.executable} "$@"\n'
            )
            python.chmod(python.stat().st_mode | stat.S_IXUSR)
            values = {
                **settings,
                "sql_dir": str(sql_dirs.get(settings["sql_dir"], settings["sql_dir"])),
            }
            blocks.append(
                INSTANCE.format(
                    case=case,
                    module=module,
                    name=case.replace("_", "-"),
                    python=python,
                    settings="\n".join(f"  {k} = {_hcl(v)}" for k, v in values.items()),
                )
            )
        (config / "main.tf").write_text("".join(blocks))
        workspace = Workspace(config, localstack_endpoint, config / "scratch")
        try:
            workspace.init()
            code, output = workspace.plan_exit_code()
        finally:
            workspace.close()
        results[plan] = (code, output, errors_by_instance(output))
    results["calls"] = {
        case: (root / f"calls-{case}.log").read_text().splitlines()
        if (root / f"calls-{case}.log").is_file()
        else []
        for case in PLANS["ok"]
    }
    return results


def _errors(plans: dict, plan: str, case: str) -> str:
    code, output, errors = plans[plan]
    assert code == 1, output
    # Every error of the plan is one of its cases' (none unattributed, none extra).
    assert set(errors) == set(PLANS[plan]), output
    assert len(errors[case]) == 1, errors[case]
    return errors[case][0]


def test_a_cycle_fails_the_plan_naming_the_cycle(plans: dict) -> None:
    assert "cycle: a -> c -> b -> a" in _errors(plans, "planner", "cycle")


def test_a_misspelled_table_fails_the_plan_naming_file_line_table_and_closest_task(
    plans: dict,
) -> None:
    error = _errors(plans, "planner", "misspelled")
    assert "kpi.sql:2: unresolved table agg.daily_revnue" in error
    assert "did you mean agg.daily_revenue?" in error
    # The fix names the module's variable (the CLI names its --external flag instead).
    assert 'external_tables = ["agg.daily_revnue"]' in error
    assert "--external" not in error
    # Declared, the same read is an external source and the plan goes through (in
    # every strategy: the instances of the "ok" plan read these files).
    assert all(PLANS["ok"][case]["sql_dir"] == "kpi" for case in PLANS["ok"])
    code, output, errors = plans["ok"]
    assert code == 2, output
    assert errors == {}, output


def test_terraform_plan_calls_the_planner_once_for_every_strategy(plans: dict) -> None:
    code, output, _ = plans["ok"]
    assert code == 2, output
    for case in ("simple_level", "parent_level", "dependency"):
        planner = [line for line in plans["calls"][case] if "planner.py" in line]
        assert len(planner) == 1, (case, planner)
        assert planner[0].endswith("planner.py module-data"), planner


def test_invalid_sql_fails_the_plan_naming_file_and_position(plans: dict) -> None:
    error = _errors(plans, "planner", "invalid_sql")
    assert "broken.sql:1:" in error and "invalid SQL" in error
    assert "sqlglot" not in error and "<class" not in error  # the user's SQL, not the parser


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("bad_strategy", 'must be "simple-level", "parent-level" or "dependency"'),
        ("bad_concurrency", "max_concurrency must be a whole number from 1 to 40"),
        ("missing_dir", "sql_dir must be an existing directory"),
    ],
)
def test_bad_variables_fail_validation(plans: dict, case: str, message: str) -> None:
    assert message in _errors(plans, "validation", case)
