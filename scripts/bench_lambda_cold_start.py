#!/usr/bin/env python
"""Lambda cold starts on the harness's LocalStack: forked workers against a process each.

The local-process executor (harness/sfn_patterns_localstack/executor.py) forks each new
execution environment's worker from a fork server that has imported boto3 already;
``SFNP_LAMBDA_FORK_SERVER=0`` starts a new interpreter per worker instead. This script
starts one LocalStack in each mode, one after the other, creates ``--functions``
functions whose handler builds an STS client at import and calls it (as the patterns'
handlers build their clients), and invokes each once: every invoke is a cold start.
Then it invokes them all again (warm). Printed per mode: cold-start latency (median,
p90, as the caller sees it), CPU per cold start, warm latency; and the ratio row.

CPU is that of LocalStack's whole process tree (LocalStack, the fork server, the
workers, and the children each has reaped), read from /proc before and after the cold
invokes, so other processes on the machine do not count.

The comparison needs a LocalStack in each mode, so this script starts its own and
stops them (LOCALSTACK_ENDPOINT is not used, except at ``--smoke``, below).

A second table, per declared runtime (python3.9 to python3.13: each runs on its own
Python, from a fork server of its own, started on that runtime's first cold start),
comes from a third LocalStack: the first invoke of a runtime (which starts its fork
server) and the cold starts after it, with their CPU.

``--smoke`` (make test: the script keeps working, its figures are not quoted) runs 3
functions per mode and 2 per runtime on two LocalStacks side by side: the runtimes
and then the fork-server mode on one (LOCALSTACK_ENDPOINT's when set and a LocalStack
process of this machine, the suite's, whose fork servers may be running already; its
functions and role are deleted after), the process-per-worker mode on one of its own.

Examples::

    .venv/bin/python scripts/bench_lambda_cold_start.py                  # 40 functions
    .venv/bin/python scripts/bench_lambda_cold_start.py --functions 100
    .venv/bin/python scripts/bench_lambda_cold_start.py --smoke          # smallest (make test)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import uuid
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.roles import function_role

HZ = os.sysconf("SC_CLK_TCK")
HANDLER = """\
import boto3

sts = boto3.client("sts")


def handler(event, context):
    return sts.get_caller_identity()["Account"]
"""
MODES = (("fork server", "1"), ("process per worker", "0"))
RUNTIMES = ("python3.9", "python3.10", "python3.11", "python3.12", "python3.13")


def _tree_cpu(root: int) -> float:
    """CPU-seconds of ``root`` and every live descendant, with what each has reaped."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        fields = stats.get(pid)
        if fields is None:
            continue
        total += sum(int(v) for v in fields[11:15]) / HZ  # utime stime cutime cstime
        todo.extend(children.get(pid, []))
    return total


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


def _invoke_all(lam, names: list[str]) -> list[float]:
    """Invoke each function once; the caller-side seconds of each invoke."""
    seconds = []
    for name in names:
        started = time.monotonic()
        response = lam.invoke(FunctionName=name, Payload=b"{}")
        seconds.append(time.monotonic() - started)
        body = response["Payload"].read()
        if "FunctionError" in response:
            raise SystemExit(f"{name} failed: {body[:500]!r}")
    return seconds


@dataclass(frozen=True)
class Target:
    """A running LocalStack: where to call it, and the process whose tree does the work."""

    endpoint: str
    pid: int


def listening_pid(endpoint: str) -> int | None:
    """The LocalStack process that listens on ``endpoint``'s port, if it runs here.

    From /proc/net/tcp{,6} (the listening socket's inode) and /proc/PID/fd (who holds
    it); of several holders, the one whose parent is not among them (LocalStack, not
    a child that inherited the socket). None when that is not a LocalStack process of
    this machine's (a container's port proxy, say): its tree's CPU would not be
    LocalStack's.
    """
    port = urlsplit(endpoint).port
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                inodes.add(f"socket:[{fields[9]}]")
    holders = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) in inodes for fd in (entry / "fd").iterdir()):
                holders.add(int(entry.name))
        except OSError:
            continue
    for pid in sorted(holders):
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if parent not in holders:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            return pid if b"localstack" in command else None
    return None


