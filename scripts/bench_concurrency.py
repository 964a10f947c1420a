"""Compare the concurrency limiters on LocalStack: what blocking costs, how fast a slot is reused.

One run, one LocalStack, the same loads for every scheme: N requests (then a
second, larger load of --large-n) arrive at once for a limit of L slots, each
holding its slot for --hold seconds. Schemes:

* ``semaphore``: modules/semaphore, strategy dynamodb, fairness none (waiters race);
* ``semaphore-fifo``: the same with fairness fifo (ticket order);
* ``oldest-first``: strategy oldest-first (the seed's ListExecutions gate);
* ``callback``: strategy callback (the module's default): a blocked execution parks
  on a task token and a release hands its slot over (fallback_seconds 300);
* ``sqs-throttle``: modules/sqs-throttle; requests are SQS messages until the
  starter (its real handler, deployed by examples/sqs-throttle and invoked back
  to back, as a run that keeps re-checking every --wait-mean seconds would be)
  starts them.

Measured from the executions' own histories and start/stop dates:

* transitions per blocked minute: states entered while blocked (after the first
  ``Semaphore: Acquire`` and before admission), divided by the minutes spent
  waiting, over the requests admitted after some release (all but the first L);
  the fixed cost of entering and leaving is in the next row;
  a queued sqs-throttle request is a message, not an execution, so it has none;
* transitions per execution: every state an execution entered, mean over all
  requests (sqs-throttle: the target execution's own states);
* time to admission after a release: the (L+k)-th admission minus the k-th
  release (the moment a slot came free: the Release state's exit; for
  ``callback`` its entry, since its Lambda hands the slot over inside the state),
  median and p90;
* peak concurrency inside the limited section: the most executions between entering
  ``Critical section`` and entering ``Semaphore: Release`` at one instant (for
  sqs-throttle, between start and stop). Not up to the Release state's exit: under
  load Step Functions records that exit well after the release's write, by which
  time the next waiter may already be in (a run on a loaded machine counted 2 at
  limit 1 that way).

The three semaphore schemes are one example re-applied with other variables.
When this script starts LocalStack itself it throws it away afterwards and
destroys nothing; with LOCALSTACK_ENDPOINT set it destroys what it applied (not with --keep).

    .venv/bin/python scripts/bench_concurrency.py            # ~12-15 minutes
    .venv/bin/python scripts/bench_concurrency.py --smoke    # smallest size, every column
    .venv/bin/python scripts/bench_concurrency.py -n 8 --limit 2 --hold 3 --only callback
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "lambda_src"), str(REPO / "harness"), str(REPO / "scripts")]

from bench_dag_strategies import apply  # noqa: E402 (a re-apply skips the refresh)

from sfn_patterns.sqs_throttle.producer import enqueue  # noqa: E402
from sfn_patterns_localstack import bench  # noqa: E402
from sfn_patterns_localstack.executions import history, peak_overlap  # noqa: E402
from sfn_patterns_localstack.terraform.workspace import Workspace  # noqa: E402

SEMAPHORE_SCHEMES = {
    "semaphore": {"strategy": "dynamodb", "fairness": "none"},
    "semaphore-fifo": {"strategy": "dynamodb", "fairness": "fifo"},
    "oldest-first": {"strategy": "oldest-first", "fairness": "none"},
    "callback": {"strategy": "callback", "fairness": "none"},
}
SCHEMES = [*SEMAPHORE_SCHEMES, "sqs-throttle"]
ADMITTED = "Critical section"
FIRST_ATTEMPT = "Semaphore: Acquire"
RELEASE = "Semaphore: Release"
# Long enough for the largest load; the plan-time history budget (16 events per
# 1 s wait) refuses an hour of 1 s waits.
ACQUIRE_TIMEOUT = 1200
STARTED = time.monotonic()


def progress(message: str) -> None:
    """One line of progress with the seconds since the script started."""
    print(f"[{time.monotonic() - STARTED:6.1f} s] {message}", flush=True)


def client(endpoint: str, service: str) -> Any:
    """A boto3 client for LocalStack."""
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


@dataclass
class Deployment:
    """One example applied under its own name prefix (variables kept for the destroy).

    ``common``: variables every apply of it gets (``--smoke``: no alarms).
    """

    workspace: Workspace
    prefix: str
    variables: dict[str, Any] | None = None
    common: dict[str, Any] = field(default_factory=dict)


@dataclass
class Load:
    """The same load for every scheme."""

    n: int
    limit: int
    hold: float
    wait_min: int
    wait_max: int

    @property
    def wait_mean(self) -> int:
        """The sqs-throttle starter's re-check period, matched to the semaphore's mean wait."""
        return max(1, round((self.wait_min + self.wait_max) / 2))


@dataclass
class Request:
    """One request's life: when it asked, got in, let go, and what waiting cost."""

    asked: float
    admitted: float
    released: float
    left: float  # left the limited section (entered Release; sqs-throttle: stopped)
    transitions_before: int
    transitions: int


