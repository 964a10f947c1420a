"""The runtime's newer duties on moto: adoption, selection, retry, artifacts, request counts.

Expected orders and sets are written out by hand from the small DAGs below, never
computed by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import sfn_patterns.dag_aggregate.runtime as runtime_package
from sfn_patterns.dag_aggregate.runtime.artifacts import SCHEMA_FILE, parse_time
from sfn_patterns.dag_aggregate.runtime.dispatch import (
    InvalidRunInputError,
    RunAlreadyRunningError,
    StartRequest,
)
from sfn_patterns.dag_aggregate.runtime.store import Outcome, RunStore
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

from .runtime_fakes import (
    TABLE,
    CountingClient,
    FakeLauncher,
    drain,
    item,
    make_plan,
    ok,
    ready_items,
    scheduler,
    start,
)

SCHEMA = json.loads((Path(runtime_package.__file__).parent / SCHEMA_FILE).read_text())
# a -> b -> c, x -> y, and z reads y and b.
DIAMOND = {"a": set(), "b": {"a"}, "c": {"b"}, "x": set(), "y": {"x"}, "z": {"y", "b"}}


class FakeArtifacts:
    """Keeps every document the runtime writes (the S3 writer's interface)."""

    bucket = "bucket"

    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []

    def write(self, doc: dict[str, Any]) -> str:
        jsonschema.validate(doc, SCHEMA)  # every document, start and end, is valid
        self.documents.append(json.loads(json.dumps(doc)))
        return f"dag-aggregate/runs/{doc['run_id']}/run_results.json"


def test_requests_per_task_stay_few(ddb: Any) -> None:
    """One outcome write, one update per incoming edge, one release, claims, few reads."""
    # 30 tasks: the bound is per task, so the size only has to give several levels and
    # edges to count (60 cost twice the moto calls for the same proof).
    parents = random_dag(30, seed=5, max_parents=3, window=8)
    counting = CountingClient(ddb)
    launcher = FakeLauncher()
    plan = make_plan(parents)
    sched = scheduler(counting, plan, 4, launcher)
    start(sched, "count", "e", "t")
    drain(sched, launcher, "count")
    assert launcher.results[0][0] == "success"
    tasks = len(parents)
    edges = sum(len(spec["parents"]) for spec in plan.tasks.values())
    calls = counting.calls
    # per task: outcome + launched mark + a release without children, plus one per
    # reduced edge; a release with children and every claim are transactions
    assert calls["update_item"] <= 3 * tasks + edges + 5, calls
    assert calls["transact_write_items"] <= 2 * tasks, calls
    # the run item after each transaction (it returns no image), and the start's look
    assert calls["get_item"] <= calls["transact_write_items"] + 1, calls
    # a Query of the ready items per claim, the start's census and the final one
    assert calls["query"] <= tasks + 4, calls
    assert len(launcher.started) == tasks  # every child execution started exactly once
    print(f"{tasks} tasks, {edges} edges: {dict(calls)}")


def test_a_run_begun_by_the_previous_runtime_finishes_every_task_once(ddb: Any) -> None:
    """UPGRADING.md: a run item of the previous layout (a ``ready`` map, no ready items).

    Its ready map is not read; when nothing runs, the final census queues those tasks
    again as ready items, and each runs once.
    """
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(DIAMOND), 1, launcher)
    start(sched, "old", "e", "t")
    waiting = ready_items(ddb, "old")
    assert waiting  # one slot: the other roots wait
    for task in waiting:  # what the previous runtime wrote instead
        sk = next(
            i["sk"]
            for i in ddb.query(
                TableName=TABLE,
                KeyConditionExpression="pk = :r AND begins_with(sk, :p)",
                ExpressionAttributeValues={":r": {"S": "old"}, ":p": {"S": "ready#"}},
            )["Items"]
            if i["task"]["S"] == task
        )
        ddb.delete_item(TableName=TABLE, Key={"pk": {"S": "old"}, "sk": sk})
    ddb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "old"}, "sk": {"S": "run"}},
        UpdateExpression="SET ready = :m REMOVE ready_count",
        ExpressionAttributeValues={":m": {"M": {t: {"N": "1001"} for t in waiting}}},
    )
    drain(sched, launcher, "old")
    assert sorted(launcher.order()) == sorted(DIAMOND)
    assert len(launcher.names) == len(DIAMOND)  # none started twice
    assert [r[0] for r in launcher.results] == ["success"]


