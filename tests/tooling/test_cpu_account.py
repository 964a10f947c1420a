"""The per-file CPU account keeps what orphaned processes used (tests/cpu_account.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import cpu_account

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

# A child that starts a grandchild burning ~0.5 CPU-s, then exits at once: the
# grandchild is orphaned (re-parented outside this process's tree) while it still runs.
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.DEVNULL)
print(child.pid, flush=True)
sys.stdin.readline()
"""
BURNER = """
import time
end = time.process_time() + 0.5
while time.process_time() < end:
    pass
time.sleep(30)
"""


def test_a_process_orphaned_out_of_the_tree_keeps_its_cpu_in_the_total() -> None:
    account = cpu_account.CpuAccount()
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, BURNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    burner = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 30
        while cpu_account.tree_sample(burner)[burner][1] < 0.4 * cpu_account.TICKS:
            assert time.monotonic() < deadline, "the burner never burned"
            time.sleep(0.1)
        before = account.total()
        parent.communicate("\n", timeout=10)  # the parent exits: the burner is orphaned
        after = account.total()
        assert burner not in account.last, "the orphan should have left the tree"
        assert after >= before, (
            f"the total fell from {before} to {after}: the orphan's CPU vanished"
        )
    finally:
        os.kill(burner, 9)


def test_a_reaped_child_is_not_counted_twice() -> None:
    """Its parent's cutime takes the child's CPU over; the kept samples must not add it again."""
    before = {1: (0, 100), 2: (1, 40), 3: (2, 7)}
    # 3 was reaped by 2 (still here, its cutime grew by 7); 2's own child 4 is new.
    after = {1: (0, 100), 2: (1, 47), 4: (2, 1)}
    assert cpu_account.orphaned_ticks(before, after) == 0
    # 2 is gone (reaped by 1), and its child 3 with it: 3 was orphaned.
    gone = {1: (0, 147)}
    assert cpu_account.orphaned_ticks(before, gone) == 7
