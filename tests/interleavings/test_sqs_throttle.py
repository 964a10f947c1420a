"""sqs-throttle's real starter, explored: its invariants hold, and every mutant is caught.

The budget is fixed and deterministic (seeded walks, bounded searches), so this file costs
the same few CPU-seconds on every run, and a failure prints the schedule and the command
that replays it. Longer explorations: ``python -m sfn_patterns_localstack.interleavings
explore --protocol sqs-throttle --cpu-seconds 600`` (and ``--strategy dfs``, or
``--same-function``, ``--late-starter 0``, ``--duplicate-request``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from sfn_patterns_localstack.interleavings import cli
from sfn_patterns_localstack.interleavings.explorer import Explorer, Report, RunResult
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle import Scenario, SqsThrottle
from sfn_patterns_localstack.interleavings.scheduler import Note
from sfn_patterns_localstack.interleavings.steps import (
    Kind,
    count,
    format_schedule,
    parse_schedule,
)
from sfn_patterns_localstack.interleavings.strategies import Budget, DepthFirst, RandomWalk, Replay

pytestmark = pytest.mark.interleavings

NO_FAULTS = Budget(ticks=0, crashes=0, lost=0, throttles=0)


def _passes(report: Report) -> None:
    assert not report.failures, "\n\n".join(str(failure) for failure in report.failures)


@pytest.fixture(scope="module")
def deployments() -> Iterator[Explorer]:
    """Two deployments' starters, both firing at the start; two requests; MAX 1."""
    with Explorer(SqsThrottle()) as explorer:
        yield explorer


def test_the_real_starter_keeps_every_invariant_on_random_walks(deployments: Explorer) -> None:
    """Leases, counts, admissions, ticks, crashes, lost answers and throttles."""
    results = [deployments.run(c) for c in itertools.islice(RandomWalk(2).choosers(), 8)]
    broken = [(format_schedule(r.schedule), r.violations) for r in results if r.failed]
    assert not broken, broken
    assert all(r.quiescent for r in results)
    steps = [step for r in results for step in r.schedule]
    for kind in (Kind.TICK, Kind.CRASH, Kind.LOSE, Kind.THROTTLE):
        assert count(steps, kind), f"no {kind.name} step in the walks: they prove less"


def test_a_crashed_run_is_taken_over_by_the_next_at_every_step() -> None:
    """One function's run crashes at each of its first calls; its next run takes over at once.

    Every crash point of the first eight calls: holding the lease, between the ledger
    entry and the start, between the start and the delete.
    """
    with Explorer(SqsThrottle(Scenario(same_function=True))) as explorer:
        search = DepthFirst(depth=8, budget=Budget(ticks=0, crashes=1, lost=0, throttles=0))
        report = explorer.explore(search)
    _passes(report)
    assert report.exhausted and report.runs == 9


# -- the mutants ---------------------------------------------------------------------------

# Each mutant, the invariant that must catch it, and where it is sought: a bounded
# depth-first search (depth, budget) of a scenario it can show in, at most MUTANT_RUNS
# runs. When the mutants were added, each was caught at the run given (0-based), within
# a CPU-second. The random walks of the default scenario catch the two stale counts at
# once, but seldom find the stall that record-unfenced needs.
STAGGERED = Scenario(late=0)  # starter 0's schedule fires a minute after starter 1's
LONE = Scenario(starters=1)
TWICE = Scenario(duplicate=True)
ONE_TICK = Budget(ticks=1, crashes=0, lost=0, throttles=0)
ONE_CRASH = Budget(ticks=0, crashes=1, lost=0, throttles=0)
MUTANTS = {
    # A guard dropped from a conditional write. Starter 1 stalls between its receive and
    # its record, past its lease; starter 0 takes over and admits; starter 1's record
    # still lands, and its start: run 2.
    "record-unfenced": ("at-most-max:", STAGGERED, 5, ONE_TICK),
    # A check on a stale read (the count before the run's own starts): run 0.
    "admit-on-stale-count": ("at-most-max:", STAGGERED, 5, ONE_TICK),
    # A check on a stale read (the lagging list): the next count misses the running
    # execution: run 0.
    "trust-the-list": ("at-most-max:", STAGGERED, 5, ONE_TICK),
    # A step moved before another: a crash between the delete and the start: run 2.
    "delete-before-start": ("exactly-once: request r1 was lost", LONE, 8, ONE_CRASH),
    # The wrong idempotency key: run 0.
    "name-from-dedup-id": ("exactly-once: request r1 admitted twice", TWICE, 3, NO_FAULTS),
}
MUTANT_RUNS = 10


def test_every_mutant_of_the_protocol_is_tested() -> None:
    assert set(MUTANTS) | set(FINDINGS) == set(SqsThrottle().mutants())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_within_the_budget(mutant: str) -> None:
    expected, scenario, depth, budget = MUTANTS[mutant]
    with Explorer(SqsThrottle(scenario), mutant=mutant) as explorer:
        report = explorer.explore(DepthFirst(depth=depth, budget=budget), max_runs=MUTANT_RUNS)
    assert report.failures, f"mutant {mutant} survived {report.runs} runs"
    [failure] = report.failures
    print(f"{mutant}: caught after {report.runs} runs ({report.cpu_seconds:.2f} CPU-s)\n{failure}")
    assert failure.violations[0].startswith(expected), failure
    assert failure.mutant == mutant


