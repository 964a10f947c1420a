#!/usr/bin/env python
"""Each pattern's cost curve at sizes growing by 10x on one LocalStack, and its capacity on AWS.

One run applies each pattern's example (or module) to one LocalStack and runs it at
each size; one Markdown table per pattern, one column per size, and a last column
with the slope b of each per-item cost (cost per item proportional to n^b, fitted
over the sizes; flat is b = 0). Rows:

* wall time, items per second (first start to last stop, as LocalStack recorded it);
* per item: state transitions (states entered plus task retries, as AWS bills them)
  and history events, from every execution's history; Lambda invocations and
  DynamoDB, SQS and Step Functions requests, counted by LocalStack's request meter
  (harness/.../emulation/meter: what the services served, calls between services
  included; the benchmark's own clients are left out, the demo workload's own
  Lambda and table too); LocalStack's CPU-seconds (its process, every thread, from
  the meter's start to its reading: the emulator's own cost, which the machine's
  other work changes far less than the wall time; its Lambda workers not included);
* peak LocalStack memory (the process; with its Lambda workers in parentheses) and
  peak threads;
* the largest DynamoDB item any write left, in bytes (the meter reads it back);
* latency p50 and p90, whichever fits the pattern (below).

Patterns and what an item is:

* semaphore (examples/semaphore, strategy callback, limit 10, 1-s critical section,
  started at --start-rate per second): an execution; latency = admission after
  release (the (L+k)-th admission minus the k-th release's entry); peak waiting = the
  most executions started and not yet admitted at one moment. fallback_seconds is
  set above the run's length, so no re-check fires: a re-check costs 1 transition
  per fallback_seconds parked;
* sqs-throttle (examples/sqs-throttle, MAX 20, 1-s target): a queued request; the
  starter (its real handler) is invoked back to back, as its schedule would be;
  latency = admission after release (the (MAX+k)-th start minus the k-th stop);
* status-table (sfn_patterns.status_table, 8 worker processes): a task (claim, empty
  body, success); latency = one claim's duration (Tracker.start); plus queries by
  status and time range: items read (DynamoDB's ScannedCount, from the meter) per
  query against the rows returned;
* job-poller (modules/job-poller, completion = event): a job; started at
  --job-start-rate per second (5), each lasting until the size's last has started (n / 5
  + 10 s), so all n are in flight at once; latency = completion after the job's end (its
  own clock); peak concurrency = the most executions running at one moment;
* dag-aggregate (examples/dag-aggregate, strategy dependency, zero-duration tasks):
  a task; latency = a task's start after its last parent's end (run results). Its
  rate is bounded by the DAG as much as by LocalStack, so the table also gives the
  DAG's longest chain, the task executions running at once (their summed lifetimes
  over the wall time; an execution lives on through its report, which frees its slot
  and starts its children, so this may exceed max_concurrency), and the seconds per
  task that would give the wall time if every task took as long (the wall time over
  the ``dependency`` strategy's simulated makespan in equal-length tasks,
  sfn_patterns_cli.dag_aggregate.simulate).

``--size-seconds`` bounds the semaphore's and the status-table's sizes in time (their
largest take hours on one LocalStack): a size still running then is stopped, and its
column holds what finished by then, marked, fitted by no slope. A budget may name
one size (``status-table@100000=900``): the middle sizes then run through.

``--capacity`` prints, per pattern, the highest sustainable rate on AWS from the
measured per-item costs of the largest size run through and AWS's published default quotas
(QUOTAS below: value, unit and page), the quota that binds, and the arithmetic.
``--from-json`` prints the tables and the model of a saved run without LocalStack.

LOCALSTACK_ENDPOINT uses that LocalStack (what is applied is destroyed, unless
``--keep``); otherwise one is started in-process and thrown away.

    .venv/bin/python scripts/bench_scale.py --capacity --json build/scale.json   # hours
    .venv/bin/python scripts/bench_scale.py --size-seconds semaphore@10000=2400 \
        --size-seconds status-table@100000=900
    .venv/bin/python scripts/bench_scale.py --max-size 1000 --only semaphore
    .venv/bin/python scripts/bench_scale.py --smoke     # smallest sizes, every column
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts")]

# --- the plan of one run --------------------------------------------------------------

# The run's order. dag-aggregate goes first, on a LocalStack that holds only its own
# runs: its target is a rate (5,000 tasks against 1,000), and LocalStack's per-call cost
# grows with what the process holds, not with the DAG (after the sqs-throttle's 11,100
# executions and the status-table's 111,000 items its 5,000 ran 20.4 % slower than its
# 1,000, 30e375c; run first, 12 % slower, 9190642, with the same per-task costs). The
# job-poller next: its 1,000 jobs keep 2 cores busy (0.9 CPU-s a job), and its idle
# Lambda environments (1,000 sample jobs') are reaped 10 minutes later, while the
# sqs-throttle runs. The semaphore last: its target is a latency (admission p90 at
# 1,000), which rose over 1 s right after the job-poller's 1,000 (1.20 and 1.30 s,
# against 0.54 to 0.95 s without it before), and its 10,000, stopped for time, leaves
# its waiting executions running (and hand-overs going on).
PATTERNS = ("dag-aggregate", "job-poller", "sqs-throttle", "status-table", "semaphore")
SIZES = {
    "semaphore": (10, 100, 1000, 10000),
    "sqs-throttle": (100, 1000, 10000),
    "status-table": (1000, 10000, 100000),
    "job-poller": (10, 100, 1000),
    "dag-aggregate": (100, 1000, 5000),
}
# --smoke: below the default sizes above, but every column filled: one waiter over
# the limit of 2 (semaphore) and one queued request over MAX 2 (sqs-throttle) give a
# hand-over latency; dag-aggregate's 6 tasks have parents (a start-after-parent latency).
SMOKE_SIZES = {
    "semaphore": (3,),
    "sqs-throttle": (3,),
    "status-table": (10,),
    "job-poller": (2,),
    "dag-aggregate": (6,),
}
LATENCY = {
    "semaphore": "admission after release",
    "sqs-throttle": "admission after release",
    "status-table": "claim",
    "job-poller": "completion after job end",
    "dag-aggregate": "start after last parent's end",
}
STARTED = time.monotonic()
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def progress(message: str) -> None:
    """One line of progress on stderr, with the seconds since the script started."""
    print(f"[{time.monotonic() - STARTED:7.1f} s] {message}", file=sys.stderr, flush=True)


# --- AWS's published default quotas: the one table the capacity model reads ------------


@dataclass(frozen=True)
class Quota:
    """One published default quota (us-east-1, per account and Region unless said)."""

    name: str
    value: float
    unit: str
    url: str


SFN_QUOTAS = "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html"
QUOTAS = {
    "start_execution": Quota(
        "StartExecution refill (bucket 1,300)",
        300,
        "calls/s",
        SFN_QUOTAS + "#service-limits-api-action-throttling-general",
    ),
    "state_transition": Quota(
        "StateTransition refill, Standard (bucket 5,000)",
        5000,
        "transitions/s",
        SFN_QUOTAS + "#service-limits-api-state-throttling",
    ),
    "send_task_success": Quota(
        "SendTaskSuccess refill (bucket 3,000)",
        500,
        "calls/s",
        SFN_QUOTAS + "#service-limits-large-regions",
    ),
    "describe_execution": Quota(
        "DescribeExecution refill (bucket 300)",
        15,
        "calls/s",
        SFN_QUOTAS + "#service-limits-large-regions",
    ),
    "list_executions": Quota(
        "ListExecutions refill (bucket 200)",
        5,
        "calls/s",
        SFN_QUOTAS + "#service-limits-large-regions",
    ),
    "open_executions": Quota(
        "open Standard executions",
        1_000_000,
        "executions",
        SFN_QUOTAS + "#service-limits-accounts",
    ),
    "history": Quota(
        "execution history",
        25_000,
        "events",
        SFN_QUOTAS + "#service-limits-state-machine-executions",
    ),
    "lambda_concurrency": Quota(
        "Lambda concurrent executions",
        1000,
        "executions",
        "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html",
    ),
    "partition_writes": Quota(
        "DynamoDB writes per partition (one item's key lives in one)",
        1000,
        "WCU/s",
        "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
        "bp-partition-key-design.html",
    ),
    "table_writes": Quota(
        "DynamoDB on-demand table writes",
        40_000,
        "WRU/s",
        "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html",
    ),
    "item_size": Quota(
        "DynamoDB item size",
        400 * 1024,
        "bytes",
        "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html",
    ),
    "sqs_fifo": Quota(
        "SQS FIFO calls per API action (per queue, no batching)",
        300,
        "calls/s",
        "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
        "quotas-messages.html",
    ),
    "put_events": Quota(
        "EventBridge PutEvents",
        10_000,
        "requests/s",
        "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html",
    ),
}
# Not a quota: the latency of one AWS API call from a Lambda in the same Region, used
# only where one writer makes its calls one after another (the sqs-throttle starter).
AWS_CALL_SECONDS = 0.02


# --- measurements ------------------------------------------------------------------------


@dataclass
class Column:
    """One pattern at one size."""

    n: int
    wall: float
    transitions: float | None = None  # per item
    events: float | None = None  # per item
    lambda_invocations: float | None = 0.0
    dynamodb: float | None = 0.0
    sqs: float | None = 0.0
    stepfunctions: float | None = 0.0
    cpu: float | None = None  # LocalStack's CPU-seconds per item (None: not measured)
    rss: int = 0
    tree_rss: int = 0
    threads: int = 0
    largest_item: int = 0
    p50: float | None = None
    p90: float | None = None
    extra: dict[str, float] = field(default_factory=dict)  # pattern-specific, per item
    ops: dict[str, float] = field(default_factory=dict)  # "service:Operation" -> per item
    note: str = ""
    # Items finished when the size was stopped for time (--size-seconds); None: all n.
    # Per-item values of such a column are per finished item, and no slope uses it.
    done: int | None = None

    @property
    def finished(self) -> int:
        """The items the per-item values are divided by."""
        return self.n if self.done is None else self.done


@dataclass
class PatternRun:
    """Every size of one pattern that ran, and why the next did not (if it did not)."""

    pattern: str
    setting: str
    columns: list[Column] = field(default_factory=list)
    stopped: str = ""
    skipped: str = ""  # larger sizes not run, a smaller one having run out of time


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(len(ordered) * pct / 100))
    return ordered[rank - 1]


def slope(sizes: list[int], values: list[float | None]) -> float | None:
    """The exponent b of value ∝ n^b, least squares on logs (None if not fittable)."""
    points = [(math.log(n), math.log(v)) for n, v in zip(sizes, values, strict=True) if v and v > 0]
    if len(points) < 2 or len(points) != len(sizes):
        return None
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    var = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var if var else None


def billed_transitions(events: list[dict[str, Any]]) -> int:
    """States entered plus task retries: what AWS bills (bench_job_poller's rule)."""
    types = [e["type"] for e in events]
    entered = sum(1 for t in types if t.endswith("StateEntered"))
    return entered + types.count("TaskScheduled") - types.count("TaskStateEntered")


class Context:
    """The LocalStack of the run, its clients and the meter."""

    def __init__(self, endpoint: str, destroy: bool, scratch: Path) -> None:
        import boto3
        from botocore.config import Config

        self.endpoint = endpoint
        self.destroy = destroy
        self.scratch = scratch
        self.session = boto3.Session(
            aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
        )
        self.config = Config(max_pool_connections=32, retries={"mode": "standard"})
        self.deployments: list[Deployment] = []
        self.teardown_errors: list[str] = []

    def client(self, service: str) -> Any:
        """A boto3 client for LocalStack (the account's own keys: never metered as a role)."""
        return self.session.client(service, endpoint_url=self.endpoint, config=self.config)

    def deployment(self, config_dir: Path, tag: str, cleanup: list[Path] | None = None) -> Any:
        """A deployment of ``config_dir`` (its own workspace), torn down at the end.

        Tracked from the start, so a failed apply is destroyed too.
        """
        from sfn_patterns_localstack.terraform.workspace import Workspace

        workspace = Workspace(
            config_dir,
            self.endpoint,
            Path(tempfile.mkdtemp(prefix=f"scale-{tag}-", dir=self.scratch)),
            log=lambda line: None,
        )
        deployment = Deployment(workspace, cleanup=list(cleanup or []))
        self.deployments.append(deployment)
        return deployment

    def meter_start(self) -> None:
        """Reset LocalStack's request meter and switch it on."""
        from sfn_patterns_localstack.emulation.meter import client as meter

        meter.start(self.endpoint)

    def meter_read(self) -> dict[str, Any]:
        """The meter's counters now."""
        from sfn_patterns_localstack.emulation.meter import client as meter

        return meter.read(self.endpoint)

    def meter_stop(self) -> None:
        """Switch the meter off."""
        from sfn_patterns_localstack.emulation.meter import client as meter

        meter.stop(self.endpoint)


def metered(
    column: Column,
    document: dict[str, Any],
    *,
    roles_only: bool = True,
    exclude: tuple[str, ...] = (),
) -> None:
    """Fill a column's request, memory and item-size cells from a meter document."""
    from sfn_patterns_localstack.emulation.meter import client as meter

    def per_item(service: str, operation: str | None = None, roles: bool = roles_only) -> float:
        calls = meter.calls(
            document, service, operation, roles_only=roles, exclude_resources=exclude
        )
        return calls / column.finished

    # Lambda invocations: whoever invoked (a task's role, EventBridge, or the benchmark
    # standing in for a schedule), the demo workload's own function left out.
    column.lambda_invocations = per_item("lambda", "Invoke", roles=False)
    column.dynamodb = per_item("dynamodb")
    column.sqs = per_item("sqs")
    column.stepfunctions = per_item("stepfunctions")
    for entry in document["requests"]:
        if roles_only and entry["caller"] == "account" and entry["service"] != "lambda":
            continue
        if any(entry["resource"].endswith(suffix) for suffix in exclude):
            continue
        key = f"{entry['service']}:{entry['operation']}"
        column.ops[key] = column.ops.get(key, 0.0) + entry["calls"] / column.finished
    if "cpu_seconds" in document:
        column.cpu = document["cpu_seconds"] / column.finished
    column.rss = document["peak_rss_bytes"]
    column.tree_rss = document["peak_tree_rss_bytes"]
    column.threads = document["peak_threads"]
    column.largest_item = max(
        (
            size
            for table, size in document["largest_item_bytes"].items()
            if not any(table.endswith(suffix) for suffix in exclude)
        ),
        default=0,
    )


def hot_wcu(document: dict[str, Any], table: str, n: int) -> float:
    """Write capacity units per item that land on ``table``, at its largest item's size.

    DynamoDB charges a write 1 WCU per started KB of the item (2 inside a transaction),
    attempted writes whose condition fails included. An upper bound when the table's
    items differ in size: every write is charged at the largest.
    """
    writes = document["writes"].get(table, {"items": 0, "transactional": 0})
    kilobytes = max(1, math.ceil(document["largest_item_bytes"].get(table, 0) / 1024))
    return (writes["items"] + writes["transactional"]) * kilobytes / n


def read_histories(ctx: Context, arns: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every execution's history, four at a time."""
    from sfn_patterns_localstack.executions import history

    sfn = ctx.client("stepfunctions")
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(arns, pool.map(lambda arn: history(sfn, arn), arns), strict=True))


def wait_done(
    ctx: Context, arns: list[str], timeout: float, partial: bool = False
) -> dict[str, dict[str, Any]]:
    """Describe every execution once all stopped; exits if one is still running or failed.

    ``partial``: one still running at the timeout is no error (the size's time is up).
    """
    from sfn_patterns_localstack.executions import wait_stopped

    done = wait_stopped(ctx.client("stepfunctions"), arns, timeout=timeout, interval=1.0)
    if len(done) < len(arns) and not partial:
        raise RuntimeError(
            f"{len(arns) - len(done)} of {len(arns)} still running after {timeout} s"
        )
    bad = [d for d in done.values() if d["status"] != "SUCCEEDED"]
    if bad:
        raise RuntimeError(failure_summary(bad, len(arns)))
    return done


def failure_summary(bad: list[dict[str, Any]], total: int) -> str:
    """How many executions ended how, and one cause of each kind (not one line each).

    The error and cause are each execution's own, as DescribeExecution gives them, so
    a failure in a loaded run says what failed; one cause per kind keeps 656 failures
    to a few lines (the job-poller's 1,000 jobs once printed 110 KB).
    """
    kinds: dict[str, list[dict[str, Any]]] = {}
    for described in bad:
        kinds.setdefault(f"{described['status']} {described.get('error', '')}".strip(), []).append(
            described
        )
    parts = [
        f"{len(ended):,} {kind} (e.g. {ended[0].get('cause', '')[:200]})"
        for kind, ended in sorted(kinds.items(), key=lambda kv: -len(kv[1]))
    ]
    return f"{len(bad):,} of {total:,} executions did not succeed: " + "; ".join(parts)


def start_all(
    ctx: Context,
    machine: str,
    inputs: Iterable[dict[str, Any]],
    rate: float = 0.0,
    until: float | None = None,
) -> list[str]:
    """Start one execution per input, eight calls at a time; their ARNs in input order.

    ``until`` (a ``time.monotonic()`` value): no start after it; the ARNs of those
    started before.

    ``rate`` > 0 spaces the starts: the i-th is sent no earlier than i / rate seconds
    after the first. Why: every start invokes a Lambda at once, and a burst of
    thousands asks LocalStack for that many Lambda environments (local processes) at
    once, which 2 cores do not start before LocalStack's start-up timeout; AWS
    admits starts at 300 per second after a bucket of 1,300 (QUOTAS), so any rate up
    to that is one AWS could see.
    """
    sfn = ctx.client("stepfunctions")
    first = time.monotonic()

    def start(numbered: tuple[int, dict[str, Any]]) -> str | None:
        i, document = numbered
        if rate > 0:
            time.sleep(max(0.0, first + i / rate - time.monotonic()))
        if until is not None and time.monotonic() >= until:
            return None
        return sfn.start_execution(stateMachineArn=machine, input=json.dumps(document))[
            "executionArn"
        ]

    with ThreadPoolExecutor(8) as pool:
        return [arn for arn in pool.map(start, enumerate(inputs)) if arn is not None]


def span(described: Iterable[dict[str, Any]]) -> float:
    """Seconds from the first start to the last stop."""
    described = list(described)
    first = min(d["startDate"] for d in described)
    last = max(d["stopDate"] for d in described)
    return (last - first).total_seconds()


def handover_delays(admitted: list[float], released: list[float], limit: int) -> list[float]:
    """The (limit+k)-th admission minus the k-th release, for every admission after one."""
    admitted, released = sorted(admitted), sorted(released)
    return [admitted[limit + k] - released[k] for k in range(len(admitted) - limit)]


def set_latency(column: Column, delays: list[float]) -> None:
    """p50 and p90 of a list of delays (left empty when nothing waited)."""
    if delays:
        column.p50 = percentile(delays, 50)
        column.p90 = percentile(delays, 90)


# --- semaphore (callback) --------------------------------------------------------------


@dataclass
class Deployment:
    """What one pattern applied: destroyed at the end (variables kept for the destroy)."""

    workspace: Any = None
    variables: dict[str, Any] | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    cleanup: list[Path] = field(default_factory=list)

    def apply(self, variables: dict[str, Any]) -> None:
        """Apply ``variables`` (init first, once) and read the outputs."""
        if self.variables is None:
            self.workspace.init()
        from bench_dag_strategies import apply  # a re-apply (another size) skips the refresh

        self.variables = variables  # before the apply: a half-done apply is destroyed too
        apply(self.workspace, variables)
        self.outputs = self.workspace.outputs()


def alarm_variables(args: argparse.Namespace) -> dict[str, Any]:
    """The modules' CloudWatch alarms: kept at full size, left out at ``--smoke``.

    No row reads an alarm; a smoke run applies and destroys fewer resources without.
    """
    return {"alarms": {"create": False}} if args.smoke else {}


def semaphore_setting(args: argparse.Namespace) -> str:
    """The semaphore's parameters, as the table's title says them."""
    return f"strategy callback, limit {args.limit}, {args.hold:g}-s critical section, " + arrival(
        args.start_rate
    )


def arrival(rate: float) -> str:
    """How the executions of a semaphore or job-poller load arrive (its start rate)."""
    if rate > 0:
        return f"started at {rate:g} per second"
    return "all started at once"


def deploy_semaphore(ctx: Context, args: argparse.Namespace, sizes: list[int]) -> Deployment:
    """Apply examples/semaphore with strategy callback."""
    deployment = ctx.deployment(REPO / "examples" / "semaphore", "sem")
    prefix = f"scs-{uuid.uuid4().hex[:5]}"
    # Longer than any run: no re-check fires, so a column shows the hand-over's cost.
    horizon = 86400
    deployment.extra["demo"] = (f"{prefix}-worker", f"{prefix}-records")
    progress("semaphore: terraform apply")
    deployment.apply(
        {
            "name_prefix": prefix,
            "strategy": "callback",
            "max_concurrency": args.limit,
            "fallback_seconds": horizon,
            "acquire_timeout_seconds": horizon,
            # The reconciler would only find nothing to do; keep it quiet.
            "reconciler_schedule_expression": "rate(1 day)",
            **alarm_variables(args),
        }
    )
    return deployment


# LocalStack (4.9.2 and 4.14.0 alike) holds three threads per parked execution: the
# execution's own thread,
# the program's worker thread and the Task state's timeout thread (the 1,000 run: 919
# waiting, 2,913 threads). A Linux thread takes about three memory maps (its stack, the
# stack's guard page, its malloc arena's): with the default vm.max_map_count of 65,530 a
# process on a 2-core, 24 GiB machine started 21,809 threads and no more.
THREADS_PER_PARKED = 3
MAPS_PER_THREAD = 3
THREAD_MARGIN = 2000  # LocalStack's own threads, the Lambda workers', the benchmark's
# How to raise each limit to a number of threads (the limits are Linux's, read below).
RAISE = {
    "vm.max_map_count": lambda threads: (
        f"sudo sysctl -w vm.max_map_count={threads * MAPS_PER_THREAD}"
    ),
    "kernel.pid_max": lambda threads: f"sudo sysctl -w kernel.pid_max={threads}",
    "ulimit -u": lambda threads: f"ulimit -u {threads}",
}


def thread_room(parked: int, limits: dict[str, int] | None = None) -> str:
    """Why this machine cannot hold ``parked`` parked executions on LocalStack ('' if it can).

    Asked before a size starts, so a size the machine cannot hold stops at once with
    the limit that binds and how to raise it, not after half an hour with "can't start
    new thread" from deep inside LocalStack's interpreter.
    """
    need = parked * THREADS_PER_PARKED + THREAD_MARGIN
    limits = system_thread_limits() if limits is None else limits
    for name, threads in sorted(limits.items(), key=lambda kv: kv[1]):
        if threads < need:
            return (
                f"LocalStack would hold about {need:,} threads ({THREADS_PER_PARKED} per "
                f"parked execution); {name} allows about {threads:,}: raise it "
                f"({RAISE[name](need)}) or run a smaller size"
            )
    return ""


def system_thread_limits() -> dict[str, int]:
    """Threads each of Linux's limits allows, as this process reads them (none elsewhere)."""
    import resource

    limits: dict[str, int] = {}
    for name, path, per_thread in (
        ("vm.max_map_count", "/proc/sys/vm/max_map_count", MAPS_PER_THREAD),
        ("kernel.pid_max", "/proc/sys/kernel/pid_max", 1),
    ):
        with contextlib.suppress(OSError, ValueError):
            limits[name] = int(Path(path).read_text()) // per_thread
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if soft != resource.RLIM_INFINITY:
        limits["ulimit -u"] = soft
    return limits


def measure_semaphore(
    ctx: Context, deployment: Deployment, n: int, args: argparse.Namespace
) -> Column:
    """N executions at once through the limit."""
    return semaphore_size(
        ctx,
        deployment.outputs,
        n,
        limit=args.limit,
        hold=args.hold,
        demo=deployment.extra["demo"],
        rate=args.start_rate,
        budget=size_budget(args, "semaphore", n),
    )


def semaphore_size(
    ctx: Context,
    outputs: dict[str, Any],
    n: int,
    *,
    limit: int,
    hold: float,
    demo: tuple[str, ...],
    rate: float = 0.0,
    budget: float | None = None,
) -> Column:
    """One load of n executions (stopped ``budget`` seconds after the first start)."""
    from sfn_patterns_localstack.executions import peak_overlap

    room = thread_room(n)  # every execution may be parked at once
    if room:
        raise RuntimeError(room)
    machine = outputs["embedded_state_machine_arn"]
    ctx.meter_start()
    progress(f"semaphore: starting {n} executions")
    until = None if budget is None else time.monotonic() + budget
    arns = start_all(
        ctx, machine, ({"sleep_seconds": hold, "n": i} for i in range(n)), rate=rate, until=until
    )
    timeout = 600 + n * hold / limit * 6
    if until is not None:
        timeout = min(timeout, max(0.0, until - time.monotonic()))
    described = wait_done(ctx, arns, timeout, partial=until is not None)
    document = ctx.meter_read()
    running: list[dict[str, Any]] = []
    stopped_at = datetime.now(UTC)
    partial = len(described) < n
    if partial:  # stopped for time: what finished, and what still waits (this size's)
        # Running first: one that ends between the two lists is then in both, not neither.
        mine = set(arns)
        waiting = {a: e for a, e in listed(ctx, machine, "RUNNING").items() if a in mine}
        described = {a: e for a, e in listed(ctx, machine, "SUCCEEDED").items() if a in mine}
        running = [e for a, e in waiting.items() if a not in described]
        ended = len(arns) - len(running) - len(described)
        if ended:
            raise RuntimeError(f"{ended} of {len(arns)} executions ended other than SUCCEEDED")
        progress(f"semaphore: stopped for time, {len(described)} of {n} succeeded")
    else:
        progress(f"semaphore: {n} succeeded; reading histories")
    histories = read_histories(ctx, list(described))
    column = Column(n=n, wall=span(described.values()))
    if partial:  # the size's time, first start to the stop
        first = min(e["startDate"] for e in [*described.values(), *running])
        column.wall = (stopped_at - first).total_seconds()
        column.done = len(described)
    metered(column, document, exclude=demo)
    admitted, released, waits = [], [], []
    for events in histories.values():
        entered = {
            e["stateEnteredEventDetails"]["name"]: e["timestamp"].timestamp()
            for e in events
            if "stateEnteredEventDetails" in e
        }
        admitted.append(entered["Critical section"])
        released.append(entered["Semaphore: Release"])
        waits.append((events[0]["timestamp"].timestamp(), entered["Critical section"]))
    column.transitions = statistics.fmean(billed_transitions(h) for h in histories.values())
    column.events = statistics.fmean(len(h) for h in histories.values())
    set_latency(column, handover_delays(admitted, released, limit))
    # Most executions between entering the critical section and entering Release.
    column.extra["peak concurrency"] = peak_overlap(list(zip(admitted, released, strict=True)))
    # Every acquire after a wait and every hand-over writes the one lock item.
    column.extra["lock item WCU / item"] = hot_wcu(document, outputs["lock_table_name"], n)
    if partial:
        partial_semaphore(column, running, limit, len(arns))
        # Started and not yet through at the stop: parked, or one of the `limit` inside.
        waits += [(r["startDate"].timestamp(), stopped_at.timestamp()) for r in running]
    # Started and not yet admitted (parked on a token, or on their way to it) at once.
    column.extra["peak waiting"] = peak_overlap(waits)
    return column


def partial_semaphore(
    column: Column, running: list[dict[str, Any]], limit: int, started: int
) -> None:
    """Mark a semaphore size stopped for time: its finished executions only.

    The requests metered so far include the starts and acquires of executions still
    waiting, so per finished execution they would read high: those cells are blanked,
    and the transitions, events and latencies come from the finished ones' histories.
    """
    column.lambda_invocations = column.dynamodb = column.sqs = column.stepfunctions = None
    column.ops = {}
    column.extra.pop("lock item WCU / item", None)
    column.extra["running when stopped"] = len(running)
    column.note = (
        f"stopped for time after {column.wall:,.0f} s: {started:,} of {column.n:,} "
        f"started, {column.done:,} succeeded, none failed, {len(running):,} still running "
        f"(at most {limit} of them inside the critical section, the rest parked on a "
        "task token); peak waiting counts those running at the stop as waiting until it"
    )


def listed(ctx: Context, machine: str, status: str) -> dict[str, dict[str, Any]]:
    """One state machine's executions in one status, by ARN (ListExecutions' items)."""
    pages = ctx.client("stepfunctions").get_paginator("list_executions")
    return {
        e["executionArn"]: e
        for page in pages.paginate(stateMachineArn=machine, statusFilter=status)
        for e in page["executions"]
    }


def teardown(ctx: Context, deployment: Deployment | None) -> None:
    """Destroy what was applied (on a LocalStack this script did not start), clean up."""
    if deployment is None or deployment.workspace is None:
        return
    from sfn_patterns_localstack.terraform.workspace import TerraformError

    workspace = deployment.workspace
    try:
        if ctx.destroy and deployment.variables is not None:
            progress(f"destroying {workspace.config_dir.name}")
            try:
                workspace.destroy(deployment.variables)
            except TerraformError as error:
                # Seen when the shared provider cache was rebuilt during a run (the lock
                # file's checksum no longer matches): init again, then destroy.
                progress(f"destroy failed ({str(error)[-200:]!r}); init -upgrade and again")
                workspace.run("init", "-input=false", "-no-color", "-upgrade")
                workspace.destroy(deployment.variables)
    except Exception as error:  # reported; the run then exits 1
        ctx.teardown_errors.append(f"{workspace.config_dir.name}: {error}")
        progress(f"teardown of {workspace.config_dir.name} failed: {error}")
    finally:
        workspace.close()
        shutil.rmtree(workspace.scratch_dir, ignore_errors=True)
        for path in deployment.cleanup:
            shutil.rmtree(path, ignore_errors=True)


# --- sqs-throttle ------------------------------------------------------------------------


def throttle_setting(args: argparse.Namespace) -> str:
    """The sqs-throttle's parameters."""
    return (
        f"MAX {args.max_running}, {max(1, round(args.hold))}-s target, starter re-checks "
        "every second, one message group"
    )


def deploy_throttle(ctx: Context, args: argparse.Namespace, sizes: list[int]) -> Deployment:
    """Apply examples/sqs-throttle with its schedule off (the benchmark invokes the starter)."""
    deployment = ctx.deployment(REPO / "examples" / "sqs-throttle", "sqs")
    progress("sqs-throttle: terraform apply")
    deployment.apply(
        {
            "name_prefix": f"sct-{uuid.uuid4().hex[:5]}",
            "max_concurrency": args.max_running,
            "schedule_expression": "rate(1 day)",
            "schedule_enabled": False,
            "max_seconds_per_run": 60,
            "max_messages_per_run": 10_000,
            "recheck_seconds": 1,
            **alarm_variables(args),
        }
    )
    return deployment


def measure_throttle(
    ctx: Context, deployment: Deployment, n: int, args: argparse.Namespace
) -> Column:
    """N queued requests, the starter invoked back to back."""
    return throttle_size(ctx, deployment.outputs, n, args.max_running, max(1, round(args.hold)))


def throttle_size(ctx: Context, outputs: dict[str, Any], n: int, limit: int, hold: int) -> Column:
    """Enqueue n requests, run the starter until every one started, measure."""
    from sfn_patterns.sqs_throttle.producer import enqueue

    sqs, lam = ctx.client("sqs"), ctx.client("lambda")
    run_id = uuid.uuid4().hex[:6]
    ids = [f"scale-{run_id}-{i}" for i in range(n)]
    progress(f"sqs-throttle: enqueueing {n} requests")
    queued_at = time.time()
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda rid: enqueue(
                    outputs["queue_url"],
                    {"seconds": hold, "request_id": rid},
                    request_id=rid,
                    client=sqs,
                ),
                ids,
            )
        )
    ctx.meter_start()  # the requests wait as messages; the meter counts the starter's work
    runs = 0
    deadline = time.monotonic() + 600 + n * hold / limit * 6
    while time.monotonic() < deadline:
        attributes = sqs.get_queue_attributes(
            QueueUrl=outputs["queue_url"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        if (
            runs
            and attributes["ApproximateNumberOfMessages"]
            == "0"
            == (attributes["ApproximateNumberOfMessagesNotVisible"])
        ):
            break
        response = lam.invoke(
            FunctionName=outputs["starter_function_name"],
            Payload=json.dumps({"max_seconds": 50}).encode(),
        )
        runs += 1
        report = json.loads(response["Payload"].read())
        if "FunctionError" in response:
            raise RuntimeError(f"starter failed: {report}")
        progress(f"sqs-throttle: starter run {runs} started {len(report['started'])}")
    sfn = ctx.client("stepfunctions")
    arns = [
        e["executionArn"]
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=outputs["target_state_machine_arn"]
        )
        for e in page["executions"]
        if e["startDate"].timestamp() >= queued_at - 1
    ]
    described = wait_done(ctx, arns, 300)
    document = ctx.meter_read()
    if len(described) != n:
        raise RuntimeError(f"{len(described)} of {n} requests started")
    histories = read_histories(ctx, arns)
    column = Column(n=n, wall=span(described.values()))
    metered(column, document)
    column.extra["starter invocations"] = runs / n
    column.transitions = statistics.fmean(billed_transitions(h) for h in histories.values())
    column.events = statistics.fmean(len(h) for h in histories.values())
    starts = [d["startDate"].timestamp() for d in described.values()]
    stops = [d["stopDate"].timestamp() for d in described.values()]
    set_latency(column, handover_delays(starts, stops, limit))
    from sfn_patterns_localstack.executions import peak_overlap

    column.extra["peak concurrency"] = peak_overlap(list(zip(starts, stops, strict=True)))
    return column


# --- status-table ------------------------------------------------------------------------


def status_setting(args: argparse.Namespace) -> str:
    """The status-table's parameters."""
    return (
        f"{args.workers} worker processes, each: claimable(limit 50) page, claim, empty "
        "body, success"
    )


def deploy_status(ctx: Context, args: argparse.Namespace, sizes: list[int]) -> None:
    """Nothing to apply: each size gets a table of its own."""
    return None


def measure_status(ctx: Context, deployment: None, n: int, args: argparse.Namespace) -> Column:
    """N tasks worked off by worker processes, then queried; the table is deleted after."""
    table = f"scale-status-{uuid.uuid4().hex[:6]}"
    try:
        return status_size(ctx, table, n, args.workers, size_budget(args, "status-table", n))
    finally:
        with contextlib.suppress(Exception):  # never created
            ctx.client("dynamodb").delete_table(TableName=table)


def status_size(
    ctx: Context, table: str, n: int, workers: int, budget: float | None = None
) -> Column:
    """Create n tasks, work them off (for ``budget`` seconds at most), then query.

    Stopped for time, the queries still run against the table of n tasks: rows read
    per status query against table size is what this size is for.
    """
    from sfn_patterns.status_table import Status, Tracker
    from sfn_patterns_localstack.emulation.meter import client as meter

    tracker = Tracker(table, "scale", host=ctx.endpoint, region="us-east-1")
    tracker.create_table_if_not_exists()
    progress(f"status-table: creating {n} tasks")
    ids = [f"task-{i:06d}" for i in range(n)]
    chunks = [ids[i : i + 1000] for i in range(0, n, 1000)]
    with ThreadPoolExecutor(4) as pool:  # one Tracker (connection) per chunk
        list(
            pool.map(
                lambda chunk: Tracker(
                    table, "scale", host=ctx.endpoint, region="us-east-1"
                ).create_tasks(chunk),
                chunks,
            )
        )
    reports, started, wall = work_off(ctx, table, workers, 600 + n if budget is None else budget)
    done = sum(r["done"] for r in reports)
    if done != n and not (budget is not None and any(r["stopped"] for r in reports)):
        raise RuntimeError(f"{done} completions for {n} tasks")
    document = ctx.meter_read()
    column = Column(n=n, wall=wall, done=done if done != n else None)
    if column.done is not None:
        column.note = (
            f"stopped for time after {wall:,.0f} s: {done:,} of {n:,} tasks worked off; "
            f"the queries ran against all {n:,}"
        )
        progress(f"status-table: stopped for time, {done} of {n} done")
    metered(column, document, roles_only=False)
    set_latency(column, [s for r in reports for s in r["claims"]])
    column.extra["table WCU / item"] = hot_wcu(document, table, column.finished)
    claimable = meter.items_read(document, "Query", table)
    column.extra["items read per claimable page"] = (
        claimable["scanned"] / claimable["pages"] if claimable["pages"] else 0
    )
    # Queries by status and time range, against the workers' own clocks: successes
    # since the 100th newest task's body ended (about 100 rows), and a status no task
    # is in (no rows).
    finished = sorted([started] + [t for r in reports for t in r["finished"]])
    since = datetime.fromtimestamp(finished[-min(100, len(finished))] - 0.001, UTC)
    before = meter.items_read(ctx.meter_read(), "Query", table)
    rows = tracker.query(Status.SUCCEEDED, since=since)
    empty = tracker.query(Status.FAILED, since=since - timedelta(days=1))
    after = meter.items_read(ctx.meter_read(), "Query", table)
    column.extra["status query: rows returned"] = len(rows)
    column.extra["status query: items read"] = after["scanned"] - before["scanned"]
    column.extra["empty status query: rows"] = len(empty)
    return column


def work_off(
    ctx: Context, table: str, workers: int, limit: float
) -> tuple[list[dict[str, Any]], float, float]:
    """Worker processes claim the table's tasks until none is left, or ``limit`` s passed.

    Their reports, the start (epoch seconds) and the wall time. At the limit each
    worker is told to stop after the page in hand (its report then says "stopped").
    """
    ready = Path(tempfile.mkdtemp(prefix="status-", dir=ctx.scratch))
    env = {**os.environ, **AWS_ENV}
    command = [sys.executable, __file__, "--worker", table, "--endpoint", ctx.endpoint]
    procs = [
        subprocess.Popen(
            [*command, "--ready-dir", str(ready)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(workers)
    ]
    deadline = time.monotonic() + 120
    while len(list(ready.glob("ready-*"))) < workers:
        if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
            for p in procs:
                p.kill()
            raise RuntimeError("status-table workers did not start")
        time.sleep(0.05)
    ctx.meter_start()
    started = time.time()
    (ready / "go").touch()
    while any(p.poll() is None for p in procs) and time.time() - started < limit:
        time.sleep(0.5)
    if any(p.poll() is None for p in procs):
        (ready / "stop").touch()
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    wall = time.time() - started
    shutil.rmtree(ready, ignore_errors=True)
    if any(p.returncode for p in procs):
        raise RuntimeError("a status-table worker failed")
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs], started, wall


def status_worker(table: str, endpoint: str, ready: Path) -> None:
    """A worker process: claim pages of claimable tasks until none is left; print a report."""
    from sfn_patterns.status_table import StaleAttemptError, TaskSkippedError, Tracker

    tracker = Tracker(table, "scale", host=endpoint, region="us-east-1", lease_seconds=600)
    (ready / f"ready-{os.getpid()}").touch()
    while not (ready / "go").exists():
        time.sleep(0.01)
    claims: list[float] = []
    finished: list[float] = []
    done = skipped = 0
    while not (stopped := (ready / "stop").exists()):
        page = tracker.claimable(limit=50)
        if not page:
            break
        random.shuffle(page)
        for record in page:
            began = time.perf_counter()
            try:
                attempt = tracker.start(record.task_id)
            except TaskSkippedError:
                skipped += 1
                continue
            claims.append(time.perf_counter() - began)
            try:
                with attempt:
                    # Before the success write, whose update time is therefore later.
                    ending = time.time()
            except StaleAttemptError:
                continue
            done += 1
            finished.append(ending)
    report = {"done": done, "skipped": skipped, "claims": claims, "finished": finished}
    print(json.dumps({**report, "stopped": stopped}))


# --- job-poller (event completion) -------------------------------------------------------

JOB_POLLER_CONFIG = """
terraform {
  required_version = ">= 1.9"
  required_providers {
    aws   = { source = "hashicorp/aws", version = ">= 6.0" }
    local = { source = "hashicorp/local", version = ">= 2.7" }
  }
}

provider "aws" {
  region = "us-east-1"
}

variable "name_prefix" { type = string }
variable "fallback" { type = number }
variable "timeout" { type = number }
variable "alarms" {
  type    = object({ create = bool })
  default = { create = true }
}

module "event" {
  source           = "MODULE"
  name             = "${var.name_prefix}-event"
  completion       = "event"
  alarms           = var.alarms
  fallback_seconds = var.fallback
  timeout_seconds  = var.timeout
  metadata_store   = "dynamodb"
}

output "poller" {
  value = {
    arn   = module.event.state_machine_arn
    table = module.event.metadata_table_name
  }
}
"""


JOB_FALLBACK = 3600
# Seconds every job of a size is in flight together (job_seconds).
JOB_OVERLAP_SECONDS = 10


def job_poller_setting(args: argparse.Namespace) -> str:
    """The job-poller's parameters."""
    length = (
        f"sample job of {args.job_seconds:g} s"
        if args.job_seconds is not None
        else f"each size's sample job lasts n / {args.job_start_rate:g} + "
        f"{JOB_OVERLAP_SECONDS} s, so all n run at once"
    )
    return (
        f"completion = event, {length}, {arrival(args.job_start_rate)}, "
        f"fallback_seconds {JOB_FALLBACK} (none fires), account Lambda concurrency "
        f"{args.lambda_concurrency:,} (the sample jobs are Lambdas)"
    )


def job_seconds(args: argparse.Namespace, n: int) -> float:
    """How long each of n jobs runs: --job-seconds, or long enough for all n to overlap.

    The last job starts n / rate seconds after the first; a job that lasts that long
    plus JOB_OVERLAP_SECONDS is still running then, so the size has n jobs in flight.
    """
    if args.job_seconds is not None:
        return args.job_seconds
    # Over the sample job's 600 s, its Run Job fails and says so (the size's error).
    return (n / args.job_start_rate if args.job_start_rate > 0 else 0) + JOB_OVERLAP_SECONDS


def deploy_job_poller(ctx: Context, args: argparse.Namespace, sizes: list[int]) -> Deployment:
    """Apply modules/job-poller with completion = event (the sample job, DynamoDB store)."""
    config = Path(tempfile.mkdtemp(prefix="scale-jp-config-", dir=ctx.scratch))
    module = os.path.relpath(REPO / "modules" / "job-poller", config)
    (config / "main.tf").write_text(JOB_POLLER_CONFIG.replace("MODULE", module))
    deployment = ctx.deployment(config, "jp", cleanup=[config])
    progress("job-poller: terraform apply")
    deployment.apply(
        {
            "name_prefix": f"scj-{uuid.uuid4().hex[:5]}",
            "fallback": JOB_FALLBACK,
            "timeout": 7200,
            **alarm_variables(args),
        }
    )
    return deployment


def measure_job_poller(
    ctx: Context, deployment: Deployment, n: int, args: argparse.Namespace
) -> Column:
    """N jobs at once."""
    return job_poller_size(
        ctx, deployment.outputs["poller"], n, job_seconds(args, n), rate=args.job_start_rate
    )


def job_poller_size(
    ctx: Context, poller: dict[str, Any], n: int, duration: float, rate: float = 0.0
) -> Column:
    """Run n jobs (at ``rate`` starts per second); completion latency from each job's end."""
    from bench_job_poller import job_end

    from sfn_patterns_localstack.executions import peak_overlap

    ctx.meter_start()
    progress(f"job-poller: starting {n} jobs")
    arns = start_all(
        ctx, poller["arn"], ({"job": {"duration_seconds": duration}} for _ in range(n)), rate
    )
    described = wait_done(ctx, arns, 600 + n * 2)
    document = ctx.meter_read()
    histories = read_histories(ctx, arns)
    column = Column(n=n, wall=span(described.values()))
    metered(column, document)
    column.transitions = statistics.fmean(billed_transitions(h) for h in histories.values())
    column.events = statistics.fmean(len(h) for h in histories.values())
    ddb = ctx.client("dynamodb")
    delays = []
    for arn, events in histories.items():
        moved_on = [
            e["timestamp"].timestamp()
            for e in events
            if e["type"] == "ChoiceStateEntered"
            and e["stateEnteredEventDetails"]["name"].endswith(" Check")
        ][-1]
        delays.append(moved_on - job_end(ddb, poller["table"], arn))
    set_latency(column, delays)
    # Executions running at once (each from its start to its stop): the jobs in flight.
    column.extra["peak concurrency"] = peak_overlap(
        [(d["startDate"].timestamp(), d["stopDate"].timestamp()) for d in described.values()]
    )
    column.extra["fallback checks"] = statistics.fmean(
        [e["type"] for e in h].count("TaskTimedOut") for h in histories.values()
    )
    return column


# --- dag-aggregate (dependency) ----------------------------------------------------------


def dag_setting(args: argparse.Namespace) -> str:
    """The dag-aggregate's parameters."""
    return (
        f"strategy dependency, max_concurrency {args.dag_concurrency}, zero-duration "
        "statements, up to 3 parents each (seed 0)"
    )


def deploy_dag(ctx: Context, args: argparse.Namespace, sizes: list[int]) -> Deployment:
    """Apply examples/dag-aggregate with the first size's generated DAG."""
    deployment = ctx.deployment(REPO / "examples" / "dag-aggregate", "dag")
    dag_apply(ctx, deployment, sizes[0], args)
    return deployment


def measure_dag(ctx: Context, deployment: Deployment, n: int, args: argparse.Namespace) -> Column:
    """One run of an n-task DAG (applied first unless it is the one applied)."""
    if deployment.extra.get("n") != n:
        dag_apply(ctx, deployment, n, args)
    return dag_size(ctx, deployment, n, args.dag_concurrency)


def dag_apply(ctx: Context, deployment: Deployment, n: int, args: argparse.Namespace) -> None:
    """Generate an n-task DAG, create its tables in a new workgroup, apply it."""
    from bench_dag_strategies import run_sql, scale_sql

    from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables

    sql_dir = Path(tempfile.mkdtemp(prefix=f"dag-{n}-", dir=ctx.scratch))
    deployment.cleanup.append(sql_dir)
    ddl = scale_sql(sql_dir, n, 0)
    workgroup = f"wg-scale-{uuid.uuid4().hex[:6]}"
    redshift = ctx.client("redshift-data")
    run_sql(redshift, workgroup, "CREATE SCHEMA agg")
    for i in range(0, len(ddl), 40):
        sid = redshift.batch_execute_statement(
            WorkgroupName=workgroup, Database="dev", Sqls=ddl[i : i + 40]
        )["Id"]
        while redshift.describe_statement(Id=sid)["Status"] not in ("FINISHED", "FAILED"):
            time.sleep(0.05)
    progress(f"dag-aggregate: terraform apply ({n} tasks)")
    deployment.apply(
        {
            "name_prefix": f"scd-{uuid.uuid4().hex[:4]}"
            if deployment.variables is None
            else deployment.variables["name_prefix"],
            "strategy": "dependency",
            # The workgroup's name and the id its ARN ends in, as the emulated Data API
            # authorizes it (IAM is enforced).
            **workgroup_variables(workgroup),
            "max_concurrency": args.dag_concurrency,
            "sql_dir": str(sql_dir),
            **alarm_variables(args),
        }
    )
    deployment.extra["n"] = n


def dag_size(ctx: Context, deployment: Deployment, n: int, max_concurrency: int) -> Column:
    """Run the applied n-task DAG once and measure it."""
    from sfn_patterns_cli.dag_aggregate import runs
    from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

    parents = random_dag(n, seed=0, max_parents=3, window=60)  # scale_sql's DAG
    outputs = deployment.outputs
    sfn = ctx.client("stepfunctions")
    run_id = f"scale-{uuid.uuid4().hex[:6]}"
    ctx.meter_start()
    progress(f"dag-aggregate: running {n} tasks")
    arn = sfn.start_execution(
        stateMachineArn=outputs["state_machine_arn"], input=json.dumps({"run_id": run_id})
    )["executionArn"]
    coordinator = wait_done(ctx, [arn], 900 + n * 2)[arn]
    document = ctx.meter_read()
    results = runs.read_run_results(ctx.client("s3"), outputs["run_results_uri"], run_id)
    if results["counts"]["success"] != n:
        raise RuntimeError(f"dag run: {results['counts']}")
    task_arns = [
        e["executionArn"]
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=outputs["task_state_machine_arn"]
        )
        for e in page["executions"]
        if e["startDate"] >= coordinator["startDate"]
    ]
    histories = read_histories(ctx, [arn, *task_arns])
    column = Column(n=n, wall=span([coordinator]))
    metered(column, document)
    column.transitions = sum(billed_transitions(h) for h in histories.values()) / n
    column.events = sum(len(h) for h in histories.values()) / n
    column.extra["coordinator history events"] = len(histories[arn])
    # The run item (and every task item: one partition key, the run id) takes each report.
    column.extra["runs table WCU / item (upper bound)"] = hot_wcu(
        document, outputs["runs_table_name"], n
    )
    by_task = {r["task"]: r for r in results["results"]}

    def started(task: str) -> float:
        return datetime.fromisoformat(by_task[task]["started_at"]).timestamp()

    delays = [
        started(task) - max(started(p) + by_task[p]["execution_time"] for p in deps)
        for task, deps in parents.items()
        if deps
    ]
    set_latency(column, delays)
    dag_shape(column, parents, [histories[a] for a in task_arns], max_concurrency)
    return column


def dag_shape(
    column: Column,
    parents: Mapping[str, Iterable[str]],
    task_histories: list[list[dict[str, Any]]],
    max_concurrency: int,
) -> None:
    """What bounds the rate besides LocalStack: the DAG's chain and the slots it fills.

    Why: a DAG narrower than ``max_concurrency`` runs at (tasks at once) / (seconds per
    task), so the same LocalStack gives different rates to differently shaped DAGs;
    these rows separate the shape from the per-task time.
    """
    from sfn_patterns_cli.dag_aggregate.graph import build_graph
    from sfn_patterns_cli.dag_aggregate.simulate import critical_path, dependency_makespan

    graph = build_graph(parents)
    equal = dict.fromkeys(graph.nodes, 1.0)
    column.extra["longest dependency chain (tasks)"] = round(critical_path(graph, equal))
    lifetimes = sum(
        (h[-1]["timestamp"] - h[0]["timestamp"]).total_seconds() for h in task_histories if h
    )
    column.extra["task executions at once, mean"] = lifetimes / column.wall
    column.extra["seconds per task, all equal (wall / simulated makespan)"] = (
        column.wall / dependency_makespan(graph, equal, max_concurrency)
    )


# --- tables ------------------------------------------------------------------------------

# Per pattern: (title, deploy, measure one size).
PATTERN_FUNCTIONS: dict[str, tuple[Callable, Callable, Callable]] = {
    "semaphore": (semaphore_setting, deploy_semaphore, measure_semaphore),
    "sqs-throttle": (throttle_setting, deploy_throttle, measure_throttle),
    "status-table": (status_setting, deploy_status, measure_status),
    "job-poller": (job_poller_setting, deploy_job_poller, measure_job_poller),
    "dag-aggregate": (dag_setting, deploy_dag, measure_dag),
}
# Per-item rows: (label, attribute or extra key).
PER_ITEM = (
    ("state transitions / item", "transitions"),
    ("history events / item", "events"),
    ("Lambda invocations / item", "lambda_invocations"),
    ("DynamoDB requests / item", "dynamodb"),
    ("SQS requests / item", "sqs"),
    ("Step Functions requests / item", "stepfunctions"),
    ("LocalStack CPU-s / item", "cpu"),
)


def _number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    if float(value).is_integer() and abs(value) >= 10:
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def _slope_cell(sizes: list[int], values: list[float | None]) -> str:
    if len(sizes) < 2:
        return "-"
    b = slope(sizes, values)
    if b is None:
        zero = all(v == 0 for v in values)
        return "0 (none)" if zero else "-"
    return f"{b:+.3f}"


def table(run: PatternRun) -> str:
    """One pattern's Markdown table: one column per size, the slope last."""
    cols = run.columns
    sizes = [c.n for c in cols]
    fitted = [i for i, c in enumerate(cols) if c.done is None]  # no slope over a partial size
    lines = [
        f"**{run.pattern}** ({run.setting})",
        "",
        "| | " + " | ".join(f"n = {n:,}" for n in sizes) + " | slope b |",
        "|---|" + "---:|" * (len(cols) + 1),
    ]

    def row(label: str, cells: list[str], b: str = "") -> None:
        lines.append(f"| {label} | " + " | ".join(cells) + (f" | {b} |" if b else " | |"))

    def fit(values: list[float | None]) -> str:
        return _slope_cell([sizes[i] for i in fitted], [values[i] for i in fitted])

    if len(fitted) < len(cols):
        row(
            "items finished (stopped for time)",
            ["all" if c.done is None else f"{c.done:,}" for c in cols],
        )
    row("wall time (s)", [f"{c.wall:,.1f}" for c in cols], fit([c.wall for c in cols]))
    row("items / s", [f"{c.finished / c.wall:,.2f}" for c in cols])
    for label, attribute in PER_ITEM:
        values = [getattr(c, attribute) for c in cols]
        row(label, [_number(v) for v in values], fit(values))
    extra_keys = list(dict.fromkeys(k for c in cols for k in c.extra))
    for key in extra_keys:
        values = [c.extra.get(key) for c in cols]
        b = fit(values) if key in PER_ITEM_EXTRAS else ""
        row(key, [_number(v) for v in values], b)
    row(
        "peak LocalStack RSS, MiB (with Lambda workers)",
        [f"{c.rss / 2**20:,.0f} ({c.tree_rss / 2**20:,.0f})" for c in cols],
    )
    row("peak LocalStack threads", [str(c.threads) for c in cols])
    row(
        "largest DynamoDB item written (bytes)",
        [f"{c.largest_item:,}" for c in cols],
        fit([float(c.largest_item) for c in cols]),
    )
    label = LATENCY[run.pattern]
    row(f"{label}, p50 (s)", [_number(c.p50) for c in cols])
    row(f"{label}, p90 (s)", [_number(c.p90) for c in cols])
    lines += [f"\nAt n = {c.n:,}: {c.note}" for c in cols if c.note]
    if run.stopped:
        lines += ["", f"Stopped at n = {run.stopped}"]
    if run.skipped:
        lines += ["", f"Sizes {run.skipped}"]
    return "\n".join(lines)


def complete(run: PatternRun) -> list[Column]:
    """The sizes that ran through (not stopped for time)."""
    return [c for c in run.columns if c.done is None]


# Extra rows that are costs per item (fitted like the per-item rows).
PER_ITEM_EXTRAS = {
    "starter invocations",
    "items read per claimable page",
    "fallback checks",
    "lock item WCU / item",
    "table WCU / item",
    "runs table WCU / item (upper bound)",
}


# --- the capacity model ------------------------------------------------------------------


@dataclass
class Bound:
    """One quota's ceiling on a pattern's rate."""

    quota: str
    rate: float  # items per second
    arithmetic: str


def capacity(run: PatternRun) -> tuple[str, list[Bound]]:
    """The bounds on one pattern's sustainable rate, from its largest complete column."""
    c = complete(run)[-1]
    q = QUOTAS
    bounds: list[Bound] = []

    def add(key: str, per_item: float | None, what: str, scale: float = 1.0) -> None:
        if not per_item:
            return
        quota = q[key]
        rate = quota.value * scale / per_item
        bounds.append(
            Bound(
                key,
                rate,
                f"{_number(quota.value * scale)} {quota.unit} / {per_item:.2f} {what} "
                f"= {rate:,.0f} items/s",
            )
        )

    if run.pattern == "semaphore":
        unit = "executions admitted per second"
        add("start_execution", 1.0, "StartExecution per execution")
        add("state_transition", c.transitions, "transitions per execution")
        add("send_task_success", c.ops.get("stepfunctions:SendTaskSuccess"), "SendTaskSuccess")
        add("lambda_concurrency", c.lambda_invocations, "invocations per execution", 1 / 0.1)
        # Every acquire and hand-over writes the one lock item: one partition.
        add("partition_writes", c.extra.get("lock item WCU / item"), "lock item WCU per execution")
    elif run.pattern == "sqs-throttle":
        unit = "requests started per second"
        add("start_execution", 1.0, "StartExecution per request")
        add("state_transition", c.transitions, "transitions per request")
        add("sqs_fifo", c.ops.get("sqs:ReceiveMessage"), "ReceiveMessage per request")
        add("list_executions", c.ops.get("stepfunctions:ListExecutions"), "ListExecutions")
        add("describe_execution", c.ops.get("stepfunctions:DescribeExecution"), "DescribeExecution")
        serial = c.sqs + c.dynamodb + c.stepfunctions
        bounds.append(
            Bound(
                "single writer",
                1 / (serial * AWS_CALL_SECONDS),
                f"one starter at a time (reserved concurrency 1): {serial:.2f} calls per "
                f"request x {AWS_CALL_SECONDS * 1000:.0f} ms = "
                f"{1 / (serial * AWS_CALL_SECONDS):,.0f} requests/s (assumed call latency)",
            )
        )
    elif run.pattern == "status-table":
        unit = "tasks claimed per second"
        add("table_writes", c.extra.get("table WCU / item"), "WCU per task (base table)")
        # The status index: a claim moves a task's index entry into an in_progress shard
        # and success moves it out, 2 index writes per task on the in_progress shards
        # (4 shards per status, Tracker's default): the hottest index partitions.
        shards = 4
        quota = q["partition_writes"]
        bounds.append(
            Bound(
                "partition_writes",
                quota.value * shards / 2,
                f"{quota.value:,.0f} WCU/s x {shards} in_progress index shards / 2 index "
                f"writes per task = {quota.value * shards / 2:,.0f} items/s (from the "
                "index layout, not measured)",
            )
        )
    elif run.pattern == "job-poller":
        unit = "jobs completed per second"
        add("start_execution", 1.0, "StartExecution per job")
        add("state_transition", c.transitions, "transitions per job")
        add("send_task_success", c.ops.get("stepfunctions:SendTaskSuccess"), "SendTaskSuccess")
        add("describe_execution", c.ops.get("stepfunctions:DescribeExecution"), "DescribeExecution")
        add("put_events", 1.0, "events per job")
        add("lambda_concurrency", c.lambda_invocations, "invocations per job", 1 / 0.1)
    else:
        unit = "tasks run per second"
        add("start_execution", c.ops.get("stepfunctions:StartExecution"), "StartExecution")
        add("state_transition", c.transitions, "transitions per task")
        add("send_task_success", c.ops.get("stepfunctions:SendTaskSuccess"), "SendTaskSuccess")
        add("describe_execution", c.ops.get("stepfunctions:DescribeExecution"), "DescribeExecution")
        add("lambda_concurrency", c.lambda_invocations, "invocations per task", 1 / 0.1)
        add("put_events", 1.0, "events per task")
        add(
            "partition_writes",
            c.extra.get("runs table WCU / item (upper bound)"),
            "runs table WCU per task (one run id: one partition key)",
        )
    return unit, sorted(bounds, key=lambda b: b.rate)


def capacity_text(runs: list[PatternRun]) -> str:
    """The capacity model: per pattern, every bound, the binding one first."""
    lines = [
        "### Capacity on AWS (default quotas, us-east-1)",
        "",
        "From the per-item costs of each pattern's largest size that ran through above. Lambda "
        "concurrency is turned into a rate with 100 ms per invocation (1,000 concurrent "
        "/ 0.1 s = 10,000 invocations/s).",
        "",
        "| pattern | sustainable rate | binding quota | arithmetic | next bound |",
        "|---|---:|---|---|---|",
    ]
    for run in runs:
        if not complete(run):
            continue
        unit, bounds = capacity(run)
        first = bounds[0]
        second = bounds[1] if len(bounds) > 1 else None
        lines.append(
            f"| {run.pattern} | {first.rate:,.0f} {unit} | {quota_name(first.quota)} "
            f"| {first.arithmetic} | "
            + (f"{quota_name(second.quota)}: {second.rate:,.0f}" if second else "-")
            + " |"
        )
    lines += ["", "| quota | default | page |", "|---|---:|---|"]
    for quota in QUOTAS.values():
        lines.append(f"| {quota.name} | {quota.value:,.0f} {quota.unit} | {quota.url} |")
    lines += ["", "Every bound, per pattern:", ""]
    for run in runs:
        if not complete(run):
            continue
        unit, bounds = capacity(run)
        lines.append(f"* **{run.pattern}** ({unit}, at n = {complete(run)[-1].n:,}):")
        for bound in bounds:
            lines.append(f"  * {quota_name(bound.quota)}: {bound.arithmetic}")
    return "\n".join(lines)


def quota_name(key: str) -> str:
    """A quota's display name (or the bound's own name)."""
    return QUOTAS[key].name if key in QUOTAS else key


# --- main ----------------------------------------------------------------------------------


def load_average() -> str:
    """The 1, 5 and 15-minute load averages and the CPU count."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def plan_sizes(args: argparse.Namespace) -> dict[str, list[int]]:
    """The sizes to run per pattern."""
    source = {**(SMOKE_SIZES if args.smoke else SIZES), **dict(args.sizes or [])}
    chosen = {}
    for pattern in args.only or PATTERNS:
        sizes = [n for n in source[pattern] if args.max_size is None or n <= args.max_size]
        if sizes:
            chosen[pattern] = sizes
    return chosen


def budget_option(text: str) -> tuple[str | None, int | None, float]:
    """One --size-seconds as (pattern, size, seconds); None: every pattern or size.

    ``semaphore=1500`` is ("semaphore", None, 1500.0), ``status-table@100000=900`` is
    ("status-table", 100000, 900.0), ``600`` is (None, None, 600.0).
    """
    target, _, seconds = text.rpartition("=")
    pattern, at, size = target.partition("@")
    if pattern and pattern not in ("semaphore", "status-table"):
        raise argparse.ArgumentTypeError("only semaphore and status-table sizes can be stopped")
    if at and not size.isdigit():
        raise argparse.ArgumentTypeError(f"not a size: {size!r} (PATTERN@N=SECONDS)")
    try:
        return pattern or None, int(size) if at else None, float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {seconds!r}") from None


def size_budget(args: argparse.Namespace, pattern: str, n: int) -> float | None:
    """The seconds size ``n`` of ``pattern`` may run: the last --size-seconds naming it.

    Per size, because one budget for every size of a pattern either stops a middle size
    that would have run through (the status-table's 10,000 takes about 900 s, and a
    stopped size skips the larger ones) or lets the largest run for hours.
    """
    found = None
    for named, size, seconds in args.size_seconds or []:
        if named in (None, pattern) and size in (None, n):
            found = seconds
    return found


def sizes_option(text: str) -> tuple[str, tuple[int, ...]]:
    """``semaphore=10,100`` as ("semaphore", (10, 100))."""
    pattern, _, numbers = text.partition("=")
    if pattern not in PATTERNS or not numbers:
        raise argparse.ArgumentTypeError(f"expected PATTERN=N,N,... with PATTERN in {PATTERNS}")
    try:
        return pattern, tuple(int(n) for n in numbers.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {numbers!r}") from None


def run_all(
    args: argparse.Namespace, save: Callable[[list[PatternRun]], None] = lambda runs: None
) -> list[PatternRun]:
    """Start (or use) LocalStack; deploy every pattern at once, run the sizes, destroy.

    The applies (and the destroys) run side by side: Terraform waits on LocalStack
    most of the time. The measurements run one pattern at a time, so each has the
    machine to itself (and the meter counts one pattern's calls). ``save`` gets the
    runs so far after every size: a run of hours that is stopped keeps what it measured.
    """
    from sfn_patterns_localstack import bench

    # The account's Lambda concurrency of a LocalStack started here (LOCALSTACK_ENDPOINT's
    # keeps its own): the job-poller's sample jobs are Lambdas, in flight all at once.
    concurrency = {"LAMBDA_LIMITS_CONCURRENT_EXECUTIONS": str(args.lambda_concurrency)}
    with bench.localstack(progress, args.keep, concurrency) as (endpoint, destroy):
        scratch = Path(tempfile.mkdtemp(prefix="bench-scale-"))
        ctx = Context(endpoint, destroy=destroy, scratch=scratch)
        plan = plan_sizes(args)
        runs = []
        deployments: dict[str, Any] = {}
        try:
            with ThreadPoolExecutor(len(plan) or 1) as pool:
                pending = {
                    pattern: pool.submit(PATTERN_FUNCTIONS[pattern][1], ctx, args, sizes)
                    for pattern, sizes in plan.items()
                }
                for pattern, sizes in plan.items():
                    setting, _, measure = PATTERN_FUNCTIONS[pattern]
                    run = PatternRun(pattern, setting(args))
                    runs.append(run)
                    try:
                        deployments[pattern] = pending[pattern].result()
                    except Exception as error:  # reported in the table; the others go on
                        run.stopped = f"{sizes[0]}: deployment failed: {error}"
                        progress(f"{pattern}: deployment failed: {error}")
                        continue
                    progress(f"{pattern}: sizes {sizes} (load {load_average()})")
                    for n in sizes:
                        try:
                            run.columns.append(measure(ctx, deployments[pattern], n, args))
                        except Exception as error:  # the larger sizes would fail the same way
                            run.stopped = f"{n}: {error}"
                            progress(f"{pattern}: size {n} failed: {error}")
                            break
                        finally:
                            save(runs)
                        larger = [m for m in sizes if m > n]
                        if run.columns[-1].done is not None and larger:  # out of time already
                            run.skipped = (
                                f"{', '.join(map(str, larger))}: not run ({n} was stopped for time)"
                            )
                            break
        finally:
            with ThreadPoolExecutor(max(1, len(ctx.deployments))) as pool:
                list(pool.map(lambda d: teardown(ctx, d), ctx.deployments))
            with contextlib.suppress(OSError):
                ctx.meter_stop()
            shutil.rmtree(scratch, ignore_errors=True)
    for error in ctx.teardown_errors:
        print(f"TEARDOWN FAILED: {error}", file=sys.stderr)
    if ctx.teardown_errors:
        runs.append(PatternRun("teardown", "", stopped="; ".join(ctx.teardown_errors)))
    return runs


def write_json(path: Path | None, header: str, runs: list[PatternRun]) -> None:
    """Save the runs for ``--from-json`` (nothing without ``--json``)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"header": header, "runs": [asdict(r) for r in runs]}, indent=1))


