"""The mirror's AWS provider caps its consistency pauses only when the harness asks.

scripts/aws_provider_trim.py adds one thing to the provider source: when
SFN_PATTERNS_PROVIDER_MAX_POLL_DELAY is set, every pause of the provider's retry
loops is capped at it. The harness sets it for LocalStack. Upstream, the provider
confirms a new SQS queue with 6 matching reads at least 5 s apart, so a creation
takes 25 s or more whatever the machine's load (a sleep is never shorter): that is
the floor the uncapped run must meet, and the capped run must stay far below it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

FIXTURE = Path(__file__).resolve().parent / "poll_cap"
UPSTREAM_FLOOR_S = 25  # 5 pauses of >= 5 s between 6 matching reads
CAPPED_CEILING_S = 12  # 6 reads 0.2 s apart, with room for a loaded machine


def creation_seconds(apply_output: str, address: str) -> int:
    """Seconds Terraform reports for one resource's creation ("after 1m2s")."""
    match = re.search(
        rf"^{re.escape(address)}: Creation complete after (?:(\d+)m)?(\d+)s",
        apply_output,
        re.MULTILINE,
    )
    assert match, f"no creation line for {address} in:\n{apply_output[-2000:]}"
    return int(match.group(1) or 0) * 60 + int(match.group(2))


def test_capped_creation_is_fast_and_uncapped_keeps_upstream_pauses(
    localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    """The two applies run at once, each in a workspace (state) of its own, so the
    uncapped run's 25 s overlap the capped one instead of following it."""
    prefix = f"pollcap-{int(time.time()) % 100000}"
    capped_ws = Workspace(FIXTURE, localstack_endpoint, tmp_path / "capped")
    upstream_ws = Workspace(FIXTURE, localstack_endpoint, tmp_path / "upstream")
    upstream_ws.provider_poll_cap = None

    def apply(workspace: Workspace, queue: str) -> str:
        workspace.init()
        return workspace.apply({"name_prefix": prefix, "queues": [queue]}).stdout

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            capped = pool.submit(apply, capped_ws, "capped")
            upstream = pool.submit(apply, upstream_ws, "upstream")
            capped_out, upstream_out = capped.result(), upstream.result()
        assert creation_seconds(capped_out, 'aws_sqs_queue.this["capped"]') < CAPPED_CEILING_S
        seconds = creation_seconds(upstream_out, 'aws_sqs_queue.this["upstream"]')
        assert seconds >= UPSTREAM_FLOOR_S
    finally:
        try:
            capped_ws.destroy({"name_prefix": prefix, "queues": []})
        finally:
            try:
                # Destroyed capped: upstream confirms a queue's deletion for a minute
                # or more, a pause this test has no use for.
                upstream_ws.provider_poll_cap = capped_ws.provider_poll_cap
                upstream_ws.destroy({"name_prefix": prefix, "queues": []})
            finally:
                capped_ws.close()
                upstream_ws.close()
    assert not [url for url in aws("sqs").list_queues(QueueNamePrefix=prefix).get("QueueUrls", [])]
