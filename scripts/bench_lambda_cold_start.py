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

The comparison needs a LocalStack in each mode, so this script always starts its own
(LOCALSTACK_ENDPOINT is not used) and stops them.

A second table, per declared runtime (python3.9 to python3.13: each runs on its own
Python, from a fork server of its own, started on that runtime's first cold start),
comes from a third LocalStack: the first invoke of a runtime (which starts its fork
server) and the cold starts after it, with their CPU.

Examples::

    .venv/bin/python scripts/bench_lambda_cold_start.py                  # 40 functions
    .venv/bin/python scripts/bench_lambda_cold_start.py --functions 100
    .venv/bin/python scripts/bench_lambda_cold_start.py --smoke          # smallest (make test)
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def measure(mode: str, functions: int, log, localstack=None) -> dict[str, float]:
    """One LocalStack with SFNP_LAMBDA_FORK_SERVER=mode: cold and warm figures.

    ``localstack``: one already started in that mode (the caller stops it); by
    default a new one is started here and stopped after.
    """
    own = localstack is None
    if own:
        localstack = server.start(extra_env={"SFNP_LAMBDA_FORK_SERVER": mode})
    try:
        aws = client_factory(localstack.endpoint)
        names = [f"cold-{i}" for i in range(functions)]
        role = function_role(aws("iam"), "bench", names)
        lam = aws("lambda")
        code = _zip(HANDLER)
        for name in names:
            lam.create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role,
                Handler="app.handler",
                Code={"ZipFile": code},
                Timeout=30,
            )
        for name in names:
            lam.get_waiter("function_active_v2").wait(FunctionName=name)
        log(f"  {functions} functions active; cold invokes")
        before = _tree_cpu(localstack.process.pid)
        cold = _invoke_all(lam, names)
        cpu = _tree_cpu(localstack.process.pid) - before
        log("  warm invokes")
        warm = _invoke_all(lam, names)
    finally:
        if own:
            localstack.stop()
    return {
        "cold_median_ms": statistics.median(cold) * 1000,
        "cold_p90_ms": sorted(cold)[max(0, int(len(cold) * 0.9) - 1)] * 1000,
        "cpu_per_cold_start": cpu / functions,
        "warm_median_ms": statistics.median(warm) * 1000,
    }


def measure_runtimes(functions: int, log, localstack=None) -> dict[str, dict[str, float]]:
    """One LocalStack (fork servers): per runtime, its first cold start, then the others.

    ``localstack``: one already started with fork servers and no function invoked yet
    (the caller stops it); by default a new one is started here and stopped after.
    """
    own = localstack is None
    if own:
        localstack = server.start()
    results: dict[str, dict[str, float]] = {}
    try:
        aws = client_factory(localstack.endpoint)
        names = {rt: [f"{rt.replace('.', '-')}-{i}" for i in range(functions)] for rt in RUNTIMES}
        role = function_role(
            aws("iam"), "bench-runtimes", [n for listed in names.values() for n in listed]
        )
        lam = aws("lambda")
        code = _zip(HANDLER)
        for runtime, listed in names.items():
            for name in listed:
                lam.create_function(
                    FunctionName=name,
                    Runtime=runtime,
                    Role=role,
                    Handler="app.handler",
                    Code={"ZipFile": code},
                    Timeout=30,
                )
        for listed in names.values():
            for name in listed:
                lam.get_waiter("function_active_v2").wait(FunctionName=name)
        for runtime, listed in names.items():
            log(f"  {runtime}: first cold start (starts its fork server), then {functions - 1}")
            before = _tree_cpu(localstack.process.pid)
            (first,) = _invoke_all(lam, listed[:1])
            middle = _tree_cpu(localstack.process.pid)
            cold = _invoke_all(lam, listed[1:])
            after = _tree_cpu(localstack.process.pid)
            results[runtime] = {
                "first_ms": first * 1000,
                "first_cpu": middle - before,
                "cold_median_ms": statistics.median(cold) * 1000,
                "cpu_per_cold_start": (after - middle) / len(cold),
            }
    finally:
        if own:
            localstack.stop()
    return results


def _smoke_measurements(functions: int, per_runtime: int, log) -> tuple[dict, dict]:
    """Both tables from two LocalStacks side by side instead of three in a row.

    ``--smoke`` keeps the script working, its figures are not quoted: the runtimes'
    first cold starts run first on the fork-server LocalStack (no function invoked
    yet, so each starts its runtime's fork server), then that LocalStack's mode
    measurement; the process-per-worker LocalStack runs meanwhile. CPU is read per
    LocalStack process tree, so the overlap does not mix the two.
    """
    results: dict[str, dict[str, float]] = {}
    runtimes: dict[str, dict[str, float]] = {}

    def forked() -> None:
        localstack = server.start()
        try:
            runtimes.update(measure_runtimes(per_runtime, log, localstack))
            results["fork server"] = measure("1", functions, log, localstack)
        finally:
            localstack.stop()

    with ThreadPoolExecutor(2) as pool:
        pending = [
            pool.submit(forked),
            pool.submit(
                lambda: results.setdefault("process per worker", measure("0", functions, log))
            ),
        ]
        for future in pending:
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
        results, runtimes = _smoke_measurements(functions, per_runtime, log)
    else:
        results = {}
        for label, mode in MODES:
            log(f"{label} (SFNP_LAMBDA_FORK_SERVER={mode}): starting LocalStack")
            results[label] = measure(mode, functions, log)
        log(f"per runtime ({per_runtime} functions each): starting LocalStack")
        runtimes = measure_runtimes(per_runtime, log)
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
