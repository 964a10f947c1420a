"""scripts/bench_futex_hash.py runs at its smallest size (no LocalStack: two fresh processes)."""

from __future__ import annotations

from .smoke import cell, run_smoke


def test_bench_futex_hash_smoke() -> None:
    rows = run_smoke("bench_futex_hash", None, timeout=120)
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["kernel default", "harness (16,384)"]
    assert cell(rows, "harness (16,384)")[0] == "16,384"
    assert float(cell(rows, "kernel default")[3]) == 1.0
