"""Python interpreters other than the harness's: pyenv's 3.9 and 3.13, in cached venvs.

Shared by the version matrix (test_python_versions.py) and the consumer test, which
runs the modules' plan-time Python on a team's own interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SFN_PATTERNS_CACHE") or Path.home() / ".cache/sfn-patterns")
PYENV = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
TEST_TOOLS = ["pytest", "pytest-timeout", "moto[dynamodb]"]
PLANNER_REQUIREMENTS = ["networkx>=3.2", "sqlglot>=25.0", "jinja2>=3.1", "click>=8.1"]


def interpreter(version: str) -> Path:
    candidates = sorted(PYENV.glob(f"{version}.*/bin/python{version}"))
    if not candidates:
        pytest.fail(f"no Python {version} under {PYENV}: install it with `pyenv install {version}`")
    return candidates[-1]


def run(*args: object, cwd: Path = REPO, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def _generated(relative: Path) -> bool:
    """Files tools write into lambda_src (caches, egg-info), which must not key the venv.

    Why: ruff's cache and the editable install's egg-info differ from run to run, and
    once they were in the key every run rebuilt both venvs (a minute of CPU).
    """
    return any(
        part == "__pycache__" or part.startswith(".") or part.endswith(".egg-info")
        for part in relative.parts
    )


def venv_for(version: str, tmp_path: Path) -> Path:
    """A venv with the runtime wheel, the test tools and the planner's dependencies."""
    key = hashlib.sha256()
    for path in sorted((REPO / "lambda_src").rglob("*")):
        if path.is_file() and not _generated(path.relative_to(REPO / "lambda_src")):
            key.update(str(path.relative_to(REPO)).encode() + path.read_bytes())
    key.update(" ".join(TEST_TOOLS + PLANNER_REQUIREMENTS).encode())
    venv = CACHE / "pyvenv" / f"{version}-{key.hexdigest()[:12]}"
    python = venv / "bin/python"
    (CACHE / "pyvenv").mkdir(parents=True, exist_ok=True)
    with open(CACHE / "pyvenv" / f".{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".complete").exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        run(interpreter(version), "-m", "venv", venv)
        pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        wheels = tmp_path / "wheels"
        source = shutil.copytree(  # build outside the checkout: no build/ or egg-info in it
            REPO / "lambda_src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__")
        )
        run(python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, source)
        run(*pip, *sorted(wheels.glob("sfn_patterns_runtime-*.whl")))
        run(*pip, *TEST_TOOLS, *PLANNER_REQUIREMENTS)
        (venv / ".complete").write_text(version)
    return python
