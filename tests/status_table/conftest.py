"""Fixtures for the status-table unit tests: moto-backed tables and a fake clock."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sfn_patterns.status_table import Tracker

REGION = "us-east-1"


class FakeClock:
    """A settable clock, so lease expiry is tested without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def moto_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


@pytest.fixture
def table_name(moto_env: None) -> str:
    # A fresh name per test: pynamodb caches connections per model class.
    name = f"tasks-{uuid.uuid4().hex[:8]}"
    Tracker(name, "setup", region=REGION).create_table_if_not_exists()
    return name


@pytest.fixture
def make_tracker(table_name: str, clock: FakeClock) -> Callable[..., Tracker]:
    def factory(use_case_id: str = "orders", **kwargs: Any) -> Tracker:
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("region", REGION)
        kwargs.setdefault("lease_seconds", 300)
        return Tracker(table_name, use_case_id, **kwargs)

    return factory
