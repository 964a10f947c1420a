#!/usr/bin/env python
"""Benchmark the status-table tracker against LocalStack: tasks per second, 1 and 8 workers.

One "task" is the full cycle a real worker pays for: acquire the lease, run an empty
body, record success. Every run uses a fresh table and N worker processes that each
walk the same task ids in their own shuffled order, skipping tasks another worker
holds or finished, so contention is part of the measurement.

When a Python interpreter with ``pynamodb_mate`` is available (``--mate-python``,
default: a venv under ``~/.cache/sfn-patterns/bench`` that this script creates on
first use), the same workload runs through
pynamodb_mate's status tracker too, and both are printed side by side. Its worker
processes run under that interpreter, so pynamodb_mate never has to be installed in
the project environment.

Examples::

    .venv/bin/python scripts/bench_status_table.py                 # starts LocalStack
    .venv/bin/python scripts/bench_status_table.py --endpoint http://127.0.0.1:4566
    .venv/bin/python scripts/bench_status_table.py --tasks 300 --workers 1 4 8
    .venv/bin/python scripts/bench_status_table.py --smoke      # smallest size (make test)

LOCALSTACK_ENDPOINT works like --endpoint; on a LocalStack it did not start, the
script deletes the tables it created.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REGION = "us-east-1"
RUN_TAG = uuid.uuid4().hex[:6]  # names this run's tables, so only they are deleted
MATE_VENV = (
    Path(os.environ.get("SFN_PATTERNS_CACHE") or Path.home() / ".cache" / "sfn-patterns")
    / "bench"
    / "pynamodb-mate-venv"
)
DEFAULT_MATE_PYTHON = str(MATE_VENV / "bin" / "python")
# pynamodb_mate's release that works with the pynamodb this project pins.
MATE_REQUIREMENTS = ("pynamodb==6.1.0", "pynamodb_mate==6.0.1.1")
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": REGION,
}


# -- worker side (runs in a child process, under either interpreter) ------------------------


def _mate_model(table: str, endpoint: str) -> type:
    """pynamodb_mate's tracker bound to one table, configured like ours (4 shards, 3 retries)."""
    from pynamodb_mate.patterns.status_tracker.api import (  # type: ignore[import-not-found]
        BaseTask,
        StatusAndUpdateTimeIndex,
        TrackerConfig,
    )

    config = TrackerConfig.make(
        use_case_id="bench",
        pending_status=10,
        in_progress_status=20,
        failed_status=30,
        succeeded_status=40,
        ignored_status=50,
        n_pending_shard=4,
        n_in_progress_shard=4,
        n_failed_shard=4,
        n_succeeded_shard=4,
        n_ignored_shard=4,
        max_retry=3,
        lock_expire_seconds=60,
    )
    meta = type(
        "Meta",
        (),
        {
            "table_name": table,
            "region": REGION,
            "host": endpoint,
            "billing_mode": "PAY_PER_REQUEST",
        },
    )
    return type(
        "BenchTask",
        (BaseTask,),
        {"Meta": meta, "config": config, "status_index": StatusAndUpdateTimeIndex()},
    )


def _setup(impl: str, table: str, endpoint: str, ids: list[str]) -> None:
    """Create the table and the pending tasks (not timed)."""
    if impl == "ours":
        from sfn_patterns.status_table import Tracker

        tracker = Tracker(table, "bench", host=endpoint, region=REGION)
        tracker.create_table_if_not_exists()
        tracker.create_tasks(ids)
    else:
        model = _mate_model(table, endpoint)
        model.create_table(wait=True)
        for task_id in ids:
            model.make_and_save(task_id=task_id)


def _work(impl: str, table: str, endpoint: str, ids: list[str], ready_dir: Path) -> str:
    """Walk the ids once in random order; returns "completed stale" counts.

    ``stale`` counts successes that fencing rejected (ours only; pynamodb_mate has no
    fencing, so a double acquisition there shows up as completed > tasks instead).
    """
    stale_error: type[Exception]
    if impl == "ours":
        from sfn_patterns.status_table import StaleAttemptError, TaskSkippedError, Tracker

        tracker = Tracker(table, "bench", host=endpoint, region=REGION, lease_seconds=60)
        start = tracker.start
        skipped: type[Exception] = TaskSkippedError
        stale_error = StaleAttemptError
    else:
        from pynamodb_mate.patterns.status_tracker.api import (  # type: ignore[import-not-found]
            TaskExecutionError,
        )

        start = _mate_model(table, endpoint).start
        skipped = TaskExecutionError
        stale_error = type("NeverRaised", (Exception,), {})
    random.shuffle(ids)
    (ready_dir / f"ready-{os.getpid()}").touch()
    while not (ready_dir / "go").exists():
        time.sleep(0.01)
    done = stale = 0
    for task_id in ids:
        try:
            with start(task_id):
                pass
        except skipped:
            continue
        except stale_error:
            stale += 1
            continue
        done += 1
    return f"{done} {stale}"


