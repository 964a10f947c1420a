"""The callback semaphore's real runtime, explored: its invariants hold, and every mutant is caught.

The budget is fixed and deterministic (seeded walks), so this file costs the same few
CPU-seconds on every run, and a failure prints the schedule and the command that replays
it. Longer explorations: ``python -m sfn_patterns_localstack.interleavings explore
--protocol semaphore --cpu-seconds 600`` (``--help`` lists the scenario's options).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from sfn_patterns.semaphore import reconciler
from sfn_patterns_localstack.interleavings import cli
from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.explorer import Explorer, Report
from sfn_patterns_localstack.interleavings.protocol import RunView
from sfn_patterns_localstack.interleavings.protocols.semaphore import (
    LOCK_KEY,
    QUEUE_TABLE,
    Scenario,
    Semaphore,
)
from sfn_patterns_localstack.interleavings.protocols.semaphore.actors import (
    CRITICAL_TIMEOUT,
    ENTER,
    EXIT,
)
from sfn_patterns_localstack.interleavings.protocols.semaphore.invariants import (
    Layout,
    SemaphoreChecker,
)
from sfn_patterns_localstack.interleavings.scheduler import Effect, Event, Note
from sfn_patterns_localstack.interleavings.sfn import StepFunctions
from sfn_patterns_localstack.interleavings.steps import parse_schedule
from sfn_patterns_localstack.interleavings.strategies import RandomWalk, Replay

pytestmark = pytest.mark.interleavings


def _passes(report: Report) -> None:
    assert not report.failures, "\n\n".join(str(failure) for failure in report.failures)


@pytest.fixture(scope="module")
def explorer() -> Iterator[Explorer]:
    """The default scenario: limit 1, e0 and e1 arriving, e1 stopped, one sweep."""
    with Explorer(Semaphore()) as explorer:
        yield explorer


def test_the_real_semaphore_keeps_every_invariant_on_random_walks(explorer: Explorer) -> None:
    """Acquire, park, hand-over, release, a stop with its cleanup, a sweep; with faults."""
    report = explorer.explore(RandomWalk(53), max_runs=8)
    _passes(report)
    assert report.runs == 8


def test_two_slots_three_executions_two_stops_and_duplicated_events() -> None:
    scenario = Scenario(limit=2, executions=3, stops=(0, 2), deliveries=2)
    with Explorer(Semaphore(scenario)) as explorer:
        report = explorer.explore(RandomWalk(7), max_runs=3)
    _passes(report)


def test_the_oldest_first_gate_admits_at_most_limit_running_executions() -> None:
    """The real gate handler (ListExecutions, and the histories of the executions that
    ended), three executions, two slots, two stops; a stopped holder's critical section
    counts until it returns or its task times out."""
    scenario = Scenario(
        strategy="oldest-first", limit=2, executions=3, stops=(0, 2), count_stopped_critical=True
    )
    with Explorer(Semaphore(scenario)) as explorer:
        report = explorer.explore(RandomWalk(53), max_runs=15)
    _passes(report)


# -- the mutants ---------------------------------------------------------------------------------

# The smallest scenarios that hold each race: a holder in its critical section and an
# execution arriving (the release and the enqueue race), or one already queued (the
# hand-over and the wake-up race); with oldest-first, the oldest execution in its critical
# section and stopped there (its Lambda runs on), the other at the gate. Each mutant must
# be caught by 40 runs of the seed-0 walk; when they were added it took 4, 23, 7, 4 and
# 29 runs (0.1 CPU-s a run).
ARRIVING = Scenario(holding=1, stops=(), sweeps=0)
QUEUED = Scenario(holding=1, queued=1, stops=(), sweeps=0)
STOPPED_INSIDE = Scenario(
    strategy="oldest-first", holding=1, stops=(0,), count_stopped_critical=True
)
MUTANT_RUNS = 40
MUTANTS: Mapping[str, tuple[Scenario, str]] = {
    "enqueue-when-free": (ARRIVING, "free-slot:"),
    "give-back-on-stale-read": (ARRIVING, "free-slot:"),
    "wake-before-hand-over": (QUEUED, "lease:"),
    "dead-token-without-describe": (QUEUED, "lease:"),
    "gate-counts-running-only": (STOPPED_INSIDE, "critical: 2"),
}


@pytest.fixture(scope="module")
def races() -> Iterator[dict[Scenario, Explorer]]:
    with (
        Explorer(Semaphore(ARRIVING)) as arriving,
        Explorer(Semaphore(QUEUED)) as queued,
        Explorer(Semaphore(STOPPED_INSIDE)) as gate,
    ):
        yield {ARRIVING: arriving, QUEUED: queued, STOPPED_INSIDE: gate}


def test_every_mutant_of_the_protocol_is_tested() -> None:
    assert set(MUTANTS) == set(Semaphore().mutants())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_within_the_budget(
    races: dict[Scenario, Explorer], mutant: str
) -> None:
    scenario, invariant = MUTANTS[mutant]
    explorer = races[scenario]
    with explorer.mutated(mutant):
        report = explorer.explore(RandomWalk(0, depth=12), max_runs=MUTANT_RUNS)
    assert report.failures, f"mutant {mutant} survived {report.runs} runs"
    [failure] = report.failures
    print(f"{mutant}: caught after {report.runs} runs ({report.cpu_seconds:.2f} CPU-s)\n{failure}")
    assert failure.violations[0].startswith(invariant), failure
    assert failure.mutant == mutant
    assert shlex.join(Semaphore(scenario).arguments()) in failure.command()


def test_the_real_semaphore_survives_the_schedules_that_catch_the_mutants(
    races: dict[Scenario, Explorer],
) -> None:
    """The same walks on the unmutated class: what they catch is the mutant's doing."""
    for explorer in races.values():
        _passes(explorer.explore(RandomWalk(0, depth=12), max_runs=5))


