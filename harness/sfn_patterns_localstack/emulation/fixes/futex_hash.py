"""LocalStack's process gets a futex hash sized for its thousands of threads.

Every Python lock, event and the GIL itself ends in a Linux futex, and the kernel finds
a futex's waiters in a hash table. Since Linux 6.16 a threaded process gets a private
table sized from the number of CPUs, not of threads: 16 buckets on these 2-core
machines. LocalStack 4.14.0 holds at least three threads per parked Step Functions
execution, as 4.9.2 did (the execution's logic, its program's evaluation and, per
waiting task state, the timeout thread of ``ExecuteState._evaluate_with_timeout`` and a
task token's waiter), so at 10,000 parked semaphore executions some 30,000 threads
wait in 16 buckets, and every wake-up walks a bucket's list under a spinlock. Measured
there (on 4.9.2): half of the machine's CPU in the kernel, 41 % of the gateway's
reactor thread in ``futex_wake``, hand-overs at 0.14 to 0.85 a second. 20,000
hand-offs between two threads beside 20,000 sleeping ones took 8.62 s with 16 buckets
and 3.83 s with 16,384 (scripts/bench_futex_hash.py; its ratio moved from 0.44 to 0.52
between runs, and to 0.08 in an ad-hoc variant that resized the hash after the threads
existed).

``apply()`` asks for :data:`SLOTS` buckets (``prctl(PR_FUTEX_HASH,
PR_FUTEX_HASH_SET_SLOTS)``); on a kernel without private futex hashes (before 6.16) the
call fails, nothing changes, and the process uses the kernel's global table, sized for
the machine, as before. AWS runs no such process; this only keeps the emulator's cost
per call from growing with the executions it holds.
"""

from __future__ import annotations

import ctypes
import functools
import logging
from typing import Any

LOG = logging.getLogger(__name__)

PR_FUTEX_HASH = 78
PR_FUTEX_HASH_SET_SLOTS = 1
PR_FUTEX_HASH_GET_SLOTS = 2
# A power of two; about 64 bytes each (1 MiB), two waiters a bucket at 30,000 threads.
SLOTS = 16384


@functools.cache
def _prctl_function() -> Any:
    """The C library's ``prctl``, loaded and typed once per process."""
    call = ctypes.CDLL(None, use_errno=True).prctl
    call.restype = ctypes.c_int
    call.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return call


def _prctl(option: int, arg2: int, arg3: int = 0) -> int:
    return _prctl_function()(option, arg2, arg3, 0, 0)


def slots() -> int | None:
    """The buckets of this process's private futex hash (0: the global one; None: no such)."""
    found = _prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS)
    return None if found < 0 else found


def apply(count: int = SLOTS) -> bool:
    """Give this process a private futex hash of ``count`` buckets; False if the kernel can't."""
    if slots() is None:
        return False
    if _prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, count) != 0:
        LOG.warning("sfn-patterns futex hash not resized: errno %d", ctypes.get_errno())
        return False
    return True
