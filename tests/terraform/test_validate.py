"""Every module and example initializes offline and passes `terraform validate`.

In a staging tree of links, so that no lock file is written into the checkout
(tests/terraform/checkout.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import stage, terraform_binary

from .. import result_cache
from .checkout import terraform_files

pytestmark = pytest.mark.terraform

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGURATIONS = sorted(
    p
    for p in [
        REPO_ROOT,
        *(REPO_ROOT / "modules").iterdir(),
        *(REPO_ROOT / "examples").iterdir(),
        # The own-root-against-LocalStack configuration docs/getting-started.md shows.
        REPO_ROOT / "tests" / "tooling" / "localstack_root",
    ]
    if any(p.glob("*.tf"))
)


@pytest.mark.parametrize(
    "config_dir",
    CONFIGURATIONS,
    ids=[str(p.relative_to(REPO_ROOT)) or "root" for p in CONFIGURATIONS],
)
def test_configuration_validates(
    config_dir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    case = f"terraform validate {config_dir.relative_to(REPO_ROOT)}"
    if result_cache.passed_before(case):  # on exactly these inputs (tests/result_cache.py)
        request.node.user_properties.append(("replayed", case))
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(TF_DATA_DIR=str(tmp_path / ".terraform"), TF_IN_AUTOMATION="1", TF_INPUT="0")
    before = terraform_files()
    staged = stage(config_dir, tmp_path / "stage")

    def terraform(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [terraform_binary(), *args],
            cwd=staged,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    init = terraform("init", "-backend=false", "-no-color")
    assert init.returncode == 0, init.stdout + init.stderr
    validate = terraform("validate", "-no-color")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert terraform_files() == before, "terraform wrote into the checkout"
    result_cache.record_pass(case, validate.stdout.strip())