@contextlib.contextmanager
def started(mode: str) -> Iterator[Target]:
    """A LocalStack of this script's own with SFNP_LAMBDA_FORK_SERVER=mode, stopped after."""
    localstack = server.start(extra_env={"SFNP_LAMBDA_FORK_SERVER": mode})
    try:
        yield Target(localstack.endpoint, localstack.process.pid)
    finally:
        localstack.stop()


@contextlib.contextmanager
def deployed(target: Target, runtimes: dict[str, str]) -> Iterator[Any]:
    """Functions ``name: runtime`` (the handler above) under a role of their own.

    Yields the Lambda client. The functions and the role are deleted after: on a
    LocalStack this script did not start, nothing of its own is left.
    """
    aws = client_factory(target.endpoint)
    iam, lam = aws("iam"), aws("lambda")
    role_name = f"bench-cold-{uuid.uuid4().hex[:6]}"
    role = function_role(iam, role_name, list(runtimes))
    try:
        code = _zip(HANDLER)
        for name, runtime in runtimes.items():
            lam.create_function(
                FunctionName=name,
                Runtime=runtime,
                Role=role,
                Handler="app.handler",
                Code={"ZipFile": code},
                Timeout=30,
            )
        for name in runtimes:
            lam.get_waiter("function_active_v2").wait(FunctionName=name)
        yield lam
    finally:
        for name in runtimes:
            with contextlib.suppress(lam.exceptions.ResourceNotFoundException):
                lam.delete_function(FunctionName=name)
        for policy in iam.list_role_policies(RoleName=role_name)["PolicyNames"]:
            iam.delete_role_policy(RoleName=role_name, PolicyName=policy)
        iam.delete_role(RoleName=role_name)


def measure(target: Target, functions: int, log) -> dict[str, float]:
    """Cold and warm figures of ``functions`` new functions on ``target``."""
    tag = uuid.uuid4().hex[:6]
    with deployed(target, {f"cold-{tag}-{i}": "python3.12" for i in range(functions)}) as lam:
        names = [f"cold-{tag}-{i}" for i in range(functions)]
        log(f"  {functions} functions active; cold invokes")
        before = _tree_cpu(target.pid)
        cold = _invoke_all(lam, names)
        cpu = _tree_cpu(target.pid) - before
        log("  warm invokes")
        warm = _invoke_all(lam, names)
    return {
        "cold_median_ms": statistics.median(cold) * 1000,
        "cold_p90_ms": sorted(cold)[max(0, int(len(cold) * 0.9) - 1)] * 1000,
        "cpu_per_cold_start": cpu / functions,
        "warm_median_ms": statistics.median(warm) * 1000,
    }


def measure_runtimes(target: Target, functions: int, log) -> dict[str, dict[str, float]]:
    """Per runtime, its first cold start (which starts its fork server), then the others.

    The first starts the fork server only where none of the runtime runs yet: on a
    LocalStack of this script's own, before any other invoke.
    """
    tag = uuid.uuid4().hex[:6]
    names = {rt: [f"{rt.replace('.', '-')}-{tag}-{i}" for i in range(functions)] for rt in RUNTIMES}
    results: dict[str, dict[str, float]] = {}
    runtimes = {name: rt for rt, listed in names.items() for name in listed}
    with deployed(target, runtimes) as lam:
        for runtime, listed in names.items():
            log(f"  {runtime}: first cold start (starts its fork server), then {functions - 1}")
            before = _tree_cpu(target.pid)
            (first,) = _invoke_all(lam, listed[:1])
            middle = _tree_cpu(target.pid)
            cold = _invoke_all(lam, listed[1:])
            after = _tree_cpu(target.pid)
            results[runtime] = {
                "first_ms": first * 1000,
                "first_cpu": middle - before,
                "cold_median_ms": statistics.median(cold) * 1000,
                "cpu_per_cold_start": (after - middle) / len(cold),
            }
    return results


