"""A sampling CPU profiler for the in-process LocalStack (``SFNP_PROFILE=<file>``).

Why: the test suite is CPU-bound, and ``perf`` (with 3.12's ``-X perf``) needs kernel
permissions a CI container rarely grants; to see where LocalStack's CPU goes while a
test file runs, a thread inside its process
samples every thread's stack every few milliseconds and charges the CPU time the
thread used since the previous sample (its own CPU clock, named by its kernel thread id)
to the stack it is in now: a thread blocked on a socket, a lock or the GIL used none
and is not counted, so the figures are CPU microseconds, not wall-clock samples.
Stacks are aggregated as folded lines (``outer;inner;leaf microseconds``, the input
of flamegraph.pl / speedscope) and the file is
rewritten every few seconds, because the harness kills LocalStack with SIGKILL
(server.LocalStack.stop) and no exit hook would run.

Use: ``SFNP_PROFILE=/tmp/ls.folded pytest tests/x.py`` (``/tmp/ls.{pid}.folded`` for one
file per LocalStack process, as under ``make test``'s workers; LocalStack's entry point,
:mod:`.startup`, starts the sampler when the variable is set), then
``python -m sfn_patterns_localstack.emulation.profiler report /tmp/ls.folded``.
"""

from __future__ import annotations

import collections
import gc
import os
import sys
import threading
import time
from pathlib import Path

INTERVAL = float(os.environ.get("SFNP_PROFILE_INTERVAL", "0.01"))
FLUSH_SECONDS = 2.0


def _thread_cpu_ns(native_id: int) -> int | None:
    """CPU time a thread (by its kernel thread id) has used, in ns; None once it ended.

    Linux names a thread's CPU clock after its kernel id (``MAKE_THREAD_CPUCLOCK``:
    ``~tid << 3 | CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD``), and answers EINVAL for an id
    no thread has. ``time.pthread_getcpuclockid`` instead reads the id out of the
    thread's ``struct pthread``, which a detached thread frees when it ends: a thread
    that ended between ``sys._current_frames()`` and the call made it read freed memory,
    and LocalStack died of a segmentation fault in libc under ``SFNP_PROFILE`` with
    hundreds of threads coming and going (bench_scale's dag-aggregate).
    """
    try:
        return time.clock_gettime_ns((~native_id << 3) | 6)
    except (OSError, OverflowError):  # the thread ended meanwhile
        return None


def _frame_label(code) -> str:
    path = code.co_filename
    for marker in ("site-packages/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{code.co_name} ({path}:{code.co_firstlineno})"


def folded(frame, limit: int = 200) -> str:
    """One stack as a folded line's key: outermost frame first, ';' between frames."""
    labels = []
    while frame is not None and len(labels) < limit:
        labels.append(_frame_label(frame.f_code))
        frame = frame.f_back
    return ";".join(reversed(labels))


class Sampler:
    """Counts the stacks of this process's running threads until stopped or the process ends.

    LocalStack's sampler is never stopped (its process is killed); a caller that samples
    for a while inside a longer-lived process (a test) stops it: a sampler left running
    wakes every ``interval`` for the rest of the process, and that process's CPU is
    what the figures are about.
    """

    def __init__(self, out: Path, interval: float = INTERVAL) -> None:
        self.out = out
        self.interval = interval
        self.counts: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self._last: dict[int, int] = {}
        self._started = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sfnp-profiler", daemon=True)

    def start(self) -> Sampler:
        """Start sampling in a daemon thread; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling and write the counts (returns once the thread has ended)."""
        self._stopped.set()
        self._thread.join()
        self.flush()

    def sample(self) -> None:
        """Charge each thread's CPU since the last sample to the stack it is in now."""
        me = threading.get_ident()
        self.samples += 1
        seen = {}
        threads = {t.ident: t for t in threading.enumerate()}
        for ident, frame in _current_frames().items():
            thread = threads.get(ident)
            if ident == me or thread is None or thread.native_id is None:
                continue  # a thread threading does not know (or not started yet)
            used = _thread_cpu_ns(thread.native_id)
            if used is None:
                continue
            seen[ident] = used
            # A thread born since the last sample is charged all its CPU; at the first
            # sample, what ran before the profiler started is not counted.
            delta = used - self._last.get(ident, 0 if self._started else used)
            if delta < 1000:  # asleep since the last sample (below 1 us)
                continue
            self.counts[f"[{_thread_name(thread)}];{folded(frame)}"] += delta // 1000
        self._last = seen
        self._started = True

    def flush(self) -> None:
        """Write the counts (atomically: a reader never sees half a file)."""
        lines = [f"{stack} {count}\n" for stack, count in self.counts.most_common()]
        tmp = self.out.with_name(self.out.name + f".{os.getpid()}.tmp")
        tmp.write_text("".join(lines))
        os.replace(tmp, self.out)

    def _run(self) -> None:
        next_flush = time.monotonic() + FLUSH_SECONDS
        while not self._stopped.wait(self.interval):
            try:
                self.sample()
                if time.monotonic() >= next_flush:
                    self.flush()
                    next_flush = time.monotonic() + FLUSH_SECONDS
            except Exception:
                continue


def _current_frames() -> dict[int, object]:
    """``sys._current_frames()`` with the garbage collector paused around it.

    Why: CPython 3.11 builds that dict while holding the runtime's thread-list lock; a
    collection it triggers can finalize an object whose finalizer releases the GIL (a
    sqlite3 statement did), and a thread that takes the GIL then and starts or ends a
    thread waits for that lock forever. Seen once: a LocalStack's reactor stuck for
    minutes under ``SFNP_PROFILE``.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def _thread_name(thread: threading.Thread) -> str:
    name = thread.name
    # Numbered names (Thread-12, asgi_gw_3) fold together.
    return name.rstrip("0123456789").rstrip("-_ ") or name


def start_from_env() -> Sampler | None:
    """Start sampling when ``SFNP_PROFILE`` names the output file; None otherwise."""
    target = os.environ.get("SFNP_PROFILE")
    if not target:
        return None
    # Five test workers start five LocalStacks: "{pid}" in the name keeps their files apart.
    return Sampler(Path(target.replace("{pid}", str(os.getpid())))).start()


def report(path: Path, top: int = 40) -> str:
    """The functions with the most samples, self and inclusive, as text."""
    self_counts: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = stack.split(";")
        self_counts[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    out = [f"{total / 1e6:.1f} CPU-seconds sampled"]
    out.append("-- self --")
    out += [f"{n / 1e6:7.2f} {n / total:6.1%} {f}" for f, n in self_counts.most_common(top)]
    out.append("-- inclusive --")
    out += [f"{n / 1e6:7.2f} {n / total:6.1%} {f}" for f, n in inclusive.most_common(top)]
    return "\n".join(out)


def main(argv: list[str]) -> None:
    """``report FILE [TOP]``: print a profile's top functions."""
    if argv[:1] != ["report"] or len(argv) < 2:
        raise SystemExit(
            "usage: python -m sfn_patterns_localstack.emulation.profiler report FILE [TOP]"
        )
    print(report(Path(argv[1]), int(argv[2]) if len(argv) > 2 else 40))


if __name__ == "__main__":
    main(sys.argv[1:])
