"""scripts/bench_dag_strategies.py runs at its smallest size on the suite's LocalStack."""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


def test_bench_dag_strategies_smoke(localstack_endpoint: str, destroy_deployments: bool) -> None:
    rows = run_smoke("bench_dag_strategies", localstack_endpoint, keep=not destroy_deployments)
    for strategy in ("parent-level", "dependency"):
        row = cell(rows, strategy)
        assert row[0] == "event"
        assert float(row[2]) > 0  # a measured makespan
        assert 3 <= float(row[4]) < 20  # transitions per task (no mismatch: exit status 0)
    scale = cell(rows, "6")
    assert scale[-1] in ("yes", "no")
    assert 0 < float(scale[5]) < 20  # DynamoDB requests per task, from the runtime's logs
