"""The root module's switches, required settings and shared inputs, checked with `terraform plan`.

Nothing is applied (examples/complete is applied by the demo test). The fixture,
tests/terraform/root_module, calls the root module once per case (``var.cases``): the
cases that plan are planned together, in one `terraform plan` against LocalStack
(the data sources read the account and region from it) whose saved plan is read once,
and each test reads its own instance's resources and outputs from it. The case whose
plan must fail has a plan of its own. Both plans depend only on the code, so
tests/result_cache.py keeps them under exactly those inputs; the checks always run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

from .. import result_cache

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

FIXTURE = Path(__file__).resolve().parent / "root_module"
REPO_ROOT = Path(__file__).resolve().parents[2]
PREFIX = "sfnp-root-test"
KMS_KEY = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"
TAGS = {"Project": "sfn-patterns", "Owner": "root-module-test"}
TARGET = "arn:aws:states:us-east-1:000000000000:stateMachine:sfnp-root-test-target"
# A target in another account: the role there that the throttle's starter assumes.
TARGET_ROLE = "arn:aws:iam::111111111111:role/sfnp-root-test-target"

ALL_ENABLED: dict[str, Any] = {
    "job_poller": {"create": True, "timeout_strategy": "start-time"},
    "sqs_throttle": {"create": True, "target_state_machine_arn": TARGET},
    "semaphore": {"create": True, "create_wrapper": True, "target_state_machine_arn": TARGET},
    "dag_aggregate": {
        "create": True,
        "sql_dir": str(REPO_ROOT / "examples/dag-aggregate/sql"),
        "redshift": {
            "database": "dev",
            "workgroup_name": "sfnp-local",
            "workgroup_arn": "arn:aws:redshift-serverless:us-east-1:000000000000:workgroup/x",
        },
    },
    "status_table": {"create": True},
}


# The cases planned together (test -> the root module's settings for it).
PLANNED: dict[str, dict[str, Any]] = {
    "off": {"status_table": {"create": True}},
    "shared": {
        **ALL_ENABLED,
        "tags": TAGS,
        "kms_key_arn": KMS_KEY,
        "cloudwatch_logs_retention_in_days": 14,
    },
    "fields": {
        "kms_key_arn": KMS_KEY,
        "sqs_throttle": {
            "create": True,
            "target_state_machine_arn": TARGET,
            "target_role_arn": TARGET_ROLE,
            "kms_data_key_reuse_period_seconds": 600,
        },
        "semaphore": {
            "create": True,
            "strategy": "dynamodb",
            "holder_state_machine_arns": [TARGET],
            "reconciler_enabled": False,
            "event_cleanup_enabled": False,
            "point_in_time_recovery_enabled": False,
            "deletion_protection_enabled": True,
        },
        "dag_aggregate": {
            **ALL_ENABLED["dag_aggregate"],
            "strategy": "dependency",
            "point_in_time_recovery_enabled": False,
        },
        "status_table": {
            "create": True,
            "name": f"{PREFIX}-ledger",
            "billing_mode": "PROVISIONED",
            "provisioned_capacity": {"read_capacity": 3},
            "point_in_time_recovery_enabled": False,
            "deletion_protection_enabled": True,
            "ttl_enabled": False,
            "stream_enabled": True,
            "stream_view_type": "KEYS_ONLY",
        },
    },
}


# A plan that must fail: patterns switched on without their required settings.
REQUIRED_MISSING: dict[str, Any] = {
    "sqs_throttle": {"create": True},
    "semaphore": {"create": True, "create_wrapper": True},
    "dag_aggregate": {"create": True},
}


@pytest.fixture(scope="module")
def plans(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The saved plan of every case in PLANNED (`terraform show -json`), and the exit code
    and errors of the plan that must fail.

    Both depend only on the code (tests/result_cache.py keys them by every module,
    template and runtime file, and this directory): a build from the same inputs is
    read, and the checks below run on it all the same.
    """
    yield from result_cache.built_once(request, "root_module plans", lambda: _plan_all(request))


