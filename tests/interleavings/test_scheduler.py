"""The explorer's own machinery: schedules, the scheduler's threads, search, determinism, replay.

Most of these run without the store (toy actor bodies, a synthetic system for the
search); the determinism and replay tests run the status table on moto, a few runs each.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest

from sfn_patterns_localstack.interleavings import cli
from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.explorer import Explorer, RunResult
from sfn_patterns_localstack.interleavings.gateway import describe
from sfn_patterns_localstack.interleavings.scheduler import (
    ActorContext,
    ActorState,
    CallPause,
    Effect,
    Note,
    Option,
    Scheduler,
    SchedulerError,
    WaitPause,
    Write,
    current,
)
from sfn_patterns_localstack.interleavings.steps import (
    Kind,
    Step,
    format_schedule,
    parse_schedule,
)
from sfn_patterns_localstack.interleavings.strategies import (
    Budget,
    DepthFirst,
    RandomWalk,
    Replay,
)

pytestmark = pytest.mark.interleavings

TICK = timedelta(seconds=60)


# -- schedules ---------------------------------------------------------------------------------


def test_every_step_kind_round_trips_through_its_text() -> None:
    text = "0 1L 2T 0X + 1+ 0L+ 2T+"
    steps = parse_schedule(text)
    assert steps == [
        Step(Kind.RUN, 0),
        Step(Kind.LOSE, 1),
        Step(Kind.THROTTLE, 2),
        Step(Kind.CRASH, 0),
        Step(Kind.TICK),
        Step(Kind.RUN, 1, tick=True),
        Step(Kind.LOSE, 0, tick=True),
        Step(Kind.THROTTLE, 2, tick=True),
    ]
    assert format_schedule(steps) == text
    assert parse_schedule("0,1L,  +") == parse_schedule("0 1L +")


@pytest.mark.parametrize("token", ["a", "0Q", "++", "0X+", "-1", "1 L"])
def test_a_token_that_is_no_step_is_named_in_the_error(token: str) -> None:
    with pytest.raises(ValueError, match="not a schedule step"):
        parse_schedule(token)


def test_the_budget_counts_ticks_after_a_call_as_ticks() -> None:
    budget = Budget(ticks=1, crashes=1, lost=0, throttles=1)
    assert budget.allows([], Step(Kind.TICK))
    assert not budget.allows([Step(Kind.RUN, 0, tick=True)], Step(Kind.TICK))
    assert not budget.allows([Step(Kind.TICK)], Step(Kind.THROTTLE, 1, tick=True))
    assert budget.allows([Step(Kind.TICK)], Step(Kind.THROTTLE, 1))
    assert not budget.allows([], Step(Kind.LOSE, 0))
    assert not budget.allows([Step(Kind.CRASH, 1)], Step(Kind.CRASH, 0))


def _call(actor: int, kind: Kind = Kind.RUN, *keys: str, writes: bool = True) -> Option:
    return Option(Step(kind, actor), CallPause("UpdateItem", frozenset(keys), writes))


def test_independence_is_about_items_actors_and_the_clock() -> None:
    assert _call(0, Kind.RUN, "a").independent(_call(1, Kind.RUN, "b"))
    assert not _call(0, Kind.RUN, "a").independent(_call(1, Kind.RUN, "a"))
    assert _call(0, Kind.RUN, "a", writes=False).independent(_call(1, Kind.RUN, "a", writes=False))
    assert not _call(0, Kind.RUN, "a").independent(_call(0, Kind.LOSE, "b"))  # one actor
    assert _call(0, Kind.CRASH, "a").independent(_call(1, Kind.RUN, "a"))
    assert _call(0, Kind.THROTTLE, "a").independent(_call(1, Kind.RUN, "a"))
    assert not Option(Step(Kind.TICK)).independent(_call(1, Kind.CRASH, "a"))
    read_then_tick = Option(
        Step(Kind.RUN, 0, tick=True), CallPause("GetItem", frozenset("a"), False)
    )
    assert not read_then_tick.independent(_call(1, Kind.RUN, "b"))
    scan = Option(Step(Kind.RUN, 0), CallPause("Query", None, False))
    assert not scan.independent(_call(1, Kind.RUN, "a"))
    waiting = Option(Step(Kind.RUN, 0), WaitPause(FakeClock().now))
    assert waiting.independent(_call(1, Kind.RUN, "a"))


def test_a_request_names_its_items_by_hash_and_range_key() -> None:
    body = json.dumps(
        {
            "TransactItems": [
                {"Update": {"Key": {"pk": {"S": "r1"}, "sk": {"S": "run"}}}},
                {"ConditionCheck": {"Key": {"pk": {"S": "r1"}, "sk": {"S": "task#a"}}}},
                {"Put": {"Item": {"pk": {"S": "r1"}, "sk": {"S": "ready#1#a"}, "n": {"N": "1"}}}},
            ]
        }
    )
    call = describe("TransactWriteItems", body, "pk", "sk")
    assert call.keys == {"r1/run", "r1/task#a", "r1/ready#1#a"}
    assert call.writes
    single = json.dumps({"Key": {"pk": {"S": "r1"}, "sk": {"S": "run"}}})
    assert describe("GetItem", single, "pk").keys == {"r1"}  # a table without a range key
    assert describe("Query", single, "pk", "sk").keys is None


# -- the scheduler's threads -------------------------------------------------------------------


def _pause(key: str = "k") -> None:
    binding = current()
    assert binding is not None
    scheduler, actor = binding
    scheduler.pause_at_call(actor, CallPause("UpdateItem", frozenset({key}), True))


def _drive(scheduler: Scheduler, steps: Sequence[Step]) -> None:
    scheduler.start()
    try:
        for step in steps:
            scheduler.perform(step)
    finally:
        scheduler.close()


def test_exactly_one_actor_runs_at_a_time() -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def body(ctx: ActorContext) -> None:
        for _ in range(5):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            for _ in range(2000):  # give the other threads every chance to run too
                pass
            with lock:
                running[0] -= 1
            _pause()

    scheduler = Scheduler([("a", body), ("b", body), ("c", body)], FakeClock(), TICK)
    _drive(scheduler, [Step(Kind.RUN, i % 3) for i in range(15)])
    assert most[0] == 1
    assert all(a.state is ActorState.FINISHED for a in scheduler.actors)


def test_a_crashed_actor_runs_no_further_code_and_is_unwound_at_close() -> None:
    log: list[str] = []

    def body(ctx: ActorContext) -> None:
        log.append("before")
        try:
            _pause()
            log.append("after")  # never: the actor crashed at the pause
        except Exception:  # the runtime's handlers must not catch the crash either
            log.append("caught")
        finally:
            log.append("unwound")

    scheduler = Scheduler([("a", body)], FakeClock(), TICK)
    scheduler.start()
    scheduler.perform(Step(Kind.CRASH, 0))
    assert scheduler.quiescent()
    assert scheduler.options() == []
    assert log == ["before"]
    thread = scheduler.actors[0].thread
    assert thread is not None and thread.is_alive()
    scheduler.close()
    assert log == ["before", "unwound"]
    assert not thread.is_alive()
    assert scheduler.actors[0].state is ActorState.CRASHED
    assert scheduler.actors[0].error is None


def test_a_waiting_actor_is_enabled_only_once_the_clock_reaches_its_time() -> None:
    clock = FakeClock()

    def body(ctx: ActorContext) -> None:
        ctx.wait_until(clock.now + TICK)
        ctx.effect("woke")

    scheduler = Scheduler([("a", body)], clock, TICK)
    scheduler.start()
    try:
        assert [o.step for o in scheduler.options()] == [Step(Kind.TICK)]
        with pytest.raises(SchedulerError, match="not possible now"):
            scheduler.perform(Step(Kind.RUN, 0))
        scheduler.perform(Step(Kind.TICK))
        scheduler.perform(Step(Kind.RUN, 0))
    finally:
        scheduler.close()
    assert [e.subject for e in scheduler.events if isinstance(e, Effect)] == ["woke"]


def test_a_body_that_raises_is_kept_for_the_report() -> None:
    def body(ctx: ActorContext) -> None:
        raise RuntimeError("boom")

    scheduler = Scheduler([("a", body)], FakeClock(), TICK)
    _drive(scheduler, [])
    assert isinstance(scheduler.actors[0].error, RuntimeError)


def test_an_invocation_past_its_deadline_is_killed_and_its_cleanup_sends_nothing() -> None:
    log: list[str] = []

    def body(ctx: ActorContext) -> None:
        with ctx.invocation(2 * TICK):
            try:
                _pause("work")
                log.append("worked")
                _pause("more work")
                log.append("worked more")  # never: the deadline passed while paused
            finally:
                _pause("cleanup")  # raises before pausing: a killed Lambda sends nothing
                log.append("cleaned up")
        ctx.note("next invocation")

    scheduler = Scheduler([("a", body)], FakeClock(), TICK)
    scheduler.start()
    try:
        scheduler.perform(Step(Kind.RUN, 0))
        scheduler.perform(Step(Kind.TICK))
        assert len(scheduler.options()) == 8  # alive: every kind of step, and a tick
        scheduler.perform(Step(Kind.TICK))
        assert [o.step for o in scheduler.options()] == [Step(Kind.RUN, 0), Step(Kind.TICK)]
        scheduler.perform(Step(Kind.RUN, 0))
    finally:
        scheduler.close()
    assert log == ["worked"]
    assert [e.text for e in scheduler.events if isinstance(e, Note)] == [
        "invocation killed at its timeout (120 s)",
        "next invocation",
    ]
    assert scheduler.actors[0].state is ActorState.FINISHED


# -- depth-first search and its reduction ------------------------------------------------------


def _search(search: DepthFirst, keys: Sequence[Sequence[str]]) -> list[tuple[Step, ...]]:
    """Drive ``search`` over a synthetic system: actor ``a`` writes ``keys[a]`` in order."""
    complete = []
    for chooser in search.choosers():
        position = [0] * len(keys)
        taken: list[Step] = []
        while True:
            options = [
                _call(a, Kind.RUN, keys[a][position[a]])
                for a in range(len(keys))
                if position[a] < len(keys[a])
            ]
            if not options:
                complete.append(tuple(taken))
                break
            step = chooser.choose(taken, options)
            if step is None:
                break
            taken.append(step)
            position[step.actor or 0] += 1
    assert search.exhausted
    return complete


NO_FAULTS = Budget(ticks=0, crashes=0, lost=0, throttles=0)


def test_without_reduction_every_interleaving_is_run() -> None:
    runs = _search(DepthFirst(depth=10, budget=NO_FAULTS, reduce=False), [["a", "b"], ["c", "d"]])
    assert len(runs) == len(set(runs)) == 6  # C(4, 2)


def test_sleep_sets_skip_reorderings_of_independent_steps() -> None:
    disjoint = _search(DepthFirst(depth=10, budget=NO_FAULTS), [["a", "b"], ["c", "d"]])
    assert len(disjoint) == 1
    same = _search(DepthFirst(depth=10, budget=NO_FAULTS), [["k", "k"], ["k", "k"]])
    assert len(same) == 6


def _order_of(run: Sequence[Step], keys: Sequence[Sequence[str]], key: str) -> tuple[int, ...]:
    """Which actors wrote ``key``, in the order they did (what a reordering cannot change)."""
    position = [0] * len(keys)
    order = []
    for step in run:
        actor = step.actor or 0
        if keys[actor][position[actor]] == key:
            order.append(actor)
        position[actor] += 1
    return tuple(order)


def test_the_reduction_still_covers_every_order_of_dependent_steps() -> None:
    keys = [["a", "k", "b"], ["k", "c"], ["d", "k"]]
    full = _search(DepthFirst(depth=10, budget=NO_FAULTS, reduce=False), keys)
    reduced = _search(DepthFirst(depth=10, budget=NO_FAULTS), keys)
    orders = {_order_of(run, keys, "k") for run in full}
    assert len(orders) == 6  # three writers of k: every permutation
    assert {_order_of(run, keys, "k") for run in reduced} == orders
    assert len(reduced) < len(full) / 10


# -- determinism and replay, on the status table --------------------------------------------


def _comparable(result: RunResult) -> tuple:
    events = []
    for event in result.events:
        if isinstance(event, Write):
            events.append(("write", event.step, event.actor, event.operation, str(event.after)))
        elif isinstance(event, Effect):
            events.append(("effect", event.step, event.actor, event.subject))
        elif isinstance(event, Note):
            events.append(("note", event.step, event.actor, event.text))
    return format_schedule(result.schedule), tuple(events), tuple(result.violations)


def _runs(explorer: Explorer, make: Callable[[], RandomWalk], count: int) -> list[tuple]:
    return [
        _comparable(explorer.run(chooser)) for chooser in itertools.islice(make().choosers(), count)
    ]


def test_the_same_seed_gives_the_same_schedules_and_the_same_runs(explorer: Explorer) -> None:
    first = _runs(explorer, lambda: RandomWalk(11), 6)
    again = _runs(explorer, lambda: RandomWalk(11), 6)
    assert first == again
    other = _runs(explorer, lambda: RandomWalk(12), 6)
    assert [run[0] for run in other] != [run[0] for run in first]
    # Faults and ticks happened, so the runs were not all the same path.
    schedules = " ".join(run[0] for run in first)
    assert "+" in schedules
    assert any(kind in schedules for kind in ("L", "T", "X"))


def test_a_failure_replays_from_its_schedule_and_from_its_command(
    explorer: Explorer, capsys: pytest.CaptureFixture[str]
) -> None:
    with explorer.mutated("fence-status-only"):
        report = explorer.explore(RandomWalk(0), max_runs=40)
        [failure] = report.failures
        replayed = explorer.run(Replay(failure.schedule))
    assert replayed.violations == failure.violations
    assert replayed.schedule == failure.schedule
    assert failure.mutant == "fence-status-only"
    assert "seed 0" in str(failure)
    command = failure.command()
    assert " replay --protocol status-table --mutant fence-status-only --schedule " in command
    assert command.split(" ", 1)[1].startswith("-m sfn_patterns_localstack.interleavings ")

    # The printed command, run in this process (its explorer nests inside the fixture's).
    capsys.readouterr()
    words = ["replay", "--protocol", "status-table", "--mutant", "fence-status-only"]
    code = cli.main([*words, "--schedule", format_schedule(failure.schedule)])
    out = capsys.readouterr().out
    assert code == 1
    assert failure.violations[0] in out
    assert f"schedule: {format_schedule(failure.schedule)}" in out
    # Without the mutant, the same schedule breaks nothing; the fixture still works after.
    assert cli.main(["replay", "--protocol", "status-table", "--schedule", "0 0+ 1"]) == 0
    assert not explorer.run(Replay(failure.schedule)).violations
