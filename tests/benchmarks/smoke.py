"""Run a benchmark script at its smallest size, as `make test` does for every one.

Every figure in the docs comes from one run of a ``scripts/bench_*.py``; running each
at ``--smoke`` size in the suite keeps those scripts working, so a figure's source
can never rot unnoticed. A script must accept ``--smoke``, use the LocalStack named by
``LOCALSTACK_ENDPOINT`` (and then destroy what it applied, unless ``--keep``), exit 0
and print its table as Markdown rows (lines starting with ``|``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_smoke(
    name: str, endpoint: str | None, timeout: float = 600, keep: bool = False
) -> list[str]:
    """Run ``scripts/<name>.py --smoke`` (and ``--keep``: what it applies is left on
    ``endpoint``, conftest.destroy_deployments); return its table rows (fails the test
    otherwise).

    The script gets a temporary directory of its own (``TMPDIR``), which must be
    empty when it exits (unless ``keep``: the state of what it kept may stay): a
    benchmark (and any LocalStack it starts) cleans up after itself, so runs do not
    pile directories up in the system's temporary directory.
    """
    env = dict(os.environ)
    if endpoint:
        env["LOCALSTACK_ENDPOINT"] = endpoint
    with tempfile.TemporaryDirectory(prefix="sfnp-smoke-") as scratch:
        env["TMPDIR"] = scratch
        proc = subprocess.run(
            [sys.executable, str(SCRIPTS / f"{name}.py"), "--smoke", *(["--keep"] if keep else [])],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
        left = sorted(path.name for path in Path(scratch).iterdir())
    assert proc.returncode == 0, f"{name} --smoke exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    rows = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    assert len(rows) >= 3, f"{name} --smoke printed no table:\n{proc.stdout[-2000:]}"
    # With --keep, a script may leave its Terraform state for what it kept.
    assert keep or left == [], f"{name} --smoke left these in its temporary directory: {left}"
    return rows


def cell(rows: list[str], label: str) -> list[str]:
    """The cells of the (first) row whose first cell starts with ``label``."""
    return rows_of(rows, label)[0]


def rows_of(rows: list[str], label: str) -> list[list[str]]:
    """The cells of every row whose first cell starts with ``label`` (one per pattern)."""
    found = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if cells and cells[0].startswith(label):
            found.append(cells[1:])
    assert found, f"no row labelled {label!r} in:\n" + "\n".join(rows)
    return found
