"""scripts/bench_dag.py runs at its smallest size (planner only, no LocalStack)."""

from __future__ import annotations

from .smoke import cell, run_smoke


def test_bench_dag_smoke() -> None:
    rows = run_smoke("bench_dag", endpoint=None)
    # 200 generated files: all parsed cold, none warm, exactly the edited one after a change.
    assert cell(rows, "200")[-1] == "200 / 0 / 1"
    assert cell(rows, "300")[-1] == "True"  # our reduction equals networkx's
