"""`terraform test` for every module that has native tests (modules/<m>/tests/*.tftest.hcl).

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

MODULES = sorted(
    path.parent.parent
    for path in (REPO_ROOT / "modules").glob("*/tests/*.tftest.hcl")
    if path.is_file()
)


@pytest.mark.parametrize("module", MODULES, ids=[p.name for p in MODULES])
def test_terraform_test_passes(module: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(TF_DATA_DIR=str(tmp_path / ".terraform"), TF_IN_AUTOMATION="1", TF_INPUT="0")
    binary = terraform_binary()
    for args in (["init", "-no-color", "-input=false", "-backend=false"], ["test", "-no-color"]):
        proc = subprocess.run(
            [binary, *args], cwd=module, env=env, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, (
            f"terraform {args[0]} in {module}:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
        )
