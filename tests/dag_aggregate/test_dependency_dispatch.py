"""The dependency strategy's scheduler on moto DynamoDB: order, limits, failures, resume.

The fakes in ``runtime_fakes`` stand in for Step Functions, so interleavings
(including concurrent reports) are explicit.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from sfn_patterns.dag_aggregate.runtime.dispatch import (
    InvalidRunInputError,
    RunAlreadyRunningError,
    StartRequest,
    execution_name,
    ready_sort_key,
)
from sfn_patterns.dag_aggregate.runtime.store import Outcome
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

from .runtime_fakes import FakeLauncher, drain, item, make_plan, ok, ready_items, scheduler, start


def test_ready_tasks_start_longest_remaining_path_first(ddb: Any) -> None:
    # Roots a (chain of 3 below), b (chain of 1 below) and c (alone); one slot.
    parents = {"a": set(), "a1": {"a"}, "a2": {"a1"}, "b": set(), "b1": {"b"}, "c": set()}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 1, launcher)
    start(sched, "r1", "exec-1", "tok")
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
                "invocation": 1,
                "tasks": {"pending": 0, "succeeded": 6, "failed": 0},
            },
        )
    ]


def test_priority_follows_estimated_durations(ddb: Any) -> None:
    parents = {"short": set(), "long": set(), "tail": {"short"}}
    plan = make_plan(parents, {"long": 10.0, "short": 1.0, "tail": 1.0})
    launcher = FakeLauncher()
    sched = scheduler(ddb, plan, 1, launcher)
    start(sched, "r", "e", "t")
    drain(sched, launcher, "r")
    assert launcher.order() == ["long", "short", "tail"]
    assert ready_sort_key(10.0, "x") < ready_sort_key(2.0, "a")


def test_children_start_only_after_all_parents_and_the_limit_holds(ddb: Any) -> None:
    # 30 tasks at a limit of 4: every state of the run item is checked after each report,
    # so the size only has to keep the limit full for several rounds (50 proved no more).
    parents = random_dag(30, seed=7, max_parents=3, window=10)
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 4, launcher)
    start(sched, "big", "e", "t")
    finished: set[str] = set()
    rng = random.Random(3)
    while launcher.running:
        task = rng.choice(sorted(launcher.running))
        task, attempt = launcher.take(task)
        assert parents[task] <= finished, f"{task} started before its parents"
        finished.add(task)
        sched.task_done("big", task, attempt, ok())
        run = item(ddb, "big", "run")
        assert len(run["active"]["M"]) == len(launcher.running) <= 4
    assert launcher.peak == 4
    assert finished == set(parents)
    assert launcher.results[0][0] == "success"


def _report_from_threads(
    sched: Any, launcher: FakeLauncher, run_id: str, *, rng: random.Random | None = None
) -> None:
    """Six threads report running tasks at once until the run's token is answered.

    Without ``rng`` each takes the oldest running task. With it each takes a random
    one, and every report comes twice (the task machine's, then the ended-execution
    rule's), the second at a random place among the replays still to come.
    """
    errors: list[BaseException] = []
    replays: list[tuple[str, int]] = []
    lock = threading.Lock()

    def next_report() -> tuple[tuple[str, int] | None, bool]:
        with launcher.lock, lock:
            if launcher.running:
                task = rng.choice(list(launcher.running)) if rng else next(iter(launcher.running))
                return (task, launcher.running.pop(task)), False
            if replays:
                return replays.pop(0), True
            return None, False

    def worker() -> None:
        try:
            while True:
                report, replay = next_report()
                if report is None:
                    if launcher.results:
                        return
                    time.sleep(0.001)
                    continue
                sched.task_done(run_id, *report, ok())
                if rng and not replay:
                    with lock:
                        replays.insert(rng.randrange(len(replays) + 1), report)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors


def test_concurrent_reports_never_exceed_the_limit(ddb: Any) -> None:
    # Wide DAG: 30 independent tasks feeding one sink; 6 threads report at once.
    parents = {f"t{i:02d}": set() for i in range(30)} | {"sink": {f"t{i:02d}" for i in range(30)}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 5, launcher)
    start(sched, "wide", "e", "t")
    _report_from_threads(sched, launcher, "wide")
    assert launcher.peak <= 5
    assert sorted(launcher.order()) == sorted(parents)
    assert launcher.order()[-1] == "sink"
    assert [r[0] for r in launcher.results] == ["success"]


def test_reports_delivered_twice_by_concurrent_threads_run_each_task_once(ddb: Any) -> None:
    """Each report comes twice (the task machine's, then the ended-execution rule's), in
    any order, from six threads at once: every task runs once, nothing stays queued."""
    parents = random_dag(80, seed=3, max_parents=3, window=10)
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 6, launcher)
    start(sched, "twice", "e", "t")
    _report_from_threads(sched, launcher, "twice", rng=random.Random(1))
    assert sorted(launcher.order()) == sorted(parents)  # each started once
    assert launcher.peak <= 6
    assert [r[0] for r in launcher.results] == ["success"]
    assert ready_items(ddb, "twice") == []


def test_a_failure_blocks_descendants_and_independent_branches_finish(ddb: Any) -> None:
    parents = {"a": set(), "b": {"a"}, "c": {"b"}, "x": set(), "y": {"x"}, "z": {"y", "b"}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 2, launcher)
    start(sched, "f", "e", "tok")
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
    start(scheduler(ddb, plan, 2, first), "res", "e1", "t1")
    drain(scheduler(ddb, plan, 2, first), first, "res", fail={"b"})
    assert first.results[0][0] == "failure"

    second = FakeLauncher()
    sched = scheduler(ddb, plan, 2, second)
    start(sched, "res", "e2", "t2")
    drain(sched, second, "res")
    assert second.order() == ["b", "c", "z"]
    # A new attempt number, so the child execution has a new name.
    assert [a for _, t, a in second.started if t == "b"] == [2]
    assert second.results[0][:2] == ("success", "t2")

    third = FakeLauncher()
    start(scheduler(ddb, plan, 2, third), "res", "e3", "t3")
    assert third.started == [] and third.results[0][:2] == ("success", "t3")


def test_redelivered_reports_and_starts_are_idempotent(ddb: Any) -> None:
    parents = {"a": set(), "b": {"a"}, "c": {"a"}}
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan(parents), 1, launcher)
    start(sched, "d", "e", "t")
    start(sched, "d", "e", "t-retry")  # Step Functions retried the start Lambda
    assert launcher.order() == ["a"]
    task, attempt = launcher.take()
    sched.task_done("d", task, attempt, ok())
    sched.task_done("d", task, attempt, ok())  # redelivered
    sched.task_done(
        "d", task, attempt, Outcome(ok=False, error="Late", cause="event after success")
    )  # EventBridge
    assert launcher.order() == ["a", "b"]
    assert list(item(ddb, "d", "run")["active"]["M"]) == ["b"]
    sched.task_done("d", "b", 0, ok())  # stale attempt: ignored
    drain(sched, launcher, "d")
    assert [r[:2] for r in launcher.results] == [("success", "t-retry")]


def _overlapping_starts(ddb: Any, pause: str) -> tuple[Any, FakeLauncher, list[str], list[str]]:
    """Two attempts of one start: the first still writing when Step Functions' retry comes.

    The first attempt (a thread) writes its task items and waits; the retry runs in
    this thread. ``pause``: the retry's step ("put_tasks" or "create_run") after which
    (or before which, for create_run) the first attempt goes on to the end. Returns the
    scheduler, the launcher, the first attempt's errors and every put_tasks caller.
    """
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan({"a": set(), "b": {"a"}, "c": set()}), 2, launcher)
    store = sched.store
    put_tasks, create_run = store.put_tasks, store.create_run
    first_wrote = threading.Event()
    writers: list[str] = []
    errors: list[str] = []

    def first_attempt() -> None:
        try:
            start(sched, "o", "e", "t1")
        except RunAlreadyRunningError as err:
            errors.append(str(err))

    first = threading.Thread(target=first_attempt)
    resume = threading.Event()

    def first_goes_on() -> None:
        resume.set()
        first.join(10)

    def put_tasks_spy(run_id: str, tasks: Any, **owner: str) -> None:
        writers.append(threading.current_thread().name)
        put_tasks(run_id, tasks, **owner)
        if threading.current_thread() is first:
            first_wrote.set()
            resume.wait(10)  # still writing when the retry starts
        elif pause == "put_tasks":
            first_goes_on()

    def create_run_spy(*args: Any, **kwargs: Any) -> None:
        if threading.current_thread() is not first and pause == "create_run":
            first_goes_on()
        create_run(*args, **kwargs)

    store.put_tasks = put_tasks_spy  # type: ignore[method-assign]
    store.create_run = create_run_spy  # type: ignore[method-assign]
    first.start()
    assert first_wrote.wait(10)
    start(sched, "o", "e", "t2")  # the retry: the attempt Step Functions waits on
    first.join(10)
    return sched, launcher, errors, writers


def assert_the_retry_runs_it(ddb: Any, sched: Any, launcher: FakeLauncher) -> None:
    """The retry's token holds the run, and the run launches and reports each task once."""
    assert item(ddb, "o", "run")["token"]["S"] == "t2"
    assert sorted(launcher.order()) == ["a", "c"]
    drain(sched, launcher, "o")
    assert sorted(launcher.order()) == ["a", "b", "c"]
    assert [r[:2] for r in launcher.results] == [("success", "t2")]


def test_an_earlier_start_attempt_cannot_open_a_run_its_retry_took_over(ddb: Any) -> None:
    # The 5,000-task scale run: the retry took the run over and wrote its task items,
    # then the first attempt opened the run, and the retry failed the coordinator.
    sched, launcher, errors, _ = _overlapping_starts(ddb, pause="put_tasks")
    assert errors == ["run 'o' was taken over while starting"]  # the first, abandoned
    assert_the_retry_runs_it(ddb, sched, launcher)


def test_a_retry_continues_a_run_its_earlier_attempt_opened_meanwhile(ddb: Any) -> None:
    # The retry read the run STARTING; the first attempt opened it before the retry's
    # create_run: the retry must not reset the open run's items, only take its token.
    sched, launcher, errors, writers = _overlapping_starts(ddb, pause="create_run")
    assert errors == []
    assert len(writers) == 1  # only the first attempt wrote task items
    assert_the_retry_runs_it(ddb, sched, launcher)


def _attempt(retry_count: int) -> StartRequest:
    """Attempt ``retry_count`` of the Run state of execution "e" (its own token)."""
    return StartRequest.from_event(
        {
            "execution": "e",
            "token": f"t{retry_count + 1}",
            "retry_count": retry_count,
            "input": {"run_id": "late"},
        }
    )


@pytest.mark.parametrize("opened", [True, False])
def test_a_start_attempt_arriving_after_its_retry_cannot_take_the_run_back(
    ddb: Any, opened: bool
) -> None:
    launcher = FakeLauncher()
    sched = scheduler(ddb, make_plan({"a": set(), "b": {"a"}}), 1, launcher)
    if opened:
        sched.start(_attempt(1))  # the retry opened the run
    else:
        sched.store.create_run(  # the retry created the run item and is writing its tasks
            "late",
            "e",
            "t2",
            invocation=1,
            max_concurrency=1,
            previous_execution=None,
            now="2026-01-01T00:00:00.000+00:00",
            retry=1,
        )
    with pytest.raises(RunAlreadyRunningError, match="a later attempt of this start"):
        sched.start(_attempt(0))
    assert item(ddb, "late", "run")["token"]["S"] == "t2"


@pytest.mark.parametrize("count", ["1", -1, True])
def test_a_retry_count_that_is_no_count_is_refused(count: Any) -> None:
    event = {"execution": "e", "token": "t", "retry_count": count}
    with pytest.raises(InvalidRunInputError, match="retry_count must be a count"):
        StartRequest.from_event(event)


def test_a_second_coordinator_cannot_take_a_running_run(ddb: Any) -> None:
    parents = {"a": set()}
    launcher = FakeLauncher()
    launcher.alive.add("e1")
    start(scheduler(ddb, make_plan(parents), 1, launcher), "busy", "e1", "t1")
    with pytest.raises(RunAlreadyRunningError):
        start(scheduler(ddb, make_plan(parents), 1, launcher), "busy", "e2", "t2")
    launcher.alive.clear()  # e1 was aborted: e2 may take the run over
    start(scheduler(ddb, make_plan(parents), 1, launcher), "busy", "e2", "t2")
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
        start(sched, "c", "e", "t")
    assert launcher.order() == ["a"]
    start(sched, "c", "e", "t")  # the Lambda retry
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
