"""scripts/bench_job_poller.py's schedule check, on made-up status-check times.

The check reads the history's own clock, so a loaded machine (every cycle late by
LocalStack's and the Lambda's latency) must pass with fewer polls than the zero-latency
formula, while a poller that polls too soon, waits twice, or counts a poll for a check
after the job's end must fail.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "bench_job_poller", REPO / "scripts/bench_job_poller.py"
)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)

# The smoke's settings: W0 = 2 s, P = 4 s, one 8-s job.
ARGS = argparse.Namespace(initial_wait=2, interval=4, fallback=5)
MOST = bench.polls_for("loop", 8.0, 2, 4, 5)


def _polled(checks: list[float], polls: int, waited: float = 8.0) -> int | str:
    return bench.polled({"checks": checks, "polls": polls, "waited": waited}, ARGS, MOST)


def test_an_unloaded_run_polls_what_the_formula_says() -> None:
    assert MOST == 2
    assert _polled([2.1, 6.2, 10.3], polls=2) == 2


def test_a_loaded_run_polls_less_and_passes() -> None:
    # CI's failing run: each cycle about 1.8 s late, so the second check came after the end.
    assert _polled([3.6, 9.4], polls=1) == 1


def test_a_check_too_soon_or_a_double_wait_fails() -> None:
    assert isinstance(_polled([1.0, 5.1, 9.2], polls=2), str)  # before W0
    assert isinstance(_polled([2.1, 4.0, 10.3], polls=2), str)  # less than P apart
    assert isinstance(_polled([2.1, 10.2], polls=1), str)  # 2 P apart: waited twice


def test_polls_must_match_the_checks_before_the_end() -> None:
    assert isinstance(_polled([2.1, 6.2, 10.3], polls=3), str)  # counted the finishing check
    assert isinstance(_polled([2.1, 6.2, 10.3], polls=1), str)  # lost a running answer
    assert isinstance(_polled([], polls=0), str)