def test_the_searches_that_catch_the_mutants_pass_on_the_real_starter() -> None:
    """The same searches on the real code (a request sent twice among them) find nothing."""
    for scenario, depth, budget in {(s, d, b) for _, s, d, b in MUTANTS.values()}:
        with Explorer(SqsThrottle(scenario)) as explorer:
            _passes(explorer.explore(DepthFirst(depth=depth, budget=budget), max_runs=3))


# -- the command line ----------------------------------------------------------------------


def test_explore_prints_a_failure_whose_command_replays_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    words = ["--protocol", "sqs-throttle", "--late-starter", "0", "--mutant", "record-unfenced"]
    search = ["--strategy", "dfs", "--depth", "5", "--ticks", "1", "--crashes", "0"]
    code = cli.main(["explore", *words, *search, "--lost", "0", "--throttles", "0", "--runs", "5"])
    out = capsys.readouterr().out
    assert code == 1
    [command] = [
        line.split("replay:", 1)[1].strip() for line in out.splitlines() if "replay:" in line
    ]
    assert " replay --protocol sqs-throttle --late-starter 0 --mutant record-unfenced " in command
    schedule = command.split("--schedule ", 1)[1].strip("'")
    assert cli.main(["replay", *words, "--schedule", schedule]) == 1
    replayed = capsys.readouterr().out
    assert "BROKEN: at-most-max:" in replayed
    assert cli.main(["replay", *words[:4], "--schedule", schedule]) == 0  # the real starter


# -- what the explorer found in the real starter, replayed on the fixed one -------------------


def _first_count(result: RunResult, actor: int) -> int:
    """What the actor's first run counted first."""
    reports = [
        e.data["report"]
        for e in result.events
        if isinstance(e, Note) and e.actor == actor and "report" in e.data
    ]
    assert reports, f"starter {actor} never ended a run"
    return reports[0]["counts"][0]


REFUSED_AFTER_A_LOST_ANSWER = "0 0 0 0 0 0L 0T 0T 0T"


def test_a_start_refused_after_a_lost_answer_keeps_its_ledger_entry(
    deployments: Explorer,
) -> None:
    """A throttle after a re-send proves nothing: the first attempt did start the execution.

    Starter 0: lease, list, scan, receive r1, record; StartExecution lands but its answer
    is lost, and botocore's three re-sends are throttled. Starter 1 then runs: its count
    finds r1 neither in the lagging list nor, had the refusal dropped it, in the ledger.
    (On the starter as it was, mutant ``forget-refused-start``, a depth-first search finds
    it too: depth 9, one lost answer and three throttles, --late-starter 0: run 25.)
    """
    result = deployments.run(Replay(parse_schedule(REFUSED_AFTER_A_LOST_ANSWER)))
    assert not result.violations, (format_schedule(result.schedule), result.violations)
    assert _first_count(result, actor=1) == 1  # r1, from the ledger


# Starter 1 (the first schedule to fire): lease, list, scan, receive r1, record r1; then
# two minutes pass before its StartExecution, and starter 0 runs. (On the starter as it
# was, mutant grace-from-record, a depth-first search finds it too: depth 7, two ticks,
# --late-starter 0 --max-seconds 120: run 10.)
STALLED_PAST_GRACE = "1 1 1 1 1 + +"


def test_a_run_paused_past_the_ledger_grace_cannot_start_beyond_max() -> None:
    """A run of 120 s (timeout 150 s) paused two minutes between its record and its start.

    Its entry holds the slot for the grace (120 s) after the run's end, not after the
    record: starter 0, counting two minutes after the record, still finds it; then
    starter 1's start lands, within MAX.
    """
    with Explorer(SqsThrottle(Scenario(late=0, max_seconds=120))) as explorer:
        result = explorer.run(Replay(parse_schedule(STALLED_PAST_GRACE)))
    assert not result.violations, (format_schedule(result.schedule), result.violations)
    assert _first_count(result, actor=0) == 1  # r1, from the ledger


# Each finding as a mutant (the starter as it was), and its schedule. A depth-first
# search catches them too, at the runs given above: more than this file's budget.
FINDINGS = {
    "forget-refused-start": (Scenario(), REFUSED_AFTER_A_LOST_ANSWER),
    "grace-from-record": (Scenario(late=0, max_seconds=120), STALLED_PAST_GRACE),
}


@pytest.mark.parametrize("mutant", sorted(FINDINGS))
def test_each_findings_schedule_breaks_the_starter_as_it_was(mutant: str) -> None:
    scenario, schedule = FINDINGS[mutant]
    with Explorer(SqsThrottle(scenario), mutant=mutant) as explorer:
        result = explorer.run(Replay(parse_schedule(schedule)))
    assert result.violations, f"mutant {mutant} survived {schedule}"
    assert result.violations[0].startswith("at-most-max: 2 executions"), result.violations


def test_with_the_default_run_budget_a_run_that_stalls_is_killed_first() -> None:
    """The same schedule, the module's default budget: the 80 s timeout kills the run first."""
    with Explorer(SqsThrottle(Scenario(late=0))) as explorer:
        result = explorer.run(Replay(parse_schedule(STALLED_PAST_GRACE)))
    assert not result.violations
    assert any("invocation killed at its timeout (80 s)" in str(e) for e in result.events)
