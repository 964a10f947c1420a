"""The starter's ledger on moto: entries, and the run lease that makes one starter admit."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import pytest

from sfn_patterns.sqs_throttle.ledger import RUN_LEASE, LeaseHolder, Ledger

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


def test_entries_exclude_the_run_lease(ledger: Ledger) -> None:
    ledger.record("exec-a", 100.0)
    ledger.record("exec-b", 101.5)
    assert ledger.acquire_run_lease("me", 100.0, 60) is None
    assert sorted(ledger.entries()) == [("exec-a", 100.0), ("exec-b", 101.5)]
    ledger.forget("exec-a")
    assert ledger.entries() == [("exec-b", 101.5)]


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
