"""scripts/require-node.sh: the bootstrap's Node.js check refuses an old or missing Node
in one line that names the version found and the one needed.

Why it exists: the test tools (asl-validator, iam-simulate) install with any npm, and an
older Node than their locked dependencies declare fails only later, inside a test. Each
case runs the script with a stand-in ``node`` (and ``npm``) first on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "require-node.sh"
BOOTSTRAP = SCRIPT.with_name("bootstrap.sh")


def run(tmp_path: Path, node_version: str | None, npm: bool = True) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if node_version is not None:
        (bin_dir / "node").write_text(f"#!/bin/sh\necho {node_version}\n")
        (bin_dir / "node").chmod(0o755)
    if npm:
        (bin_dir / "npm").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / "npm").chmod(0o755)
    # Only the stand-ins and the shell's basics: no Node of the machine's.
    basics = tmp_path / "basics"
    basics.mkdir()
    for tool in ("sort", "head", "sed", "printf"):
        found = shutil.which(tool)
        if found:
            (basics / tool).symlink_to(found)
    return subprocess.run(
        ["/bin/bash", str(SCRIPT), "20.16"],
        env={**os.environ, "PATH": f"{bin_dir}:{basics}"},
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("version", ["v20.16.0", "v20.20.2", "v22.1.0", "v100.0.0"])
def test_node_at_or_above_the_minimum_passes(tmp_path: Path, version: str) -> None:
    result = run(tmp_path, version)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize("version", ["v18.19.0", "v20.15.1", "v20.9.0", "v8.17.0"])
def test_an_older_node_fails_naming_both_versions(tmp_path: Path, version: str) -> None:
    result = run(tmp_path, version)
    assert result.returncode == 1
    line = result.stderr.strip()
    assert "\n" not in line
    assert f"Node.js {version[1:]}" in line and "older than 20.16" in line
    assert "install Node.js 20.16 or later" in line


@pytest.mark.parametrize(("node", "npm"), [(None, True), ("v22.1.0", False)])
def test_a_missing_node_or_npm_fails_saying_what_to_install(
    tmp_path: Path, node: str | None, npm: bool
) -> None:
    result = run(tmp_path, node, npm=npm)
    assert result.returncode == 1
    assert "node or npm not found" in result.stderr
    assert "install Node.js 20.16 or later with npm" in result.stderr


def test_a_node_that_prints_no_version_fails(tmp_path: Path) -> None:
    result = run(tmp_path, "garbage")
    assert result.returncode == 1
    assert "not a version" in result.stderr


def test_the_bootstrap_calls_it_before_npm() -> None:
    text = BOOTSTRAP.read_text()
    assert 'bash "$root/scripts/require-node.sh" 20.16' in text
    assert text.index("require-node.sh") < text.index('npm_tool "$root/scripts')
