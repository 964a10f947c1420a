"""The README Inputs/Outputs tables are generated from the code and kept in sync."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_generated_module_docs_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts/tfdocs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
