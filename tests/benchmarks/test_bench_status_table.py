"""scripts/bench_status_table.py runs at its smallest size on the suite's LocalStack."""

from __future__ import annotations

import pytest

from .smoke import run_smoke

pytestmark = pytest.mark.integration


def test_bench_status_table_smoke(localstack_endpoint: str) -> None:
    run_smoke("bench_status_table", localstack_endpoint)
