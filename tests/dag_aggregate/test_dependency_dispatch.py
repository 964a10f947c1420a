"""The dependency strategy's scheduler on moto DynamoDB: order, limits, failures, resume.

A fake launcher stands in for Step Functions: it records each child execution the
scheduler starts, and the tests decide when each one reports back through
``task_done``, so interleavings (including concurrent reports) are explicit.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import boto3
import networkx as nx
import pytest

from sfn_patterns.dag_aggregate.runtime.dispatch import (
    Plan,
    RunAlreadyRunningError,
    Scheduler,
    execution_name,
    ready_sort_key,
)
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

TABLE = "dag-runtime"


class FakeLauncher:
    """Records starts and token callbacks; checks the running count never passes N."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list[tuple[str, str, int]] = []  # (name, task, attempt)
        self.names: set[str] = set()
        self.running: dict[str, int] = {}  # task -> attempt
        self.peak = 0
        self.results: list[tuple[str, Any]] = []
        self.alive: set[str] = set()

    def start_task(self, name: str, payload: Mapping[str, Any]) -> None:
        with self.lock:
            if name in self.names:
                return  # ExecutionAlreadyExists: idempotent by name
            self.names.add(name)
            self.started.append((name, payload["task_id"], payload["attempt"]))
            self.running[payload["task_id"]] = payload["attempt"]
            self.peak = max(self.peak, len(self.running))

    def send_success(self, token: str, output: Mapping[str, Any]) -> None:
        self._send(("success", token, dict(output)))

    def send_failure(self, token: str, error: str, cause: str) -> None:
        self._send(("failure", token, error, cause))

    def _send(self, result: tuple[Any, ...]) -> None:
        # As Step Functions: the first callback closes the task; a later one on the same
        # token is rejected (the real launcher ignores that error). It must agree, though.
        with self.lock:
            earlier = [r for r in self.results if r[1] == result[1]]
            assert not earlier or earlier[0][0] == result[0], (earlier, result)
            if not earlier:
                self.results.append(result)

    def execution_running(self, execution_arn: str) -> bool:
        return execution_arn in self.alive

    def take(self, task: str | None = None) -> tuple[str, int]:
        """Pop one running task (the given one, or the first started)."""
        with self.lock:
            if task is None:
                task = next(iter(self.running))
            return task, self.running.pop(task)

    def order(self) -> list[str]:
        return [task for _, task, _ in self.started]


class SerializedClient:
    """One API call at a time: moto is not thread-safe, DynamoDB is atomic per request.

    Races between calls (the ones the scheduler must survive) stay possible.
    """

    _lock = threading.Lock()

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return method(*args, **kwargs)

        return call


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = SerializedClient(boto3.client("dynamodb", region_name="us-east-1"))
        # Same layout as modules/dag-aggregate (dependency.tf).
        client.create_table(
            TableName=TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        )
        yield client


def make_plan(
    parents: Mapping[str, set[str]], durations: Mapping[str, float] | None = None
) -> Plan:
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    graph.add_edges_from((p, c) for c, ps in parents.items() for p in ps)
    durations = durations or {}
    remaining: dict[str, float] = {}
    for node in reversed(list(nx.topological_sort(graph))):
        below = max((remaining[c] for c in graph.successors(node)), default=0.0)
        remaining[node] = durations.get(node, 1.0) + below
    return Plan(
        tasks={
            n: {
                "parents": sorted(graph.predecessors(n)),
                "children": sorted(graph.successors(n)),
                "priority": remaining[n],
                "task": {"sql": f"INSERT INTO agg.{n} SELECT 1", "wait": 0, "max_polls": 1},
            }
            for n in graph.nodes
        }
    )


def scheduler(ddb: Any, plan: Plan, n: int, launcher: FakeLauncher) -> Scheduler:
    return Scheduler(
        client=ddb,
        table=TABLE,
        plan=plan,
        max_concurrency=n,
        launcher=launcher,
        sleep=lambda s: None,
    )


def drain(
    sched: Scheduler, launcher: FakeLauncher, run_id: str, fail: set[str] = frozenset()
) -> None:
    """Report running tasks one by one (oldest first) until nothing runs."""
    while launcher.running:
        task, attempt = launcher.take()
        ok = task not in fail
        sched.task_done(
            run_id, task, attempt, ok=ok, error=None if ok else "Boom", cause=f"{task} failed"
        )