def _plan_all(request: pytest.FixtureRequest) -> dict[str, Any]:
    with Workspace(
        FIXTURE,
        request.getfixturevalue("localstack_endpoint"),
        request.getfixturevalue("tmp_path_factory").mktemp("root-module-tf"),
    ).initialized() as ws:
        plan_file = ws.scratch_dir / "plan.tfplan"
        ws.run(
            "plan",
            "-input=false",
            "-no-color",
            f"-out={plan_file}",
            *ws.var_args({"cases": PLANNED, "same_apply": True}),
        )
        shown = json.loads(ws.run("show", "-json", str(plan_file)).stdout)
        refused = ws.run(
            "plan",
            "-input=false",
            "-no-color",
            *ws.var_args({"cases": {"required": REQUIRED_MISSING}}),
            check=False,
        )
        return {"planned": shown, "refused": [refused.returncode, refused.stderr]}


def _plan(planned: dict[str, Any], case: str) -> dict[str, Any]:
    """One case's part of the shared plan, addressed as if it were planned alone.

    Its resource changes (``module.sfn_patterns["<case>"].…`` becomes
    ``module.sfn_patterns.…``) and its outputs; another case's resources are left out.
    """
    prefix = f'module.sfn_patterns["{case}"].'
    changes = [
        {**rc, "address": "module.sfn_patterns." + rc["address"][len(prefix) :]}
        for rc in planned.get("resource_changes", [])
        if rc["address"].startswith(prefix)
    ]
    assert changes, f"nothing planned for {case}"
    outputs = {
        name: {**change, "after": (change["after"] or {}).get(case)}
        for name, change in planned["output_changes"].items()
    }
    return {"resource_changes": changes, "output_changes": outputs}


def _created(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        rc
        for rc in plan.get("resource_changes", [])
        if rc["mode"] == "managed" and "create" in rc["change"]["actions"]
    ]


def test_patterns_are_off_unless_switched_on(plans: dict[str, Any]) -> None:
    plan = _plan(plans["planned"], "off")
    created = _created(plan)
    table = "module.sfn_patterns.module.status_table[0].aws_dynamodb_table.this[0]"
    # The table alone: its alarms wait for a target to notify (alarms.alarm_actions),
    # and nothing of the patterns left off.
    assert sorted(rc["address"] for rc in created) == [table]
    (table_change,) = [rc for rc in created if rc["address"] == table]
    assert table_change["change"]["after"]["name"] == f"{PREFIX}-tasks"
    # Unknown parts (the table ARN) are left out of "after"; disabled patterns are null.
    outputs = plan["output_changes"]["patterns"]["after"]
    assert {p for p, value in outputs.items() if value is None} == set(ALL_ENABLED) - {
        "status_table"
    }


def test_required_settings_are_named_when_missing(plans: dict[str, Any]) -> None:
    code, stderr = plans["refused"]
    assert code == 1
    # Terraform wraps long messages: compare without line breaks.
    errors = " ".join(stderr.split())
    assert "sqs_throttle.target_state_machine_arn is required" in errors
    assert "semaphore.target_state_machine_arn is required" in errors
    assert "dag_aggregate.sql_dir (the directory of <table>.sql files)" in errors


def test_shared_inputs_reach_every_pattern(plans: dict[str, Any]) -> None:
    plan = _plan(plans["planned"], "shared")
    created = _created(plan)
    modules = {rc["address"].split(".module.")[1].split("[")[0] for rc in created}
    assert modules == set(ALL_ENABLED)

    untagged, log_groups, tables, queues = [], [], [], []
    for rc in created:
        after = rc["change"]["after"]
        if "tags" in after and not TAGS.items() <= (after["tags"] or {}).items():
            untagged.append(rc["address"])
        if rc["type"] == "aws_cloudwatch_log_group":
            assert PREFIX in after["name"], rc["address"]
            log_groups.append((after["retention_in_days"], after["kms_key_id"]))
        if rc["type"] == "aws_dynamodb_table":
            tables.append(after["server_side_encryption"][0]["kms_key_arn"])
        if rc["type"] == "aws_sqs_queue":
            queues.append(after["kms_master_key_id"])
    assert untagged == []
    # Every pattern's logs: the job poller's, the starter's, the semaphore's and the DAG's.
    assert len(log_groups) >= 8
    assert set(log_groups) == {(14, KMS_KEY)}
    # The semaphore's lock table, the throttle's ledger (the status table uses the key too).
    assert tables and set(tables) == {KMS_KEY}
    assert sorted(queues) == [KMS_KEY, KMS_KEY]


