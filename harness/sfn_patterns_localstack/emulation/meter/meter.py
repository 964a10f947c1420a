"""The meter's counters: requests by key, the largest DynamoDB item, the peak memory, CPU.

Thread-safe; LocalStack serves requests on many threads. ``start`` resets everything
and switches counting on, so one LocalStack can meter several runs one after another.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

# The request parameter that names a call's resource (the fault injector's list).
RESOURCE_PARAMETERS = (
    "TableName",
    "FunctionName",
    "stateMachineArn",
    "executionArn",
    "QueueUrl",
    "EventBusName",
    "Name",
    "WorkgroupName",
)
ACCOUNT = "account"  # the caller label of a request signed with the account's own keys


def _rss(pid: int) -> int:
    """Resident bytes of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def parents() -> dict[int, int]:
    """Each process's parent, from /proc/<pid>/stat (processes only, not their threads)."""
    found: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                fields = stat.read().rsplit(")", 1)[1].split()
            found[int(entry)] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def descendants(pid: int) -> list[int]:
    """Every descendant of ``pid``.

    From the parent of every process, one read of /proc per process: a walk of
    /proc/<pid>/task/*/children read a file per thread, and LocalStack holding 10,000
    parked semaphore executions has 30,000 threads (10 CPU-seconds in 600 s of
    bench_scale's sampling, 4.7 % of LocalStack's CPU, profiled).
    """
    kids: dict[int, list[int]] = {}
    for child, parent in parents().items():
        kids.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in kids.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def memory() -> tuple[int, int]:
    """Resident bytes of the current process, and of its whole process tree."""
    own = _rss(os.getpid())
    return own, own + sum(_rss(child) for child in descendants(os.getpid()))


@dataclass
class Meter:
    """The counters of one metered run."""

    on: bool = False
    started: float = 0.0
    requests: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    largest_item: dict[str, int] = field(default_factory=dict)  # table -> bytes
    # table -> [item writes, of which inside a transaction] (attempts: a write whose
    # condition fails still consumes write capacity on AWS)
    writes: dict[str, list[int]] = field(default_factory=dict)
    # (operation, table) -> [pages, items read (ScannedCount), items returned (Count)]
    reads: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    peak_rss: int = 0
    peak_tree_rss: int = 0
    threads_peak: int = 0
    interval: float = 1.0
    # This process's CPU (user and system, every thread) at start, and at stop.
    cpu_started: float = 0.0
    cpu_stopped: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _generation: int = 0

    def start(self) -> None:
        """Reset the counters and count from now on (with a memory sampler)."""
        with self._lock:
            self.requests = {}
            self.largest_item = {}
            self.reads = {}
            self.writes = {}
            self.peak_rss = self.peak_tree_rss = self.threads_peak = 0
            self.started = time.time()
            self.cpu_started = time.process_time()
            self.cpu_stopped = None
            self._generation += 1
            generation = self._generation
            self.on = True
        self.sample()
        threading.Thread(
            target=self._sampler, args=(generation,), name="sfnp-meter", daemon=True
        ).start()

    def stop(self) -> None:
        """Stop counting (the counters stay readable)."""
        with self._lock:
            if self.on:
                self.cpu_stopped = time.process_time()
            self.on = False
            self._generation += 1

    def count(self, service: str, operation: str, caller: str, resource: str) -> None:
        """One request served."""
        key = (service, operation, caller, resource)
        with self._lock:
            self.requests[key] = self.requests.get(key, 0) + 1

    def item_written(self, table: str, size: int) -> None:
        """A write left an item of ``size`` bytes in ``table``."""
        with self._lock:
            if size > self.largest_item.get(table, 0):
                self.largest_item[table] = size

    def item_write(self, table: str, transactional: bool) -> None:
        """One item write attempted on ``table`` (a put, update or delete)."""
        with self._lock:
            row = self.writes.setdefault(table, [0, 0])
            row[0] += 1
            row[1] += int(transactional)

    def items_read(self, operation: str, table: str, scanned: int, returned: int) -> None:
        """A Query or Scan page read ``scanned`` items and returned ``returned``."""
        with self._lock:
            row = self.reads.setdefault((operation, table), [0, 0, 0])
            row[0] += 1
            row[1] += scanned
            row[2] += returned

    def sample(self) -> None:
        """Read the memory and thread count once."""
        own, tree = memory()
        threads = threading.active_count()
        with self._lock:
            self.peak_rss = max(self.peak_rss, own)
            self.peak_tree_rss = max(self.peak_tree_rss, tree)
            self.threads_peak = max(self.threads_peak, threads)

    def _sampler(self, generation: int) -> None:
        while self.on and self._generation == generation:
            self.sample()
            time.sleep(self.interval)

    def cpu_seconds(self) -> float:
        """LocalStack's CPU seconds since ``start`` (until ``stop``), all its threads.

        Why: a run's wall time also measures what else the machine runs (dag-aggregate's
        100 tasks on LocalStack 4.9.2: 13 s alone, 28 s and 47 s beside other work, with
        LocalStack's CPU in those two within a tenth of each other), so the CPU tells a
        slower emulator from a busier machine. Its Lambda workers are other processes
        and are not counted.
        """
        if not self.started:
            return 0.0
        end = self.cpu_stopped if self.cpu_stopped is not None else time.process_time()
        return end - self.cpu_started

    def snapshot(self) -> dict[str, Any]:
        """The counters as a JSON document."""
        if self.on:
            self.sample()
        with self._lock:
            return {
                "on": self.on,
                "seconds": round(time.time() - self.started, 3) if self.started else 0,
                "requests": [
                    {
                        "service": s,
                        "operation": o,
                        "caller": c,
                        "resource": r,
                        "calls": n,
                    }
                    for (s, o, c, r), n in sorted(self.requests.items())
                ],
                "largest_item_bytes": dict(sorted(self.largest_item.items())),
                "writes": {
                    t: {"items": w, "transactional": x} for t, (w, x) in sorted(self.writes.items())
                },
                "reads": [
                    {"operation": o, "table": t, "pages": p, "scanned": s, "returned": r}
                    for (o, t), (p, s, r) in sorted(self.reads.items())
                ],
                "peak_rss_bytes": self.peak_rss,
                "peak_tree_rss_bytes": self.peak_tree_rss,
                "peak_threads": self.threads_peak,
                "cpu_seconds": round(self.cpu_seconds(), 3),
            }


METER = Meter()
