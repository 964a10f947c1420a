"""The status table's real runtime, explored: its invariants hold, and every mutant is caught.

The budget is fixed and deterministic (seeded walks, a bounded search), so this file costs
the same few CPU-seconds on every run, and a failure prints the schedule and the command
that replays it. Longer explorations: ``python -m sfn_patterns_localstack.interleavings
explore --protocol status-table --cpu-seconds 600`` (and ``--strategy dfs``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sfn_patterns_localstack.interleavings.explorer import Explorer, Report
from sfn_patterns_localstack.interleavings.protocols.status_table import Scenario, StatusTable
from sfn_patterns_localstack.interleavings.steps import parse_schedule
from sfn_patterns_localstack.interleavings.strategies import Budget, DepthFirst, RandomWalk, Replay

pytestmark = pytest.mark.interleavings


def _passes(report: Report) -> None:
    assert not report.failures, "\n\n".join(str(failure) for failure in report.failures)


def test_the_real_tracker_keeps_every_invariant_on_random_walks(explorer: Explorer) -> None:
    """Two workers, one task: claims, heartbeats, ticks, crashes, lost answers, throttles."""
    report = explorer.explore(RandomWalk(53), max_runs=25)
    _passes(report)
    assert report.runs == 25


def test_the_real_tracker_keeps_every_invariant_in_every_short_schedule(
    explorer: Explorer,
) -> None:
    """Every schedule of two steps with at most a tick and a crash, each run to the end."""
    search = DepthFirst(depth=2, budget=Budget(ticks=1, crashes=1, lost=0, throttles=0))
    report = explorer.explore(search)
    _passes(report)
    assert report.exhausted


def test_three_workers_two_tasks_and_a_failing_first_body() -> None:
    """The retry path (failed -> in_progress) and tasks that do not contend, with faults."""
    scenario = Scenario(workers=3, tasks=2, failing_worker=0)
    with Explorer(StatusTable(scenario)) as explorer:
        report = explorer.explore(RandomWalk(7), max_runs=6)
    _passes(report)


# Each mutant and the invariant that must catch it. The budget is 40 runs of the seed-0
# walk each; when the mutants were added it needed 10, 16, 14 and 1 runs (0.2-1.4 CPU-s).
MUTANT_RUNS = 40
MUTANTS = {
    "fence-status-only": "fencing:",
    "reclaim-on-stale-read": "lease:",
    "heartbeat-unfenced": "fencing:",
    "success-before-work": "exactly-once:",
}


def test_every_mutant_of_the_protocol_is_tested() -> None:
    assert set(MUTANTS) == set(StatusTable().mutants())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_within_the_budget(explorer: Explorer, mutant: str) -> None:
    with explorer.mutated(mutant):
        report = explorer.explore(RandomWalk(0), max_runs=MUTANT_RUNS)
    assert report.failures, f"mutant {mutant} survived {report.runs} runs"
    [failure] = report.failures
    print(f"{mutant}: caught after {report.runs} runs ({report.cpu_seconds:.2f} CPU-s)\n{failure}")
    assert failure.violations[0].startswith(MUTANTS[mutant]), failure
    assert failure.mutant == mutant


# -- what the explorer found in the real tracker ------------------------------------------------


@pytest.fixture(scope="module")
def outcomes() -> Iterator[Explorer]:
    """The default scenario, also checking that what workers are told agrees with the store."""
    with Explorer(StatusTable(Scenario(outcomes=True))) as explorer:
        yield explorer


def test_a_worker_is_not_locked_out_by_its_own_lost_claim(outcomes: Explorer) -> None:
    """Found by the explorer: botocore re-sends a claim whose answer was lost.

    The re-sent claim fails its condition on the worker's own new attempt; the tracker
    used to raise TaskLockedError naming the worker itself, which then waited out its own
    lease (and the lost attempt was later counted as a LeaseExpired failure).
    """
    result = outcomes.run(Replay(parse_schedule("0L 0")))
    assert not result.violations, result.violations


def test_a_lost_success_answer_is_not_reported_as_a_stale_attempt(outcomes: Explorer) -> None:
    """Found by the explorer: botocore re-sends a success whose answer was lost.

    The re-sent write fails its fence (the task is already succeeded by this very
    attempt); the tracker used to raise StaleAttemptError ("the work may have been done
    twice") although nobody took the task over.
    """
    result = outcomes.run(Replay(parse_schedule("0 0 0L 0")))
    assert not result.violations, result.violations


def test_what_workers_are_told_agrees_with_the_store_on_random_walks(outcomes: Explorer) -> None:
    """With both findings fixed, lost answers anywhere tell no worker a wrong outcome."""
    report = outcomes.explore(RandomWalk(53), max_runs=25)
    _passes(report)
