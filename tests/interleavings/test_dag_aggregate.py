"""The dag dispatcher's real runtime, explored: its invariants hold, and every mutant is caught.

The budget is fixed and deterministic (a bounded search, seeded walks, given schedules),
so this file costs the same few CPU-seconds on every run, and a failure prints the
schedule and the command that replays it. Longer explorations: ``python -m
sfn_patterns_localstack.interleavings explore --protocol dag-aggregate --cpu-seconds 600``
(``--strategy dfs``, and ``--dag-start retried|takeover``, ``--dag-shape diamond``, ...).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sfn_patterns_localstack.interleavings import cli
from sfn_patterns_localstack.interleavings.clock import FakeClock
from sfn_patterns_localstack.interleavings.explorer import Explorer, Report
from sfn_patterns_localstack.interleavings.protocol import RunView
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate import (
    SHAPES,
    DagAggregate,
    Scenario,
)
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate.invariants import DagChecker
from sfn_patterns_localstack.interleavings.scheduler import Effect, Event, Write
from sfn_patterns_localstack.interleavings.steps import parse_schedule
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST
from sfn_patterns_localstack.interleavings.strategies import Budget, DepthFirst, RandomWalk, Replay

pytestmark = pytest.mark.interleavings

NO_FAULTS = Budget(ticks=0, crashes=0, lost=0, throttles=0)
TAKEOVER = Scenario(start="takeover")


@pytest.fixture(scope="module")
def explorer() -> Iterator[Explorer]:
    """The default scenario: a, b -> c, max_concurrency 2, a and b running, a reported twice."""
    with Explorer(DagAggregate()) as explorer:
        yield explorer


def _passes(report: Report) -> None:
    assert not report.failures, "\n\n".join(str(failure) for failure in report.failures)


def test_every_schedule_of_four_steps_keeps_every_invariant(explorer: Explorer) -> None:
    """Every order of the first four calls of the three reports, each run to the end."""
    search = DepthFirst(depth=4, budget=NO_FAULTS)
    report = explorer.explore(search)
    _passes(report)
    assert report.exhausted


def test_the_real_runtime_keeps_every_invariant_on_random_walks(explorer: Explorer) -> None:
    """Reports racing, with crashes (and their retries), lost answers, throttles and ticks."""
    report = explorer.explore(RandomWalk(53), max_runs=5)
    _passes(report)
    assert report.runs == 5


def test_a_second_coordinator_adopts_the_run_while_its_tasks_report() -> None:
    with Explorer(DagAggregate(TAKEOVER)) as explorer:
        report = explorer.explore(RandomWalk(7), max_runs=3)
    _passes(report)


def test_a_transaction_sent_again_after_its_lost_answer_is_not_applied_twice(
    explorer: Explorer,
) -> None:
    """As DynamoDB: the same ClientRequestToken within minutes answers the first outcome."""
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=RUNTIME_HOST,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    explorer.gateway.attach(client)
    table = explorer.protocol.table_name
    put = {
        "Put": {
            "TableName": table,
            "Item": {"pk": {"S": "token"}, "sk": {"S": "once"}},
            "ConditionExpression": "attribute_not_exists(sk)",
        }
    }
    client.transact_write_items(TransactItems=[put], ClientRequestToken="same")
    client.transact_write_items(TransactItems=[put], ClientRequestToken="same")
    with pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(TransactItems=[put], ClientRequestToken="another")
    assert "token/once" in explorer.store.snapshot()


# -- what the explorer found in the real runtime ------------------------------------------------

# Each schedule broke an invariant before the runtime was fixed (CHANGELOG, "Fixed"); each
# is replayed in its scenario, and what it led to is said beside it.
STALE_REPORT = "a replayed report and the last parent both queue the child"
STALE_START = "a superseded start attempt queues tasks already claimed"
FOUND: dict[str, tuple[Scenario, str]] = {
    # The stale ready items of the 5,000-task run: a's report is delivered twice (actors 0
    # and 3); the second records a first, then b's report (actor 1) removes the last parent
    # from c's waiting_on. a's first delivery, replaying, finds c ready and queues it, frees
    # its slot and claims c; then b's release queued c once more: a ready item for a task
    # that holds a slot, which a claim turns, once c has run, into a slot nobody frees.
    STALE_REPORT: (
        Scenario(),
        "1 3 3 1 0 0 0 0 0 0 0 0 1",
    ),
    # The first attempt of the coordinator's start (actor 0) writes its task items and
    # waits; Step Functions' retry (actor 1) takes the run over, opens it and claims a and
    # b. The first attempt went on to write the ready items of a and b (stale, uncounted)
    # before finding that it no longer owned the run.
    STALE_START: (
        Scenario(start="retried", duplicates=()),
        "0 0 0 0 1 1 1 1 1 1 1 1 1 1 1",
    ),
    # The start attempt Step Functions gave up on (actor 0) read the run absent before its
    # retry (actor 1) created it, then created it again and took the token back: the
    # retry, the attempt Step Functions waits on, failed as "taken over while starting",
    # and the run's outcome went to the abandoned token. The Run state's retry count now
    # orders the two.
    "a superseded start attempt takes the run back from its retry": (
        Scenario(start="retried", duplicates=()),
        "0 1 1 0",
    ),
    # The answer of the start's opening write is lost; the client re-sends it, which finds
    # the run already open: the start failed as "taken over while starting" and nobody
    # dispatched the open run.
    "the opening's answer is lost": (Scenario(start="actor", duplicates=()), "0 0 0 0 0 0 0L"),
    # The answer of the write that ends the run is lost; the re-sent write finds the run
    # ended, and its caller took that for another caller's end: nobody answered the token.
    "the ending's answer is lost": (
        Scenario(start="actor", duplicates=()),
        "0 0 0 0 0 0 0 0 0 0 0 1 1 1 1 2 2 2 2 2 2 2 2 2 3 3 3 3 3L",
    ),
    # The second coordinator's start crashes after adopting the run; its retry reads the
    # run RUNNING, which then ends (answering the crashed attempt's token), and the retry
    # refreshed the token of the ended run without answering it.
    "a retried start refreshes the token of a run that ended meanwhile": (
        TAKEOVER,
        "2 4T 2 + 2 0 4+ 0L 0X 7 4 5 1 5 1 4 1 1 1 1 1 3 3 3 3 3 3 4 5 6 8",
    ),
    # The second coordinator's retried start reads the run RUNNING; the run ends (its
    # outcome to the stopped first coordinator); the adoption then failed as "taken over
    # by" the first, and neither coordinator was told the outcome.
    "a start adopts a run that ended meanwhile": (
        TAKEOVER,
        "4 4 1+ 1 0 4 + 0T 0X 1 5 6 2 2 5 2 2 2 2 2 2 3 3 3 3 3 3 5 7 8",
    ),
}


def _by_scenario() -> dict[Scenario, list[str]]:
    grouped: dict[Scenario, list[str]] = {}
    for finding, (scenario, _) in FOUND.items():
        grouped.setdefault(scenario, []).append(finding)
    return grouped


@pytest.mark.parametrize("findings", list(_by_scenario().values()), ids="; ".join)
def test_the_schedules_the_explorer_found_keep_every_invariant(
    explorer: Explorer, findings: list[str]
) -> None:
    scenario = FOUND[findings[0]][0]
    with contextlib.ExitStack() as stack:
        if scenario != Scenario():
            explorer = stack.enter_context(Explorer(DagAggregate(scenario)))
        for finding in findings:
            result = explorer.run(Replay(parse_schedule(FOUND[finding][1])))
            assert result.quiescent, finding
            assert not result.violations, (finding, result.violations)


# -- mutants ------------------------------------------------------------------------------------

# Each mutant, the scenario it is explored in and the invariant that must catch it. The
# budget is MUTANT_RUNS runs of the seed-0 walk over interleavings only (no faults); when
# the mutants were added they needed 1, 11, 1 and 1 runs (in this order).
MUTANT_RUNS = 16
MUTANTS = {
    "claim-ignores-limit": (Scenario(shape="diamond", max_concurrency=1), "limit:"),
    "claim-deletes-unconditionally": (Scenario(duplicates=()), "queue:"),
    "unblock-read-modify-write": (Scenario(), "ends:"),
    "launch-before-claim": (Scenario(), "limit:"),
    "release-skips-pending-check": (Scenario(), "queue:"),
}
# Mutants whose mistake shows only with faults: the seed-0 walk with the default fault
# budget (a crash, a lost answer, a throttle and two ticks per prefix), and its runs.
# release-skips-pending-check needs a lost answer and a crash between a's two reports:
# caught in run 36 when it was added.
FAULT_WALKS = {"release-skips-pending-check": 40}


def test_every_mutant_of_the_protocol_is_tested() -> None:
    assert set(MUTANTS) == set(DagAggregate().mutants())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_within_the_budget(explorer: Explorer, mutant: str) -> None:
    scenario, invariant = MUTANTS[mutant]
    walk = RandomWalk(0) if mutant in FAULT_WALKS else RandomWalk(0, depth=30, budget=NO_FAULTS)
    runs = FAULT_WALKS.get(mutant, MUTANT_RUNS)
    if scenario == Scenario():
        with explorer.mutated(mutant):
            report = explorer.explore(walk, max_runs=runs)
    else:
        with Explorer(DagAggregate(scenario), mutant=mutant) as other:
            report = other.explore(walk, max_runs=runs)
    assert report.failures, f"mutant {mutant} survived {report.runs} runs"
    [failure] = report.failures
    print(f"{mutant}: caught after {report.runs} runs ({report.cpu_seconds:.2f} CPU-s)\n{failure}")
    assert failure.violations[0].startswith(invariant), failure
    assert failure.mutant == mutant


def test_a_scenario_option_out_of_range_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", "--protocol", "dag-aggregate", "--dag-failing", "z", "--runs", "1"]
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    assert "--dag-failing: no task 'z' in the join DAG; its tasks are a, b, c" in (
        capsys.readouterr().err
    )


# -- the checker on planted histories ----------------------------------------------------------


class _Items:
    """A stand-in store: the snapshot a checker reads."""

    def __init__(self, items: dict[str, dict[str, Any]]) -> None:
        self.items = items

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return self.items


def _task(status: str, attempt: int = 1, **more: Any) -> dict[str, Any]:
    return {"status": status, "attempt": attempt, **more}


def _view(events: list[Event], items: dict[str, dict[str, Any]]) -> RunView:
    return RunView(events, [], FakeClock(), _Items(items))  # type: ignore[arg-type]


def _checker() -> DagChecker:
    return DagChecker("r1", SHAPES["join"], 1)


NOW = FakeClock().now
RUN = {"status": "RUNNING", "active": {"c": 1}, "ready_count": 0}


def test_the_checker_sees_a_task_run_twice_or_before_its_parents() -> None:
    items = {"r1/run": RUN, "r1/task#a": _task("succeeded"), "r1/task#b": _task("pending")}
    checker = _checker()
    broken = checker.after_step(_view([Effect(1, 0, "c", NOW)], items))
    assert broken == ["order: actor 0 started c while its parent b is pending"]
    items["r1/task#b"] = _task("succeeded")
    events: list[Event] = [Effect(1, 0, "c", NOW), Effect(2, 1, "c", NOW)]
    assert checker.after_step(_view(events, items)) == ["once: actor 1 started c again (run 2)"]


def test_the_checker_sees_a_slot_given_to_a_task_that_ran_and_a_stale_ready_item() -> None:
    items = {
        "r1/run": RUN,
        "r1/task#c": _task("succeeded"),
        "r1/ready#099#a": {"task": "a", "attempt": 1},
        "r1/task#a": _task("succeeded"),
    }
    grant = Write(1, 2, "TransactWriteItems", {"r1/run": {"active": {}}}, {"r1/run": RUN}, NOW)
    broken = _checker().after_step(_view([grant], items))
    assert broken == [
        "slot: actor 2 gave c a slot (attempt 1) while its task item is succeeded at "
        "attempt 1, waiting on []",
        "queue: ready_count is 0 but 1 ready items are queued (a)",
        "queue: a ready item queues a (attempt 1), which is succeeded at attempt 1: a "
        "stale ready item",
    ]