def test_a_new_coordinator_adopts_a_running_run_and_nothing_runs_twice(ddb: Any) -> None:
    launcher = FakeLauncher()
    launcher.alive.add("coord-1")
    first = scheduler(ddb, make_plan(DIAMOND), 2, launcher)
    start(first, "adopt", "coord-1", "token-1")
    running = dict(launcher.running)  # a and x hold the two slots
    assert sorted(running) == ["a", "x"]
    launcher.alive.clear()  # coord-1 was stopped while a and x run

    second = scheduler(ddb, make_plan(DIAMOND), 2, launcher)
    start(second, "adopt", "coord-2", "token-2")
    assert item(ddb, "adopt", "run")["execution"]["S"] == "coord-2"
    assert dict(launcher.running) == running  # nothing restarted, nothing new yet
    drain(second, launcher, "adopt")  # the old executions report to the adopted run
    assert sorted(launcher.order()) == sorted(DIAMOND)
    assert [a for _, _, a in launcher.started] == [1] * len(DIAMOND)
    assert [r[:2] for r in launcher.results] == [("success", "token-2")]


def test_a_selection_runs_only_its_tasks_in_dag_order(ddb: Any) -> None:
    # Select a and c but not b: c must still wait for a (through b), and b never runs.
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(DIAMOND), 4, launcher)
    start(sched, "sel", "e", "t", select="a c")
    assert launcher.order() == ["a"]
    drain(sched, launcher, "sel")
    assert launcher.order() == ["a", "c"]
    assert launcher.results[0][2]["tasks"] == {"pending": 0, "succeeded": 2, "failed": 0}


@pytest.mark.parametrize(
    ("select", "exclude", "expected"),
    [
        (["+z"], [], ["a", "b", "x", "y", "z"]),
        (["b+"], [], ["b", "c", "z"]),
        (["@y"], [], ["b", "x", "y", "z", "a"]),
        (["tag:nightly"], [], ["x", "y"]),
        (["+c", "y"], ["a"], ["b", "y", "c"]),
        (["tag:nightly,y+"], [], ["y"]),
    ],
)
def test_graph_operators_choose_the_expected_tasks(
    ddb: Any, select: list[str], exclude: list[str], expected: list[str]
) -> None:
    launcher = FakeLauncher()
    plan = make_plan(DIAMOND, tags={"x": ["nightly"], "y": ["nightly", "finance"]})
    sched = scheduler(ddb, plan, 1, launcher)
    start(sched, "ops", "e", "t", select=select, exclude=exclude)
    drain(sched, launcher, "ops")
    assert sorted(launcher.order()) == sorted(expected)
    assert launcher.results[0][0] == "success"


def test_retry_reruns_the_failed_and_skipped_tasks_only(ddb: Any) -> None:
    launcher = FakeLauncher()
    artifacts = FakeArtifacts()
    plan = make_plan(DIAMOND)
    sched = scheduler(ddb, plan, 2, launcher, artifacts=artifacts)
    start(sched, "nightly", "e1", "t1", select="+z c")
    drain(sched, launcher, "nightly", fail={"b"})
    assert launcher.results[-1][0] == "failure"
    final = artifacts.documents[-1]
    assert final["status"] == "FAILED"
    assert {r["task"]: r["status"] for r in final["results"]} == {
        "a": "success",
        "b": "error",
        "c": "skipped",
        "x": "success",
        "y": "success",
        "z": "skipped",
    }
    skipped = {r["task"]: r["waiting_on"] for r in final["results"] if r["status"] == "skipped"}
    assert skipped == {"c": ["b"], "z": ["b"]}
    assert final["failure"]["task"] == "b"

    before = len(launcher.started)
    start(sched, "nightly", "e2", "t2", retry=True)
    drain(sched, launcher, "nightly")
    assert launcher.started[before:][0][1:] == ("b", 2)
    assert sorted(t for _, t, _ in launcher.started[before:]) == ["b", "c", "z"]
    assert launcher.results[-1][:2] == ("success", "t2")
    retried = artifacts.documents[-1]
    assert retried["invocation"] == 2 and retried["status"] == "SUCCEEDED"
    assert retried["selection"] == {"select": ["+z", "c"], "exclude": []}
    by_task = {r["task"]: r for r in retried["results"]}
    assert by_task["a"]["invocation"] == 1 and by_task["b"]["invocation"] == 2
    assert by_task["b"]["attempt"] == 2 and by_task["c"]["attempt"] == 1