def build_parser() -> argparse.ArgumentParser:
    """The command line: what runs, at which sizes, and each pattern's settings."""
    from sfn_patterns_localstack import bench

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=PATTERNS,
        help="run only this pattern (repeatable; default: all five)",
    )
    parser.add_argument(
        "--max-size", type=int, help="skip sizes above this (default: every size of SIZES)"
    )
    parser.add_argument(
        "--sizes",
        action="append",
        type=sizes_option,
        metavar="PATTERN=N,N,...",
        help="this pattern's sizes instead of its default ones (repeatable)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one small size per pattern that fills every row (make test)",
    )
    parser.add_argument(
        "--capacity",
        action="store_true",
        help="also print the capacity model on AWS's default quotas",
    )
    parser.add_argument("--json", type=Path, help="write the measurements to this file")
    parser.add_argument(
        "--from-json", type=Path, help="print the tables of a saved run (no LocalStack)"
    )
    parser.add_argument(
        "--limit", type=int, default=10, help="max_concurrency (default 10; --smoke: 2)"
    )
    parser.add_argument(
        "--max-running",
        type=int,
        default=20,
        help="sqs-throttle max_concurrency (default 20; --smoke: 2)",
    )
    parser.add_argument(
        "--hold", type=float, default=1.0, help="seconds in the critical section / target (1)"
    )
    parser.add_argument(
        "--start-rate",
        type=float,
        default=50.0,
        help="semaphore executions started per second (default 50; 0: all at once, as "
        "before: 1,000 at once ask for more Lambda environments than 2 cores start in time)",
    )
    parser.add_argument(
        "--job-start-rate",
        type=float,
        default=5.0,
        help="job-poller executions started per second (default 5: a job costs 0.4 to "
        "0.9 CPU-s of LocalStack and Lambda workers here, measured at 100 and 1,000, so 2 "
        "cores about keep up; at 50 a second 1,000 jobs queued for CPU and Run Jobs hit "
        "their 30-s timeout)",
    )
    parser.add_argument(
        "--workers", type=int, default=8, help="status-table worker processes (default 8)"
    )
    parser.add_argument(
        "--size-seconds",
        type=budget_option,
        action="append",
        metavar="[PATTERN[@N]=]SECONDS",
        help="stop a semaphore or status-table size this many seconds after its first "
        "start (repeatable, the last that names a size wins; without PATTERN= for both, "
        "without @N for each of the pattern's sizes, e.g. status-table@100000=900 for "
        "its largest only); its column then holds what "
        "finished, the row 'items finished' says how many, no slope uses it, and the "
        "pattern's larger sizes are skipped (default: every size runs through)",
    )
    parser.add_argument(
        "--lambda-concurrency",
        type=int,
        default=2000,
        help="the emulated account's Lambda concurrency (default 2,000, a raised quota: "
        "the job-poller's 1,000 sample jobs are Lambdas themselves, and at AWS's default "
        "1,000 they and the poller's own functions exceed it; Run Job is then throttled "
        "and 3 of 1,000 executions failed Lambda.TooManyRequestsException after its "
        "retries, as the module's README says they would)",
    )
    parser.add_argument(
        "--job-seconds",
        type=float,
        help="job-poller sample job length (default: n / --job-start-rate + "
        f"{JOB_OVERLAP_SECONDS} s for a size of n, so all n jobs are in flight at once)",
    )
    parser.add_argument(
        "--dag-concurrency", type=int, default=40, help="dag-aggregate max_concurrency (40)"
    )
    bench.add_keep_option(parser)
    # Internal: a status-table worker process.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--ready-dir", type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run (or load a saved run), print the tables and the model."""
    args = build_parser().parse_args(argv)
    # The status-table Tracker (pynamodb) reads credentials from the environment.
    for name, default in AWS_ENV.items():
        os.environ.setdefault(name, default)
    if args.worker:
        status_worker(args.worker, args.endpoint, args.ready_dir)
        return 0
    if args.smoke:
        args.limit, args.max_running, args.workers, args.job_seconds = 2, 2, 2, 2.0
        args.dag_concurrency = 4
    if args.from_json:
        document = json.loads(args.from_json.read_text())
        runs = [
            PatternRun(
                r["pattern"],
                r["setting"],
                [Column(**c) for c in r["columns"]],
                r["stopped"],
                r.get("skipped", ""),
            )
            for r in document["runs"]
        ]
        header = document["header"]
    else:
        before = load_average()
        unfinished = f"(a run stopped before its end) load average before {before}"
        runs = run_all(args, lambda runs: write_json(args.json, unfinished, runs))
        from sfn_patterns_localstack import bench

        header = (
            f"{bench.localstack_label()} in-process; "
            f"load average before {before}, after {load_average()}"
        )
        write_json(args.json, header, runs)
    progress("done")
    print(header)
    for run in runs:
        print()
        if run.pattern == "teardown":
            print(f"Teardown failed (resources may be left on LocalStack): {run.stopped}")
        else:
            print(table(run) if run.columns else f"**{run.pattern}**: no size ran ({run.stopped})")
    if args.capacity:
        print()
        print(capacity_text(runs))
    return 0 if all(r.columns and not r.stopped for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
