from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from sfn_patterns.status_table import (
    Status,
    TaskAlreadySucceededError,
    Tracker,
    payload_sha256,
    shard_for,
)
from sfn_patterns.status_table.schema import GSI_NAME, terraform_schema

# Runtime-library tests: also run on Python 3.9 and 3.13 (tests/tooling/test_python_versions.py).
pytestmark = pytest.mark.runtime

MakeTracker = Callable[..., Tracker]


class Boom(Exception):
    pass


def fail(tracker: Tracker, task_id: str) -> None:
    with pytest.raises(Boom), tracker.start(task_id):
        raise Boom(task_id)


def test_bulk_create_is_idempotent(make_tracker: MakeTracker) -> None:
    tracker = make_tracker()
    first = tracker.create_tasks(["a", "b", "a"], payloads={"a": {"n": 1}})
    assert (first.created, first.existing) == (["a", "b"], [])
    with tracker.start("b"):
        pass
    second = tracker.create_tasks(["b", "c", "a"], payloads={"a": {"n": 2}})
    assert second.created == ["c"]
    assert second.existing == ["b", "a"]
    assert second.mismatched == ["a"]
    assert tracker.get("b").status is Status.SUCCEEDED  # untouched
    assert tracker.get("a").payload_sha256 == payload_sha256({"n": 1})  # untouched
    assert tracker.get("c").status is Status.PENDING


def test_reset_ignored_and_failed(make_tracker: MakeTracker) -> None:
    tracker = make_tracker(max_retry=2)
    tracker.create_tasks(["ign1", "ign2", "failed", "ok"])
    for task_id in ("ign1", "ign2"):
        fail(tracker, task_id)
        fail(tracker, task_id)
    fail(tracker, "failed")
    with tracker.start("ok"):
        pass
    assert tracker.reset(dry_run=True) == 2
    assert tracker.get("ign1").status is Status.IGNORED
    assert tracker.reset(task_ids=["ign2", "ok", "missing"]) == 1
    assert tracker.get("ign1").status is Status.IGNORED
    task = tracker.get("ign2")
    assert (task.status, task.retry, task.attempt) == (Status.PENDING, 0, 2)
    assert len(task.errors) == 2  # history is kept across resets
    assert tracker.reset() == 1  # ign1
    assert tracker.get("failed").status is Status.FAILED
    assert tracker.reset(statuses=("failed", "ignored")) == 1
    assert tracker.get("failed").status is Status.PENDING
    assert tracker.get("ok").status is Status.SUCCEEDED
    with pytest.raises(ValueError, match="succeeded"):
        tracker.reset(statuses=("succeeded",))
    with tracker.start("ign2"):  # another try works
        pass


def test_query_by_status_and_time_range_uses_the_gsi(
    make_tracker: MakeTracker, clock, api_calls: list[tuple[str, dict]]
) -> None:
    tracker = make_tracker(n_shards=3)
    ids = [f"t{i}" for i in range(6)]
    tracker.create_tasks(ids)
    start = clock.now
    for i, task_id in enumerate(ids[:5]):  # t0..t4 fail one day apart; t5 stays pending
        clock.now = start + timedelta(days=i)
        fail(tracker, task_id)
    clock.now = start + timedelta(days=10)
    api_calls.clear()
    recent = tracker.query("failed", since=start + timedelta(days=2, hours=1))
    assert [t.task_id for t in recent] == ["t3", "t4"]
    window = tracker.query(
        Status.FAILED, since=start + timedelta(days=1), until=start + timedelta(days=3)
    )
    assert [t.task_id for t in window] == ["t1", "t2", "t3"]
    newest = tracker.query("failed", limit=2, newest_first=True)
    assert [t.task_id for t in newest] == ["t4", "t3"]
    assert [t.task_id for t in tracker.query("pending")] == ["t5"]
    operations = {name for name, _ in api_calls}
    assert operations == {"Query"}
    assert all(kwargs["IndexName"] == GSI_NAME for _, kwargs in api_calls)
    assert any(
        "KeyConditionExpression" in kw and ">=" in kw["KeyConditionExpression"]
        for _, kw in api_calls
    )
    with pytest.raises(ValueError, match="unknown status"):
        tracker.query("done")


def test_claimable_lists_pending_failed_and_expired(make_tracker: MakeTracker, clock) -> None:
    tracker = make_tracker()
    tracker.create_tasks(["pending", "failed", "live", "expired", "done"])
    fail(tracker, "failed")
    with tracker.start("done"):
        pass
    tracker.start("expired", lease_seconds=10)
    tracker.start("live", lease_seconds=1000)
    clock.advance(seconds=11)
    assert sorted(t.task_id for t in tracker.claimable()) == ["expired", "failed", "pending"]


