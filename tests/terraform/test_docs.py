"""Every README's terraform-docs block is generated from the code and current."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_generated_readme_tables_are_current() -> None:
    proc = subprocess.run(
        ["bash", str(REPO_ROOT / "scripts/docs.sh"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_stale_readme_fails_the_check_and_names_it(tmp_path: Path) -> None:
    tfdocs = str(REPO_ROOT / ".venv/bin/terraform-docs")
    module = tmp_path / "m"
    shutil.copytree(REPO_ROOT / "modules/state-machine", module)
    config = str(REPO_ROOT / ".terraform-docs.yml")
    check = [tfdocs, "-c", config, "--output-check", str(module)]
    assert subprocess.run(check, capture_output=True, check=False).returncode == 0
    variables = module / "variables.tf"
    variables.write_text(variables.read_text().replace("Name of the", "The name of the", 1))
    proc = subprocess.run(check, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "README.md is out of date" in proc.stderr