# -- what the explorer found in the real semaphore -----------------------------------------------


# A stopped holder's critical-section Lambda runs on after the stop (the scenario counts it
# against the limit): e0 holds, e1 is queued, e0 is stopped in its critical section.
STOPPED_IN_SECTION = Scenario(
    holding=1, queued=1, stops=(0,), sweeps=1, count_stopped_critical=True
)


def _gives_back_at_the_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: the cleanup and the sweep read no history (no task may run)."""
    monkeypatch.setattr(reconciler, "may_still_run", lambda *args, **kwargs: None)


@pytest.mark.parametrize("planted", [False, True], ids=["real", "gives-back-at-the-stop"])
def test_a_stopped_holders_slot_is_not_given_back_while_its_critical_section_runs(
    planted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event cleanup and the sweep keep a stopped holder's slot until its critical-section
    task has ended or timed out, so the queued e1 never enters beside e0's Lambda; with the
    planted mistake (the slot handed over at the stop) the same walks catch two sections."""
    if planted:
        _gives_back_at_the_stop(monkeypatch)
    with Explorer(Semaphore(STOPPED_IN_SECTION)) as explorer:
        report = explorer.explore(RandomWalk(0, depth=12), max_runs=20)
    if not planted:
        _passes(report)
        return
    assert report.failures, f"the planted mistake survived {report.runs} runs"
    assert report.failures[0].violations[0].startswith(("lease: e0", "critical:"))


@pytest.mark.parametrize("planted", [False, True], ids=["real", "gives-back-at-the-stop"])
def test_a_sweep_keeps_a_stopped_holders_slot_until_its_critical_section_timed_out(
    planted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop's event is lost (the stopper crashes before its cleanup); the sweep then runs
    while e0's critical-section Lambda still runs, and keeps the slot (its task's timeout
    is ahead). The sweep at quiescence, after that timeout, frees it."""
    if planted:
        _gives_back_at_the_stop(monkeypatch)
    with Explorer(Semaphore(STOPPED_IN_SECTION)) as explorer:
        # The stop, the stopper's crash, the sweep's eight calls, e0's Lambda returns.
        result = explorer.run(Replay(parse_schedule("2 2X 3 3 3 3 3 3 3 0")))
        lock = explorer.store.snapshot()[LOCK_KEY]
    sweeps = [e.text for e in result.events if isinstance(e, Note) and e.actor == 3]
    if planted:  # the sweep hands e0's slot to e1 while e0's Lambda runs
        assert result.violations and result.violations[0].startswith("lease: e0"), result
        return
    assert sweeps == ["sweep released []"]
    assert result.quiescent and not result.violations, result.violations
    assert (lock["holder_count"], [a for a in lock if a.startswith("h_")]) == (0, [])


# e0 is in its critical section; the stop; e1 asks the gate: three ListExecutions of ended
# executions, e0's history, one ListExecutions of RUNNING ones, and its gate task ends (with
# the planted mistake, one ListExecutions call, the gate task's end, and it enters).
E1_ASKS_BESIDE_STOPPED_E0 = {False: "2 1 1 1 1 1 1", True: "2 1 1 1"}


@pytest.mark.parametrize("planted", [False, True], ids=["real", "gate-counts-running-only"])
def test_oldest_first_does_not_admit_beside_a_stopped_holders_running_critical_section(
    planted: bool, races: dict[Scenario, Explorer]
) -> None:
    """e0 is admitted and enters; it is stopped, so it no longer runs, but its critical-section
    Lambda does: the gate reads e0's history, sees that task without its end, and keeps e1
    waiting until the task's TimeoutSeconds has passed. With the planted mistake (the gate
    counts RUNNING executions only) e1 enters beside e0's Lambda."""
    explorer = races[STOPPED_INSIDE]
    mutated = explorer.mutated("gate-counts-running-only") if planted else contextlib.nullcontext()
    with mutated:
        result = explorer.run(Replay(parse_schedule(E1_ASKS_BESIDE_STOPPED_E0[planted])))
    if planted:
        assert result.violations and result.violations[0].startswith("critical: 2"), result
        return
    assert result.quiescent and not result.violations, result.violations
    asked = [e.text for e in result.events if isinstance(e, Note) and e.actor == 1]
    assert asked[0].startswith("gate: {'proceed': False"), asked
    entered = {
        e.actor: e.now for e in result.events if isinstance(e, Effect) and e.subject == ENTER
    }
    assert entered[1] >= entered[0] + CRITICAL_TIMEOUT, entered


