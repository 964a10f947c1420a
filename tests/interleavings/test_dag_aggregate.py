"""The dag dispatcher's real runtime, explored: its invariants hold, and every mutant is caught.

The budget is fixed and deterministic (a bounded search, seeded walks, given schedules),
so this file costs the same few CPU-seconds on every run, and a failure prints the
schedule and the command that replays it. Longer explorations: ``python -m
sfn_patterns_localstack.interleavings explore --protocol dag-aggregate --cpu-seconds 600``
(``--strategy dfs``, and ``--dag-start retried|takeover``, ``--dag-shape diamond``, ...).
"""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from sfn_patterns_localstack.interleavings import cli
from sfn_patterns_localstack.interleavings.explorer import Explorer, Report
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate import DagAggregate, Scenario
from sfn_patterns_localstack.interleavings.steps import parse_schedule
from sfn_patterns_localstack.interleavings.store import RUNTIME_HOST
from sfn_patterns_localstack.interleavings.strategies import Budget, DepthFirst, RandomWalk, Replay

pytestmark = pytest.mark.interleavings

NO_FAULTS = Budget(ticks=0, crashes=0, lost=0, throttles=0)


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
    report = explorer.explore(RandomWalk(53), max_runs=8)
    _passes(report)
    assert report.runs == 8


def test_a_second_coordinator_adopts_the_run_while_its_tasks_report() -> None:
    scenario = Scenario(start="takeover", duplicates=())
    with Explorer(DagAggregate(scenario)) as explorer:
        report = explorer.explore(RandomWalk(7), max_runs=4)
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
    assert "token once" in explorer.store.snapshot()


# -- the stale ready items of the 5,000-task run -------------------------------------------------

# a's report is delivered twice (actors 0 and 3); the second delivery records a first, then
# b's report (actor 1) removes the last parent from c's waiting_on. a's first delivery,
# replaying, finds c pending with no parent left and queues it, frees its slot and claims c;
# then b's release queues c once more: a ready item for a task that holds a slot (and,
# once c has run, one that a claim turns into a slot nobody frees).
STALE_AFTER_A_REPLAYED_REPORT = "1 3 3 1 0 0 0 0 0 0 0 0 1"


def test_a_child_is_queued_once_when_a_replayed_report_also_finds_it_ready(
    explorer: Explorer,
) -> None:
    result = explorer.run(Replay(parse_schedule(STALE_AFTER_A_REPLAYED_REPORT)))
    assert not result.violations, result.violations


# The first attempt of the coordinator's start (actor 0) writes its task items and waits;
# Step Functions' retry (actor 1) takes the run over, opens it and claims a and b. Then the
# first attempt goes on: its open_run writes the ready items of a and b, and only then
# finds it no longer owns the run.
STALE_AFTER_A_RETRIED_START = "0 0 0 0 1 1 1 1 1 1 1 1 1 1 1"


def test_a_superseded_start_attempt_writes_nothing_into_the_run() -> None:
    with Explorer(DagAggregate(Scenario(start="retried", duplicates=()))) as explorer:
        result = explorer.run(Replay(parse_schedule(STALE_AFTER_A_RETRIED_START)))
    assert not result.violations, result.violations


# -- mutants ------------------------------------------------------------------------------------

# Each mutant, the scenario it is explored in and the invariant that must catch it. The
# budget is MUTANT_RUNS runs of the seed-0 walk over interleavings only (no faults); when
# the mutants were added they needed 1 (claim-ignores-limit), 11, 1 and 1 runs.
MUTANT_RUNS = 16
MUTANTS = {
    "claim-ignores-limit": (Scenario(shape="diamond", max_concurrency=1), "limit:"),
    "claim-deletes-unconditionally": (Scenario(duplicates=()), "queue:"),
    "unblock-read-modify-write": (Scenario(), "ends:"),
    "launch-before-claim": (Scenario(), "limit:"),
}


def test_every_mutant_of_the_protocol_is_tested() -> None:
    assert set(MUTANTS) | {"claim-skips-pending-check"} == set(DagAggregate().mutants())


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_within_the_budget(explorer: Explorer, mutant: str) -> None:
    scenario, invariant = MUTANTS[mutant]
    walk = RandomWalk(0, depth=30, budget=NO_FAULTS)
    if scenario == Scenario():
        with explorer.mutated(mutant):
            report = explorer.explore(walk, max_runs=MUTANT_RUNS)
    else:
        with Explorer(DagAggregate(scenario), mutant=mutant) as other:
            report = other.explore(walk, max_runs=MUTANT_RUNS)
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
