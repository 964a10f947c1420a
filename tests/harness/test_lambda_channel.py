"""The Lambda executor's result channel reads from any descriptor number.

A LocalStack running hundreds of Lambda environments holds more than 1,024 open
descriptors (two pipes per environment), and ``select()`` refuses any above
FD_SETSIZE: 1,000 job-poller executions on one LocalStack failed with
"filedescriptor out of range in select()".
"""

from __future__ import annotations

import os
import resource
from types import SimpleNamespace

import pytest

from sfn_patterns_localstack.emulation.lambda_executor.executor import Channel

HIGH = 1500  # above FD_SETSIZE (1024)


@pytest.fixture
def high_pipe():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= HIGH:
        pytest.fail(f"this machine allows {hard} descriptors; the test needs {HIGH + 1}")
    if soft <= HIGH:
        resource.setrlimit(resource.RLIMIT_NOFILE, (HIGH + 1, hard))
    read, write = os.pipe()
    os.dup2(read, HIGH)
    os.close(read)
    try:
        yield HIGH, write
    finally:
        os.close(HIGH)
        os.close(write)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_result_on_a_descriptor_above_fd_setsize_is_read(high_pipe) -> None:
    fd, write = high_pipe
    channel = Channel(fd, SimpleNamespace(poll=lambda: None))
    os.write(write, b'{"ok": 1}\n')
    assert channel.read(timeout=2) == {"ok": 1}


def test_no_result_before_the_deadline_is_a_timeout(high_pipe) -> None:
    fd, _ = high_pipe
    channel = Channel(fd, SimpleNamespace(poll=lambda: None))
    with pytest.raises(TimeoutError):
        channel.read(timeout=0.3)
