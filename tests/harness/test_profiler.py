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
    sampler.stop()
    stop.set()
    for thread in threads:
        thread.join()
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


def test_a_thread_clock_is_read_by_kernel_id_and_an_ended_thread_has_none() -> None:
    stop = threading.Event()
    busy = threading.Thread(target=_spin, args=(stop,))
    busy.start()
    try:
        first = profiler._thread_cpu_ns(busy.native_id)
        time.sleep(0.2)
        second = profiler._thread_cpu_ns(busy.native_id)
        assert first is not None and second is not None and second > first
    finally:
        stop.set()
        busy.join()
    # Its struct pthread is freed once it has exited (join returns a moment before):
    # the clock is asked of the kernel by id, which then says no.
    deadline = time.monotonic() + 5
    while profiler._thread_cpu_ns(busy.native_id) is not None:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _burst() -> None:
    # Longer than CPython's 5-ms switch interval: the sampler, waiting for the GIL, gets it
    # while a burst is running. A shorter burst runs to its end once it has the GIL, so on
    # an idle machine the sampler only ever saw threads not started yet or already gone.
    deadline = time.perf_counter() + 0.02
    while time.perf_counter() < deadline:
        sum(i * i for i in range(1000))


def test_sampling_while_threads_start_and_end(tmp_path: Path) -> None:
    # What LocalStack's threads do (a request, a Lambda invoke, a callback wait): each
    # short thread's CPU is counted, and a thread that ends mid-sample is skipped.
    sampler = profiler.Sampler(tmp_path / "ls.folded", interval=0.0005).start()
    deadline = time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline:
            batch = [threading.Thread(target=_burst, name="short") for _ in range(8)]
            for thread in batch:
                thread.start()
            for thread in batch:
                thread.join()
    finally:
        sampler.stop()
    assert sampler.samples > 100
    assert any(stack.startswith("[short];") for stack in list(sampler.counts))


def test_a_stopped_sampler_samples_no_more_and_has_written_its_counts(tmp_path: Path) -> None:
    # A test samples for a second inside a worker that runs for minutes more: left
    # running, its sampler woke every 0.5 ms until the worker ended.
    out = tmp_path / "ls.folded"
    sampler = profiler.Sampler(out, interval=0.001).start()
    stop = threading.Event()
    busy = threading.Thread(target=_spin, args=(stop,), name="busy")
    busy.start()
    try:
        deadline = time.monotonic() + 30
        while sampler.samples < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        sampler.stop()
        stopped_at = sampler.samples
        time.sleep(0.1)  # a hundred intervals
        assert sampler.samples == stopped_at
        assert not any(t.name == "sfnp-profiler" for t in threading.enumerate())
        assert "[busy];" in out.read_text()
    finally:
        stop.set()
        busy.join()
