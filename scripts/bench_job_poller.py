#!/usr/bin/env python
"""Benchmark the job poller: state transitions per job, tuned waits vs 1-second polling.

Applies examples/job-poller to LocalStack once (Lambda variant, sample job), then
clones its state machine with the seeds' anti-pattern settings (Wait 1 s, poll
every 1 s) under the same role and Lambdas, and runs jobs of several durations
through both machines at the same time. Transitions are counted from
GetExecutionHistory (one per ``*StateEntered`` event, what Standard workflows
bill) and compared with the module README's formula

    transitions(D) = 6 + 4 * k,   k = max(0, ceil((D - W0) / P))

where k is the number of poll iterations (Count + Wait + Get Status + Check).
On AWS the per-iteration latency is ~0.1 s against intervals of minutes; on
LocalStack with 1-s waits it is not negligible, so the table also shows the
prediction with the measured effective interval (P_eff, the mean time between
two status checks) and offset (time from the job's start to the first check).

Examples::

    .venv/bin/python scripts/bench_job_poller.py                 # starts LocalStack
    .venv/bin/python scripts/bench_job_poller.py --endpoint http://127.0.0.1:4566
    .venv/bin/python scripts/bench_job_poller.py --durations 3 6 12 --initial-wait 2 --interval 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3

from sfn_patterns_localstack.terraform import Workspace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "job-poller"
REGION = "us-east-1"
PRICE_PER_TRANSITION = 25 / 1_000_000  # USD, Standard workflows (us-east-1)


def formula(duration: float, initial_wait: float, interval: float) -> int:
    """The README's transitions per successful job: 6 + 4 * ceil((D - W0) / P)."""
    return 6 + 4 * max(0, math.ceil((duration - initial_wait) / interval))


def history(sfn: Any, execution_arn: str) -> list[dict[str, Any]]:
    """Every event of one execution."""
    events, token = [], None
    while True:
        kwargs = {"executionArn": execution_arn, "maxResults": 1000}
        if token:
            kwargs["nextToken"] = token
        page = sfn.get_execution_history(**kwargs)
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


def measure(events: list[dict[str, Any]]) -> dict[str, float]:
    """Transitions, poll iterations, effective interval and offset from one history."""
    entered = [e for e in events if e["type"].endswith("StateEntered")]
    names = [e["stateEnteredEventDetails"]["name"] for e in entered]
    checks = [
        e["timestamp"]
        for e in entered
        if e["stateEnteredEventDetails"]["name"].endswith("Get Status")
    ]
    job_started = next(
        e["timestamp"] for e in events if e["type"] == "TaskStateExited"
    )  # Run Job returned: the job is running
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(checks)]
    return {
        "transitions": len(entered),
        "iterations": sum(1 for n in names if n.endswith(" Count")),
        "p_eff": statistics.mean(gaps) if gaps else float("nan"),
        "offset": (checks[0] - job_started).total_seconds() if checks else float("nan"),
        "events": len(events),
    }


def report(args: argparse.Namespace, machines: dict, results: dict) -> int:
    """Print the side-by-side table; 0 when every cell matches the formula."""
    print(
        f"\nState transitions per job (tuned: W0={args.initial_wait}s P={args.interval}s;"
        " naive: W0=1s P=1s)\n"
    )
    header = (
        f"{'D (s)':>5} | {'tuned':>5} {'formula':>7} {'adj':>4} {'P_eff':>5}"
        f" | {'1s':>4} {'formula':>7} {'adj':>4} {'P_eff':>5} | {'saved':>5} {'$/1M jobs':>17}"
    )
    print(header)
    print("-" * len(header))
    mismatches = 0
    for duration in args.durations:
        cells = []
        for label, (_, w0, p) in machines.items():
            r = results[(label, duration)]
            if r["status"] != "SUCCEEDED":
                print(f"{label} D={duration}: {r['status']}", file=sys.stderr)
                mismatches += 1
            ideal = formula(duration, w0, p)
            # Latency-adjusted: the first check happens `offset` s after the job
            # started, later ones every P_eff s.
            p_eff = r["p_eff"] if not math.isnan(r["p_eff"]) else p
            adjusted = 6 + 4 * max(0, math.ceil((duration - r["offset"]) / p_eff))
            if abs(r["transitions"] - adjusted) > 4:
                mismatches += 1
            cells.append((r, ideal, adjusted, p_eff))
        (t, ti, ta, tp), (n, ni, na, npf) = cells
        saved = 1 - t["transitions"] / n["transitions"]
        cost = (
            f"{t['transitions'] * PRICE_PER_TRANSITION * 1e6:.0f} vs "
            f"{n['transitions'] * PRICE_PER_TRANSITION * 1e6:.0f}"
        )
        print(
            f"{duration:>5g} | {t['transitions']:>5} {ti:>7} {ta:>4} {tp:>5.2f}"
            f" | {n['transitions']:>4} {ni:>7} {na:>4} {npf:>5.2f} | {saved:>5.0%} {cost:>17}"
        )
    print(
        "\nformula = 6 + 4*ceil((D-W0)/P); adj = same with the measured first-check offset"
        " and P_eff;\nmeasured must equal adj within one loop iteration (4 transitions)."
    )
    print(
        "OK: measured transitions match the formula"
        if not mismatches
        else f"MISMATCH in {mismatches} cell(s)"
    )
    return 0 if not mismatches else 1