def test_oldest_first_counts_a_holder_stopped_between_the_gates_reads(
    races: dict[Scenario, Explorer],
) -> None:
    """What the explorer found: e1's gate lists the RUNNING executions (e0 among them), e0
    is stopped in its critical section, then the gate lists the ended ones (e0 among them,
    its history read): e0 is counted once, and e1 waits. Had the gate read the ended
    executions first, e0 would be in neither list (tests/semaphore/
    test_oldest_first_unit.py plants that order)."""
    result = races[STOPPED_INSIDE].run(Replay(parse_schedule("1 2 1 1 1 1 1")))
    assert result.quiescent and not result.violations, result.violations
    asked = [e.text for e in result.events if isinstance(e, Note) and e.actor == 1]
    assert asked[0].startswith("gate: {'proceed': False, 'position': 1"), asked


# -- the invariants, each shown failing on a planted state ---------------------------------------

LAYOUT = Layout(LOCK_KEY, QUEUE_TABLE, limit=1)


@dataclass
class _Store:
    """A store whose snapshot is given (the checker only reads snapshots)."""

    items: dict[str, Any]

    def snapshot(self) -> dict[str, Any]:
        return self.items


def _world(*names: str) -> tuple[StepFunctions, dict[str, str]]:
    world = StepFunctions(FakeClock())
    machine = world.add_state_machine("holder")
    return world, {name: world.start(machine, name) for name in names}


def _lock(count: int, waiting: int, *holders: str) -> dict[str, Any]:
    leases = {f"h_{i}": {"execution_arn": arn} for i, arn in enumerate(holders)}
    return {"pk": LOCK_KEY, "holder_count": count, "waiting": waiting, **leases}


def _queued(ticket: int, arn: str) -> dict[str, Any]:
    prefix = f"{QUEUE_TABLE}:{LOCK_KEY}"
    return {
        f"{prefix}#queue/{ticket}": {"ticket": ticket, "execution_arn": arn},
        f"{prefix}#waiter#{arn}/0": {"queue_ticket": ticket},
    }


def _check(
    items: dict[str, Any],
    world: StepFunctions,
    events: list[Event] | None = None,
    executions: Mapping[int, str] | None = None,
    **options: Any,
) -> list[str]:
    checker = SemaphoreChecker(LAYOUT, executions or {}, **options)
    view = RunView(events or [], [], world.clock, _Store(items), world)  # type: ignore[arg-type]
    return checker.after_step(view)


def _enter(actor: int, subject: str = ENTER) -> Effect:
    return Effect(1, actor, subject, FakeClock().now)


def test_a_sound_state_breaks_nothing() -> None:
    world, arn = _world("a", "b")
    items = {LOCK_KEY: _lock(1, 1, arn["a"]), **_queued(0, arn["b"])}
    assert _check(items, world, [_enter(0)], {0: arn["a"]}) == []


@pytest.mark.parametrize(
    ("planted", "invariant"),
    [
        ({LOCK_KEY: "two leases under a limit of 1"}, "limit:"),
        ({LOCK_KEY: "a count without its lease"}, "count:"),
        ({LOCK_KEY: "waiting 1, no waiter item"}, "waiting:"),
        ({LOCK_KEY: "a waiter without its pointer"}, "waiting:"),
        ({LOCK_KEY: "a free slot, a waiter queued"}, "free-slot:"),
    ],
)
def test_each_state_invariant_catches_its_planted_state(
    planted: dict[str, str], invariant: str
) -> None:
    world, arn = _world("a", "b")
    a, b = arn["a"], arn["b"]
    items: dict[str, Any] = {
        "two leases under a limit of 1": {LOCK_KEY: _lock(2, 0, a, b)},
        "a count without its lease": {LOCK_KEY: _lock(1, 0)},
        "waiting 1, no waiter item": {LOCK_KEY: _lock(1, 1, a)},
        "a waiter without its pointer": {
            LOCK_KEY: _lock(1, 1, a),
            f"{QUEUE_TABLE}:{LOCK_KEY}#queue/0": {"ticket": 0, "execution_arn": b},
        },
        "a free slot, a waiter queued": {LOCK_KEY: _lock(0, 1), **_queued(0, b)},
    }[planted[LOCK_KEY]]
    broken = _check(items, world)
    assert broken and broken[0].startswith(invariant), broken


