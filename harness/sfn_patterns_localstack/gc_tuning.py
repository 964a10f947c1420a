"""Fewer garbage collections in the long-lived Python processes of a test run.

Why: CPython runs a generation-0 collection every few net allocations (2,000 on 3.13,
the harness's Python; 700 before), and every hundredth one traverses every tracked
object of the process. LocalStack, the pytest
workers and the Lambda fork server hold large, long-lived heaps (botocore's parsed
models, moto's backends, LocalStack's service specs), so most of that traversal
re-checks objects that will live until the process ends. Measured with ``gc.callbacks``
on one apply and plan of ``examples/semaphore`` (on 3.11's 700): LocalStack spent 1.6
and 2.1 of its 7.9 and 9.5 CPU-seconds in the collector (838 and 892 young collections,
6 and 7 full ones).

:func:`tune` raises the young generation's threshold (a collection per 50,000 net
allocations instead of 2,000), which still frees short-lived cycles (an exception and
its traceback, a request's frames) long before they add up, and collects the old
generations as often, relative to the young one, as before. The Lambda fork server
(``emulation/lambda_executor/worker.py``, which may import only the standard library)
sets the same thresholds itself and freezes what it preloaded before forking
(``gc.freeze``'s documented use: no collection in a child traverses, or copies on
write, what the parent preloaded).

``SFNP_GC=default`` leaves CPython's thresholds as they are (to measure the difference).
"""

from __future__ import annotations

import gc
import os

THRESHOLDS = (50_000, 10, 10)
"""Young, middle and old generation thresholds (CPython 3.13's defaults: 2000, 10, 10)."""

ENV = "SFNP_GC"


def enabled() -> bool:
    """False when ``SFNP_GC=default`` asks for CPython's own thresholds."""
    return os.environ.get(ENV, "") != "default"


def tune() -> bool:
    """Raise this process's collection thresholds (:data:`THRESHOLDS`); True if done."""
    if not enabled():
        return False
    gc.set_threshold(*THRESHOLDS)
    return True
