"""`terraform test` of modules/job-poller: every wait's rendered definition and plan-time check.

The *.tftest.hcl files in modules/job-poller/tests plan the module with mock
providers, so Terraform itself renders the templates and evaluates the module's
formulas; nothing here re-implements them in Python. (That the formulas match real
executions is checked on LocalStack in test_example.py and test_two_pollers.py.)
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform import terraform_binary

pytestmark = pytest.mark.terraform

MODULE = Path(__file__).resolve().parents[2] / "modules" / "job-poller"


def test_terraform_test_passes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(TF_DATA_DIR=str(tmp_path / ".terraform"), TF_IN_AUTOMATION="1", TF_INPUT="0")

    def terraform(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [terraform_binary(), *args],
            cwd=MODULE,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )

    init = terraform("init", "-backend=false", "-no-color")
    assert init.returncode == 0, init.stdout + init.stderr
    result = terraform("test", "-no-color")
    assert result.returncode == 0, result.stdout + result.stderr
    passed = re.search(r"(\d+) passed, 0 failed", result.stdout)
    runs = sum(f.read_text().count("\nrun ") for f in (MODULE / "tests").glob("*.tftest.hcl"))
    assert passed and int(passed.group(1)) == runs, result.stdout