def test_entering_without_a_lease_or_after_a_stop_is_caught() -> None:
    world, arn = _world("a", "b")
    items = {LOCK_KEY: _lock(1, 0, arn["a"])}
    assert _check(items, world, [_enter(1)], {1: arn["b"]})[0].startswith("lease: b")
    world.finish(arn["a"], "ABORTED")
    broken = _check(items, world, [_enter(0)], {0: arn["a"]})
    assert broken == ["stopped: a entered its critical section while ABORTED"]


def _view(world: StepFunctions, items: dict[str, Any], events: list[Event]) -> RunView:
    return RunView(events, [], world.clock, _Store(items), world)  # type: ignore[arg-type]


@pytest.mark.parametrize("count_stopped", [False, True])
def test_critical_sections_count_a_stopped_holder_only_when_asked(count_stopped: bool) -> None:
    world, arn = _world("a", "b")
    executions = {0: arn["a"], 1: arn["b"]}
    checker = SemaphoreChecker(LAYOUT, executions, count_stopped_critical=count_stopped)
    events: list[Event] = [_enter(0)]
    assert checker.after_step(_view(world, {LOCK_KEY: _lock(1, 0, arn["a"])}, events)) == []
    world.finish(arn["a"], "ABORTED")  # a's Lambda runs on after its stop; b gets the slot
    events.append(_enter(1))
    broken = checker.after_step(_view(world, {LOCK_KEY: _lock(1, 0, arn["b"])}, events))
    if count_stopped:
        assert [v.split(" ", 2)[:2] for v in broken] == [["lease:", "a"], ["critical:", "2"]]
    else:
        assert broken == []
    events.append(_enter(0, EXIT))
    assert checker.after_step(_view(world, {LOCK_KEY: _lock(1, 0, arn["b"])}, events)) == []


def test_a_slot_or_a_place_kept_by_an_ended_execution_is_a_leak() -> None:
    world, arn = _world("a", "b", "c")
    items = {LOCK_KEY: _lock(1, 1, arn["a"]), **_queued(0, arn["b"])}
    checker = SemaphoreChecker(LAYOUT, {})
    view = RunView([], [], world.clock, _Store(items), world)  # type: ignore[arg-type]
    assert checker.at_quiescence(view) == []
    world.finish(arn["a"], "ABORTED")
    world.finish(arn["b"], "ABORTED")
    assert [v.split(" ", 2)[:2] for v in checker.at_quiescence(view)] == [
        ["leak:", "a"],
        ["leak:", "b"],
    ]


def test_the_sweep_at_quiescence_frees_a_dropped_events_slot(explorer: Explorer) -> None:
    """The reconciler sweeps first; e1 enters, is stopped, and the stopper crashes before its
    cleanup (the event is lost). e0 waits until its acquire timeout; only the sweep the
    checker runs at quiescence (the next reconciler period) can free e1's slot."""
    result = explorer.run(Replay(parse_schedule("3 3 3 3 1 1 1 1 1 2 2X")))
    assert result.quiescent and not result.violations, result.violations
    notes = [e.text for e in result.events if isinstance(e, Note) and e.actor == 0]
    assert "acquire timed out" in notes
    lock = explorer.store.snapshot()[LOCK_KEY]
    assert (lock["holder_count"], [a for a in lock if a.startswith("h_")]) == (0, [])


# -- the command line ----------------------------------------------------------------------------


def test_replay_prints_the_trace_of_a_semaphore_schedule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scenario = ["--holding", "1", "--queued", "1", "--stop", "", "--sweeps", "0"]
    code = cli.main(["replay", "--protocol", "semaphore", *scenario, "--schedule", "0 0 0 0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "step 4: 0 (TransactWriteItems(" in out
    assert "holders [e0] -> [e1]" in out  # the hand-over, as the trace describes it
    assert "quiescent; no invariant broken" in out


def test_the_command_line_knows_the_protocol_and_its_mutants(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["mutants", "--protocol", "semaphore"]) == 0
    assert set(MUTANTS) <= set(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        cli.main(["explore", "--protocol", "semaphore", "--stop", "x"])
    assert "execution numbers separated by commas" in capsys.readouterr().err


def test_the_search_strategy_and_the_semaphore_strategy_are_two_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    words = ["explore", "--protocol", "semaphore", "--strategy", "dfs", "--depth", "1"]
    words += ["--semaphore-strategy", "oldest-first", "--runs", "2", "--stop", ""]
    assert cli.main(words) == 0
    assert "semaphore: 2 runs" in capsys.readouterr().out
