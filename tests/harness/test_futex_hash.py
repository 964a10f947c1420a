"""LocalStack's process gets a private futex hash of 16,384 buckets (fixes.futex_hash).

Each case runs in a fresh interpreter: the hash is a property of the process. On a
kernel without private futex hashes (before Linux 6.16) the fix must change nothing
and say so; on a kernel with them (6.16 and later) it must take.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHECK = """
import json, threading
from sfn_patterns_localstack.emulation.fixes import futex_hash
before = futex_hash.slots()
ev = threading.Event()
threads = [threading.Thread(target=ev.wait) for _ in range(50)]
for t in threads: t.start()
grown = futex_hash.slots()
applied = futex_hash.apply()
print(json.dumps({"before": before, "grown": grown, "applied": applied,
                  "after": futex_hash.slots()}))
ev.set()
"""


def _run() -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_the_process_gets_16384_buckets_where_the_kernel_has_private_hashes() -> None:
    found = _run()
    if found["before"] is None:  # no PR_FUTEX_HASH: nothing changes, and apply says so
        assert found == {"before": None, "grown": None, "applied": False, "after": None}
        return
    # The kernel's own sizing follows the CPUs, not the threads (16 on 2 cores).
    assert found["grown"] < 1024, found
    assert found["applied"] is True and found["after"] == 16384, found