def test_a_limited_page_reads_about_its_limit_whatever_the_table_holds(
    make_tracker: MakeTracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.client import BaseClient

    read: list[int] = []  # ScannedCount of every Query answered
    original = BaseClient._make_api_call

    def counting(self: BaseClient, operation_name: str, api_params: dict) -> Any:
        answer = original(self, operation_name, api_params)
        if operation_name == "Query":
            read.append(answer["ScannedCount"])
        return answer

    monkeypatch.setattr(BaseClient, "_make_api_call", counting)
    tracker = make_tracker(n_shards=4)
    for size in (100, 400):  # the table grows; what a page reads does not
        tracker.create_tasks([f"t{i:03d}" for i in range(size)])
        everything = [t.task_id for t in tracker.claimable()]
        assert len(everything) == size
        for limit in (1, 10, 50):
            read.clear()
            page = tracker.claimable(limit=limit)
            assert [t.task_id for t in page] == everything[:limit]  # the same merged order
            # Each pending shard's share of the limit, and a page more where the merge
            # needed more of one shard (the failed and in-progress shards are empty).
            assert sum(read) <= limit + 4 * max(1, -(-limit // 4)), (size, limit, read)
        read.clear()
        assert len(tracker.query("pending", limit=5)) == 5
        assert sum(read) <= 5 + 4 * 2


def test_shards_are_deterministic_across_processes(make_tracker: MakeTracker) -> None:
    ids = [f"task-{i}" for i in range(50)]
    expected = [zlib.crc32(i.encode()) % 8 for i in ids]
    assert [shard_for(i, 8) for i in ids] == expected
    code = (
        "import json,sys; from sfn_patterns.status_table import shard_for; "
        "print(json.dumps([shard_for(i, 8) for i in json.loads(sys.argv[1])]))"
    )
    import json

    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(ids)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert json.loads(out) == expected
    assert len(set(expected)) > 1  # the test would be vacuous with one shard
    tracker = make_tracker(n_shards=8)
    tracker.create_tasks(["task-7"])
    item = tracker.model.get("orders#task-7")
    assert item.status_key == f"orders#pending#{expected[7]:02d}"


def test_chain_creates_next_step_atomically_and_idempotently(
    make_tracker: MakeTracker, clock
) -> None:
    step1 = make_tracker("step1", next_use_case_id="step2")
    step2 = make_tracker("step2", max_retry=5)
    step1.create_tasks(["a", "b", "c"])
    with step1.start("a") as attempt:
        attempt.set_next_payload({"from": "a"})
    nxt = step2.get("a")
    assert (nxt.status, nxt.attempt, nxt.retry) == (Status.PENDING, 0, 0)
    assert nxt.payload_sha256 == payload_sha256({"from": "a"})
    assert [t.task_id for t in step2.query("pending")] == ["a"]
    # An existing step-2 task is never reset by a (re)success of step 1.
    step2.create_tasks(["b"])
    fail(step2, "b")
    with step1.start("b"):
        pass
    assert (step2.get("b").status, step2.get("b").retry) == (Status.FAILED, 1)
    # A failure in step 1 creates nothing.
    fail(step1, "c")
    assert step2.get("c") is None
    # A fenced-out (stale) success creates nothing either.
    stale = step1.start("c", lease_seconds=5)
    clock.advance(seconds=6)
    with step1.start("c") as fresh:
        pass
    assert fresh.attempt == 3
    assert step2.get("c").status is Status.PENDING
    step2_c_update = step2.get("c").update_time
    clock.advance(seconds=1)
    with pytest.raises(Exception, match="no longer owns"), stale:
        pass
    assert step2.get("c").update_time == step2_c_update
    with pytest.raises(TaskAlreadySucceededError):
        step1.start("c")


def test_schema_matches_the_model(table_name: str) -> None:
    import boto3

    described = boto3.client("dynamodb").describe_table(TableName=table_name)["Table"]
    expected = terraform_schema()
    assert described["KeySchema"] == expected["KeySchema"]
    assert sorted(described["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
        expected["AttributeDefinitions"], key=lambda a: a["AttributeName"]
    )
    [gsi] = described["GlobalSecondaryIndexes"]
    [want] = expected["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == want["IndexName"]
    assert gsi["KeySchema"] == want["KeySchema"]
    assert gsi["Projection"] == want["Projection"]
    ttl = boto3.client("dynamodb").describe_time_to_live(TableName=table_name)
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "expire_at"


def test_starting_a_pending_task_costs_one_write(
    make_tracker: MakeTracker, api_calls: list[tuple[str, dict]]
) -> None:
    tracker = make_tracker()
    tracker.create_tasks(["t1"])
    api_calls.clear()
    with tracker.start("t1"):
        pass
    assert [name for name, _ in api_calls] == ["UpdateItem", "UpdateItem"]
