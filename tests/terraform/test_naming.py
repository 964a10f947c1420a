"""One naming scheme for every input of every module and of the root module.

The inputs are read by terraform-docs (the binary `make tf-docs` uses), not by parsing
HCL here, so what is checked is what users see in the README tables. The rule
(docs/modules.md, "Input naming"): `create` is a module's switch, `create_<thing>` creates an
optional resource, every other boolean is `<feature>_enabled`, except a boolean
named after the provider attribute it sets. One spelling each for the KMS key, point-
in-time recovery, deletion protection, log level, log retention and the concurrency
limit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Booleans named after the provider attribute they set (docs/modules.md, "Input naming").
PROVIDER_ATTRIBUTE_BOOLS = {
    "s3_force_destroy",  # aws_s3_bucket.force_destroy
    "content_based_deduplication",  # aws_sqs_queue.content_based_deduplication
    "logging_include_execution_data",  # aws_sfn_state_machine logging include_execution_data
}
# The root objects' fields renamed or removed in 1.0.0 (UPGRADING.md, "Renamed inputs"),
# declared only so that setting one fails the plan (tests/terraform/root_native plans
# each): they are the old scheme, so the checks below leave them out of the root.
RENAMED = {
    "enabled": "create",
    "lambda_bundle": "job_adapter",
    "max_concurrent_executions": "max_concurrency",
    "sqs_kms_data_key_reuse_period_seconds": "kms_data_key_reuse_period_seconds",
    "semaphore_limit": "max_concurrency",
    "enable_reconciler": "reconciler_enabled",
    "enable_event_cleanup": "event_cleanup_enabled",
    "point_in_time_recovery": "point_in_time_recovery_enabled",
    "deletion_protection": "deletion_protection_enabled",
    "task_logging_level": "logging_level",
    "runs_table_point_in_time_recovery_enabled": "point_in_time_recovery_enabled",
    "table_name": "name",
    "table_billing_mode": "billing_mode",
    "table_provisioned_capacity": "provisioned_capacity",
    "table_point_in_time_recovery_enabled": "point_in_time_recovery_enabled",
    "table_deletion_protection_enabled": "deletion_protection_enabled",
    "table_ttl_enabled": "ttl_enabled",
    "table_stream_enabled": "stream_enabled",
    "table_stream_view_type": "stream_view_type",
}
PATTERN_OBJECTS = ["job_poller", "sqs_throttle", "semaphore", "dag_aggregate", "status_table"]
DIRS = [REPO_ROOT, *sorted(p.parent for p in (REPO_ROOT / "modules").glob("*/variables.tf"))]
# `name = optional(bool ...)` or `name = bool` on one line of an object type.
BOOL_FIELD = re.compile(r"^\s*([a-z0-9_]+)\s*=\s*(?:optional\(\s*)?bool\b", re.MULTILINE)
FIELD = re.compile(r"^\s*([a-z0-9_]+)\s*=", re.MULTILINE)


def _terraform_docs() -> Path:
    """The terraform-docs that scripts/docs.sh runs (.venv/bin, next to this Python)."""
    binary = Path(sys.executable).parent / "terraform-docs"
    if not binary.exists():
        pytest.skip(f"{binary} not found: run make bootstrap")
    return binary


def _inputs(module: Path, tmp_path: Path) -> dict[str, str]:
    """Input name -> type string. The repository's .terraform-docs.yml injects into
    README.md, and terraform-docs also looks for it in the module directory (the root
    module's is the repository root): an empty config of our own, with cwd a temporary
    directory, keeps it out."""
    config = tmp_path / "terraform-docs.yml"
    config.write_text("formatter: json\n")
    proc = subprocess.run(
        [str(_terraform_docs()), "json", "-c", str(config), str(module)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    return {i["name"]: i["type"] for i in json.loads(proc.stdout)["inputs"]}


def _label(module: Path) -> str:
    return "root" if module == REPO_ROOT else module.name


def _bool_ok(name: str) -> bool:
    return (
        name == "create"
        or name.startswith("create_")
        or name.endswith("_enabled")
        or name in PROVIDER_ATTRIBUTE_BOOLS
    )


def _names(inputs: dict[str, str]) -> list[tuple[str, str]]:
    """(path, name) of every input and of every field of an object-typed input.

    A root pattern object's renamed field (RENAMED) is left out: it is the old name.
    """
    out = [(name, name) for name in inputs]
    for name, type_ in inputs.items():
        if type_.startswith(("object(", "list(object(", "map(object(")):
            out += [
                (f"{name}.{field}", field)
                for field in FIELD.findall(type_)
                if not (name in PATTERN_OBJECTS and field in RENAMED)
            ]
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("tfdocs")
    return {_label(d): _inputs(d, tmp) for d in DIRS}


def test_every_module_is_read(inputs: dict[str, dict[str, str]]) -> None:
    # A module whose inputs cannot be read would pass every other test vacuously.
    assert set(inputs) >= {"root", "semaphore", "sqs-throttle", "status-table", "dag-aggregate"}
    assert all(inputs.values()), [m for m, i in inputs.items() if not i]


def test_booleans_follow_one_form(inputs: dict[str, dict[str, str]]) -> None:
    bad = [
        f"{module}: {name}"
        for module, module_inputs in inputs.items()
        for name, type_ in module_inputs.items()
        if type_ == "bool" and not _bool_ok(name)
    ]
    assert bad == []


def test_object_fields_follow_the_same_form(inputs: dict[str, dict[str, str]]) -> None:
    bad = [
        f"{module}: {name}.{field}"
        for module, module_inputs in inputs.items()
        for name, type_ in module_inputs.items()
        for field in BOOL_FIELD.findall(type_)
        if not _bool_ok(field)
    ]
    assert bad == []


def test_root_objects_use_the_modules_switch(inputs: dict[str, dict[str, str]]) -> None:
    for pattern in PATTERN_OBJECTS:
        fields = FIELD.findall(inputs["root"][pattern])
        assert "create" in fields, pattern
        # `enabled` is there only as the 0.x switch that fails the plan.
        assert re.search(r"\benabled\s*=\s*optional\(any\)", inputs["root"][pattern]), pattern


def test_every_root_field_upgrading_renames_is_declared_to_fail() -> None:
    """Each old name UPGRADING.md's table gives for a root object is still a field of it.

    Terraform drops a field an object type does not declare without a word: an old
    name missing here would be ignored, not refused (a 0.x `enabled = true` planned the
    pattern away). The root's native tests plan each declared one and see it fail.
    """
    upgrading = (REPO_ROOT / "UPGRADING.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)`[^|]*\|[^|]*\| ([^|]*root[^|]*)\|", upgrading, re.M)
    assert len(rows) >= 15, rows
    variables = (REPO_ROOT / "variables.tf").read_text()
    for old, where in rows:
        objects = re.findall(r"root `([a-z_]+)`", where) or PATTERN_OBJECTS
        for name in objects:
            block = variables.split(f'variable "{name}" {{', 1)[1].split("\n}\n", 1)[0]
            assert re.search(rf"^\s*{old}\s*=\s*optional\(any\)", block, re.M), (name, old)
        assert old in RENAMED, old


@pytest.mark.parametrize(
    ("fragment", "spelling"),
    [
        ("kms_key", "kms_key_arn"),
        ("point_in_time", "point_in_time_recovery_enabled"),
        ("deletion_protection", "deletion_protection_enabled"),
        ("logs_retention", "cloudwatch_logs_retention_in_days"),
    ],
)
def test_one_spelling_each(inputs: dict[str, dict[str, str]], fragment: str, spelling: str) -> None:
    bad = [
        f"{module}: {path}"
        for module, module_inputs in inputs.items()
        for path, name in _names(module_inputs)
        if fragment in name and name != spelling and name not in FOREIGN_KEYS
    ]
    assert bad == []


# Keys of resources a module does not own, beside its own ``kms_key_arn``: the same
# spelling, prefixed with whose key it is (a list for several machines).
FOREIGN_KEYS = {
    "target_kms_key_arn": "the key of the semaphore wrapper's target state machine",
    "holder_kms_key_arns": "the keys of the state machines that hold semaphore slots",
    "secret_kms_key_arn": "the key of dag-aggregate's Redshift database secret",
}


def test_keys_of_other_resources_say_whose_they_are(inputs: dict[str, dict[str, str]]) -> None:
    used = {name for module_inputs in inputs.values() for _, name in _names(module_inputs)}
    assert set(FOREIGN_KEYS) <= used, "a listed key input is gone: drop it from FOREIGN_KEYS"
    for name in FOREIGN_KEYS:
        owner, _, rest = name.partition("_kms_key_arn")
        assert owner and rest in ("", "s"), name


def test_the_concurrency_limit_is_max_concurrency(inputs: dict[str, dict[str, str]]) -> None:
    """sqs-throttle's MAX, the semaphore's limit and the DAG's Map concurrency: one name."""
    bad = [
        f"{module}: {path}"
        for module, module_inputs in inputs.items()
        for path, name in _names(module_inputs)
        if re.search(r"limit|max_concurren", name)
        if name != "max_concurrency" and name not in RENAMED
    ]
    assert bad == []


def test_log_levels_end_in_logging_level(inputs: dict[str, dict[str, str]]) -> None:
    bad = [
        f"{module}: {path}"
        for module, module_inputs in inputs.items()
        for path, name in _names(module_inputs)
        if "log_level" in name or ("logging" in name and "level" in name)
        if not name.endswith("logging_level")
    ]
    assert bad == []


def test_nothing_starts_with_enable(inputs: dict[str, dict[str, str]]) -> None:
    bad = [
        f"{module}: {path}"
        for module, module_inputs in inputs.items()
        for path, name in _names(module_inputs)
        if name.startswith("enable_")
    ]
    assert bad == []
