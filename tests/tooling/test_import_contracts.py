"""The architecture contracts fail `make fast-checks` when code breaks them.

`make import-contracts` (part of `make fast-checks`) runs import-linter over the
packages found on ``IMPORT_ROOTS``. These tests point it at a copy of the three
distributions' Python sources, once as they are and once with one forbidden import
added, so the check is shown to pass on today's tree and to fail, naming the broken
contract, on a tree that imports upward or in a circle.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = {
    "lambda_src": ("sfn_patterns", "sfn_patterns_samples"),
    "cli": ("sfn_patterns_cli",),
    "harness": ("sfn_patterns_localstack",),
}


def _copy(tmp_path: Path) -> Path:
    """The Python packages of the three distributions, copied (sources only)."""
    for root, packages in SOURCES.items():
        for package in packages:
            shutil.copytree(
                REPO / root / package,
                tmp_path / root / package,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "templates"),
            )
    return tmp_path


def _make(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    roots = ":".join(str(tmp_path / root) for root in SOURCES)
    return subprocess.run(
        ["make", "-s", "-o", "bootstrap", "import-contracts", f"IMPORT_ROOTS={roots}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _add_import(module: Path, statement: str) -> None:
    text = module.read_text()
    head, sep, rest = text.partition("from __future__ import annotations\n")
    module.write_text(head + sep + statement + "\n" + rest if sep else statement + "\n" + text)


def test_the_tree_as_it_is_keeps_every_contract(tmp_path: Path) -> None:
    result = _make(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        # The runtime (inside every Lambda zip) importing the harness: a layer upward.
        (
            "lambda_src/sfn_patterns/semaphore/lease.py",
            "import sfn_patterns_localstack.executions  # noqa",
            "Layers: the harness above the CLI above the runtime",
        ),
        # One pattern's runtime importing another's: they must stay independent.
        (
            "lambda_src/sfn_patterns/sqs_throttle/ledger.py",
            "import sfn_patterns.semaphore.lease  # noqa",
            "Runtime: the patterns are independent",
        ),
        # The runtime importing sample code, which is zipped only when a sample is on.
        (
            "lambda_src/sfn_patterns/job_poller/store.py",
            "import sfn_patterns_samples.smoke.handler  # noqa",
            "never imports the",
        ),
        # A cycle inside the harness: executions importing the demo, which imports it.
        (
            "harness/sfn_patterns_localstack/executions.py",
            "import sfn_patterns_localstack.demo.patterns  # noqa",
            "No import cycles inside any package",
        ),
    ],
)
def test_a_forbidden_import_fails_the_check_naming_the_contract(
    tmp_path: Path, module: str, statement: str, contract: str
) -> None:
    tree = _copy(tmp_path)
    _add_import(tree / module, statement)
    result = _make(tree)
    assert result.returncode != 0, result.stdout
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken.split()), result.stdout
