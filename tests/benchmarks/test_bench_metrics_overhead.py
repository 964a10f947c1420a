"""scripts/bench_metrics_overhead.py runs at its smallest size (three LocalStacks of its
own, one per CloudWatch mode: the services and SFNP_METRICS are read at start)."""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = pytest.mark.integration


def test_bench_metrics_overhead_smoke() -> None:
    rows = run_smoke("bench_metrics_overhead", None, timeout=300)
    labels = [r.split("|")[1].strip() for r in rows[2:]]
    assert labels == [
        "off",
        "localstack",
        "sink",
        "localstack / off",
        "sink / off",
        "sink / localstack",
    ]
    assert float(cell(rows, "off")[0]) > 0 and cell(rows, "off")[1] == "-", rows
    for mode in ("localstack", "sink"):
        invokes, alarms = (float(c) for c in cell(rows, mode))
        assert invokes > 0 and alarms >= 0, rows
        assert cell(rows, f"{mode} / off")[0].endswith("x"), rows
    assert all(c.endswith("x") or c == "-" for c in cell(rows, "sink / localstack")), rows
