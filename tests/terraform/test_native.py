"""`terraform test` for every module that has native tests (modules/<m>/tests/*.tftest.hcl)
and for the root module (tests/terraform/root_native/*.tftest.hcl).

The native tests plan each module with mock providers (the real provider binary
supplies the schema) and check validations, conditional resources, outputs and the
rendered definitions, including the partition in every ARN: Terraform itself
evaluates the HCL, so no Python copy of the module's logic is needed.

Only ``aws`` is mocked where a module renders at plan time through
``data "local_command"`` (dag-aggregate runs its Python planner on a SQL fixture), so
the ``python3`` those tests find on PATH must have the planner's dependencies: this
interpreter's, put first on PATH.

Nothing is written into the checkout: ``terraform init`` writes ``.terraform.lock.hcl``
into the directory it runs in, and a lock file left in modules/<m>/ pins the
provider's hashes, so a long-lived checkout fails ``init`` once the provider is
rebuilt. Each run works in a staging tree of links (the harness's ``stage``, as
every LocalStack test does), where the lock file and ``.terraform/`` land instead
(tests/terraform/checkout.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import (
    REPO_ROOT,
    interpreter_first_path,
    stage,
    terraform_binary,
)

from .. import result_cache
from .checkout import terraform_files

pytestmark = pytest.mark.terraform

MODULES_DIR = REPO_ROOT / "modules"
# One entry per module (not per test file: `terraform test` runs all of a module's).
MODULES = sorted(
    {path.parent.parent for path in MODULES_DIR.glob("*/tests/*.tftest.hcl") if path.is_file()}
)
# The root module's tests live under tests/ of the repository, which is the Python
# test tree: they get a directory of their own, passed with -test-directory.
ROOT_TESTS = "tests/terraform/root_native"
CASES = [*((module, "tests") for module in MODULES), (REPO_ROOT, ROOT_TESTS)]


def _run_blocks(test_dir: Path) -> int:
    return sum(
        len(re.findall(r"^run\s+\"", path.read_text(), flags=re.MULTILINE))
        for path in test_dir.glob("*.tftest.hcl")
    )


@pytest.mark.parametrize(
    ("config", "test_dir"),
    CASES,
    ids=["root" if c == REPO_ROOT else c.name for c, _ in CASES],
)
def test_terraform_test_passes(
    config: Path, test_dir: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    assert any((config / test_dir).glob("*.tftest.hcl")), f"no tests in {config / test_dir}"
    case = f"terraform test {config.relative_to(REPO_ROOT)} {test_dir}"
    if result_cache.passed_before(case):
        # Passed on exactly these inputs before (tests/result_cache.py); the session's
        # summary lists it.
        request.node.user_properties.append(("replayed", case))
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        TF_DATA_DIR=str(tmp_path / ".terraform"),
        TF_IN_AUTOMATION="1",
        TF_INPUT="0",
        TF_DISABLE_PLUGIN_TLS="1",  # as the harness's Workspace: no per-start certificates
        PATH=interpreter_first_path(env.get("PATH", "")),
        SFN_PATTERNS_DAG_CACHE=str(tmp_path / "dag-parse"),
    )
    binary = terraform_binary()
    before = terraform_files()
    staged = stage(config, tmp_path / "stage")
    proc = None
    for args in (
        ["init", "-no-color", "-input=false", "-backend=false"],
        ["test", "-no-color", f"-test-directory={test_dir}"],
    ):
        proc = subprocess.run(
            [binary, *args],
            cwd=staged,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert proc.returncode == 0, (
            f"terraform {args[0]} in {config}:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
        )
    # Every run block ran and passed: none skipped after an earlier failure, no file
    # left out.
    passed = re.search(r"(\d+) passed, 0 failed", proc.stdout)
    assert passed and int(passed.group(1)) == _run_blocks(config / test_dir), proc.stdout[-3000:]
    # The lock file went to the staging tree, not into the checkout.
    assert (staged / ".terraform.lock.hcl").is_file()
    assert terraform_files() == before, "terraform wrote into the checkout"
    result_cache.record_pass(case, passed.group(0))


def test_every_module_has_native_tests() -> None:
    modules = sorted(p.name for p in MODULES_DIR.iterdir() if (p / "versions.tf").is_file())
    missing = [
        name for name in modules if not any((MODULES_DIR / name / "tests").glob("*.tftest.hcl"))
    ]
    assert missing == [], f"modules without tests/*.tftest.hcl: {missing}"
