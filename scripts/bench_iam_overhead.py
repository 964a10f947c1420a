#!/usr/bin/env python
"""What IAM enforcement costs: one workload of role-session calls, SFNP_IAM=off vs enforce.

The harness decides every call a role session makes from the caller's policies
(``SFNP_IAM=enforce``, the default of every test run); ``off`` lets every call through
undecided. The mode is read when LocalStack starts, so each round starts one LocalStack
per mode, one after the other: it creates a table and a role allowed to write it,
assumes the role, warms up with 20 calls (first-call imports, the policy cache), then
makes ``--calls`` DynamoDB PutItem calls with the session. LocalStack's CPU time (user
+ system, its process and children) is read before and after the calls; the difference
is the workload's cost in that mode. Modes alternate within each round, so a machine
that slows down during the run slows both.

Printed: per mode, each round's CPU-seconds, the best round's CPU-milliseconds per call
and wall seconds; then the ratio row (enforce / off) of the best rounds.

The comparison needs a LocalStack in each mode, so the script starts its own and stops
them (LOCALSTACK_ENDPOINT is not used). ``--smoke`` (make test: the script keeps
working, its figures are not quoted) makes 50 calls in one round.

Examples::

    .venv/bin/python scripts/bench_iam_overhead.py                    # 5,000 calls, 3 rounds
    .venv/bin/python scripts/bench_iam_overhead.py --calls 20000 --rounds 5
    .venv/bin/python scripts/bench_iam_overhead.py --smoke            # smallest (make test)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

import psutil

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory, session_clients
from sfn_patterns_localstack.roles import account_root_trust, allow

ACCOUNT = "000000000000"
REGION = "us-east-1"
TABLE = "iam-overhead"
MODES = ("off", "enforce")
WARM_UP = 20


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process and its children so far."""
    process = psutil.Process(pid)
    total = sum(process.cpu_times()[:2])
    for child in process.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            continue
    return total


def workload(endpoint: str, calls: int) -> tuple[object, list[dict]]:
    """Set up the table and role; return the session's client and the items to write."""
    admin = client_factory(endpoint)
    admin("dynamodb").create_table(
        TableName=TABLE,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    iam = admin("iam")
    role = iam.create_role(
        RoleName="writer", AssumeRolePolicyDocument=json.dumps(account_root_trust())
    )
    table_arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TABLE}"
    policy = {
        "Version": "2012-10-17",
        "Statement": [allow(["dynamodb:PutItem", "dynamodb:GetItem"], table_arn, "Write")],
    }
    iam.put_role_policy(RoleName="writer", PolicyName="write", PolicyDocument=json.dumps(policy))
    client = session_clients(endpoint, role["Role"]["Arn"], "bench", REGION)("dynamodb")
    items = [{"TableName": TABLE, "Item": {"pk": {"S": f"item-{i}"}}} for i in range(calls)]
    return client, items


def measure(mode: str, calls: int) -> tuple[float, float]:
    """LocalStack CPU-seconds and wall seconds for ``calls`` PutItems in ``mode``."""
    instance = server.start(extra_env={"SFNP_IAM": mode})
    try:
        client, items = workload(instance.endpoint, calls)
        for i in range(WARM_UP):
            client.put_item(TableName=TABLE, Item={"pk": {"S": f"warm-{i}"}})
        before, started = cpu_seconds(instance.process.pid), time.monotonic()
        for item in items:
            client.put_item(**item)
        return cpu_seconds(instance.process.pid) - before, time.monotonic() - started
    finally:
        instance.stop()


def ratio(a: float | None, b: float | None) -> str:
    """``a / b`` as ``1.23x``, or ``-`` where either is missing or ``b`` is 0."""
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def table(calls: int, results: dict[str, list[tuple[float, float]]]) -> list[str]:
    """The Markdown table: a row per mode, then enforce / off of the best rounds."""
    lines = [
        "| mode | calls | LocalStack CPU-s (each round) | CPU-ms per call (best) | wall s (best) |",
        "|---|---:|---:|---:|---:|",
    ]
    best = {
        mode: (min(c for c, _ in runs), min(w for _, w in runs)) for mode, runs in results.items()
    }
    for mode, runs in results.items():
        each = ", ".join(f"{c:.2f}" for c, _ in runs)
        cpu, wall = best[mode]
        lines.append(f"| {mode} | {calls} | {each} | {1000 * cpu / calls:.3f} | {wall:.1f} |")
    (off_cpu, off_wall), (on_cpu, on_wall) = best["off"], best["enforce"]
    lines.append(f"| enforce / off | | | {ratio(on_cpu, off_cpu)} | {ratio(on_wall, off_wall)} |")
    return lines


def run(
    calls: int, rounds: int, log: Callable[[str], None]
) -> dict[str, list[tuple[float, float]]]:
    """Each round measures every mode once, in turn."""
    results: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for number in range(1, rounds + 1):
        for mode in MODES:
            log(f"round {number}/{rounds}: SFNP_IAM={mode}, starting LocalStack, {calls} PutItems")
            cpu, wall = measure(mode, calls)
            log(f"round {number}/{rounds}: SFNP_IAM={mode}: {cpu:.2f} CPU-s, {wall:.1f} s")
            results[mode].append((cpu, wall))
    return results


def main() -> None:
    """Parse the options, measure, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Progress goes to stderr, the table to stdout.",
    )
    parser.add_argument(
        "--calls", type=int, default=5000, help="PutItem calls per round and mode (default 5000)."
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="Rounds; each starts a LocalStack per mode (default 3).",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="smallest run that fills every column (make test)"
    )
    args = parser.parse_args()
    calls, rounds = (50, 1) if args.smoke else (args.calls, args.rounds)
    if calls < 1 or rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    results = run(calls, rounds, lambda line: print(line, file=sys.stderr, flush=True))
    print(f"IAM enforcement: {calls} role-session PutItems per mode, {rounds} round(s)\n")
    print("\n".join(table(calls, results)))


if __name__ == "__main__":
    main()
