"""Test doubles for the dependency runtime on moto: a fake launcher, helpers to drive runs.

A fake launcher stands in for Step Functions: it records each child execution the
scheduler starts, and the tests decide when each one reports back through
``task_done``, so interleavings (including concurrent reports) are explicit.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

import networkx as nx

from sfn_patterns.dag_aggregate.runtime.dispatch import Plan, Scheduler, StartRequest
from sfn_patterns.dag_aggregate.runtime.store import Outcome, RunStore

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


def make_plan(
    parents: Mapping[str, set[str]],
    durations: Mapping[str, float] | None = None,
    tags: Mapping[str, list[str]] | None = None,
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
                "tags": list((tags or {}).get(n, [])),
                "task": {"sql": f"INSERT INTO agg.{n} SELECT 1", "wait": 0, "max_polls": 1},
            }
            for n in graph.nodes
        }
    )


def scheduler(ddb: Any, plan: Plan, n: int, launcher: FakeLauncher, **kwargs: Any) -> Scheduler:
    return Scheduler(
        store=RunStore(ddb, TABLE),
        plan=plan,
        max_concurrency=n,
        launcher=launcher,
        **{"pause": lambda seconds: None, **kwargs},
    )


def start(sched: Scheduler, run_id: str, execution: str, token: str, **data: Any) -> None:
    """What the coordinator's start call does (execution input ``data``)."""
    sched.start(
        StartRequest.from_event(
            {"execution": execution, "token": token, "input": {"run_id": run_id, **data}}
        )
    )


def ok() -> Outcome:
    return Outcome(ok=True)


def drain(
    sched: Scheduler, launcher: FakeLauncher, run_id: str, fail: set[str] = frozenset()
) -> None:
    """Report running tasks one by one (oldest first) until nothing runs."""
    while launcher.running:
        task, attempt = launcher.take()
        good = task not in fail
        sched.task_done(
            run_id,
            task,
            attempt,
            Outcome(ok=good, error=None if good else "Boom", cause=f"{task} failed"),
        )


def item(ddb: Any, run_id: str, sk: str) -> dict[str, Any]:
    return ddb.get_item(TableName=TABLE, Key={"pk": {"S": run_id}, "sk": {"S": sk}})["Item"]


def ready_items(ddb: Any, run_id: str) -> list[str]:
    """The tasks of the run's ready items, in claim order."""
    found = ddb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :r AND begins_with(sk, :p)",
        ExpressionAttributeValues={":r": {"S": run_id}, ":p": {"S": "ready#"}},
    )["Items"]
    return [i["task"]["S"] for i in found]


class CountingClient:
    """Counts DynamoDB requests by operation (wraps the serialized moto client)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return call
