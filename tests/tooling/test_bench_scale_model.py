"""scripts/bench_scale.py's arithmetic: the slope fit, the tables and the capacity model.

Fast checks on made-up columns (no LocalStack): the slope of values built as n^b must
come back as b, and each capacity bound must be the quota divided by the per-item
cost, the smallest one binding.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_scale", REPO / "scripts/bench_scale.py")
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # dataclasses look their module up
spec.loader.exec_module(bench)


@pytest.mark.parametrize("b", [0.0, 0.5, 1.0, -0.25])
def test_the_slope_of_a_power_law_is_its_exponent(b: float) -> None:
    sizes = [10, 100, 1000, 10000]
    assert bench.slope(sizes, [3.0 * n**b for n in sizes]) == pytest.approx(b, abs=1e-9)


def test_no_slope_from_one_size_or_a_zero() -> None:
    assert bench.slope([10], [1.0]) is None
    assert bench.slope([10, 100], [0.0, 1.0]) is None


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 11)]
    assert bench.percentile(values, 50) == 5.0
    assert bench.percentile(values, 90) == 9.0
    assert bench.percentile([7.0], 90) == 7.0


def test_handover_delays_pair_the_kth_release_with_the_limit_plus_kth_admission() -> None:
    admitted = [0.0, 0.0, 1.2, 1.5, 2.9]
    released = [1.0, 1.1, 2.5, 3.0, 4.0]
    assert bench.handover_delays(admitted, released, 2) == pytest.approx([0.2, 0.4, 0.4])


def column(n: int, **values: float) -> object:
    return bench.Column(n=n, wall=n / 10, **values)


def test_the_semaphore_is_bound_by_its_lock_item() -> None:
    run = bench.PatternRun(
        "semaphore",
        "test",
        [
            column(
                1000,
                transitions=3.0,
                lambda_invocations=2.0,
                extra={"lock item WCU / item": 8.0},
                ops={"stepfunctions:SendTaskSuccess": 1.0},
            )
        ],
    )
    unit, bounds = bench.capacity(run)
    assert unit == "executions admitted per second"
    rates = {b.quota: b.rate for b in bounds}
    assert rates["partition_writes"] == pytest.approx(1000 / 8)
    assert rates["state_transition"] == pytest.approx(5000 / 3)
    assert rates["send_task_success"] == pytest.approx(500)
    assert rates["start_execution"] == pytest.approx(300)
    assert bounds[0].quota == "partition_writes"  # the smallest binds
    text = bench.capacity_text([run])
    assert "1,000 WCU/s / 8.00" in text
    for quota in bench.QUOTAS.values():
        assert quota.url.startswith("https://docs.aws.amazon.com/")
        assert quota.url in text


def test_tables_round_trip_through_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    runs = [
        bench.PatternRun(
            "job-poller",
            "test",
            [
                column(n, transitions=4.0, events=12.0, lambda_invocations=3.0, p50=0.1, p90=0.2)
                for n in (10, 100)
            ],
        )
    ]
    saved = tmp_path / "build" / "run.json"
    bench.write_json(saved, "h", runs)
    assert bench.main(["--from-json", str(saved), "--capacity"]) == 0
    out = capsys.readouterr().out
    assert "| state transitions / item | 4.00 | 4.00 | +0.000 |" in out
    assert "| completion after job end, p90 (s) | 0.20 | 0.20 | |" in out
    assert "jobs completed per second" in out


def test_a_size_the_thread_limits_cannot_hold_is_refused_with_the_binding_limit() -> None:
    need = 10_000 * bench.THREADS_PER_PARKED + bench.THREAD_MARGIN
    roomy = {"vm.max_map_count": need, "kernel.pid_max": need + 1}
    assert bench.thread_room(10_000, roomy) == ""
    # The kernel's default map count: 65,530 maps, about 21,843 threads.
    tight = {"vm.max_map_count": 65_530 // bench.MAPS_PER_THREAD, "kernel.pid_max": 32_768}
    refusal = bench.thread_room(10_000, tight)
    assert "vm.max_map_count allows about 21,843" in refusal
    assert f"vm.max_map_count={need * bench.MAPS_PER_THREAD}" in refusal
    assert "pid_max" not in refusal  # the tighter limit binds and is the one named
    assert bench.thread_room(1_000, tight) == ""  # 5,000 threads fit


def test_this_machines_limits_are_read() -> None:
    limits = bench.system_thread_limits()  # Linux: both files exist, as on CI
    assert limits["kernel.pid_max"] == int(Path("/proc/sys/kernel/pid_max").read_text())
    assert limits["vm.max_map_count"] > 1000


def test_failures_are_summarised_by_kind() -> None:
    bad = [
        {"status": "FAILED", "error": "Sandbox.Timedout", "cause": f"timed out {i}"}
        for i in range(600)
    ] + [{"status": "TIMED_OUT"}] * 2
    summary = bench.failure_summary(bad, 1000)
    assert summary.startswith("602 of 1,000 executions did not succeed: ")
    assert "600 FAILED Sandbox.Timedout (e.g. timed out 0)" in summary
    assert "2 TIMED_OUT (e.g. )" in summary
    assert summary.index("600 FAILED") < summary.index("2 TIMED_OUT")  # most first
    assert len(summary) < 300


def test_a_size_stopped_for_time_is_shown_but_fitted_and_modelled_on_no_slope(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    partial = bench.Column(
        n=1000,
        wall=100.0,
        transitions=30.0,
        lambda_invocations=None,
        done=400,
        note="stopped for time after 100 s",
    )
    run = bench.PatternRun(
        "semaphore",
        "test",
        [column(n, transitions=3.0, lambda_invocations=2.0) for n in (10, 100)] + [partial],
        skipped="10000: not run (1000 was stopped for time)",
    )
    saved = tmp_path / "run.json"
    bench.write_json(saved, "h", [run])
    assert bench.main(["--from-json", str(saved), "--capacity"]) == 0
    out = capsys.readouterr().out
    assert "| items finished (stopped for time) | all | all | 400 | |" in out
    assert "| items / s | 10.00 | 10.00 | 4.00 | |" in out  # finished / wall
    # Its 30 transitions would tilt the slope; only the two complete sizes are fitted.
    assert "| state transitions / item | 3.00 | 3.00 | 30 | +0.000 |" in out
    assert "| Lambda invocations / item | 2.00 | 2.00 | - | +0.000 |" in out
    assert "At n = 1,000: stopped for time after 100 s" in out
    assert "Sizes 10000: not run (1000 was stopped for time)" in out
    assert "(executions admitted per second, at n = 100):" in out  # the largest complete


def test_a_time_budget_is_per_pattern_or_for_both() -> None:
    def budgets(*options: str, n: int = 1000) -> tuple[float | None, float | None]:
        args = bench.argparse.Namespace(size_seconds=[bench.budget_option(o) for o in options])
        return bench.size_budget(args, "semaphore", n), bench.size_budget(args, "status-table", n)

    assert budgets() == (None, None)
    assert budgets("600") == (600.0, 600.0)
    assert budgets("600", "semaphore=1500") == (1500.0, 600.0)
    # One size only: the others run through (or keep a budget given for every size).
    assert budgets("status-table@100000=900") == (None, None)
    assert budgets("status-table@100000=900", n=100000) == (None, 900.0)
    assert budgets("1200", "status-table@100000=900", n=10000) == (1200.0, 1200.0)
    assert budgets("status-table@100000=900", "1200", n=100000) == (1200.0, 1200.0)
    with pytest.raises(bench.argparse.ArgumentTypeError, match="not a size"):
        bench.budget_option("semaphore@ten=60")
    with pytest.raises(bench.argparse.ArgumentTypeError, match="only semaphore"):
        bench.budget_option("dag-aggregate=60")


def lived(start: float, end: float) -> list[dict[str, object]]:
    """A task execution's history: its first and last events' timestamps."""
    from datetime import UTC, datetime

    return [
        {"timestamp": datetime.fromtimestamp(start, UTC)},
        {"timestamp": datetime.fromtimestamp(end, UTC)},
    ]


def test_a_chain_bound_dag_reports_its_chain_and_the_seconds_per_link() -> None:
    # a -> b -> c, and d on its own: 3 links, 4 tasks of 2 s each in a 6-s run.
    parents = {"a": [], "b": ["a"], "c": ["b"], "d": []}
    histories = [lived(0, 2), lived(2, 4), lived(4, 6), lived(0, 2)]
    col = bench.Column(n=4, wall=6.0)
    bench.dag_shape(col, parents, histories, max_concurrency=40)
    assert col.extra["longest dependency chain (tasks)"] == 3
    assert col.extra["task executions at once, mean"] == pytest.approx(8 / 6)
    assert col.extra["seconds per task, all equal (wall / simulated makespan)"] == 2.0


def test_a_slot_bound_dag_divides_the_wall_time_by_its_rounds_not_its_chain() -> None:
    # Four independent tasks through one slot: four rounds, though the chain is one task.
    parents = {"a": [], "b": [], "c": [], "d": []}
    histories = [lived(2 * i, 2 * i + 2) for i in range(4)]
    col = bench.Column(n=4, wall=8.0)
    bench.dag_shape(col, parents, histories, max_concurrency=1)
    assert col.extra["longest dependency chain (tasks)"] == 1
    assert col.extra["task executions at once, mean"] == 1.0
    assert col.extra["seconds per task, all equal (wall / simulated makespan)"] == 2.0
