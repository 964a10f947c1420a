"""The CPU cost of IAM enforcement: one workload of role-session calls, SFNP_IAM=off vs enforce.

Starts two LocalStacks in turn (one per mode: the mode is read at LocalStack start, so
an existing LocalStack cannot serve both), creates a table and a role allowed to write
it, assumes the role and makes ``--calls`` DynamoDB PutItem calls with the session.
LocalStack's CPU time (user + system, its process and children) is read before and
after the calls; the difference is the workload's cost in that mode.

    .venv/bin/python scripts/iam_overhead.py [--calls 1000] [--rounds 2]

Prints Markdown rows: mode, calls, LocalStack CPU-seconds, CPU-milliseconds per call.
"""

from __future__ import annotations

import argparse
import json
import time

import boto3
import psutil

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory

ACCOUNT = "000000000000"
REGION = "us-east-1"


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
    table = "iam-overhead"
    admin("dynamodb").create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    iam = admin("iam")
    iam.create_role(RoleName="writer", AssumeRolePolicyDocument=json.dumps(trust))
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Write",
                "Effect": "Allow",
                "Action": ["dynamodb:PutItem", "dynamodb:GetItem"],
                "Resource": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}",
            }
        ],
    }
    iam.put_role_policy(RoleName="writer", PolicyName="write", PolicyDocument=json.dumps(policy))
    creds = admin("sts").assume_role(
        RoleArn=f"arn:aws:iam::{ACCOUNT}:role/writer", RoleSessionName="bench"
    )["Credentials"]
    client = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
    )
    items = [{"TableName": table, "Item": {"pk": {"S": f"item-{i}"}}} for i in range(calls)]
    return client, items


def measure(mode: str, calls: int) -> tuple[float, float]:
    """LocalStack CPU-seconds and wall seconds for ``calls`` PutItems in ``mode``."""
    instance = server.start(extra_env={"SFNP_IAM": mode})
    try:
        client, items = workload(instance.endpoint, calls)
        for item in items[:20]:  # warm up: first-call imports, the policy cache
            client.put_item(**item)
        before, started = cpu_seconds(instance.process.pid), time.monotonic()
        for item in items:
            client.put_item(**item)
        return cpu_seconds(instance.process.pid) - before, time.monotonic() - started
    finally:
        instance.stop()


def main() -> None:
    """Measure each mode ``--rounds`` times, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calls", type=int, default=1000, help="PutItem calls per round and mode (default 1000)."
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="Rounds per mode; each starts its own LocalStack (default 2).",
    )
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"off": [], "enforce": []}
    for _ in range(args.rounds):
        for mode, runs in results.items():
            runs.append(measure(mode, args.calls))
    print(
        "| mode | calls | LocalStack CPU-s (each round) | CPU-ms per call (best) | wall s (best) |"
    )
    print("|---|---|---|---|---|")
    for mode, runs in results.items():
        cpu = ", ".join(f"{c:.2f}" for c, _ in runs)
        best = min(c for c, _ in runs)
        wall = min(w for _, w in runs)
        print(f"| {mode} | {args.calls} | {cpu} | {1000 * best / args.calls:.3f} | {wall:.1f} |")


if __name__ == "__main__":
    main()