def test_retry_needs_a_previous_run_and_takes_no_selection(ddb: Any) -> None:
    sched = scheduler(ddb, make_plan(DIAMOND), 2, FakeLauncher())
    with pytest.raises(InvalidRunInputError, match="nothing to retry"):
        start(sched, "never", "e", "t", retry=True)
    with pytest.raises(InvalidRunInputError, match="drop select"):
        start(sched, "never", "e", "t", retry=True, select="a")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"run_id": "bad id"}, "run_id must be"),
        ({"run_id": "ok", "selct": "a"}, "unknown input field"),
        ({"run_id": "ok", "select": "a++"}, "cannot read selector"),
        ({"run_id": "ok", "retry": "yes"}, "retry must be true or false"),
    ],
)
def test_bad_input_is_refused_with_a_reason(data: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRunInputError, match=message):
        StartRequest.from_event({"execution": "arn:x:e", "token": "t", "input": data})


def test_an_unknown_task_in_a_selection_names_the_closest(ddb: Any) -> None:
    sched = scheduler(ddb, make_plan(DIAMOND), 2, FakeLauncher())
    with pytest.raises(InvalidRunInputError, match="matches no task; did you mean"):
        start(sched, "typo", "e", "t", select="+zz")


def test_the_run_id_defaults_to_the_execution_name() -> None:
    request = StartRequest.from_event(
        {"execution": "arn:aws:states:us-east-1:1:execution:dag:nightly-7", "token": "t"}
    )
    assert request.run_id == "nightly-7" and request.selection is None


def test_outcome_details_reach_the_artifact(ddb: Any) -> None:
    launcher = FakeLauncher()
    artifacts = FakeArtifacts()
    sched = scheduler(ddb, make_plan({"a": set()}), 1, launcher, artifacts=artifacts)
    start(sched, "detail", "e", "t")
    assert artifacts.documents[0]["status"] == "RUNNING"
    assert artifacts.documents[0]["results"][0]["status"] == "pending"  # written before claims
    sched.task_done(
        "detail",
        "a",
        1,
        Outcome(
            ok=True,
            started_at="2026-01-01T00:00:00.250Z",
            finished_at="2026-01-01T00:00:03.000Z",
            statement_id="stmt-1",
            rows=42,
        ),
    )
    (result,) = artifacts.documents[-1]["results"]
    assert result == {
        "task": "a",
        "status": "success",
        "attempt": 1,
        "invocation": 1,
        "execution_name": launcher.started[0][0],
        "started_at": "2026-01-01T00:00:00.250Z",
        "finished_at": "2026-01-01T00:00:03.000Z",
        "execution_time": 2.75,
        "statement_id": "stmt-1",
        "rows_affected": 42,
        "error": None,
        "cause": None,
        "waiting_on": [],
    }
    output = launcher.results[0][2]
    assert output["run_results"] == "s3://bucket/dag-aggregate/runs/detail/run_results.json"


def test_a_report_that_crashed_before_releasing_its_slot_is_replayed(ddb: Any) -> None:
    """The first delivery unblocked the child, then died; the retry still queues it."""
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan({"a": set(), "b": {"a"}}), 1, launcher)
    start(sched, "crash", "e", "t")
    task, attempt = launcher.take()

    class Crash(Exception):
        pass

    original = RunStore.release

    def crashing(self: RunStore, *args: Any, **kwargs: Any) -> Any:
        raise Crash

    RunStore.release = crashing  # type: ignore[method-assign]
    try:
        with pytest.raises(Crash):
            sched.task_done("crash", task, attempt, ok())
    finally:
        RunStore.release = original  # type: ignore[method-assign]
    assert "waiting_on" not in item(ddb, "crash", "task#b")  # b was unblocked, not queued
    sched.task_done("crash", task, attempt, ok())  # the task machine's retry
    drain(sched, launcher, "crash")
    assert launcher.order() == ["a", "b"]
    assert [r[0] for r in launcher.results] == ["success"]


def test_a_second_coordinator_is_refused_naming_the_owner(ddb: Any) -> None:
    launcher = FakeLauncher()
    launcher.alive.add("owner")
    start(scheduler(ddb, make_plan(DIAMOND), 1, launcher), "busy", "owner", "t1")
    with pytest.raises(RunAlreadyRunningError, match="owner"):
        start(scheduler(ddb, make_plan(DIAMOND), 1, launcher), "busy", "other", "t2")


def test_step_functions_times_parse_on_every_python() -> None:
    assert parse_time("2026-01-01T00:00:00.1234567Z") is not None
    assert parse_time("2026-01-01T00:00:00Z") is not None
    assert parse_time("not a time") is None


