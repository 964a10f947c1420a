"""Fixtures for the status-table tests: tables on moto or LocalStack, and a fake clock.

The tracker's scenarios (lease expiry and takeover, fencing, retries to ignored, the
bounded error history) run against moto for speed and, where a test module asks for
it (``backend`` parametrized), against LocalStack's DynamoDB through its HTTP API.
The fake clock drives both: a lease's expiry is the client's clock in a condition
expression, so expiry is tested without sleeping on either backend.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from botocore.client import BaseClient

from sfn_patterns.status_table import Tracker

REGION = "us-east-1"


class FakeClock:
    """A settable clock, so lease expiry is tested without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)

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
def backend() -> str:
    """Where the tables live: ``moto`` here; a test module may parametrize it."""
    return "moto"


@pytest.fixture
def dynamodb_host(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The endpoint the trackers talk to: None (moto's in-process mock) or LocalStack's."""
    if backend == "moto":
        request.getfixturevalue("moto_env")
        return None
    monkeypatch = request.getfixturevalue("monkeypatch")
    for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    return request.getfixturevalue("localstack_endpoint")


@pytest.fixture
def table_name(dynamodb_host: str | None) -> str:
    # A fresh name per test: pynamodb caches connections per model class.
    name = f"tasks-{uuid.uuid4().hex[:8]}"
    Tracker(name, "setup", region=REGION, host=dynamodb_host).create_table_if_not_exists()
    return name


@pytest.fixture
def make_tracker(
    table_name: str, clock: FakeClock, dynamodb_host: str | None
) -> Callable[..., Tracker]:
    def factory(use_case_id: str = "orders", **kwargs: Any) -> Tracker:
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("region", REGION)
        kwargs.setdefault("host", dynamodb_host)
        kwargs.setdefault("lease_seconds", 300)
        return Tracker(table_name, use_case_id, **kwargs)

    return factory


@pytest.fixture
def api_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, dict]]]:
    """Every DynamoDB request sent, with its arguments, counted where botocore sends it.

    Counted at botocore's client rather than in pynamodb, so a request is counted
    whichever layer builds it (pynamodb's connection, or the botocore client that the
    tracker's store sends its conditional writes through).
    """
    calls: list[tuple[str, dict]] = []
    original = BaseClient._make_api_call

    def recording(self: BaseClient, operation_name: str, api_params: dict) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            calls.append((operation_name, api_params))
        return original(self, operation_name, api_params)

    monkeypatch.setattr(BaseClient, "_make_api_call", recording)
    yield calls
