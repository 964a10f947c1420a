"""Lambda faults inside the executor: the handler's process killed, or a function timeout.

The executor (:mod:`..lambda_executor.executor`) makes one call here per invoke,
:func:`channel`, and reads the worker's result through what it returns: the worker's
own channel when no fault fires (nothing changes), or a reader that

* ``kill``: kills the worker's process group ``seconds`` (default 0) after the
  invoke was sent, as an execution environment dying mid-invoke; the executor sees
  the worker die and answers ``Runtime.ExitError``, like AWS;
* ``timeout``: lets the handler finish (its side effects happen), discards its result
  and reports a timeout when the function's timeout has elapsed: a handler that ran
  over its timeout, the harshest case for idempotency (work done, answer lost).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from typing import Any, Protocol

from sfn_patterns_localstack.emulation.faults.injector import INJECTOR, Call
from sfn_patterns_localstack.emulation.faults.plan import Fault


class Reader(Protocol):
    """What the executor reads a worker's answer from."""

    def read(self, timeout: float) -> dict:
        """The worker's answer; TimeoutError or the executor's WorkerDied otherwise."""
        ...


class _Killed:
    def __init__(self, inner: Reader, pid: int, fault: Fault) -> None:
        self.inner, self.pid, self.fault = inner, pid, fault

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def read(self, timeout: float) -> dict:
        timer = threading.Timer(self.fault.seconds or 0.0, self._kill)
        timer.daemon = True
        timer.start()
        try:
            return self.inner.read(timeout)
        finally:
            timer.cancel()


class _TimedOut:
    def __init__(self, inner: Reader) -> None:
        self.inner = inner

    def read(self, timeout: float) -> dict:
        started = time.monotonic()
        self.inner.read(timeout)  # a real timeout raises TimeoutError itself
        time.sleep(max(0.0, timeout - (time.monotonic() - started)))
        raise TimeoutError("function timeout (injected fault)")


def function_name(qualified_arn: str) -> str:
    """``arn:...:function:NAME[:QUALIFIER]`` -> NAME."""
    parts = qualified_arn.split(":")
    return parts[6] if len(parts) > 6 else qualified_arn


def channel(inner: Reader, process: Any, qualified_arn: str) -> Reader:
    """The reader for this invoke: ``inner`` itself unless a kill or timeout fault fires."""
    if not INJECTOR.active("executor"):
        return inner
    fired = INJECTOR.decide(
        "executor", Call("lambda", "Invoke", resource=function_name(qualified_arn))
    )
    if not fired:
        return inner
    fault = fired[-1]
    if fault.kind == "kill":
        return _Killed(inner, process.pid, fault)
    return _TimedOut(inner)