def _import(impl: str) -> None:
    """Import an implementation's tracker (once, before the workers are forked)."""
    if impl == "ours":
        import sfn_patterns.status_table  # noqa: F401
    else:
        import pynamodb_mate.patterns.status_tracker.api  # type: ignore[import-not-found]  # noqa: F401


def _fork_workers(args: argparse.Namespace, ids: list[str]) -> int:
    """Fork ``args.processes`` workers; each prints its "completed stale" line.

    Why fork: importing an implementation (boto3, pynamodb) costs a process about 1.5
    CPU-seconds; forked after the import, the workers pay it once. No client exists
    before the fork (the setup's model class is not the workers'), each child makes
    its own. Exits 0 when every child did.
    """
    _import(args.impl)
    children = []
    for _ in range(args.processes):
        pid = os.fork()
        if pid == 0:  # the child: one worker, never back into the parent's code
            code = 1
            try:
                line = _work(args.impl, args.table, args.endpoint, list(ids), args.ready_dir)
                os.write(1, f"{line}\n".encode())  # one write: lines never interleave
                code = 0
            finally:
                os._exit(code)
        children.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    return 0 if all(code == 0 for code in codes) else 1


# -- orchestrator side ------------------------------------------------------------------------


def _run(
    python: str, impl: str, *, endpoint: str, n_tasks: int, n_workers: int, workdir: Path
) -> tuple[float, int, int]:
    """One measurement: returns (tasks per second, completions, stale completions)."""
    table = f"bench-{RUN_TAG}-{impl}-{uuid.uuid4().hex[:6]}"
    ids = [f"task-{i:05d}" for i in range(n_tasks)]
    ids_file = workdir / f"{table}.json"
    ids_file.write_text(json.dumps(ids))
    env = {**os.environ, **AWS_ENV}
    base = [python, __file__, "--endpoint", endpoint, "--impl", impl, "--table", table]
    setup: list[str] = []
    if python == sys.executable:
        # Our tracker imports here too: no interpreter started just to create the
        # table (not timed either way). pynamodb reads the keys from the environment.
        os.environ.update(AWS_ENV)
        _setup(impl, table, endpoint, ids)
    else:
        setup = ["--setup"]  # by the workers' launcher, before it forks them (not timed)
    ready = workdir / table
    ready.mkdir()
    # One process per implementation and run: it imports, then forks the N workers.
    launcher = subprocess.Popen(
        [
            *base,
            "--role",
            "work",
            *setup,
            "--processes",
            str(n_workers),
            "--ids-file",
            str(ids_file),
            "--ready-dir",
            str(ready),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(list(ready.glob("ready-*"))) < n_workers:
        if time.monotonic() > deadline or launcher.poll() is not None:
            launcher.kill()
            raise RuntimeError(f"{impl}: workers failed to start")
        time.sleep(0.05)
    started = time.perf_counter()
    (ready / "go").touch()
    output = launcher.communicate(timeout=600)[0]
    elapsed = time.perf_counter() - started
    if launcher.returncode:
        raise RuntimeError(f"{impl}: a worker failed")
    counts = [line.split() for line in output.strip().splitlines()]
    if len(counts) != n_workers:
        raise RuntimeError(f"{impl}: {len(counts)} of {n_workers} workers reported")
    completed = sum(int(done) for done, _ in counts)
    stale = sum(int(stale) for _, stale in counts)
    return n_tasks / elapsed, completed, stale


def _ensure_mate_venv() -> None:
    """Create the throwaway venv with pynamodb_mate once (outside the project's .venv)."""
    if Path(DEFAULT_MATE_PYTHON).exists():
        return
    print(f"installing {' and '.join(MATE_REQUIREMENTS)} into {MATE_VENV} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(MATE_VENV)], check=True)
    install = subprocess.run(
        [DEFAULT_MATE_PYTHON, "-m", "pip", "install", "--quiet", *MATE_REQUIREMENTS],
        capture_output=True,
        text=True,
        check=False,
    )
    if install.returncode != 0:
        print(f"pynamodb_mate did not install:\n{install.stderr}", file=sys.stderr)


def _mate_available(python: str) -> bool:
    if python == DEFAULT_MATE_PYTHON:
        _ensure_mate_venv()
    if not Path(python).exists():
        return False
    probe = subprocess.run(
        [python, "-c", "import pynamodb_mate.patterns.status_tracker.api"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def _child(args: argparse.Namespace) -> int:
    """The workers' launcher: create the tasks if asked (--setup), then fork the workers."""
    ids = json.loads(args.ids_file.read_text())
    if args.setup:
        _setup(args.impl, args.table, args.endpoint, ids)
    return _fork_workers(args, ids)


def main() -> int:
    """Parse options; either run one worker role or orchestrate the whole benchmark."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--endpoint", help="LocalStack URL; default: start one in-process.")
    parser.add_argument("--tasks", type=int, default=100, help="Tasks per run (default 100).")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 8],
        help="Worker process counts to measure (default: 1 8).",
    )
    parser.add_argument(
        "--mate-python",
        default=DEFAULT_MATE_PYTHON,
        help=f"Interpreter with pynamodb_mate installed (default {DEFAULT_MATE_PYTHON}); "
        "skipped when missing.",
    )
    parser.add_argument("--no-mate", action="store_true", help="Do not run pynamodb_mate.")
    parser.add_argument("--smoke", action="store_true", help="Smallest size (6 tasks, 2 workers).")
    # Internal: a child process's role.
    parser.add_argument("--role", choices=["work"], help=argparse.SUPPRESS)
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--impl", choices=["ours", "mate"], help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    parser.add_argument("--ids-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--ready-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.role:
        return _child(args)

    if args.smoke:
        # One row, still contended (2 workers): every column filled, and each worker
        # count costs a process per worker and implementation (the 1-worker row runs
        # the same code; full runs measure both).
        args.tasks, args.workers = 6, [2]
    localstack = None
    endpoint = args.endpoint or os.environ.get("LOCALSTACK_ENDPOINT")
    if endpoint is None:
        from sfn_patterns_localstack import server

        print("starting LocalStack ...", file=sys.stderr)
        localstack = server.start()
        endpoint = localstack.endpoint
    impls = [("ours", sys.executable)]
    if not args.no_mate:
        if _mate_available(args.mate_python):
            impls.append(("mate", args.mate_python))
        else:
            print(f"pynamodb_mate not importable with {args.mate_python}; skipped", file=sys.stderr)
    try:
        results: dict[tuple[str, int], tuple[float, int, int]] = {}
        with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
            for n_workers in args.workers:
                for impl, python in impls:
                    results[impl, n_workers] = _run(
                        python,
                        impl,
                        endpoint=endpoint,
                        n_tasks=args.tasks,
                        n_workers=n_workers,
                        workdir=Path(tmp),
                    )
                    rate, done, stale = results[impl, n_workers]
                    print(
                        f"  {impl:5} {n_workers} worker(s): {rate:7.1f} tasks/s "
                        f"({done} completions for {args.tasks} tasks, {stale} fenced off)",
                        file=sys.stderr,
                    )
    finally:
        if localstack is not None:
            localstack.stop()
        else:
            _delete_tables(endpoint)

    print(markdown_table(results, [impl for impl, _ in impls], args.workers, args.tasks))
    return 0


def markdown_table(
    results: dict[tuple[str, int], tuple[float, int, int]],
    impls: list[str],
    workers: list[int],
    n_tasks: int,
) -> str:
    """The Markdown table: tasks/s (completions) per implementation, and their ratio."""
    names = {"ours": "sfn_patterns.status_table", "mate": "pynamodb_mate status_tracker"}
    header = ["workers", *(names[i] for i in impls)]
    if "mate" in impls:
        header.append("ours / mate")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for n in workers:
        cells = [f"{results[i, n][0]:.1f} tasks/s ({results[i, n][1]} completions)" for i in impls]
        if "mate" in impls:
            cells.append(f"{results['ours', n][0] / results['mate', n][0]:.2f}x")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"{n_tasks} tasks per run; each task: acquire, empty body, record success.")
    return "\n".join(lines)


def _delete_tables(endpoint: str) -> None:
    """Drop the bench-* tables this run created on a LocalStack it did not start."""
    import boto3

    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    for name in dynamodb.list_tables()["TableNames"]:
        if name.startswith(f"bench-{RUN_TAG}-"):
            dynamodb.delete_table(TableName=name)


if __name__ == "__main__":
    sys.exit(main())
