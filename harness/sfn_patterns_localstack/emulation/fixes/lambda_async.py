"""Asynchronous Lambda invokes run as concurrently as AWS runs them (LocalStack 4.14.0).

LocalStack 4.14.0 queues every asynchronous invoke (EventBridge and S3 targets,
``InvocationType=Event``) of a function version and hands it to the ``invoker_pool``
of that version's ``event_manager.Poller``: a ``ThreadPoolExecutor`` created with the
default size, ``min(32, cores + 4)`` ("TODO: think about scaling" in ``__init__``),
six on a 2-core machine. Each pool thread waits for its invocation to end, so at most
six async invocations of one function run at once, whatever the function's
concurrency. On AWS they scale to the function's concurrency limit (1,000 per account
unless reserved), so a burst of events, such as one "Status Change" event per finished
statement of a wide DAG, queues in the emulator where it would not on AWS: at 40
parallel tasks the event completion's median latency was 8 s for zero-duration
statements (measured on 4.9.2, whose ``Poller`` is the same).

The patch gives each function version's poller a pool of ``SFNP_LAMBDA_ASYNC_WORKERS``
threads, by default 1,000: AWS's default account concurrency, the most a function's
async invokes can reach there. A pool starts its threads only as invokes arrive, so
the size costs nothing until a burst uses it; LocalStack's own concurrency accounting
still throttles beyond its limit. It changes how many invocations may run at once,
nothing else: the queue, retries, destinations and the environments' reuse stay
LocalStack's. (It was 64 until bench_scale started 1,000 job-poller jobs of 210 s:
64 sample jobs ran, the other 936 waited for a thread, and 64 jobs finished in 7
minutes where AWS runs all 1,000 at once.)
"""

from __future__ import annotations

import functools
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
# AWS's default concurrent executions per account and region (Lambda quotas page).
DEFAULT_WORKERS = 1000


def workers() -> int:
    """The pool size: ``SFNP_LAMBDA_ASYNC_WORKERS``, at least 1."""
    return max(1, int(os.environ.get("SFNP_LAMBDA_ASYNC_WORKERS", DEFAULT_WORKERS)))


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.lambda_.invocation import event_manager
    except ImportError:
        return False
    poller_cls = getattr(event_manager, "Poller", None)
    if version.__version__ != LOCALSTACK_VERSION or poller_cls is None:
        LOG.warning(
            "sfn-patterns async invoke patch not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(poller_cls.__init__, "_sfnp_patched", False):
        return True
    original_init = poller_cls.__init__

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        default_pool = self.invoker_pool
        self.invoker_pool = ThreadPoolExecutor(
            max_workers=workers(), thread_name_prefix=default_pool._thread_name_prefix
        )
        default_pool.shutdown(wait=False)

    __init__._sfnp_patched = True  # type: ignore[attr-defined]
    poller_cls.__init__ = __init__
    return True
