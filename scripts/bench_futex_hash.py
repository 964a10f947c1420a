#!/usr/bin/env python3
"""Thread wake-ups beside many sleeping threads: the kernel's futex hash against the harness's.

Why: LocalStack holds three threads per parked execution, and since Linux 6.16 a
threaded process gets a private futex hash sized from the CPUs (16 buckets on 2 cores).
fixes/futex_hash.py gives LocalStack's process 16,384. This measures what that buys:
two threads hand a semaphore back and forth (each hand-off is a futex wake) while
``--threads`` others sleep on locks of their own, once per setting, each in a fresh
process (the setting is per process). Printed: wall and CPU seconds per setting, and
their ratio to the kernel's default.

    .venv/bin/python scripts/bench_futex_hash.py              # 20,000 sleepers
    .venv/bin/python scripts/bench_futex_hash.py --smoke      # smallest (make test)

``--smoke`` (300 sleepers, 2,000 hand-offs) keeps the script working; its figures are
not quoted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "harness"))

from sfn_patterns_localstack.emulation.fixes import futex_hash  # noqa: E402

SETTINGS = ("kernel default", "harness (16,384)")


def measure(setting: str, sleepers: int, round_trips: int) -> dict[str, float]:
    """One setting, in this process: sleepers parked, then the ping-pong timed."""
    if setting != SETTINGS[0] and not futex_hash.apply():
        raise SystemExit("this kernel has no private futex hash (Linux 6.16 or later)")
    release = threading.Event()
    parked = [threading.Thread(target=release.wait, daemon=True) for _ in range(sleepers)]
    for thread in parked:
        thread.start()
    ping, pong = threading.Semaphore(0), threading.Semaphore(0)

    def answer() -> None:
        for _ in range(round_trips):
            ping.acquire()
            pong.release()

    partner = threading.Thread(target=answer)
    partner.start()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(round_trips):
        ping.release()
        pong.acquire()
    partner.join()
    result = {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "slots": futex_hash.slots() or 0,
    }
    release.set()
    return result


def main(argv: list[str] | None = None) -> int:
    """Run each setting in a process of its own and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument(
        "--threads", type=int, default=20000, help="sleeping threads (default 20,000)"
    )
    parser.add_argument(
        "--round-trips", type=int, default=20000, help="semaphore hand-offs (default 20,000)"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="smallest size, 300 threads and 2,000 hand-offs (make test; figures not quoted)",
    )
    parser.add_argument("--setting", choices=SETTINGS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.threads, args.round_trips = 300, 2000
    if args.setting:
        print(json.dumps(measure(args.setting, args.threads, args.round_trips)))
        return 0
    if futex_hash.slots() is None:
        print("this kernel has no private futex hash (Linux 6.16 or later)", file=sys.stderr)
        return 1
    results = {}
    for setting in SETTINGS:
        print(f"[{setting}] {args.threads:,} sleeping threads", file=sys.stderr, flush=True)
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--setting",
                setting,
                "--threads",
                str(args.threads),
                "--round-trips",
                str(args.round_trips),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results[setting] = json.loads(out.splitlines()[-1])
    base = results[SETTINGS[0]]
    print(f"{args.round_trips:,} hand-offs beside {args.threads:,} sleeping threads\n")
    print("| setting | futex hash buckets | wall (s) | CPU (s) | wall vs kernel default |")
    print("|---|---:|---:|---:|---:|")
    for setting, found in results.items():
        print(
            f"| {setting} | {found['slots']:,} | {found['wall']:.2f} | {found['cpu']:.2f} | "
            f"{found['wall'] / base['wall']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
