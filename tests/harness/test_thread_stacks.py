"""thread_stacks (fixes/): finished threads in TMP_THREADS give their stacks back.

Plain LocalStack 4.14.0 on Python 3.13 keeps every finished Step Functions thread in
``TMP_THREADS``, joinable, with its stack mapped, until the process cannot map another
(``vm.max_map_count``) and every new thread fails.
"""

from __future__ import annotations

import os
import threading
import time

from sfn_patterns_localstack.emulation.fixes import thread_stacks


def _mappings() -> int:
    with open(f"/proc/{os.getpid()}/maps") as maps:
        return sum(1 for _ in maps)


def _finished_threads(count: int) -> list[threading.Thread]:
    threads = [threading.Thread(target=lambda: None, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        time.sleep(0.01)
    return threads


def test_a_kept_finished_thread_keeps_its_stack_mapped_until_reaped() -> None:
    """The premise (Python 3.13) and the fix: 300 kept threads map about 600 regions more,
    until the reaper joins them; live and unstarted threads are left listed."""
    before = _mappings()
    kept: list[threading.Thread] = _finished_threads(300)
    assert _mappings() - before >= 500  # a stack and its guard page each, still mapped
    blocker = threading.Event()
    alive = threading.Thread(target=blocker.wait, daemon=True)
    alive.start()
    unstarted = threading.Thread(target=lambda: None)
    kept += [alive, unstarted]
    assert thread_stacks.reap(kept) == 300
    assert kept == [alive, unstarted]
    assert _mappings() - before < 50
    blocker.set()
    alive.join()


def test_the_reaper_runs_in_localstacks_process() -> None:
    from localstack.utils.threads import TMP_THREADS

    assert thread_stacks.apply() is True
    assert any(t.name == "sfnp-thread-reaper" for t in threading.enumerate())
    before = _mappings()
    TMP_THREADS.extend(_finished_threads(100))
    deadline = time.monotonic() + 10 * thread_stacks.REAP_SECONDS
    while _mappings() - before > 50 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _mappings() - before < 50
