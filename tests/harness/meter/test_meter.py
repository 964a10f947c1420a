"""The request meter counts what LocalStack served, and sizes what DynamoDB writes left.

The oracle for item sizes is DynamoDB's published rule (an item's size is the UTF-8
length of its attribute names plus their values; a string value is its UTF-8 length),
computed here from the attributes the test wrote, not from the meter's code.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.meter import client as meter
from sfn_patterns_localstack.emulation.meter import meter as meter_module
from sfn_patterns_localstack.emulation.meter.gateway import resource_name
from sfn_patterns_localstack.emulation.meter.meter import Meter, descendants, memory


def size_of(item: dict[str, str]) -> int:
    """DynamoDB's size of an item of string attributes."""
    return sum(len(name.encode()) + len(value.encode()) for name, value in item.items())


def test_resource_names_drop_the_per_call_part() -> None:
    assert resource_name("arn:aws:states:us-east-1:1:execution:sm-a:run-7") == "sm-a"
    assert resource_name("arn:aws:states:us-east-1:1:stateMachine:sm-a") == "sm-a"
    assert resource_name("arn:aws:dynamodb:us-east-1:1:table/locks") == "locks"
    assert resource_name("arn:aws:lambda:us-east-1:1:function:f") == "f"
    assert resource_name("http://127.0.0.1:4566/000000000000/q.fifo") == "q.fifo"
    assert resource_name("plain") == "plain"


def test_counters_are_exact_under_threads_and_reset_by_start() -> None:
    counter = Meter(interval=60)
    counter.start()

    def hammer() -> None:
        for _ in range(500):
            counter.count("sqs", "SendMessage", "account", "q")

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counter.item_written("t", 10)
    counter.item_written("t", 7)
    snapshot = counter.snapshot()
    assert meter.calls(snapshot, "sqs", "SendMessage") == 2000
    assert meter.calls(snapshot, "sqs", "SendMessage", roles_only=True) == 0
    assert snapshot["largest_item_bytes"] == {"t": 10}
    assert snapshot["peak_rss_bytes"] > 0
    counter.start()
    assert counter.snapshot()["requests"] == []
    counter.stop()
    assert counter.on is False


def _burn(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


def test_cpu_seconds_are_this_process_cpu_from_start_to_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The memory sampler reads /proc for every process (milliseconds of CPU on a busy
    # machine); a stand-in keeps the CPU in this test the test's own.
    monkeypatch.setattr(meter_module, "memory", lambda: (1, 1))
    counter = Meter(interval=60)
    assert counter.snapshot()["cpu_seconds"] == 0  # never started
    counter.start()
    threading.Event().wait(0.3)  # wall time passes, next to no CPU
    assert counter.snapshot()["cpu_seconds"] < 0.15
    worker = threading.Thread(target=_burn, args=(0.3,))  # another thread's CPU counts
    worker.start()
    worker.join()
    assert counter.snapshot()["cpu_seconds"] >= 0.3
    counter.stop()
    stopped = counter.snapshot()["cpu_seconds"]
    _burn(0.2)
    assert counter.snapshot()["cpu_seconds"] == stopped  # frozen at stop
    counter.start()
    assert counter.snapshot()["cpu_seconds"] < 0.15  # start counts from zero again
    counter.stop()


def test_memory_counts_a_child_process() -> None:
    import subprocess
    import sys

    own, tree = memory()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        for _ in range(100):
            _, with_child = memory()
            if with_child > tree + 1_000_000:
                break
            threading.Event().wait(0.05)
        assert with_child > tree + 1_000_000  # a Python interpreter is several MB
        assert own > 0
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def metered(localstack_endpoint: str) -> Iterator[str]:
    meter.start(localstack_endpoint)
    try:
        yield localstack_endpoint
    finally:
        meter.stop(localstack_endpoint)


@pytest.mark.integration
def test_the_meter_counts_requests_and_the_largest_item_on_localstack(
    metered: str, aws: Callable[..., Any]
) -> None:
    ddb = aws("dynamodb")
    table = f"meter-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        small = {"pk": "a", "v": "x" * 10}
        big = {"pk": "b", "v": "y" * 300}
        for item in (small, big):
            ddb.put_item(TableName=table, Item={k: {"S": v} for k, v in item.items()})
        # An update that grows an item past the largest put.
        ddb.update_item(
            TableName=table,
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET w = :w",
            ExpressionAttributeValues={":w": {"S": "z" * 500}},
        )
        grown = {**small, "w": "z" * 500}
        # A transaction: a put and a delete, each an item write inside a transaction.
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {"pk": {"S": "c"}}}},
                {"Delete": {"TableName": table, "Key": {"pk": {"S": "b"}}}},
            ]
        )
        ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "a"}},
        )
        document = meter.read(metered)
    finally:
        ddb.delete_table(TableName=table)
    assert meter.calls(document, "dynamodb", "PutItem") == 2
    assert meter.calls(document, "dynamodb", "UpdateItem") == 1
    assert meter.calls(document, "dynamodb", "Query") == 1
    assert meter.calls(document, "dynamodb", "TransactWriteItems") == 1
    assert document["writes"][table] == {"items": 5, "transactional": 2}
    assert meter.calls(document, "dynamodb", roles_only=True) == 0  # the test's own keys
    assert document["largest_item_bytes"][table] == size_of(grown)
    assert meter.items_read(document, "Query", table) == {"pages": 1, "scanned": 1, "returned": 1}
    assert document["peak_rss_bytes"] > 50 * 2**20  # a LocalStack is tens of MB at least
    assert document["peak_tree_rss_bytes"] >= document["peak_rss_bytes"]


@pytest.mark.integration
def test_a_switched_off_meter_counts_nothing(localstack_endpoint: str, aws: Any) -> None:
    meter.start(localstack_endpoint)
    meter.stop(localstack_endpoint)
    aws("sqs").list_queues()
    assert meter.read(localstack_endpoint)["requests"] == []


def test_descendants_are_found_through_children_of_other_threads(tmp_path: Path) -> None:
    """A grandchild started by a child that a non-main thread started is found.

    Linux lists a child under the thread that forked it (/proc/<pid>/task/<tid>/
    children); the process table names the process as its parent whichever thread
    forked. The grandchild's command name has a space and a parenthesis, which
    /proc/<pid>/stat shows unquoted inside its parentheses.
    """
    import os
    import shutil
    import subprocess
    import sys

    odd = tmp_path / "odd) (name"
    odd.symlink_to(shutil.which("sleep"))
    script = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([{str(odd)!r}, '30']); "
        "print(p.pid, flush=True); time.sleep(30)"
    )
    started: list[subprocess.Popen] = []
    thread = threading.Thread(
        target=lambda: started.append(
            subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        )
    )
    thread.start()
    thread.join()
    (child,) = started
    grandchild = int(child.stdout.readline())
    try:
        assert "odd) (name" in Path(f"/proc/{grandchild}/stat").read_text()
        found = descendants(os.getpid())
        assert child.pid in found and grandchild in found
        assert descendants(grandchild) == []
    finally:
        os.kill(grandchild, 9)
        child.kill()
        child.wait()
