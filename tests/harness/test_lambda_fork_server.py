"""The Lambda fork server's answers and exits reach the request that forked the worker.

In-process, no LocalStack: the executor's own ``_ForkServer`` and the real fork server
(``worker.py --fork-server``). A spawn that gives up waiting (the server slower than
``STARTUP_TIMEOUT_SECONDS``, as under a 1,000-job load on 2 cores) used to leave the
server's late answer queued for the next spawn, so every later environment took its
predecessor's worker for its own: executors killed, and waited forever on, each
other's workers. A benchmark run showed it: a stale answer queued in LocalStack, ten
invocations blocked in ``wait()``, 492 of 1,000 job-poller jobs failed with
``Runtime.ExitError``.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sfn_patterns_localstack.emulation.lambda_executor import executor

RUNTIME = "python3.11"


@pytest.fixture
def server() -> Iterator[executor._ForkServer]:
    started = executor._ForkServer(RUNTIME)
    yield started
    # EOF on its socket ends the server (its workers follow within half a second).
    started._socket.shutdown(socket.SHUT_RDWR)
    started.process.wait(timeout=10)
    started._socket.close()


def spawn(
    server: executor._ForkServer, tmp_path: Path, marker: str
) -> tuple[executor._ForkedProcess, tuple[int, int]]:
    """Fork a worker in a directory named ``marker``; ours: the pipe ends it does not get.

    Its handler does not import (no such module): the worker reports the init error
    and then waits for invocations, alive until its command pipe closes.
    """
    home = tmp_path / marker  # a forked worker shows its request in its cwd
    home.mkdir()
    cmd_read, cmd_write = os.pipe()
    res_read, res_write = os.pipe()
    env = {
        "SFNP_INIT_LOG": str(tmp_path / f"{marker}.log"),
        "LAMBDA_TASK_ROOT": str(home),
        "_HANDLER": "no_such_module.handler",
    }
    try:
        return server.spawn(env, str(home), (cmd_read, res_write)), (cmd_write, res_read)
    except BaseException:
        os.close(cmd_write)
        os.close(res_read)
        raise
    finally:
        os.close(cmd_read)
        os.close(res_write)


def marker_of(pid: int) -> str | None:
    """The name of the directory ``pid`` works in (None once it is gone)."""
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd")).name
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def processes_with(marker: str) -> list[int]:
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    return [pid for pid in pids if marker_of(pid) == marker]


def wait_until(predicate: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_late_answer_is_not_taken_by_the_next_spawn_and_its_worker_is_killed(
    server: executor._ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    late, ready = f"late-{uuid.uuid4().hex}", f"next-{uuid.uuid4().hex}"
    # The first requester gives up at once: the server's answer comes after.
    monkeypatch.setattr(executor, "STARTUP_TIMEOUT_SECONDS", 0.0)
    with pytest.raises(executor.WorkerDied, match="did not answer"):
        spawn(server, tmp_path, late)
    monkeypatch.setattr(executor, "STARTUP_TIMEOUT_SECONDS", 30.0)
    worker, ours = spawn(server, tmp_path, ready)
    try:
        # The pid answered is the worker forked for this request, not the late one
        # (once the child has moved into its directory, just after the fork).
        assert wait_until(lambda: marker_of(worker.pid) == ready), marker_of(worker.pid)
        # The late worker, whose requester is gone, does not linger.
        assert wait_until(lambda: processes_with(late) == []), processes_with(late)
        assert worker.poll() is None
        # Its exit reaches this request, by id.
        os.killpg(worker.pid, signal.SIGKILL)
        assert worker.wait() == -signal.SIGKILL
    finally:
        for fd in ours:
            os.close(fd)


def test_each_exit_reaches_the_request_that_forked_the_worker(
    server: executor._ForkServer, tmp_path: Path
) -> None:
    workers = [spawn(server, tmp_path, f"w{i}-{uuid.uuid4().hex}") for i in range(3)]
    try:
        first, second, third = (worker for worker, _ in workers)
        os.kill(second.pid, signal.SIGTERM)
        assert second.wait() == -signal.SIGTERM
        assert first.poll() is None and third.poll() is None
        # A worker whose command pipe closes ends normally (what an executor's _kill
        # and a finished environment rely on), and only its own exit is reported.
        os.close(workers[0][1][0])
        assert first.wait() == 0
        assert third.poll() is None
    finally:
        for index, (_, (cmd_write, res_read)) in enumerate(workers):
            if index != 0:
                os.close(cmd_write)
            os.close(res_read)
