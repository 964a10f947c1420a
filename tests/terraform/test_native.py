"""`terraform test` for every module that has native tests (modules/<m>/tests/*.tftest.hcl)
and for the root module (tests/terraform/root_native/*.tftest.hcl).

The native tests plan each module with mock providers (the real provider binary
supplies the schema) and check validations, conditional resources, outputs and the
rendered definitions, including the partition in every ARN: Terraform itself
evaluates the HCL, so no Python copy of the module's logic is needed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform import REPO_ROOT, terraform_binary

pytestmark = pytest.mark.terraform

# The root module's tests live under tests/ of the repository, which is the Python
# test tree: they get a directory of their own, passed with -test-directory.
ROOT_TESTS = "tests/terraform/root_native"

MODULES = sorted(
    {path.parent.parent for path in (REPO_ROOT / "modules").glob("*/tests/*.tftest.hcl")}
)
CASES = [*((module, "tests") for module in MODULES), (REPO_ROOT, ROOT_TESTS)]


@pytest.mark.parametrize(
    ("config", "test_dir"),
    CASES,
    ids=["root" if c == REPO_ROOT else c.name for c, _ in CASES],
)
def test_terraform_test_passes(config: Path, test_dir: str, tmp_path: Path) -> None:
    assert any((config / test_dir).glob("*.tftest.hcl")), f"no tests in {config / test_dir}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(TF_DATA_DIR=str(tmp_path / ".terraform"), TF_IN_AUTOMATION="1", TF_INPUT="0")
    binary = terraform_binary()
    for args in (
        ["init", "-no-color", "-input=false", "-backend=false"],
        ["test", "-no-color", f"-test-directory={test_dir}"],
    ):
        proc = subprocess.run(
            [binary, *args], cwd=config, env=env, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, (
            f"terraform {args[0]} in {config}:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
        )
