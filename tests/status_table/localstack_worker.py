"""A worker for the LocalStack integration tests: run as a process, or ``work_through`` in a thread.

With ``--processes N`` the process forks N workers after its imports (one import for
all of them) and reports their exit codes.

It works through a list of task ids in random order; each task's side effect is one
line appended (O_APPEND, one write) to an effects file, so the test can count how
often every task really ran. Each claim it loses (the task was done, or held by a
live lease) is a ``LOST`` line, so the test can show the workers really raced.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from sfn_patterns.status_table import (
    StaleAttemptError,
    TaskAlreadySucceededError,
    TaskLockedError,
    Tracker,
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--use-case", required=True)
    parser.add_argument("--ids-file", type=Path, required=True)
    parser.add_argument("--effects-file", type=Path, required=True)
    parser.add_argument("--lease", type=float, default=60.0)
    parser.add_argument("--ready-dir", type=Path, help="signal ready here, wait for 'go'")
    parser.add_argument("--crash-marker", type=Path, help="acquire, touch this, then hang")
    parser.add_argument("--wait-locked", type=float, default=0.0, help="retry locked tasks")
    parser.add_argument(
        "--processes", type=int, default=1, help="fork this many workers; print their exit codes"
    )
    args = parser.parse_args()
    if args.processes > 1:
        return fork_workers(args)
    return run_worker(args)


def fork_workers(args: argparse.Namespace) -> int:
    """Fork ``args.processes`` workers, each a process of its own with its own tracker.

    Why fork: importing the library (boto3, pynamodb) costs a worker process about 1.5
    CPU-seconds; forked after the imports, eight workers pay it once. No tracker,
    client or connection exists before the fork: each child makes its own. Prints the
    children's exit codes (a JSON list) and exits 0 when every child did.
    """
    children = []
    for _ in range(args.processes):
        pid = os.fork()
        if pid == 0:  # the child: run one worker, never return into the parent's code
            code = 1
            try:
                code = run_worker(args)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        children.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    print(json.dumps(codes), flush=True)
    return 0 if codes == [0] * len(codes) else 1


def run_worker(args: argparse.Namespace) -> int:
    """One worker: its own tracker, through ``args.ids_file`` (see :func:`work_through`)."""
    tracker = Tracker(
        args.table, args.use_case, host=args.endpoint, region="us-east-1", lease_seconds=args.lease
    )
    ids: list[str] = json.loads(args.ids_file.read_text())
    if args.ready_dir:
        (args.ready_dir / f"ready-{os.getpid()}").touch()
        while not (args.ready_dir / "go").exists():
            time.sleep(0.02)
    work_through(
        tracker,
        ids,
        args.effects_file,
        label=str(os.getpid()),
        wait_locked=args.wait_locked,
        before_effect=(lambda a: _crash(args.crash_marker, a)) if args.crash_marker else None,
    )
    return 0


def _crash(marker: Path, attempt: object) -> None:
    marker.write_text(str(attempt.attempt))
    time.sleep(3600)  # the test SIGKILLs us here, before the side effect


def work_through(
    tracker: Tracker,
    ids: list[str],
    effects_file: Path,
    *,
    label: str,
    wait_locked: float = 0.0,
    before_effect: Callable[[object], None] | None = None,
    transient: tuple[type[BaseException], ...] = (),
) -> None:
    """Run every task of ``ids`` that is not done, each side effect one appended line.

    An error of a ``transient`` type (a throttled call, once the SDK's retries are used
    up) puts the task back in the list, as a queue redelivers the message of a failed
    invocation: it is tried again, like a locked task, until ``wait_locked`` runs out.
    """
    ids = list(ids)
    random.shuffle(ids)
    fd = os.open(effects_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_locked
    try:
        while ids:
            locked = []
            for task_id in ids:
                try:
                    attempt = tracker.start(task_id)
                except TaskAlreadySucceededError:
                    os.write(fd, f"LOST {task_id} {label} succeeded\n".encode())
                    continue
                except TaskLockedError:
                    os.write(fd, f"LOST {task_id} {label} locked\n".encode())
                    locked.append(task_id)
                    continue
                except transient:
                    locked.append(task_id)
                    continue
                try:
                    with attempt:
                        if before_effect:
                            before_effect(attempt)
                        os.write(fd, f"{task_id} {label} {attempt.attempt}\n".encode())
                except StaleAttemptError:
                    # Fencing rejected our success: someone else owns a newer attempt.
                    os.write(fd, f"STALE {task_id} {label} {attempt.attempt}\n".encode())
                except transient as error:
                    # The side effect happened; recording it did not (a lost update).
                    os.write(fd, f"UNRECORDED {task_id} {label} {error!r:.60}\n".encode())
                    locked.append(task_id)
            if not locked or time.monotonic() > deadline:
                break
            ids = locked
            time.sleep(0.2)
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
