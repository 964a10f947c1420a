"""The tracker on LocalStack with real workers (processes, threads): exactly once, crashes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from sfn_patterns.status_table import Status, Tracker
from sfn_patterns_localstack.emulation.faults import client as faults

from .localstack_worker import work_through

pytestmark = pytest.mark.integration

WORKER = Path(__file__).with_name("localstack_worker.py")
# Lines of the effects file that record a rejected, unrecorded or lost attempt, not a run.
NOT_AN_EFFECT = ("STALE ", "UNRECORDED ", "LOST ")
# Tasks of the eight-worker runs. What they prove is contention, not volume: every
# worker offers every task, so each task meets up to eight conditional claims and
# seven lose (560 lost claims here, each answered with the task as it is, ALL_OLD;
# assert_workers_raced checks that every worker lost some), and with eight tasks in
# flight at a time workers also meet tasks another holds (5-12 a run, printed; too few
# to assert on). Eighty keeps that while costing LocalStack 40 % of the DynamoDB
# requests that 200 did (each costs it a few ms of CPU).
TASKS = 80
# Share of the table's calls throttled: enough that some exhaust the SDK's retries.
RATE = 0.3
REGION = "us-east-1"


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": REGION,
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    return {**os.environ, **values}


@pytest.fixture
def tracker(localstack_endpoint: str, aws_env: dict[str, str]) -> Tracker:
    tracker = Tracker(
        f"tasks-{uuid.uuid4().hex[:8]}", "it", host=localstack_endpoint, region=REGION
    )
    tracker.create_table_if_not_exists()
    return tracker


def spawn(
    tracker: Tracker,
    env: dict[str, str],
    ids_file: Path,
    effects: Path,
    *extra: str,
    stdout: int | None = None,
) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            str(WORKER),
            "--endpoint",
            str(tracker.host),
            "--table",
            tracker.table_name,
            "--use-case",
            tracker.use_case_id,
            "--ids-file",
            str(ids_file),
            "--effects-file",
            str(effects),
            *extra,
        ],
        env=env,
        stdout=stdout,
        text=True,
    )


def effects_by_task(effects: Path) -> Counter[str]:
    if not effects.exists():
        return Counter()
    lines = effects.read_text().splitlines()
    return Counter(line.split()[0] for line in lines if not line.startswith(NOT_AN_EFFECT))


def stale_tasks(effects: Path) -> set[str]:
    """Tasks where fencing rejected a worker's success write (a double acquisition)."""
    lines = effects.read_text().splitlines() if effects.exists() else []
    return {line.split()[1] for line in lines if line.startswith("STALE ")}


@pytest.mark.timeout(120, func_only=True)  # not the session LocalStack start
def test_eight_processes_run_every_task_exactly_once(
    tracker: Tracker, aws_env: dict[str, str], tmp_path: Path
) -> None:
    ids = [f"task-{i:03d}" for i in range(TASKS)]
    assert len(tracker.create_tasks(ids).created) == TASKS
    ids_file = tmp_path / "ids.json"
    ids_file.write_text(json.dumps(ids))
    effects = tmp_path / "effects.log"
    ready = tmp_path / "ready"
    ready.mkdir()
    # Eight worker processes, forked after one import of the library (--processes).
    launcher = spawn(
        tracker,
        aws_env,
        ids_file,
        effects,
        "--ready-dir",
        str(ready),
        "--wait-locked",
        "60",
        "--processes",
        "8",
        stdout=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(ready.glob("ready-*"))) < 8:
            assert time.monotonic() < deadline, "workers did not start"
            assert launcher.poll() is None, "a worker died during start-up"
            time.sleep(0.1)
        started = time.monotonic()
        (ready / "go").touch()
        out, _ = launcher.communicate(timeout=90)
        elapsed = time.monotonic() - started
    finally:
        if launcher.poll() is None:
            launcher.kill()
    codes = json.loads(out.splitlines()[-1])
    assert codes == [0] * 8
    assert launcher.returncode == 0
    pids = assert_each_ran_once(tracker, ids, effects)
    assert len(pids) > 1, "the work was not actually shared"
    assert_workers_raced(effects, workers=8)
    print(f"{TASKS} tasks, 8 processes: {elapsed:.1f} s, {len(pids)} pids")