def _smoke_measurements(
    functions: int, per_runtime: int, log, endpoint: str | None
) -> tuple[dict, dict]:
    """Both tables from two LocalStacks side by side instead of three in a row.

    ``--smoke`` keeps the script working, its figures are not quoted: the runtimes and
    the fork-server mode share one LocalStack (``endpoint``'s, the suite's, when
    given; the runtimes first there, so on a LocalStack of its own each first cold
    start starts its runtime's fork server), while the process-per-worker LocalStack
    runs alongside. CPU is read per LocalStack process tree, so the overlap does not
    mix the two.
    """
    results: dict[str, dict[str, float]] = {}
    runtimes: dict[str, dict[str, float]] = {}

    def forked() -> None:
        with contextlib.ExitStack() as stack:
            pid = listening_pid(endpoint) if endpoint else None
            target = (
                Target(endpoint, pid) if endpoint and pid else stack.enter_context(started("1"))
            )
            runtimes.update(measure_runtimes(target, per_runtime, log))
            results["fork server"] = measure(target, functions, log)

    def direct() -> None:
        with started("0") as target:
            results["process per worker"] = measure(target, functions, log)

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(forked), pool.submit(direct)]:
            future.result()
    return {label: results[label] for label, _ in MODES}, runtimes


def main(argv: list[str] | None = None) -> int:
    """Measure both modes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--functions", type=int, default=40, help="functions per mode, each invoked cold once"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="smallest size that fills every column (make test)"
    )
    args = parser.parse_args(argv)
    functions = 3 if args.smoke else args.functions  # 3: p90 (rank int(0.9 n)) >= median
    if functions < 2:
        parser.error("--functions must be at least 2")
    per_runtime = 2 if args.smoke else max(2, functions // 4)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.smoke:
        endpoint = os.environ.get("LOCALSTACK_ENDPOINT")
        results, runtimes = _smoke_measurements(functions, per_runtime, log, endpoint)
    else:
        results = {}
        for label, mode in MODES:
            log(f"{label} (SFNP_LAMBDA_FORK_SERVER={mode}): starting LocalStack")
            with started(mode) as target:
                results[label] = measure(target, functions, log)
        log(f"per runtime ({per_runtime} functions each): starting LocalStack")
        with started("1") as target:
            runtimes = measure_runtimes(target, per_runtime, log)
    print(f"Lambda cold starts, {functions} functions per mode (handler: boto3 STS client)\n")
    print(
        "| executor | cold start, median ms | cold start, p90 ms | CPU-s per cold start "
        "| warm invoke, median ms |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, r in results.items():
        print(
            f"| {label} | {r['cold_median_ms']:.0f} | {r['cold_p90_ms']:.0f} "
            f"| {r['cpu_per_cold_start']:.3f} | {r['warm_median_ms']:.0f} |"
        )
    fork, direct = results["fork server"], results["process per worker"]
    ratios = " | ".join(f"{direct[key] / fork[key]:.2f}x" for key in fork)
    print(f"| process per worker / fork server | {ratios} |")

    print(
        f"\nPer declared runtime (fork servers), {per_runtime} functions each: the first "
        "cold start starts the runtime's fork server\n"
    )
    print(
        "| runtime | first cold start, ms | its CPU-s | later cold starts, median ms "
        "| CPU-s per later cold start |"
    )
    print("|---|---:|---:|---:|---:|")
    for runtime, r in runtimes.items():
        print(
            f"| {runtime} | {r['first_ms']:.0f} | {r['first_cpu']:.3f} "
            f"| {r['cold_median_ms']:.0f} | {r['cpu_per_cold_start']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
