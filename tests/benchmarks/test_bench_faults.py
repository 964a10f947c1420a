"""scripts/bench_faults.py runs at its smallest size on the suite's LocalStack (issue 28).

run_smoke fails unless the script exits 0, which it does only when every pattern at
every fault rate lost, doubled, over-admitted and leaked nothing; the cells are
checked here too, so a table that printed "n/a" where a count belongs fails.
"""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


def test_bench_faults_smoke(localstack_endpoint: str, destroy_deployments: bool) -> None:
    rows = run_smoke("bench_faults", localstack_endpoint, keep=not destroy_deployments)
    for label in ("requests lost", "duplicate runs", "slots leaked after settling"):
        assert set(cell(rows, label)) == {"0"}, (label, rows)
    assert set(cell(rows, "over-admissions")) <= {"0", "n/a"}, rows
    injected = cell(rows, "faults injected")
    assert injected[0] == "0" and "throttle" in injected[2], rows