def run(args: argparse.Namespace, endpoint: str) -> int:
    """Apply the example, run every job through both machines, report, destroy."""

    def client(service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

    sfn = client("stepfunctions")
    prefix = f"jpbench-{int(time.time()) % 100000}"
    variables = {
        "name_prefix": prefix,
        "initial_wait_seconds": args.initial_wait,
        "poll_interval_seconds": args.interval,
        "timeout_seconds": args.timeout,
        "force_destroy": True,
    }
    scratch = Path(tempfile.mkdtemp(prefix="jpbench-"))
    workspace = Workspace(EXAMPLE, endpoint, scratch, log=lambda line: None)
    naive_arn = None
    try:
        print(f"applying {EXAMPLE.relative_to(ROOT)} ...", file=sys.stderr)
        workspace.init()
        workspace.apply(variables)
        tuned_arn = workspace.outputs()["lambda_state_machine_arn"]
        described = sfn.describe_state_machine(stateMachineArn=tuned_arn)
        definition = json.loads(described["definition"])
        # The anti-pattern: same machine, Wait 1 s and poll every 1 s.
        states = definition["States"]
        states["job Wait Initial"]["Seconds"] = 1
        states["job Wait Poll"]["Seconds"] = 1
        naive_waits = math.ceil(max(args.timeout - 1, 0) / 1) + 1
        states["job Start"]["Parameters"]["max_wait_count"] = naive_waits
        states["job Check"]["Choices"][2]["And"][1]["NumericGreaterThanEquals"] = naive_waits
        naive_arn = sfn.create_state_machine(
            name=f"{prefix}-poll-1s",
            definition=json.dumps(definition),
            roleArn=described["roleArn"],
        )["stateMachineArn"]

        machines = {
            "tuned": (tuned_arn, args.initial_wait, args.interval),
            "1s": (naive_arn, 1, 1),
        }
        started = {
            (label, duration): sfn.start_execution(
                stateMachineArn=arn, input=json.dumps({"job": {"duration_seconds": duration}})
            )["executionArn"]
            for label, (arn, _, _) in machines.items()
            for duration in args.durations
        }
        results: dict[tuple[str, float], dict[str, Any]] = {}
        deadline = time.monotonic() + max(args.durations) * 3 + 60
        while len(results) < len(started) and time.monotonic() < deadline:
            for key, arn in started.items():
                if key in results:
                    continue
                status = sfn.describe_execution(executionArn=arn)["status"]
                if status != "RUNNING":
                    results[key] = {"status": status, **measure(history(sfn, arn))}
            time.sleep(0.5)
        if len(results) < len(started):
            print("some executions did not finish in time", file=sys.stderr)
            return 1

        return report(args, machines, results)
    finally:
        if naive_arn:
            sfn.delete_state_machine(stateMachineArn=naive_arn)
        workspace = Workspace(EXAMPLE, endpoint, scratch, log=lambda line: None)
        try:
            workspace.destroy(variables)
        finally:
            workspace.close()


def main() -> int:
    """Parse arguments, start LocalStack unless --endpoint is given, run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", help="an existing LocalStack (default: start one)")
    parser.add_argument("--durations", type=float, nargs="+", default=[3, 6, 12])
    parser.add_argument("--initial-wait", type=int, default=2, help="tuned W0 (s)")
    parser.add_argument("--interval", type=int, default=3, help="tuned P (s)")
    parser.add_argument("--timeout", type=int, default=60, help="per-loop timeout (s)")
    args = parser.parse_args()
    if args.endpoint:
        return run(args, args.endpoint.rstrip("/"))
    from sfn_patterns_localstack import server

    instance = server.start()
    try:
        return run(args, instance.endpoint)
    finally:
        instance.stop()


if __name__ == "__main__":
    sys.exit(main())
