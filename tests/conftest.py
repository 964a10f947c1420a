"""Shared fixtures: one LocalStack for the whole session, and AWS clients for it.

Set LOCALSTACK_ENDPOINT (for example http://localhost:4566, the official
container) to run the same tests against an existing LocalStack instead of the
in-process one this fixture starts on a free port.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def localstack_endpoint() -> Iterator[str]:
    """The endpoint of a healthy LocalStack (started here unless LOCALSTACK_ENDPOINT is set)."""
    external = os.environ.get("LOCALSTACK_ENDPOINT")
    if external:
        from sfn_patterns_localstack.server import health

        if health(external) is None:
            pytest.fail(f"LOCALSTACK_ENDPOINT={external} does not answer /_localstack/health")
        yield external.rstrip("/")
        return
    from sfn_patterns_localstack import server

    instance = server.start()
    try:
        yield instance.endpoint
    finally:
        instance.stop()


@pytest.fixture(scope="session")
def aws(localstack_endpoint: str) -> Callable[..., object]:
    """A factory of boto3 clients bound to LocalStack: ``aws("lambda")``.

    Made through ``localstack-client`` (sfn_patterns_localstack.clients), as every
    client of the harness, the demo and the benchmarks is.
    """
    from sfn_patterns_localstack.clients import client_factory

    return client_factory(localstack_endpoint)


# Scheduling under pytest-xdist (`make test` runs `-n 3 --dist loadfile`): a file's
# tests stay on one worker (they share a module-scoped deployment), and workers take
# files in collection order. The longest files go first, so none of them starts
# last and sets the run's length: slow-marked files, then files that apply Terraform,
# then other LocalStack files, then unit tests.
def _weight(item: pytest.Item) -> int:
    for rank, marker in enumerate(("slow", "terraform", "integration")):
        if item.get_closest_marker(marker):
            return rank
    return 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order files by their heaviest test (stable: tests keep their order in a file)."""
    weight: dict[str, int] = {}
    for item in items:
        weight[item.nodeid.split("::")[0]] = min(
            weight.get(item.nodeid.split("::")[0], 3), _weight(item)
        )
    items.sort(key=lambda item: weight[item.nodeid.split("::")[0]])
