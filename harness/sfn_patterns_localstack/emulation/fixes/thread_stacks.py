"""Finished Step Functions threads give their stacks back (LocalStack 4.14.0 on Python 3.13).

AWS runs any number of executions and states over an account's life; nothing it keeps
per finished state limits how many more can start.

LocalStack 4.14.0 starts a thread for every execution, every Task state's evaluation,
every callback wait, branch and inline Map iteration, and appends each to
``localstack.utils.threads.TMP_THREADS`` (the list its shutdown walks), where it stays
after it ends. On Python 3.11 (LocalStack 4.9.2's) threads were detached, so a finished
thread's stack was unmapped at once. On Python 3.13 a thread stays joinable until it is
joined or its ``Thread`` object is freed, and ``TMP_THREADS`` keeps every one: each
finished state keeps an 8 MiB stack mapping and its guard page. The process reaches the
kernel's ``vm.max_map_count`` (65,530 mappings) after about 32,000 states, and from then
on every new thread fails with ``RuntimeError: can't start new thread``: executions fail
with ``States.Runtime`` and the run stalls. A 5,000-task dag-aggregate run (8 transitions
per task) stalled there, with 32,377 stacks of 197 live threads mapped.

The patch starts one daemon thread that, every ``REAP_SECONDS``, joins the threads of
``TMP_THREADS`` that have ended (at once: they are finished) and drops them from the
list; live threads stay listed for LocalStack's shutdown, as before.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

REAP_SECONDS = 1.0
_STARTED = threading.Event()


def reap(threads: list[Any]) -> int:
    """Join and drop every thread of ``threads`` that has ended; how many were."""
    ended = 0
    for thread in list(threads):
        started = getattr(thread, "_started", None)
        if started is None or not started.is_set() or thread.is_alive():
            continue
        try:
            thread.join()
        except RuntimeError:  # pragma: no cover - a thread that was never started
            continue
        with contextlib.suppress(ValueError):  # already dropped by LocalStack's cleanup
            threads.remove(thread)
        ended += 1
    return ended


def _reaper(threads: list[Any]) -> None:
    while True:
        time.sleep(REAP_SECONDS)
        try:
            reap(threads)
        except Exception:  # pragma: no cover - never let the reaper die
            LOG.exception("sfn-patterns thread reaper")


def apply() -> bool:
    """Start the reaper once; False (and nothing started) on any other LocalStack."""
    try:
        from localstack import version
        from localstack.utils import threads
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION or not hasattr(threads, "TMP_THREADS"):
        LOG.warning("sfn-patterns thread reaper not started (localstack %s)", version.__version__)
        return False
    if _STARTED.is_set():
        return True
    _STARTED.set()
    threading.Thread(
        target=_reaper, args=(threads.TMP_THREADS,), name="sfnp-thread-reaper", daemon=True
    ).start()
    return True
