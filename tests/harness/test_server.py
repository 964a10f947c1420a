"""`sfn-patterns localstack start|stop` and scripts/localstack.sh manage a background LocalStack."""

from __future__ import annotations

from pathlib import Path

import pytest

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory

pytestmark = pytest.mark.integration


def test_daemon_starts_healthy_and_stops(tmp_path: Path) -> None:
    port = server.free_port()
    endpoint = server.start_daemon(port=port, state_dir=tmp_path)
    try:
        health = server.health(endpoint)
        assert health is not None
        assert health["services"]["dynamodb"] in ("available", "running")
        assert health["services"]["redshift-data"] in ("available", "running")
        # A daemon's log is kept: it has a line per request (fixes/request_log.py).
        client_factory(endpoint)("sqs").list_queues()
        assert "AWS sqs.ListQueues => 200" in (tmp_path / "localstack.log").read_text()
        # A second start reuses the running one instead of failing on the port.
        assert server.start_daemon(port=port, state_dir=tmp_path) == endpoint
    finally:
        assert server.stop_daemon(state_dir=tmp_path) is True
    assert server.health(endpoint, timeout=0.5) is None
    assert server.stop_daemon(state_dir=tmp_path) is False
