"""scripts/bench_concurrency.py runs at its smallest size on the suite's LocalStack."""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.slow]

COLUMNS = ["semaphore", "semaphore-fifo", "oldest-first", "callback", "sqs-throttle"]


def test_bench_concurrency_smoke(localstack_endpoint: str, destroy_deployments: bool) -> None:
    rows = run_smoke("bench_concurrency", localstack_endpoint, keep=not destroy_deployments)
    header = [c.strip().strip("`") for c in rows[0].strip().strip("|").split("|")][1:]
    assert header == COLUMNS
    for label in (
        "transitions per blocked minute",
        "transitions per execution",
        "admission after release, median",
        "admission after release, p90",
        "peak concurrency",
    ):
        assert len(cell(rows, label)) == len(COLUMNS), label
    # The limit (1 at --smoke size) held in every scheme.
    assert cell(rows, "peak concurrency") == ["1"] * len(COLUMNS)
