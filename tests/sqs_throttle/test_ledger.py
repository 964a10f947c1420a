"""The starter's ledger on moto: entries, and the run lease that makes one starter admit."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import pytest

from sfn_patterns.sqs_throttle.ledger import RUN_LEASE, LeaseHolder, LeaseLost, Ledger

# Runtime-library tests: also run on Python 3.9 and 3.13 (tests/tooling/test_python_versions.py).
pytestmark = pytest.mark.runtime


@pytest.fixture
def ledger(monkeypatch: pytest.MonkeyPatch) -> Iterator[Ledger]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        dynamodb = boto3.client("dynamodb")
        table = f"ledger-{uuid.uuid4().hex[:6]}"
        dynamodb.create_table(
            TableName=table,
            KeySchema=[{"AttributeName": "name", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "name", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield Ledger(dynamodb, table, ttl_seconds=3600)


def _lease(ledger: Ledger) -> LeaseHolder | None:
    item = ledger.dynamodb.get_item(TableName=ledger.table, Key={"name": {"S": RUN_LEASE}})
    if "Item" not in item:
        return None
    return LeaseHolder(item["Item"]["owner"]["S"], float(item["Item"]["until"]["N"]))


def test_entries_exclude_the_run_lease(ledger: Ledger) -> None:
    assert ledger.acquire_run_lease("me", 100.0, 20) is None
    ledger.record("exec-a", 100.0, "me", 20)
    ledger.record("exec-b", 101.5, "me", 20)
    assert sorted(ledger.entries()) == [("exec-a", 100.0), ("exec-b", 101.5)]
    ledger.forget("exec-a")
    assert ledger.entries() == [("exec-b", 101.5)]


def test_an_entry_gives_the_latest_its_start_can_be_sent(ledger: Ledger) -> None:
    """Its run's end when the recorder knows it; else the time it was recorded."""
    assert ledger.acquire_run_lease("me", 100.0, 20) is None
    ledger.record("exec-a", 100.0, "me", 20, start_by=970.0)
    ledger.record("exec-b", 101.5, "me", 20)
    assert sorted(ledger.entries()) == [("exec-a", 970.0), ("exec-b", 101.5)]


def test_a_held_lease_is_refused_with_its_holder_and_taken_over_once_expired(
    ledger: Ledger,
) -> None:
    assert ledger.acquire_run_lease("first", 1000.0, 60) is None
    assert ledger.acquire_run_lease("second", 1030.0, 60) == LeaseHolder("first", 1060.0)
    assert ledger.acquire_run_lease("first", 1030.0, 60) is None  # the holder renews
    assert ledger.acquire_run_lease("second", 1089.0, 60) == LeaseHolder("first", 1090.0)
    assert ledger.acquire_run_lease("second", 1091.0, 60) is None  # expired: taken over


def test_only_the_holder_releases(ledger: Ledger) -> None:
    assert ledger.acquire_run_lease("first", 0.0, 60) is None
    ledger.release_run_lease("someone-else")  # refused quietly
    assert ledger.acquire_run_lease("second", 1.0, 60) == LeaseHolder("first", 60.0)
    ledger.release_run_lease("first")
    assert ledger.acquire_run_lease("second", 2.0, 60) is None
    item = ledger.dynamodb.get_item(TableName=ledger.table, Key={"name": {"S": RUN_LEASE}})
    assert item["Item"]["owner"]["S"] == "second"


def test_each_record_renews_the_holders_lease(ledger: Ledger) -> None:
    assert ledger.acquire_run_lease("me", 100.0, 20) is None
    ledger.record("exec-a", 115.0, "me", 20)
    assert _lease(ledger) == LeaseHolder("me", 135.0)
    # Renewed, the lease outlives the first grant: a second starter is refused at 125.
    assert ledger.acquire_run_lease("other", 125.0, 20) == LeaseHolder("me", 135.0)


def test_a_starter_taken_over_records_nothing(ledger: Ledger) -> None:
    """Ownership, not time, decides: after a takeover the old holder's records fail."""
    assert ledger.acquire_run_lease("stalled", 100.0, 20) is None
    assert ledger.acquire_run_lease("next", 121.0, 20) is None  # ran out: taken over
    with pytest.raises(LeaseLost) as lost:
        ledger.record("exec-late", 122.0, "stalled", 20)
    assert lost.value.holder == LeaseHolder("next", 141.0)  # from the same call (ALL_OLD)
    assert ledger.entries() == []
    assert _lease(ledger) == LeaseHolder("next", 141.0)  # and the lease is untouched
    ledger.release_run_lease("next")
    with pytest.raises(LeaseLost) as gone:
        ledger.record("exec-later", 150.0, "stalled", 20)
    assert gone.value.holder is None
    assert ledger.entries() == []


def test_a_lease_of_runs_that_never_overlap_is_taken_over_at_once(ledger: Ledger) -> None:
    """One function's runs (reserved concurrency 1): a lease its group holds is a dead run's."""
    fn = "lambda:us-east-1:starter"
    assert ledger.acquire_run_lease(f"{fn}/crashed", 100.0, 20, group=fn) is None
    assert ledger.acquire_run_lease(f"{fn}/next", 101.0, 20, group=fn) is None
    assert _lease(ledger) == LeaseHolder(f"{fn}/next", 121.0)
    # Anyone else still waits the lease out: another function, or a starter outside Lambda.
    other = "lambda:us-east-1:starter-2"
    assert ledger.acquire_run_lease(f"{other}/1", 102.0, 20, group=other) == _lease(ledger)
    assert ledger.acquire_run_lease("manual", 102.0, 20) == _lease(ledger)
    # A group that is a prefix of another's name takes nothing from it.
    assert ledger.acquire_run_lease("lambda:us-east-1:start/1", 103.0, 20, group=fn[:-2]) == (
        _lease(ledger)
    )