def item(ddb: Any, run_id: str, sk: str) -> dict[str, Any]:
    return ddb.get_item(TableName=TABLE, Key={"pk": {"S": run_id}, "sk": {"S": sk}})["Item"]


def test_ready_tasks_start_longest_remaining_path_first(ddb: Any) -> None:
    # Roots a (chain of 3 below), b (chain of 1 below) and c (alone); one slot.
    parents = {"a": set(), "a1": {"a"}, "a2": {"a1"}, "b": set(), "b1": {"b"}, "c": set()}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 1, launcher)
    sched.start("r1", "exec-1", "tok")
    assert launcher.order() == ["a"]
    drain(sched, launcher, "r1")
    # After a: ready are a1 (prio 2), b (2), c (1): ties by name, a1 before b.
    assert launcher.order() == ["a", "a1", "b", "a2", "b1", "c"]
    assert launcher.results == [
        (
            "success",
            "tok",
            {
                "run_id": "r1",
                "status": "SUCCEEDED",
                "tasks": {"pending": 0, "in_progress": 0, "succeeded": 6, "failed": 0},
            },
        )
    ]


def test_priority_follows_estimated_durations(ddb: Any) -> None:
    parents = {"short": set(), "long": set(), "tail": {"short"}}
    plan = make_plan(parents, {"long": 10.0, "short": 1.0, "tail": 1.0})
    launcher = FakeLauncher()
    sched = scheduler(ddb, plan, 1, launcher)
    sched.start("r", "e", "t")
    drain(sched, launcher, "r")
    assert launcher.order() == ["long", "short", "tail"]
    assert ready_sort_key(10.0, "x") < ready_sort_key(2.0, "a")


def test_children_start_only_after_all_parents_and_the_limit_holds(ddb: Any) -> None:
    parents = random_dag(50, seed=7, max_parents=3, window=10)
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 4, launcher)
    sched.start("big", "e", "t")
    finished: set[str] = set()
    rng = random.Random(3)
    while launcher.running:
        task = rng.choice(sorted(launcher.running))
        task, attempt = launcher.take(task)
        assert parents[task] <= finished, f"{task} started before its parents"
        finished.add(task)
        sched.task_done("big", task, attempt, ok=True)
        run = item(ddb, "big", "run")
        assert len(run["active"]["M"]) == len(launcher.running) <= 4
    assert launcher.peak == 4
    assert finished == set(parents)
    assert launcher.results[0][0] == "success"


def test_concurrent_reports_never_exceed_the_limit(ddb: Any) -> None:
    # Wide DAG: 30 independent tasks feeding one sink; 6 threads report at once.
    parents = {f"t{i:02d}": set() for i in range(30)} | {"sink": {f"t{i:02d}" for i in range(30)}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 5, launcher)
    sched.start("wide", "e", "t")
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            while True:
                with launcher.lock:
                    if not launcher.running:
                        if launcher.results:
                            return
                        task = None
                    else:
                        task = next(iter(launcher.running))
                        attempt = launcher.running.pop(task)
                if task is None:
                    time.sleep(0.001)
                    continue
                sched.task_done("wide", task, attempt, ok=True)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert launcher.peak <= 5
    assert sorted(launcher.order()) == sorted(parents)
    assert launcher.order()[-1] == "sink"
    assert [r[0] for r in launcher.results] == ["success"]


def test_a_failure_blocks_descendants_and_independent_branches_finish(ddb: Any) -> None:
    parents = {"a": set(), "b": {"a"}, "c": {"b"}, "x": set(), "y": {"x"}, "z": {"y", "b"}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 2, launcher)
    sched.start("f", "e", "tok")
    drain(sched, launcher, "f", fail={"b"})
    assert set(launcher.order()) == {"a", "b", "x", "y"}
    assert item(ddb, "f", "task#c")["status"]["S"] == "pending"
    assert item(ddb, "f", "task#z")["status"]["S"] == "pending"
    assert item(ddb, "f", "task#y")["status"]["S"] == "succeeded"
    ((kind, token, error, cause),) = launcher.results
    assert (kind, token, error) == ("failure", "tok", "Boom")
    assert '"task": "b"' in cause and "b failed" in cause
    assert item(ddb, "f", "run")["status"]["S"] == "FAILED"


