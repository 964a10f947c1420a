"""Shared helpers: write SQL task directories; the policy of machines created without Terraform;
the errors of a plan by module instance."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_arn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate" / "sql"


def write_sql(directory: Path, files: dict[str, str]) -> Path:
    """Write ``{table: sql}`` as ``<table>.sql`` files and return the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, sql in files.items():
        (directory / f"{name}.sql").write_text(sql, encoding="utf-8")
    return directory


def count_rows(redshift: Any, workgroup: str, table: str) -> int:
    """Rows of ``agg.<table>`` in ``workgroup``, through the Data API (an append task run
    twice doubles them: the tests' oracle of "every task ran once")."""
    sid = redshift.execute_statement(
        WorkgroupName=workgroup, Database="dev", Sql=f"SELECT COUNT(*) FROM agg.{table}"
    )["Id"]
    deadline = time.monotonic() + 30
    while redshift.describe_statement(Id=sid)["Status"] != "FINISHED":
        assert time.monotonic() < deadline, table
        time.sleep(0.05)
    return redshift.get_statement_result(Id=sid)["Records"][0][0]["longValue"]


def sql_runner_policy(workgroups: list[str], functions: tuple[str, ...] = ()) -> str:
    """What a state machine rendered by the planner needs to run its SQL on ``workgroups``.

    For the tests that create rendered definitions themselves (no Terraform), with the
    same least privilege modules/dag-aggregate grants its own machines: the statements
    on each workgroup's id ARN (not its name) with its temporary credentials, following
    only statements the role started, and invoking the given functions (the completion
    function a parked task calls, a task machine's task-done function).
    """
    arns = [workgroup_arn(name) for name in workgroups]
    statements: list[dict] = [
        {
            "Sid": "RunStatements",
            "Effect": "Allow",
            "Action": [
                "redshift-data:ExecuteStatement",
                "redshift-data:BatchExecuteStatement",
                "redshift-serverless:GetCredentials",
            ],
            "Resource": arns,
        },
        {
            "Sid": "FollowOwnStatements",
            "Effect": "Allow",
            "Action": ["redshift-data:DescribeStatement", "redshift-data:CancelStatement"],
            "Resource": "*",
            "Condition": {
                "StringEquals": {"redshift-data:statement-owner-iam-userid": "${aws:userid}"}
            },
        },
    ]
    if functions:
        statements.append(
            {
                "Sid": "InvokeFunctions",
                "Effect": "Allow",
                "Action": "lambda:InvokeFunction",
                "Resource": [arn for f in functions for arn in (f, f"{f}:*")],
            }
        )
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def errors_by_instance(output: str) -> dict[str, list[str]]:
    """Each error of a plan, whitespace-normalised, under the module instance it names.

    Terraform names the instance either as ``in module "<case>"`` (a variable's
    validation, pointing at the calling block) or as ``with module.<case>.`` (a
    resource or data source inside it). An error naming neither lands under "".
    """
    errors: dict[str, list[str]] = {}
    for block in re.split(r"^Error: ", output, flags=re.MULTILINE)[1:]:
        found = re.search(r'in module "(\w+)"|with module\.(\w+)\.', block)
        case = (found.group(1) or found.group(2)) if found else ""
        errors.setdefault(case, []).append(" ".join(block.split()))  # Terraform wraps
    return errors
