"""A test session's LocalStack (server.start) skips work nobody uses, and keeps what it must.

One LocalStack of its own: its log has LocalStack's messages but no line per request
(fixes/request_log.py; the daemon's kept log has them, tests/harness/test_server.py),
and the service catalog index it needed is in the project's cache for the next one
(fixes/service_catalog.py).
"""

from __future__ import annotations

import pytest

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.emulation.fixes import service_catalog

pytestmark = pytest.mark.integration


def test_no_request_lines_in_an_unkept_log_and_the_catalog_is_kept() -> None:
    instance = server.start()
    try:
        sqs = client_factory(instance.endpoint)("sqs")
        url = sqs.create_queue(QueueName="lean-log")["QueueUrl"]
        assert sqs.get_queue_url(QueueName="lean-log")["QueueUrl"] == url
        log = instance.log_path.read_text(errors="replace")
    finally:
        instance.stop()
    assert "Ready." in log
    assert "sqs.CreateQueue" not in log and "sqs.GetQueueUrl" not in log
    assert list(service_catalog.shared_dir().glob(service_catalog.PATTERN))