def assert_workers_raced(effects: Path, workers: int) -> None:
    """Every worker lost claims to the others: the run raced, it was no serial hand-out.

    A lost claim (``LOST`` line) is a conditional write the table refused: the task
    already succeeded, or was in progress under a live lease. A worker that lost none
    would have won every task it offered, so the others never contended with it.
    """
    lost = [line.split() for line in effects.read_text().splitlines() if line.startswith("LOST ")]
    losers = Counter(label for _, _, label, _ in lost)
    reasons = Counter(reason for *_, reason in lost)
    print(f"\nlost claims: {dict(reasons)} over {len(losers)} workers")
    assert len(losers) == workers, f"a worker never lost a claim: {dict(losers)}"


def assert_each_ran_once(tracker: Tracker, ids: list[str], effects: Path) -> set[str]:
    """Every task ran exactly once and ended succeeded at attempt 1; returns the runners."""
    counts = effects_by_task(effects)
    assert set(counts) == set(ids)
    duplicated = sorted(t for t, n in counts.items() if n != 1)
    # Fencing must catch every double run: each duplicate has a rejected (stale) attempt.
    assert set(duplicated) <= stale_tasks(effects)
    assert duplicated == [], f"tasks run more than once: {duplicated}"
    succeeded = tracker.query(Status.SUCCEEDED)
    assert sorted(t.task_id for t in succeeded) == sorted(ids)
    assert all(t.attempt == 1 and t.retry == 0 for t in succeeded)
    return {
        line.split()[1]
        for line in effects.read_text().splitlines()
        if not line.startswith(NOT_AN_EFFECT)
    }


@pytest.mark.timeout(120, func_only=True)  # not the session LocalStack start
def test_eight_threads_run_every_task_exactly_once(
    localstack_endpoint: str, aws_env: dict[str, str], tmp_path: Path
) -> None:
    table = f"tasks-{uuid.uuid4().hex[:8]}"
    Tracker(table, "threads", host=localstack_endpoint, region=REGION).create_table_if_not_exists()
    ids = [f"task-{i:03d}" for i in range(TASKS)]
    assert (
        len(
            Tracker(table, "threads", host=localstack_endpoint, region=REGION)
            .create_tasks(ids)
            .created
        )
        == TASKS
    )
    effects = tmp_path / "effects.log"
    go = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            tracker = Tracker(
                table, "threads", host=localstack_endpoint, region=REGION, worker_id=f"t{n}"
            )
            go.wait(timeout=30)
            work_through(tracker, ids, effects, label=f"t{n}", wait_locked=60)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=100)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert errors == []
    runners = assert_each_ran_once(
        Tracker(table, "threads", host=localstack_endpoint, region=REGION), ids, effects
    )
    assert len(runners) > 1, "the work was not actually shared"
    assert_workers_raced(effects, workers=8)


