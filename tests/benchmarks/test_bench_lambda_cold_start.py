"""scripts/bench_lambda_cold_start.py runs at its smallest size.

Its fork-server measurements run on the suite's LocalStack; the process-per-worker mode
needs a LocalStack started with that mode, which the script starts itself.
"""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = pytest.mark.integration


def test_bench_lambda_cold_start_smoke(localstack_endpoint: str) -> None:
    rows = run_smoke("bench_lambda_cold_start", localstack_endpoint)
    for executor in ("fork server", "process per worker"):
        cold_median, cold_p90, cpu, warm = (float(c) for c in cell(rows, executor))
        assert 0 < cold_median <= cold_p90, rows
        assert cpu > 0 and warm > 0, rows
    assert all(c.endswith("x") for c in cell(rows, "process per worker / fork server")), rows
    for runtime in ("python3.9", "python3.10", "python3.11", "python3.12", "python3.13"):
        first, first_cpu, later, later_cpu = (float(c) for c in cell(rows, runtime))
        assert first > 0 and first_cpu > 0 and later > 0 and later_cpu >= 0, rows
