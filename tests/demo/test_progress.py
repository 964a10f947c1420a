"""The demo's progress output: on stderr, alive during long waits, never on stdout."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest

from sfn_patterns_localstack import executions
from sfn_patterns_localstack.demo.progress import Progress


class FakeSfn:
    """describe_execution answers RUNNING a given number of times, then SUCCEEDED."""

    def __init__(self, polls_until_done: dict[str, int]) -> None:
        self.left = dict(polls_until_done)

    def describe_execution(self, executionArn: str) -> dict:
        self.left[executionArn] -= 1
        status = "RUNNING" if self.left[executionArn] > 0 else "SUCCEEDED"
        return {
            "executionArn": executionArn,
            "status": status,
            "startDate": datetime(2026, 1, 1, tzinfo=UTC),
        }


def test_ticker_prints_while_waiting_on_a_pipe(capsys: pytest.CaptureFixture[str]) -> None:
    progress = Progress(interval=0.1)
    assert not progress.tty  # pytest captures stderr: the line-per-interval mode
    with progress.ticking("terraform apply"):
        time.sleep(0.6)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("... terraform apply:") >= 2
    assert re.search(r"^    terraform apply: \d+\.\d s$", err, re.M), err


def test_wait_executions_reports_progress_and_keeps_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sfn = FakeSfn({"a": 3, "b": 1})
    described = Progress().wait_executions(sfn, ["a", "b"], "executions", timeout=10)
    assert [d["executionArn"] for d in described] == ["a", "b"]
    assert {d["status"] for d in described} == {"SUCCEEDED"}
    out, err = capsys.readouterr()
    assert out == "" and "executions" in err


def test_wait_executions_gives_up_at_the_timeout() -> None:
    sfn = FakeSfn({"slow": 10_000})
    started = time.monotonic()
    (described,) = Progress().wait_executions(sfn, ["slow"], "x", timeout=0.6)
    assert described["status"] == "RUNNING"
    assert time.monotonic() - started < 3


class ClockSfn:
    """Every execution stops ``after`` seconds from now; counts describe calls."""

    def __init__(self, after: float) -> None:
        self.stops_at = time.monotonic() + after
        self.calls = 0

    def describe_execution(self, executionArn: str) -> dict:
        self.calls += 1
        status = "RUNNING" if time.monotonic() < self.stops_at else "SUCCEEDED"
        return {"executionArn": executionArn, "status": status}


def test_waiting_for_many_costs_one_call_per_interval_plus_one_per_execution() -> None:
    sfn = ClockSfn(after=0.5)
    arns = [f"e{i}" for i in range(20)]
    done = executions.wait_stopped(sfn, arns, timeout=10, interval=0.1)
    assert list(done) == arns and {d["status"] for d in done.values()} == {"SUCCEEDED"}
    # About 5 rounds on the first execution, then one call for each of the 20.
    # Describing every pending execution each round would have taken about 120.
    assert sfn.calls <= 5 + 2 + len(arns), sfn.calls


def test_wait_stopped_leaves_out_what_still_runs_at_the_deadline() -> None:
    sfn = ClockSfn(after=60)
    assert executions.wait_stopped(sfn, ["a", "b"], timeout=0.3, interval=0.1) == {}
