"""`sfn-patterns localstack start|stop` and scripts/localstack.sh manage a background LocalStack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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


_CALLER = """
import json, os, sys
from pathlib import Path
from sfn_patterns_localstack import server
tied = server.start()
daemon = server.start_daemon(port=server.free_port(), state_dir=Path(sys.argv[1]))
print(json.dumps({"tied": [tied.endpoint, tied.process.pid], "daemon": daemon}), flush=True)
os._exit(0)  # gone without stopping either, as a killed session or benchmark
"""


def test_a_localstack_ends_with_its_caller_unless_it_is_a_daemon(tmp_path: Path) -> None:
    """A killed benchmark's LocalStack ran on for 40 minutes; a daemon must outlive its command."""
    state = tmp_path / "daemon"
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the orphan's work directory lands here
    done = subprocess.run(
        [sys.executable, "-c", _CALLER, str(state)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    started = json.loads(done.stdout.strip().splitlines()[-1])
    endpoint, pid = started["tied"]
    try:
        deadline = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid), "the caller's LocalStack outlived it"
        assert server.health(endpoint, timeout=0.5) is None
        assert server.health(started["daemon"]) is not None  # the daemon did not end
    finally:
        server.stop_daemon(state_dir=state)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # Reparented and not yet reaped: a zombie is gone for this purpose.
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
