"""scripts/bench_iam_overhead.py runs at its smallest size (two LocalStacks of its own,
one per SFNP_IAM mode: the mode is read at start)."""

from __future__ import annotations

import pytest

from .smoke import cell, run_smoke

pytestmark = pytest.mark.integration


def test_bench_iam_overhead_smoke() -> None:
    rows = run_smoke("bench_iam_overhead", None, timeout=300)
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["off", "enforce", "enforce / off"]
    for mode in ("off", "enforce"):
        calls, each, per_call, wall = cell(rows, mode)
        assert calls == "50" and float(each) > 0 and float(per_call) > 0 and float(wall) > 0, rows
    cpu_ratio, wall_ratio = cell(rows, "enforce / off")[2:]
    assert cpu_ratio.endswith("x") and wall_ratio.endswith("x"), rows