def test_resume_runs_only_the_failed_task_and_its_descendants(ddb: Any) -> None:
    parents = {"a": set(), "b": {"a"}, "c": {"b"}, "x": set(), "y": {"x"}, "z": {"y", "b"}}
    plan = make_plan(parents)
    first = FakeLauncher()
    scheduler(ddb, plan, 2, first).start("res", "e1", "t1")
    drain(scheduler(ddb, plan, 2, first), first, "res", fail={"b"})
    assert first.results[0][0] == "failure"

    second = FakeLauncher()
    sched = scheduler(ddb, plan, 2, second)
    sched.start("res", "e2", "t2")
    drain(sched, second, "res")
    assert second.order() == ["b", "c", "z"]
    # A new attempt number, so the child execution has a new name.
    assert [a for _, t, a in second.started if t == "b"] == [2]
    assert second.results[0][:2] == ("success", "t2")

    third = FakeLauncher()
    scheduler(ddb, plan, 2, third).start("res", "e3", "t3")
    assert third.started == [] and third.results[0][:2] == ("success", "t3")


def test_redelivered_reports_and_starts_are_idempotent(ddb: Any) -> None:
    parents = {"a": set(), "b": {"a"}, "c": {"a"}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 1, launcher)
    sched.start("d", "e", "t")
    sched.start("d", "e", "t-retry")  # Step Functions retried the start Lambda
    assert launcher.order() == ["a"]
    task, attempt = launcher.take()
    sched.task_done("d", task, attempt, ok=True)
    sched.task_done("d", task, attempt, ok=True)  # redelivered
    sched.task_done(
        "d", task, attempt, ok=False, error="Late", cause="event after success"
    )  # EventBridge
    assert launcher.order() == ["a", "b"]
    assert list(item(ddb, "d", "run")["active"]["M"]) == ["b"]
    sched.task_done("d", "b", 0, ok=True)  # stale attempt: ignored
    drain(sched, launcher, "d")
    assert [r[:2] for r in launcher.results] == [("success", "t-retry")]


def test_a_second_coordinator_cannot_take_a_running_run(ddb: Any) -> None:
    parents = {"a": set()}
    launcher = FakeLauncher()
    launcher.alive.add("e1")
    scheduler(ddb, make_plan(parents), 1, launcher).start("busy", "e1", "t1")
    with pytest.raises(RunAlreadyRunningError):
        scheduler(ddb, make_plan(parents), 1, launcher).start("busy", "e2", "t2")
    launcher.alive.clear()  # e1 was aborted: e2 may take the run over
    scheduler(ddb, make_plan(parents), 1, launcher).start("busy", "e2", "t2")
    assert item(ddb, "busy", "run")["execution"]["S"] == "e2"


def test_a_claim_without_a_start_is_recovered(ddb: Any) -> None:
    """A dispatcher that died between the claim and StartExecution is finished by the next one."""
    parents = {"a": set(), "b": set()}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 2, launcher)

    class Crash(Exception):
        pass

    original = launcher.start_task
    calls = {"n": 0}

    def flaky(name: str, payload: Mapping[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise Crash
        original(name, payload)

    launcher.start_task = flaky  # type: ignore[method-assign]
    with pytest.raises(Crash):
        sched.start("c", "e", "t")
    assert launcher.order() == ["a"]
    sched.start("c", "e", "t")  # the Lambda retry
    assert sorted(launcher.order()) == ["a", "b"]
    drain(sched, launcher, "c")
    assert launcher.results[0][0] == "success"


def test_execution_names_are_short_unique_and_stable() -> None:
    long_run = "r" * 80
    a = execution_name(long_run, "t" * 60 + "a", 1)
    b = execution_name(long_run, "t" * 60 + "b", 1)
    assert a != b and len(a) <= 80 and len(b) <= 80
    assert execution_name("run/1", "x", 3) == execution_name("run/1", "x", 3)
    assert "/" not in execution_name("run/1", "x", 3)