class ExpressionLimit:
    """Fails a request whose expressions pass DynamoDB's 4 KB limit (moto does not check)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.longest = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            for key in ("UpdateExpression", "ConditionExpression"):
                size = len(kwargs.get(key, "").encode())
                self.longest = max(self.longest, size)
                assert size <= 4096, f"{name} {key} is {size} bytes"
            return method(*args, **kwargs)

        return call


def test_a_wide_dag_stays_within_dynamodb_expression_limits(ddb: Any) -> None:
    # 70 roots claimed at start, then 70 children made ready by one report at once.
    parents = {f"r{i:02d}": set() for i in range(70)}
    parents |= {"hub": set()} | {f"c{i:02d}": {"hub"} for i in range(70)}
    limited = ExpressionLimit(ddb)
    launcher = FakeLauncher()
    sched = scheduler(limited, make_plan(parents), 200, launcher)
    start(sched, "wide", "e", "t")
    assert len(launcher.running) == 71  # every root started, in several claims
    sched.task_done("wide", *launcher.take("hub"), ok())
    # All 70 children queued (in batches); the report hands over its slot and one spare.
    assert sum(t.startswith("c") for t in launcher.running) == 2
    assert ready_items(ddb, "wide") == [f"c{i:02d}" for i in range(2, 70)]  # ties by name
    assert item(ddb, "wide", "run")["ready_count"] == {"N": "68"}
    drain(sched, launcher, "wide")
    assert sorted(launcher.order()) == sorted(parents)
    assert [r[0] for r in launcher.results] == ["success"]
    assert len(launcher.names) == len(parents)  # no execution started twice
    assert limited.longest > 500  # batched requests were checked, not only small ones


def _run_item_bytes(ddb: Any, run_id: str) -> int:
    return len(json.dumps(item(ddb, run_id, "run")))


def test_the_run_item_does_not_grow_with_the_queue(ddb: Any) -> None:
    """The run item, which every report rewrites, holds the N slots, not the queue.

    bench_scale at 1,000 tasks found it holding every ready task (9 KB, and 56 write
    units per task); 400 roots waiting for 4 slots must leave it as small as 20 do.
    """
    largest = {}
    for roots in (20, 400):
        run_id = f"q{roots:03d}"
        parents = {f"r{i:03d}": set() for i in range(roots)}
        launcher = FakeLauncher()
        sched = scheduler(ddb, make_plan(parents), 4, launcher)
        start(sched, run_id, "e", "t")
        assert len(ready_items(ddb, run_id)) == roots - 4
        largest[roots] = _run_item_bytes(ddb, run_id)
        for _ in range(6):  # reports that hand their slots on
            sched.task_done(run_id, *launcher.take(), ok())
            largest[roots] = max(largest[roots], _run_item_bytes(ddb, run_id))
        assert len(ready_items(ddb, run_id)) == roots - 10
    assert largest[400] <= largest[20] + 8, largest  # the same 4 slots and claims


def test_failures_skips_and_duration_are_pattern_metrics(
    ddb: Any, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One TaskFailures per failed attempt (the task named, not a dimension),
    and the ended run's TasksSkipped and RunDuration, printed by the one writer of the end."""
    monkeypatch.setenv("SFN_PATTERNS_METRICS_NAMESPACE", "sfn-patterns")
    monkeypatch.setenv("SFN_PATTERNS_MODULE", "nightly-dag")
    times = iter(f"2026-01-01T00:{minute:02d}:00.000Z" for minute in range(60))
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(DIAMOND), 2, launcher, clock=lambda: next(times))
    start(sched, "nightly", "e1", "t1", select="+z c")
    drain(sched, launcher, "nightly", fail={"b"})
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    emf_lines = [x for x in lines if "_aws" in x]
    assert all((x["Module"], x["Pattern"]) == ("nightly-dag", "dag-aggregate") for x in emf_lines)
    failures = [x for x in emf_lines if "TaskFailures" in x]
    assert [(x["TaskFailures"], x["Task"], x["RunId"]) for x in failures] == [(1, "b", "nightly")]
    # The task is a property: the dimension set stays Module and Pattern.
    assert failures[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Module", "Pattern"]]
    (ended,) = [x for x in emf_lines if "TasksSkipped" in x]
    assert (ended["TasksSkipped"], ended["Status"]) == (2, "FAILED")  # c and z never ran
    assert ended["RunDuration"] > 0
    assert {m["Name"]: m["Unit"] for m in ended["_aws"]["CloudWatchMetrics"][0]["Metrics"]} == {
        "TasksSkipped": "Count",
        "RunDuration": "Seconds",
    }
