"""The npm test tools (asl-validator, iam-simulate): where they are installed, how to run one.

``scripts/bootstrap.sh`` installs each tool pinned by ``scripts/TOOL/package-lock.json``
into the project cache, ``TOOL-VERSION/node_modules``. A tool is driven by a script of
that directory that takes the install directory and reads a whole batch as JSON on
stdin: one node start per batch, not per item.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.server import cache_dir

REPO_ROOT = Path(__file__).resolve().parents[2]


def version(source: Path, package: str) -> str:
    """The version of ``package`` pinned in ``source``/package.json."""
    return json.loads((source / "package.json").read_text())["dependencies"][package]


def install_dir(source: Path, package: str) -> Path:
    """Where scripts/bootstrap.sh installs ``package`` (node_modules inside)."""
    return cache_dir() / f"{package.rsplit('/', 1)[-1]}-{version(source, package)}"


def run(source: Path, script: str, package: str, payload: Any, *flags: str) -> str:
    """Run ``source``/``script`` on ``payload`` (JSON on stdin) in one node process.

    Raises RuntimeError when node or the installed tool is missing, or node fails.
    """
    node = shutil.which("node")
    installed = install_dir(source, package)
    if node is None:
        raise RuntimeError(
            f"node not found on PATH: {package} runs on Node.js (the test suite needs "
            "20.16 or later, docs/getting-started.md#prerequisites)"
        )
    if not (installed / "node_modules" / package / "package.json").exists():
        raise RuntimeError(
            f"{package} {version(source, package)} is not installed in {installed}: "
            "run `make bootstrap`"
        )
    done = subprocess.run(
        [node, str(source / script), str(installed), *flags],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{package} failed (exit {done.returncode}):\n{done.stderr}")
    return done.stdout
