"""scripts/bench_faults.py runs at its smallest size on the suite's LocalStack.

run_smoke fails unless the script exits 0, which it does only when every pattern at
every fault rate lost, doubled, over-admitted and leaked nothing; the cells are
checked here too, so a table that printed "n/a" where a count belongs fails.
"""

from __future__ import annotations

import pytest

from .smoke import rows_of, run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


def test_bench_faults_smoke(localstack_endpoint: str, destroy_deployments: bool) -> None:
    rows = run_smoke("bench_faults", localstack_endpoint, keep=not destroy_deployments)
    patterns = [
        cells[0].strip(" *") for cells in (row.split("|")[1:] for row in rows) if "**" in cells[0]
    ]
    assert patterns == [
        "status-table",
        "semaphore",
        "job-poller",
        "sqs-throttle",
        "dag-aggregate",
    ], rows
    # One row per pattern for each count, each cell a 0 (n/a: a pattern with no limit
    # or nothing to leak).
    for label in ("requests lost", "duplicate runs"):
        assert [set(cells) for cells in rows_of(rows, label)] == [{"0"}] * 5, (label, rows)
    for label in ("over-admissions", "slots leaked after settling"):
        found = rows_of(rows, label)
        assert len(found) == 5 and all(set(c) <= {"0", "n/a"} for c in found), (label, rows)
    for injected in rows_of(rows, "faults injected"):
        assert injected[0] == "0" and injected[2] != "0", rows
