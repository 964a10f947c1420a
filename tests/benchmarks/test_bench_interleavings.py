"""scripts/bench_interleavings.py runs at its smallest size (no LocalStack: the explorer)."""

from __future__ import annotations

from sfn_patterns_localstack.interleavings.protocols import PROTOCOLS

from .smoke import cell, run_smoke


def test_bench_interleavings_smoke() -> None:
    rows = run_smoke("bench_interleavings", None, timeout=300)
    assert sorted(r.split("|")[1].strip() for r in rows[2:]) == sorted(PROTOCOLS)
    for protocol in PROTOCOLS:
        schedules, failing, states, steps, *_ = cell(rows, protocol)
        assert (schedules, failing) == ("10", "0"), protocol
        # Every schedule takes steps and reaches at least its starting state.
        assert int(states.replace(",", "")) >= 1 and float(steps) >= 1, protocol