def test_module_field_names_reach_the_resources(plans: dict[str, Any]) -> None:
    """Every renamed field of the root objects (1.0.0 naming scheme) reaches its resource."""
    plan = _plan(plans["planned"], "fields")
    created = {rc["address"]: rc["change"]["after"] for rc in _created(plan)}

    def only(module: str, type_: str) -> list[dict[str, Any]]:
        return [
            after
            for address, after in created.items()
            if f".module.{module}[0]." in address and address.rsplit(".", 2)[-2] == type_
        ]

    semaphore_tables = only("semaphore", "aws_dynamodb_table")
    assert semaphore_tables, created.keys()
    for table in semaphore_tables:
        assert table["point_in_time_recovery"][0]["enabled"] is False
        assert table["deletion_protection_enabled"] is True
    # reconciler_enabled / event_cleanup_enabled = false: neither rule is planned.
    assert only("semaphore", "aws_cloudwatch_event_rule") == []

    (status,) = only("status_table", "aws_dynamodb_table")
    assert status["name"] == f"{PREFIX}-ledger"
    assert (status["billing_mode"], status["read_capacity"], status["write_capacity"]) == (
        "PROVISIONED",
        3,
        5,
    )
    assert status["point_in_time_recovery"][0]["enabled"] is False
    assert status["deletion_protection_enabled"] is True
    assert status["ttl"][0]["enabled"] is False
    assert (status["stream_enabled"], status["stream_view_type"]) == (True, "KEYS_ONLY")
    assert status["server_side_encryption"][0]["kms_key_arn"] == KMS_KEY
    # The index is keyed through key_schema, not the deprecated hash_key/range_key.
    (index,) = status["global_secondary_index"]
    assert [(k["attribute_name"], k["key_type"]) for k in index["key_schema"]] == [
        ("status_key", "HASH"),
        ("update_time", "RANGE"),
    ]

    queues = only("sqs_throttle", "aws_sqs_queue")
    assert len(queues) == 2
    assert {(q["kms_master_key_id"], q["kms_data_key_reuse_period_seconds"]) for q in queues} == {
        (KMS_KEY, 600)
    }
    # target_role_arn reaches the starter, whose role may assume it for the target's
    # account (the function's environment is known only at apply; its policy at plan).
    policies = [json.loads(p["policy"]) for p in only("sqs_throttle", "aws_iam_role_policy")]
    assume = [
        s for policy in policies for s in policy["Statement"] if s.get("Sid") == "AssumeTargetRole"
    ]
    assert [s["Resource"] for s in assume] == [TARGET_ROLE], policies

    (runs,) = [
        after
        for address, after in created.items()
        if address.endswith("module.dag_aggregate[0].aws_dynamodb_table.runs[0]")
    ]
    assert runs["point_in_time_recovery"][0]["enabled"] is False


def test_values_created_in_the_same_apply_still_plan(plans: dict[str, Any]) -> None:
    """module.same_apply takes its key, targets, holder and workgroup from resources the
    same plan creates (unknown until apply), as a caller's first plan does; every
    pattern still plans its full set of resources (no count or for_each left unknown).
    A data source whose precondition read a pattern input used to be read only at
    apply, and the semaphore's ARNs and counts with it."""
    planned = [
        rc["address"]
        for rc in plans["planned"].get("resource_changes", [])
        if rc["address"].startswith("module.same_apply[0].") and rc["mode"] == "managed"
    ]
    semaphore = "module.same_apply[0].module.semaphore[0]."
    assert f"{semaphore}aws_cloudwatch_event_rule.ended[0]" in planned  # the cleanup's rule
    assert f"{semaphore}module.wrapper.aws_sfn_state_machine.this[0]" in planned
    for pattern in ("job_poller", "sqs_throttle", "dag_aggregate", "status_table"):
        assert any(a.startswith(f"module.same_apply[0].module.{pattern}[0].") for a in planned)
