"""scripts/bench_dag.py runs at its smallest size (planner only, no LocalStack)."""

from __future__ import annotations

from .smoke import run_smoke


def test_bench_dag_smoke() -> None:
    run_smoke("bench_dag", endpoint=None)