@dataclass
class Result:
    """Measurements of one scheme."""

    scheme: str
    requests: list[Request] = field(default_factory=list)
    note: str = ""

    def row(self, limit: int) -> dict[str, str]:
        """The table column of this scheme."""
        # Blocked: admitted only after some release (beyond the first `limit` admissions).
        blocked = sorted(self.requests, key=lambda r: r.admitted)[limit:]
        minutes = sum((r.admitted - r.asked) / 60 for r in blocked)
        transitions = sum(r.transitions_before for r in blocked)
        admissions = sorted(r.admitted for r in self.requests)
        releases = sorted(r.released for r in self.requests)
        delays = [admissions[limit + k] - releases[k] for k in range(len(admissions) - limit)]
        intervals = [(r.admitted, r.left) for r in self.requests]
        per_execution = statistics.mean(r.transitions for r in self.requests)
        return {
            "requests (blocked)": f"{len(self.requests)} ({len(blocked)})",
            "blocked minutes": f"{minutes:.2f}",
            "transitions per blocked minute": f"{transitions / minutes:.1f}" if minutes else "-",
            "transitions per execution": f"{per_execution:.1f}",
            "admission after release, median": f"{statistics.median(delays):.2f} s"
            if delays
            else "-",
            "admission after release, p90": f"{percentile(delays, 90):.2f} s" if delays else "-",
            "peak concurrency": str(peak_overlap(intervals)),
        }


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]


def wait_all(sfn: Any, arns: list[str], timeout: float) -> list[dict[str, Any]]:
    """Describe every execution once none is RUNNING; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        described = [sfn.describe_execution(executionArn=a) for a in arns]
        running = sum(d["status"] == "RUNNING" for d in described)
        if not running:
            bad = [d["status"] for d in described if d["status"] != "SUCCEEDED"]
            if bad:
                raise SystemExit(f"executions did not succeed: {bad}")
            return described
        if time.monotonic() > deadline:
            raise SystemExit(f"{running} executions still RUNNING after {timeout} s")
        time.sleep(1)


# --- semaphore schemes ----------------------------------------------------------------


def semaphore_request(sfn: Any, described: dict[str, Any], scheme: str) -> Request:
    """Read one embedded-machine execution's history."""
    events = history(sfn, described["executionArn"])
    entered = [
        (e["timestamp"].timestamp(), e["stateEnteredEventDetails"]["name"])
        for e in events
        if "stateEnteredEventDetails" in e
    ]
    admitted = next(t for t, name in entered if name == ADMITTED)
    first_attempt = next(t for t, name in entered if name == FIRST_ATTEMPT)
    if scheme == "oldest-first":
        # The gate counts RUNNING executions: the slot frees when the execution ends.
        released = described["stopDate"].timestamp()
    elif scheme == "callback":
        # The release Lambda hands the slot over inside the state: count from its entry.
        released = next(t for t, name in entered if name == RELEASE)
    else:
        released = next(
            e["timestamp"].timestamp()
            for e in events
            if e.get("stateExitedEventDetails", {}).get("name") == RELEASE
        )
    return Request(
        asked=described["startDate"].timestamp(),
        admitted=admitted,
        released=released,
        left=next(t for t, name in entered if name == RELEASE),
        transitions_before=sum(1 for t, _ in entered if first_attempt < t < admitted),
        transitions=len(entered),
    )


def run_semaphore(
    endpoint: str, deployment: Deployment, scheme: str, loads: list[Load]
) -> list[Result]:
    """Apply examples/semaphore for ``scheme``; run each load through its embedded machine."""
    first = loads[0]
    variables = {
        "name_prefix": deployment.prefix,
        "max_concurrency": first.limit,
        "wait_min_seconds": first.wait_min,
        "wait_max_seconds": first.wait_max,
        "acquire_timeout_seconds": ACQUIRE_TIMEOUT,
        **SEMAPHORE_SCHEMES[scheme],
        **deployment.common,
    }
    progress(f"{scheme}: terraform apply ({variables['strategy']}, {variables['fairness']})")
    deployment.variables = variables
    apply(deployment.workspace, variables)
    machine = deployment.workspace.outputs()["embedded_state_machine_arn"]
    sfn = client(endpoint, "stepfunctions")
    results = []
    for load in loads:
        progress(f"{scheme}: starting {load.n} executions (limit {load.limit}, hold {load.hold} s)")
        arns = [
            sfn.start_execution(
                stateMachineArn=machine, input=json.dumps({"sleep_seconds": load.hold, "n": i})
            )["executionArn"]
            for i in range(load.n)
        ]
        described = wait_all(sfn, arns, timeout=120 + load.n * (load.hold + load.wait_max) * 3)
        progress(f"{scheme}: all {load.n} succeeded; reading histories")
        results.append(
            Result(
                scheme,
                [semaphore_request(sfn, d, scheme) for d in described],
                note=f"waits {load.wait_min}-{load.wait_max} s",
            )
        )
    return results


