"""The LocalStack sampling profiler counts running threads' stacks, not sleeping ones."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sfn_patterns_localstack.emulation import profiler


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(2000))


def _sleep(stop: threading.Event) -> None:
    # Blocked, as most of LocalStack's threads are (on a socket, a queue, a lock).
    stop.wait()


def test_samples_the_busy_thread_and_not_the_sleeping_one(tmp_path: Path) -> None:
    out = tmp_path / "ls.folded"
    stop = threading.Event()
    threads = [
        threading.Thread(target=_spin, args=(stop,), name="busy"),
        threading.Thread(target=_sleep, args=(stop,), name="idle"),
    ]
    for thread in threads:
        thread.start()
    sampler = profiler.Sampler(out, interval=0.002).start()
    deadline = time.monotonic() + 30
    # Until the busy thread has a generous number of samples (the machine is loaded).
    while time.monotonic() < deadline:
        time.sleep(0.1)
        busy = sum(n for stack, n in list(sampler.counts.items()) if "_spin" in stack)
        if busy >= 200_000:
            break
    stop.set()
    for thread in threads:
        thread.join()
    sampler.flush()
    lines = out.read_text().splitlines()
    spin = sum(int(line.rpartition(" ")[2]) for line in lines if "_spin (" in line)
    sleeping = sum(int(line.rpartition(" ")[2]) for line in lines if "_sleep (" in line)
    assert spin >= 200_000  # CPU microseconds
    # The idle thread never runs until it is told to stop (its last wake-up may be caught).
    assert sleeping < 5_000
    busy_line = next(line for line in lines if "_spin (" in line)
    assert busy_line.startswith("[busy];")
    text = profiler.report(out, top=5)
    assert "_spin" in text or "genexpr" in text
