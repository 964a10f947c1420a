"""scripts/bench_concurrency.py runs at its smallest size on the suite's LocalStack."""

from __future__ import annotations

import pytest

from .smoke import run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


def test_bench_concurrency_smoke(localstack_endpoint: str) -> None:
    run_smoke("bench_concurrency", localstack_endpoint)