# --- sqs-throttle -------------------------------------------------------------------


def apply_throttle(deployment: Deployment, load: Load) -> dict[str, Any]:
    """Apply examples/sqs-throttle (no schedule ticks during the run: it is driven here)."""
    variables = {
        "name_prefix": deployment.prefix,
        "max_concurrency": load.limit,
        "schedule_expression": "rate(1 day)",
        "max_seconds_per_run": 30,
        "recheck_seconds": load.wait_mean,
        **deployment.common,
    }
    deployment.variables = variables
    deployment.workspace.init()
    deployment.workspace.apply(variables)
    return deployment.workspace.outputs()


def run_throttle(endpoint: str, outputs: dict[str, Any], load: Load) -> Result:
    """Enqueue the load, keep a starter run going until every request started, measure."""
    sqs, sfn, lam = (client(endpoint, s) for s in ("sqs", "stepfunctions", "lambda"))
    run_id = uuid.uuid4().hex[:6]
    asked: dict[str, float] = {}
    progress(f"sqs-throttle: enqueueing {load.n} requests (MAX {load.limit}, hold {load.hold} s)")
    for i in range(load.n):
        request_id = f"bench-{run_id}-{i}"
        asked[request_id] = time.time()
        enqueue(
            outputs["queue_url"],
            {"seconds": round(load.hold), "request_id": request_id},
            request_id=request_id,
            client=sqs,
        )
    invocations = 0
    deadline = time.monotonic() + 120 + load.n * (load.hold + load.wait_max) * 3
    while time.monotonic() < deadline:
        attributes = sqs.get_queue_attributes(
            QueueUrl=outputs["queue_url"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        if (
            attributes["ApproximateNumberOfMessages"]
            == "0"
            == attributes["ApproximateNumberOfMessagesNotVisible"]
            and invocations
        ):
            break
        response = lam.invoke(
            FunctionName=outputs["starter_function_name"],
            Payload=json.dumps({"max_seconds": 25}).encode(),
        )
        invocations += 1
        report = json.loads(response["Payload"].read())
        if "FunctionError" in response:
            raise SystemExit(f"starter failed: {report}")
        progress(f"sqs-throttle: starter run {invocations}: started {len(report['started'])}")
    listed = [
        e["executionArn"]
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=outputs["target_state_machine_arn"]
        )
        for e in page["executions"]
    ]
    described = wait_all(sfn, listed, timeout=120)
    requests = []
    for d in described:
        request_id = json.loads(d["input"])["request_id"]
        if request_id not in asked:
            continue  # an earlier run's execution
        events = history(sfn, d["executionArn"])
        requests.append(
            Request(
                asked=asked[request_id],
                admitted=d["startDate"].timestamp(),
                released=d["stopDate"].timestamp(),
                left=d["stopDate"].timestamp(),
                # The request waited as a message: count events before its start (none).
                transitions_before=sum(
                    1 for e in events if e["timestamp"].timestamp() < d["startDate"].timestamp()
                ),
                transitions=sum(1 for e in events if "stateEnteredEventDetails" in e),
            )
        )
    if len(requests) != load.n:
        raise SystemExit(f"sqs-throttle: {len(requests)} of {load.n} requests ran")
    progress(f"sqs-throttle: all {load.n} ran, {invocations} starter runs")
    return Result(
        "sqs-throttle", requests, note=f"starter re-checks every {load.wait_mean} s during a run"
    )


# --- orchestration ------------------------------------------------------------------


def deployment_for(example: str, endpoint: str, tag: str, common: dict[str, Any]) -> Deployment:
    """A workspace on examples/<example> with a fresh name prefix."""
    workspace = Workspace(
        REPO / "examples" / example,
        endpoint,
        Path(tempfile.mkdtemp(prefix=f"bench-{tag}-")),
        log=lambda line: None,
    )
    return Deployment(workspace, f"bc{tag}-{uuid.uuid4().hex[:5]}", common=common)


def run(
    endpoint: str, loads: list[Load], schemes: list[str], destroy: bool, *, alarms: bool = True
) -> list[list[Result]]:
    """Deploy, load and measure every scheme; destroy afterwards when asked.

    ``alarms``: create the modules' CloudWatch alarms (what is measured does not use
    them; ``--smoke`` leaves them out, fewer resources to apply and destroy).
    Returns one list of results per load, in ``schemes`` order.
    """
    load = loads[0]
    results: dict[str, list[Result]] = {}
    common = {} if alarms else {"alarms": {"create": False}}
    semaphore = deployment_for("semaphore", endpoint, "s", common)
    throttle = (
        deployment_for("sqs-throttle", endpoint, "q", common) if "sqs-throttle" in schemes else None
    )
    throttle_outputs: dict[str, Any] = {}
    errors: list[BaseException] = []

    def deploy_throttle() -> None:
        try:
            throttle_outputs.update(apply_throttle(throttle, load))
        except BaseException as error:  # reported after the join
            errors.append(error)

    try:
        # The sqs-throttle apply (another directory) overlaps the first semaphore apply.
        thread = None
        if throttle is not None:
            progress("sqs-throttle: terraform apply (in the background)")
            thread = threading.Thread(target=deploy_throttle, daemon=True)
            thread.start()
        semaphore_schemes = [s for s in schemes if s in SEMAPHORE_SCHEMES]
        if semaphore_schemes:
            progress("semaphore: terraform init")
            semaphore.workspace.init()
        for scheme in semaphore_schemes:
            results[scheme] = run_semaphore(endpoint, semaphore, scheme, loads)
        if thread is not None:
            thread.join()
            if errors:
                raise errors[0]
            results["sqs-throttle"] = [run_throttle(endpoint, throttle_outputs, ld) for ld in loads]
    finally:
        # Side by side: each destroy waits on LocalStack most of the time.
        with ThreadPoolExecutor(2) as pool:
            pending = [
                pool.submit(teardown, deployment, destroy)
                for deployment in (semaphore, throttle)
                if deployment is not None
            ]
            for future in pending:
                future.result()
    return [[results[s][i] for s in schemes] for i in range(len(loads))]


def teardown(deployment: Deployment, destroy: bool) -> None:
    """Destroy what ``deployment`` applied when asked, then clean its workspace up."""
    if destroy and deployment.variables is not None:
        progress(f"destroying {deployment.workspace.config_dir.name}")
        deployment.workspace.destroy(deployment.variables)
    deployment.workspace.close()
    if destroy or deployment.variables is None:  # no state left to keep
        shutil.rmtree(deployment.workspace.scratch_dir, ignore_errors=True)


def table(results: list[Result], load: Load) -> str:
    """A Markdown table: one column per scheme."""
    rows = {r.scheme: r.row(load.limit) for r in results}
    names = list(next(iter(rows.values())))
    lines = [
        "| | " + " | ".join(f"`{r.scheme}`" for r in results) + " |",
        "|---|" + "---:|" * len(results),
    ]
    lines += [
        f"| {name} | " + " | ".join(rows[r.scheme][name] for r in results) + " |" for name in names
    ]
    lines.append("")
    lines.append(
        f"N = {load.n} requests at once, limit {load.limit}, {load.hold:g} s each; semaphore waits "
        f"{load.wait_min}-{load.wait_max} s; sqs-throttle starter re-checks every "
        f"{load.wait_mean} s within a run ({bench.localstack_label()}, in-process)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run on LocalStack, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog="Set LOCALSTACK_ENDPOINT to use a running LocalStack (what is applied is then "
        "destroyed, unless --keep); otherwise one is started in-process and thrown away.",
    )
    parser.add_argument("-n", type=int, default=8, help="requests arriving at once (default 8)")
    parser.add_argument(
        "--large-n", type=int, default=40, help="the second, larger load (default 40; 0: none)"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="smallest run that fills every column: 3 requests, limit 1, 1 s holds, no large load",
    )
    parser.add_argument("--limit", type=int, default=2, help="slots / MAX (default 2)")
    parser.add_argument("--hold", type=float, default=3, help="seconds each holds its slot")
    parser.add_argument("--wait-min", type=int, default=1, help="semaphore's shortest wait")
    parser.add_argument("--wait-max", type=int, default=3, help="semaphore's longest wait")
    parser.add_argument(
        "--only", action="append", choices=SCHEMES, help="run only this scheme (repeatable)"
    )
    bench.add_keep_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.large_n, args.limit, args.hold = 3, 0, 1, 1
    if args.n <= args.limit:
        parser.error("-n must exceed --limit, or nothing ever waits")
    loads = [Load(args.n, args.limit, args.hold, args.wait_min, args.wait_max)]
    if args.large_n:
        loads.append(Load(args.large_n, args.limit, args.hold, args.wait_min, args.wait_max))
    schemes = [s for s in SCHEMES if not args.only or s in args.only]
    with bench.localstack(progress, args.keep) as (endpoint, destroy):
        results = run(endpoint, loads, schemes, destroy=destroy, alarms=not args.smoke)
    progress("done")
    for load, load_results in zip(loads, results, strict=True):
        print()
        print(table(load_results, load))
    return 0


if __name__ == "__main__":
    sys.exit(main())