@pytest.mark.timeout(90, func_only=True)  # not the session LocalStack start
def test_killed_worker_is_reclaimed_after_its_lease(
    tracker: Tracker, aws_env: dict[str, str], tmp_path: Path
) -> None:
    tracker.create_tasks(["crash-1"])
    ids_file = tmp_path / "ids.json"
    ids_file.write_text(json.dumps(["crash-1"]))
    effects = tmp_path / "effects.log"
    marker = tmp_path / "acquired"
    victim = spawn(
        tracker, aws_env, ids_file, effects, "--lease", "2", "--crash-marker", str(marker)
    )
    try:
        deadline = time.monotonic() + 45
        while not marker.exists():
            assert victim.poll() is None, "the victim exited before acquiring"
            assert time.monotonic() < deadline, "the victim never acquired the task"
            time.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    crashed = tracker.get("crash-1")
    assert (crashed.status, crashed.attempt) == (Status.IN_PROGRESS, 1)
    assert crashed.lease_expires_at is not None

    # The rescuer is another worker (its own tracker and worker id) in this process:
    # the victim's death, not the rescuer's process, is what is under test, and an
    # interpreter of its own would cost one more import of the library.
    rescuer = Tracker(tracker.table_name, tracker.use_case_id, host=tracker.host, region=REGION)
    assert rescuer.worker_id != crashed.lease_owner
    work_through(rescuer, ["crash-1"], effects, label="rescuer", wait_locked=30)

    task = tracker.get("crash-1")
    assert (task.status, task.attempt, task.retry) == (Status.SUCCEEDED, 2, 1)
    assert [e.error_type for e in task.errors] == ["LeaseExpired"]
    # The rescuer waited for the lease to run out instead of stealing a live one.
    assert task.errors[0].time >= crashed.lease_expires_at
    assert effects_by_task(effects) == Counter({"crash-1": 1})
    # One line besides the rescuer's lost claims while the lease ran (no STALE, no
    # UNRECORDED, no second run).
    [line] = [line for line in effects.read_text().splitlines() if not line.startswith("LOST ")]
    assert line.split()[2] == "2"  # the side effect came from attempt 2


@pytest.mark.timeout(180, func_only=True)  # not the session LocalStack start
def test_eight_threads_under_dynamodb_throttling_do_each_task_once(
    localstack_endpoint: str, aws_env: dict[str, str], tmp_path: Path
) -> None:
    """Faults injected: 8 workers on 80 tasks (TASKS) while 30 % of the table's calls are throttled.

    Every DynamoDB call on the table (reads, conditional writes, queries) answers
    ProvisionedThroughputExceededException at random (seeded), so some exhaust the
    SDK's retries. A worker whose start fails tries the task again later (as a queue
    redelivers); the effects file records each side effect, and each success the
    tracker could not record. Oracles: that file and the table (every task succeeded
    at attempt 1: no lease ran out, no second run, no lost update).
    """
    table = f"tasks-{uuid.uuid4().hex[:8]}"
    Tracker(table, "faults", host=localstack_endpoint, region=REGION).create_table_if_not_exists()
    ids = [f"task-{i:03d}" for i in range(TASKS)]
    setup = Tracker(table, "faults", host=localstack_endpoint, region=REGION)
    assert len(setup.create_tasks(ids).created) == TASKS
    effects = tmp_path / "effects.log"
    go = threading.Barrier(8)
    errors: list[BaseException] = []
    plan = {
        "seed": 28,
        "faults": [
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "throttle",
                "resource": table,
                "probability": RATE,
            }
        ],
    }

    def worker(n: int) -> None:
        try:
            tracker = Tracker(
                table,
                "faults",
                host=localstack_endpoint,
                region=REGION,
                worker_id=f"t{n}",
                lease_seconds=20,
            )
            go.wait(timeout=30)
            work_through(
                tracker, ids, effects, label=f"t{n}", wait_locked=90, transient=(Exception,)
            )
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    with faults.applied(localstack_endpoint, plan):
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=150)
        log = faults.log(localstack_endpoint)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert errors == []
    throttled = Counter(entry["operation"] for entry in log)
    print(f"\nthrottled: {dict(throttled)}")
    assert sum(throttled.values()) >= 50, throttled
    lines = effects.read_text().splitlines()
    unrecorded = [line for line in lines if line.startswith("UNRECORDED ")]
    assert unrecorded == [], f"successes the tracker could not record: {unrecorded}"
    runners = assert_each_ran_once(setup, ids, effects)
    assert len(runners) > 1, "the work was not actually shared"
    assert_workers_raced(effects, workers=8)
