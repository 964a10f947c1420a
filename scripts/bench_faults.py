#!/usr/bin/env python
"""The patterns under injected faults at 0 %, 5 % and 20 %: what is lost, doubled, leaked, slowed.

One run, one LocalStack, every pattern at each fault rate in turn. The
fault injector (harness/sfn_patterns_localstack/emulation/faults) is loaded with one
seeded plan per pattern and rate; the rate is each fault's probability:

* ``status-table``: 8 worker threads on N tasks of the tracker; every DynamoDB call
  on the table throttled (ProvisionedThroughputExceededException) at the rate; a
  worker whose call fails tries the task again later, as a queue redelivers;
* ``semaphore``: examples/semaphore, strategy callback (the default), limit 2, N
  executions at once (after an untimed warm-up); the semaphore Lambdas' DynamoDB
  calls throttled and their writes refused for a transaction conflict, their
  SendTaskSuccess answered 500 (a lost wake-up) or delivered with its answer lost (the
  SDK sends it again: a duplicate), DescribeExecution throttled, the Lambdas killed
  mid-invoke at half the rate, cleanup events dropped and doubled;
  after the run the reconciler is invoked once (as its schedule would), fault-free;
* ``job-poller``: examples/job-poller, its three pollers (Lambda loop, aws-sdk child
  polled through DescribeExecution, completion events with a fallback check), N jobs
  each, a third of them failing by plan; each status check throttled or answered 500
  at half the rate each (so about the rate in all), the completion events dropped,
  doubled or 3 s late and the completion function's SendTaskSuccess answered 500 at
  the rate. The example's retry budget is raised to 6 retries, what a team expecting
  this fault rate would set: at 20 % the default 3 lose about one status check in 600
  (0.2^4), a lost job report that the table would show;
* ``sqs-throttle``: examples/sqs-throttle, MAX 4, N requests queued at once (5
  message groups), the starter run as its schedule would (one synchronous run after
  another until the queue is empty); its StartExecution throttled and its
  ListExecutions answered from a view 5 s old at the rate, the queue's messages
  delivered twice at the rate, its ledger writes refused for a transaction conflict
  at the rate, the starter killed 2 s into a run at half the rate.
  Requests lost: a request with no SUCCEEDED execution, or in the dead-letter queue;
  duplicate runs: executions beyond one per request; over-admissions: most
  executions running at once above MAX, from their own start and stop dates;
* ``dag-aggregate``: examples/dag-aggregate, strategy dependency, completion events,
  max_concurrency 3, one run of a generated DAG of N tasks per rate (each task a 1-s
  statement that counts the rows of its parents: 1 for a root, its number of parents
  otherwise); the task executions' Data API calls throttled and the runtime's DynamoDB
  calls throttled and its writes refused for a transaction conflict at the rate, the
  runtime Lambda killed mid-invoke at half the rate, completion events delivered twice
  at the rate, and at every rate but 0 % the
  coordinator stopped once its first task runs and started again with the same run id
  (a killed coordinator, taken over). Requests lost: a task whose table does not hold
  exactly its one row with that count (a task run before its parents, or not at all),
  or a run that did not succeed; duplicate runs: statements, task executions or rows
  beyond one per task; over-admissions: most statements running at once above
  max_concurrency, from the Data API's own statement times; slots leaked: tasks still
  active in the run item or queued (ready items), or task executions still running,
  after the run.

Each figure is read from the record, not from the pattern's code: the status table
and the workers' side-effect log; the executions' statuses, histories and dates, the
critical section's own enter and leave times, the lock item and waiter queue; the
Data API's statements and the tables they wrote, the runs table's run item; the
injector's log for the faults.

Rows, per pattern: operations (tasks or executions), faults injected by kind,
requests lost (not done, or ended other than SUCCEEDED; a job whose outcome was
reported wrong), duplicate runs (a side effect, a critical section, a job's start
or its outcome more than once), over-admissions (most at once above
the limit), slots leaked after settling (a task still in progress, a slot held or a
waiter queued), and completion time p50 and p90 (per operation; the 0 % column in
seconds, the others as a ratio to it). The four counts must be 0: the script exits 1
otherwise.

    .venv/bin/python scripts/bench_faults.py              # full size (~5 minutes)
    .venv/bin/python scripts/bench_faults.py --smoke      # smallest size (make test)
    .venv/bin/python scripts/bench_faults.py --only status-table --tasks 400

Set LOCALSTACK_ENDPOINT to use a running LocalStack (what is applied is then
destroyed, unless --keep); otherwise one is started in-process and thrown away.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "lambda_src"), str(REPO / "harness")]

from sfn_patterns.sqs_throttle.naming import execution_name  # noqa: E402
from sfn_patterns.sqs_throttle.producer import enqueue  # noqa: E402
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag  # noqa: E402
from sfn_patterns_localstack import bench, queues, starter_runs  # noqa: E402
from sfn_patterns_localstack.emulation.faults import client as faults  # noqa: E402
from sfn_patterns_localstack.emulation.faults import scenarios  # noqa: E402
from sfn_patterns_localstack.emulation.redshift_data.workgroups import (  # noqa: E402
    workgroup_variables,
)
from sfn_patterns_localstack.executions import (  # noqa: E402
    history,
    job_starts_and_decisions,
    peak_overlap,
    wait_stopped,
)
from sfn_patterns_localstack.terraform.workspace import Workspace  # noqa: E402

REGION = "us-east-1"
RATES = (0.0, 0.05, 0.2)
PATTERNS = ("status-table", "semaphore", "job-poller", "sqs-throttle", "dag-aggregate")
JOB_VARIANTS = ("lambda", "sdk", "events")
SEED = 28
STARTED = time.monotonic()
SECTION = "Critical section"
COUNTS = ("requests lost", "duplicate runs", "over-admissions", "slots leaked after settling")


def progress(message: str) -> None:
    """One line of progress on stderr, with the seconds since the script started."""
    print(f"[{time.monotonic() - STARTED:6.1f} s] {message}", file=sys.stderr, flush=True)


def client(endpoint: str, service: str) -> Any:
    """A boto3 client for LocalStack."""
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def percentile(values: list[float], pct: float) -> float:
    """The ``pct`` percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


@dataclass
class Outcome:
    """One pattern at one fault rate: what happened, from the record."""

    operations: int
    faults: Counter[str]
    lost: int
    duplicates: int
    over_admissions: int | None  # None: the pattern admits nothing (no limit)
    leaked: int | None  # None: the pattern holds nothing that could leak
    durations: list[float] = field(default_factory=list)

    def counts(self) -> dict[str, int | None]:
        """The four counts that must be 0."""
        return dict(
            zip(
                COUNTS,
                (self.lost, self.duplicates, self.over_admissions, self.leaked),
                strict=True,
            )
        )


@dataclass
class Sizes:
    """How big each pattern's run is."""

    tasks: int
    workers: int
    executions: int
    limit: int
    hold: float
    jobs: int = 3
    requests: int = 12
    dag_tasks: int = 24


# --- status-table ----------------------------------------------------------------------


def status_table_plan(table: str, rate: float) -> dict[str, Any]:
    """Every DynamoDB call on the table throttled at ``rate``."""
    return {
        "seed": SEED,
        "faults": [
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "throttle",
                "resource": table,
                "probability": rate,
            }
        ]
        if rate
        else [],
    }


class _Workers:
    """Worker threads walking every task; a failed call puts the task back for later."""

    def __init__(self, endpoint: str, table: str, ids: list[str]) -> None:
        self.endpoint, self.table, self.ids = endpoint, table, ids
        self.effects: Counter[str] = Counter()
        self.first_try: dict[str, float] = {}
        self.finished: dict[str, float] = {}
        self.lock = threading.Lock()

    def work(self, n: int, n_workers: int, go: threading.Barrier) -> None:
        """One worker: its share first, then the others' (so contention is real)."""
        from sfn_patterns.status_table import StaleAttemptError, TaskAlreadySucceededError, Tracker

        tracker = Tracker(
            self.table,
            "bench",
            host=self.endpoint,
            region=REGION,
            worker_id=f"w{n}",
            lease_seconds=30,
        )
        mine = self.ids[n::n_workers]
        todo = mine + [t for t in self.ids if t not in set(mine)]
        go.wait(timeout=60)
        deadline = time.monotonic() + 120
        while todo and time.monotonic() < deadline:
            again = []
            for task_id in todo:
                with self.lock:
                    self.first_try.setdefault(task_id, time.monotonic())
                try:
                    attempt = tracker.start(task_id)
                except TaskAlreadySucceededError:
                    continue
                except Exception:  # locked, or throttled past the SDK's retries: later
                    again.append(task_id)
                    continue
                try:
                    with attempt, self.lock:
                        self.effects[task_id] += 1
                    with self.lock:
                        self.finished[task_id] = time.monotonic()
                except StaleAttemptError:
                    continue
                except Exception:  # the success could not be recorded: try again later
                    again.append(task_id)
            todo = again
            if todo:
                time.sleep(0.2)


def run_status_table(endpoint: str, rate: float, sizes: Sizes) -> Outcome:
    """N tasks, the worker threads, the table throttled at ``rate``."""
    for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        os.environ.setdefault(key, value)
    from sfn_patterns.status_table import Status, Tracker

    table = f"bench-faults-{uuid.uuid4().hex[:8]}"
    setup = Tracker(table, "bench", host=endpoint, region=REGION)
    setup.create_table_if_not_exists()
    ids = [f"task-{i:04d}" for i in range(sizes.tasks)]
    setup.create_tasks(ids)
    workers = _Workers(endpoint, table, ids)
    go = threading.Barrier(sizes.workers)
    with faults.applied(endpoint, status_table_plan(table, rate)):
        threads = [
            threading.Thread(target=workers.work, args=(n, sizes.workers, go))
            for n in range(sizes.workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=200)
        log = faults.log(endpoint)
    records = {t.task_id: t for status in Status for t in setup.query(status)}
    done = [tid for tid in ids if tid in records and records[tid].status is Status.SUCCEEDED]
    leaked = sum(1 for t in records.values() if t.status is Status.IN_PROGRESS)
    client(endpoint, "dynamodb").delete_table(TableName=table)
    return Outcome(
        operations=sizes.tasks,
        faults=Counter(entry["kind"] for entry in log),
        lost=sizes.tasks - len(done),
        duplicates=sum(n - 1 for n in workers.effects.values() if n > 1),
        over_admissions=None,
        leaked=leaked,
        durations=[workers.finished[t] - workers.first_try[t] for t in workers.finished],
    )


# --- semaphore (callback) ------------------------------------------------------------------


def semaphore_plan(
    roles: list[str], functions: list[str], cleanup_rule: str, rate: float
) -> dict[str, Any]:
    """The semaphore's mixed plan at ``rate`` (none at 0 %).

    tests/semaphore/fault_run.py's mix, less the stale ListExecutions (strategy
    callback lists nothing); the cleanup events dropped and doubled at the rate too.
    """
    if not rate:
        return {"seed": SEED, "faults": []}
    return scenarios.semaphore_mix(
        roles=roles,
        functions=functions,
        rate=rate,
        seed=SEED,
        cleanup_rule=cleanup_rule,
        cleanup="at-rate",
        stale_list=False,
        conflicts=True,
    )


def _lock_state(dynamodb: Any, outputs: dict[str, Any]) -> tuple[int, int]:
    """(holder_count + leases, waiter items) of the lock and its queue."""
    item = dynamodb.get_item(
        TableName=outputs["lock_table_name"],
        Key={"pk": {"S": outputs["lock_key"]}},
        ConsistentRead=True,
    )["Item"]
    held = int(item["holder_count"]["N"]) + sum(1 for k in item if k.startswith("h_"))
    queued = dynamodb.scan(TableName=outputs["queue_table_name"], ConsistentRead=True)["Count"]
    return held, queued


def run_semaphore(endpoint: str, outputs: dict[str, Any], rate: float, sizes: Sizes) -> Outcome:
    """N executions of the embedded machine at once under the plan at ``rate``."""
    sfn = client(endpoint, "stepfunctions")
    lam = client(endpoint, "lambda")
    dynamodb = client(endpoint, "dynamodb")
    functions = [outputs["callback_function_name"], outputs["cleanup_function_name"]]
    roles = [lam.get_function(FunctionName=f)["Configuration"]["Role"] for f in functions]
    plan = semaphore_plan(roles, functions, outputs["cleanup_rule_name"], rate)
    with faults.applied(endpoint, plan):
        arns = [
            sfn.start_execution(
                stateMachineArn=outputs["embedded_state_machine_arn"],
                input=json.dumps({"sleep_seconds": sizes.hold, "n": i}),
            )["executionArn"]
            for i in range(sizes.executions)
        ]
        done = wait_stopped(sfn, arns, timeout=120 + 10 * sizes.executions)
        log = faults.log(endpoint)
    lost = sum(1 for arn in arns if done.get(arn, {}).get("status") != "SUCCEEDED")
    entered = {arn: [e for e in history(sfn, arn) if _entered(e) == SECTION] for arn in arns}
    duplicates = sum(max(0, len(events) - 1) for events in entered.values())
    intervals = []
    for arn in arns:
        item = dynamodb.get_item(
            TableName=outputs["record_table_name"],
            Key={"execution_id": {"S": arn}},
            ConsistentRead=True,
        ).get("Item")
        if item:
            intervals.append((float(item["entered_at"]["N"]), float(item["left_at"]["N"])))
    peak = peak_overlap(intervals) if intervals else 0
    lam.invoke(FunctionName=outputs["reconciler_function_name"], Payload=b"{}")
    deadline = time.monotonic() + 60
    while (state := _lock_state(dynamodb, outputs)) != (0, 0) and time.monotonic() < deadline:
        time.sleep(1)
    return Outcome(
        operations=sizes.executions,
        faults=Counter(entry["kind"] for entry in log),
        lost=lost,
        duplicates=duplicates,
        over_admissions=max(0, peak - sizes.limit),
        leaked=sum(state),
        durations=[
            (d["stopDate"] - d["startDate"]).total_seconds()
            for d in done.values()
            if d["status"] == "SUCCEEDED"
        ],
    )


def _entered(event: dict[str, Any]) -> str | None:
    return event.get("stateEnteredEventDetails", {}).get("name")


# --- job-poller -----------------------------------------------------------------------------


def job_poller_plan(outputs: dict[str, Any], roles: dict[str, str], rate: float) -> dict[str, Any]:
    """The job poller's mix at ``rate`` (none at 0 %): status checks, events, wake-ups."""
    if not rate:
        return {"seed": SEED, "faults": []}
    lambda_check = {"service": "lambda", "operation": "Invoke", "resource": "*-get-job-status"}
    sdk_check = {
        "service": "stepfunctions",
        "operation": "DescribeExecution",
        "caller_role": roles["sdk"],
    }
    status = [
        ({**check, "kind": kind}, 0, rate / 2)
        for check in (lambda_check, sdk_check)
        for kind in ("throttle", "internal_error")
    ]
    return scenarios.job_poller_mix(
        status=status,
        completion_rule=outputs["events_completion_rule_name"],
        completion_role=roles["completion"],
        rate=rate,
        seed=SEED,
        certain_events=False,
    )


def planned_job(variant: str, n: int) -> tuple[dict[str, Any], bool]:
    """The n-th job of a poller, and whether it is planned to fail.

    Every third fails, from the second on: the smoke's two jobs per poller hold one of each.
    """
    fails = n % 3 == 1
    job: dict[str, Any] = {"duration_seconds": 2 + n % 2}
    if fails:
        job["outcome"] = "fail"
    elif variant == "sdk":
        job["outcome"] = "succeed"  # the child's Choice needs one
    return job, fails


def run_job_poller(endpoint: str, outputs: dict[str, Any], rate: float, sizes: Sizes) -> Outcome:
    """N jobs per poller at once under the plan at ``rate``; each outcome checked."""
    sfn = client(endpoint, "stepfunctions")
    roles = {
        "sdk": sfn.describe_state_machine(stateMachineArn=outputs["sdk_state_machine_arn"])[
            "roleArn"
        ],
        "completion": client(endpoint, "lambda").get_function(
            FunctionName=outputs["events_completion_function_name"]
        )["Configuration"]["Role"],
    }
    planned: dict[str, bool] = {}
    with faults.applied(endpoint, job_poller_plan(outputs, roles, rate)):
        for variant in JOB_VARIANTS:
            for n in range(sizes.jobs):
                job, fails = planned_job(variant, n)
                arn = sfn.start_execution(
                    stateMachineArn=outputs[f"{variant}_state_machine_arn"],
                    input=json.dumps({"job": job}),
                )["executionArn"]
                planned[arn] = fails
        done = wait_stopped(sfn, list(planned), timeout=180 + 5 * len(planned))
        log = faults.log(endpoint)
    lost = duplicates = 0
    durations = []
    for arn, fails in planned.items():
        described = done.get(arn)
        expected = ("FAILED", "JobPoller.JobFailed") if fails else ("SUCCEEDED", None)
        if described is None or (described["status"], described.get("error")) != expected:
            lost += 1
            continue
        started, decided = job_starts_and_decisions(history(sfn, arn))
        duplicates += max(0, started - 1) + max(0, decided - 1)
        durations.append((described["stopDate"] - described["startDate"]).total_seconds())
    return Outcome(
        operations=len(planned),
        faults=Counter(entry["kind"] for entry in log),
        lost=lost,
        duplicates=duplicates,
        over_admissions=None,
        leaked=None,
        durations=durations,
    )


# --- sqs-throttle ---------------------------------------------------------------------------


def sqs_throttle_plan(outputs: dict[str, Any], rate: float) -> dict[str, Any]:
    """The throttle's mix at ``rate`` (none at 0 %): starts, lists, deliveries, crashes."""
    if not rate:
        return {"seed": SEED, "faults": []}
    return scenarios.sqs_throttle_mix(
        starter_role=outputs["starter_role_arn"],
        queue_url=outputs["queue_url"],
        starter_function=outputs["starter_function_name"],
        seed=SEED,
        throttle={"probability": rate},
        stale_list={"probability": rate},
        duplicate_delivery={"probability": rate},
        kill={"probability": rate / 2},
        conflict={"probability": rate},
    )


def run_sqs_throttle(endpoint: str, outputs: dict[str, Any], rate: float, sizes: Sizes) -> Outcome:
    """N requests queued, the starter run until the queue is empty, under ``rate``."""
    sfn, sqs = client(endpoint, "stepfunctions"), client(endpoint, "sqs")
    lam = client(endpoint, "lambda")
    run = uuid.uuid4().hex[:6]
    requests = [f"bf-{run}-{i:03d}" for i in range(sizes.requests)]
    queued_at = {}
    for i, request_id in enumerate(requests):
        queued_at[execution_name(request_id)] = time.time()
        enqueue(
            outputs["queue_url"],
            {"seconds": sizes.hold},
            request_id=request_id,
            group_id=f"g{i % 5}",
            client=sqs,
        )
    with faults.applied(endpoint, sqs_throttle_plan(outputs, rate)):
        starter_runs.run_until_empty(
            lam,
            sqs,
            outputs["queue_url"],
            outputs["starter_function_name"],
            timeout=120 + 10 * sizes.requests,
        )
        log = faults.log(endpoint)
    ours = set(queued_at)
    listed = [
        item
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=outputs["target_state_machine_arn"]
        )
        for item in page["executions"]
        if item["name"] in ours
    ]
    done = wait_stopped(sfn, [item["executionArn"] for item in listed], timeout=60 + sizes.hold)
    started = Counter(item["name"] for item in listed)
    succeeded = {d["name"]: d for d in done.values() if d["status"] == "SUCCEEDED"}
    lost = sum(1 for name in ours if name not in succeeded)
    lost += queues.depth(sqs, outputs["dlq_url"])
    peak = peak_overlap(
        [(d["startDate"].timestamp(), d["stopDate"].timestamp()) for d in done.values()]
    )
    return Outcome(
        operations=len(requests),
        faults=Counter(entry["kind"] for entry in log),
        lost=lost,
        duplicates=sum(n - 1 for n in started.values()),
        over_admissions=max(0, peak - outputs["max_concurrency"]),
        leaked=None,
        durations=[d["stopDate"].timestamp() - queued_at[name] for name, d in succeeded.items()],
    )


# --- dag-aggregate (dependency) -------------------------------------------------------------

DAG_CONCURRENCY = 3
STATEMENT = "sfn-dag "  # the module names each task's statement "sfn-dag <task>"


@dataclass
class DagWorkload:
    """A generated DAG on a workgroup of its own: each task's parents, its SQL directory."""

    workgroup: str
    parents: dict[str, set[str]]
    sql_dir: Path

    @classmethod
    def create(cls, endpoint: str, n: int, scratch: Path) -> DagWorkload:
        """A DAG of n tasks (seeded), its files written and their tables created.

        A root selects 1; any other task counts its parents' rows. Each task's table
        then holds one row whose value is 1 (root) or its number of parents, but only
        if every task ran once, after its parents: a task run twice holds two rows, a
        parent run twice or after its child changes the count.
        """
        parents = random_dag(n, seed=SEED, max_parents=3, window=8)
        sql_dir = scratch / "sql"
        sql_dir.mkdir(parents=True)
        for name, deps in parents.items():
            reads = " UNION ALL ".join(f"SELECT x FROM agg.{p}" for p in sorted(deps))
            body = f"SELECT COUNT(*) AS x FROM ({reads}) AS r" if deps else "SELECT 1 AS x"
            (sql_dir / f"{name}.sql").write_text(
                f"-- sfn: mode=append wait=0\n/* sfnp:sleep=1 */ {body}\n"
            )
        workload = cls(f"wg-bf-{uuid.uuid4().hex[:6]}", parents, sql_dir)
        workload.sql(endpoint, ["CREATE SCHEMA agg"])
        workload.sql(endpoint, [f"CREATE TABLE agg.{t} (x BIGINT)" for t in parents])
        return workload

    def expected(self, task: str) -> int:
        """The one value the task's table holds after a correct run."""
        return len(self.parents[task]) or 1

    def sql(self, endpoint: str, statements: list[str]) -> str:
        """Run statements (batches of 40) to completion on the workgroup; the last one's id."""
        redshift = client(endpoint, "redshift-data")
        last = ""
        for i in range(0, len(statements), 40):
            last = redshift.batch_execute_statement(
                WorkgroupName=self.workgroup, Database="dev", Sqls=statements[i : i + 40]
            )["Id"]
            while (status := redshift.describe_statement(Id=last)["Status"]) not in (
                "FINISHED",
                "FAILED",
                "ABORTED",
            ):
                time.sleep(0.05)
            if status != "FINISHED":
                raise RuntimeError(f"dag-aggregate set-up statement {status}: {statements[i]}")
        return last

    def rows(self, endpoint: str) -> dict[str, list[int]]:
        """Each task's table: the values it holds (one query for all)."""
        union = " UNION ALL ".join(f"SELECT '{t}' AS t, x FROM agg.{t}" for t in self.parents)
        redshift = client(endpoint, "redshift-data")
        sid = redshift.execute_statement(WorkgroupName=self.workgroup, Database="dev", Sql=union)[
            "Id"
        ]
        while redshift.describe_statement(Id=sid)["Status"] not in ("FINISHED", "FAILED"):
            time.sleep(0.05)
        found: dict[str, list[int]] = {t: [] for t in self.parents}
        for page in redshift.get_paginator("get_statement_result").paginate(Id=sid):
            for record in page["Records"]:
                found[record[0]["stringValue"]].append(int(record[1]["longValue"]))
        return found

    def statements(self, endpoint: str) -> list[dict[str, Any]]:
        """Every task statement the module ran on the workgroup so far."""
        redshift = client(endpoint, "redshift-data")
        return [
            statement
            for page in redshift.get_paginator("list_statements").paginate(
                StatementName=STATEMENT, Status="ALL", WorkgroupName=self.workgroup
            )
            for statement in page["Statements"]
        ]


def dag_plan(outputs: dict[str, Any], roles: dict[str, str], rate: float) -> dict[str, Any]:
    """The dependency strategy's mix at ``rate`` (none at 0 %).

    The task executions' Data API calls and the runtime's DynamoDB calls throttled, its
    writes refused for a transaction conflict, the runtime killed mid-invoke at half
    the rate, completion events delivered twice.
    """
    if not rate:
        return {"seed": SEED, "faults": []}
    data_api = [
        {
            "service": "redshift-data",
            "operation": operation,
            "kind": "throttle",
            "caller_role": roles["task"],
            "probability": rate,
        }
        for operation in ("ExecuteStatement", "DescribeStatement")
    ]
    return {
        "seed": SEED,
        "faults": [
            *data_api,
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "throttle",
                "caller_role": roles["runtime"],
                "probability": rate,
            },
            {
                "service": "dynamodb",
                "operation": "*",
                "kind": "transaction_conflict",
                "caller_role": roles["runtime"],
                "probability": rate,
            },
            {
                "service": "lambda",
                "operation": "Invoke",
                "kind": "kill",
                "resource": outputs["runtime_function_name"],
                "seconds": 0.2,
                "probability": rate / 2,
            },
            {
                "service": "events",
                "operation": "PutEvents",
                "kind": "event_duplicate",
                "resource": outputs["completion_rule_name"],
                "probability": rate,
            },
        ],
    }


def _task_executions(sfn: Any, outputs: dict[str, Any], run_id: str) -> list[dict[str, Any]]:
    """The run's task executions (each one's name starts with its run id)."""
    return [
        execution
        for page in sfn.get_paginator("list_executions").paginate(
            stateMachineArn=outputs["task_state_machine_arn"]
        )
        for execution in page["executions"]
        if execution["name"].startswith(f"{run_id}-")
    ]


def _take_over(sfn: Any, outputs: dict[str, Any], arn: str, run_id: str) -> str:
    """Stop the coordinator once its first task runs; start another on the same run id."""
    deadline = time.monotonic() + 120
    while not _task_executions(sfn, outputs, run_id):
        if time.monotonic() > deadline:
            raise RuntimeError(f"dag-aggregate: {run_id} started no task in 120 s")
        time.sleep(0.3)
    sfn.stop_execution(executionArn=arn, error="Bench", cause="the coordinator killed")
    wait_stopped(sfn, [arn], timeout=60)
    return sfn.start_execution(
        stateMachineArn=outputs["state_machine_arn"], input=json.dumps({"run_id": run_id})
    )["executionArn"]


def _run_item(dynamodb: Any, outputs: dict[str, Any], run_id: str) -> dict[str, Any]:
    return dynamodb.get_item(
        TableName=outputs["runs_table_name"],
        Key={"pk": {"S": run_id}, "sk": {"S": "run"}},
        ConsistentRead=True,
    ).get("Item", {})


def _ready_items(dynamodb: Any, outputs: dict[str, Any], run_id: str) -> int:
    """Tasks still queued for a slot: the run's ready items (modules/dag-aggregate's layout)."""
    return dynamodb.query(
        TableName=outputs["runs_table_name"],
        KeyConditionExpression="pk = :r AND begins_with(sk, :p)",
        ExpressionAttributeValues={":r": {"S": run_id}, ":p": {"S": "ready#"}},
        ConsistentRead=True,
        Select="COUNT",
    )["Count"]


def run_dag_aggregate(
    endpoint: str, outputs: dict[str, Any], workload: DagWorkload, rate: float
) -> Outcome:
    """One run of the workload's DAG under the plan at ``rate`` (and, above 0 %, a takeover)."""
    sfn, lam = client(endpoint, "stepfunctions"), client(endpoint, "lambda")
    tasks = sorted(workload.parents)
    workload.sql(endpoint, [f"DELETE FROM agg.{t}" for t in tasks])
    before = {s["Id"] for s in workload.statements(endpoint)}
    roles = {
        "task": sfn.describe_state_machine(stateMachineArn=outputs["task_state_machine_arn"])[
            "roleArn"
        ],
        "runtime": lam.get_function(FunctionName=outputs["runtime_function_name"])["Configuration"][
            "Role"
        ],
    }
    run_id = f"bf-{uuid.uuid4().hex[:8]}"
    with faults.applied(endpoint, dag_plan(outputs, roles, rate)):
        arn = sfn.start_execution(
            stateMachineArn=outputs["state_machine_arn"], input=json.dumps({"run_id": run_id})
        )["executionArn"]
        if rate:
            arn = _take_over(sfn, outputs, arn, run_id)
        described = wait_stopped(sfn, [arn], timeout=120 + 10 * len(tasks)).get(arn, {})
        log = faults.log(endpoint)
    executions = _task_executions(sfn, outputs, run_id)
    by_task: Counter[str] = Counter()
    for execution in executions:
        payload = json.loads(
            sfn.describe_execution(executionArn=execution["executionArn"])["input"]
        )
        by_task[payload["task_id"]] += 1
    statements = [s for s in workload.statements(endpoint) if s["Id"] not in before]
    ran = Counter(s["StatementName"][len(STATEMENT) :] for s in statements)
    rows = workload.rows(endpoint)
    succeeded = described.get("status") == "SUCCEEDED"
    lost = sum(1 for t in tasks if not succeeded or set(rows[t]) != {workload.expected(t)})
    duplicates = sum(max(ran[t], by_task[t], len(rows[t]), 1) - 1 for t in tasks)
    peak = peak_overlap(
        [(s["CreatedAt"].timestamp(), s["UpdatedAt"].timestamp()) for s in statements]
    )
    # Settling: a task execution may still be closing after its report ended the run.
    ended = wait_stopped(sfn, [e["executionArn"] for e in executions], timeout=60)
    dynamodb = client(endpoint, "dynamodb")
    item = _run_item(dynamodb, outputs, run_id)
    active = sorted(item.get("active", {}).get("M", {}))
    queued = _ready_items(dynamodb, outputs, run_id)
    running = [e["name"] for e in executions if e["executionArn"] not in ended]
    held = len(active) + queued + len(running)
    if held:
        progress(f"dag-aggregate {run_id}: held {active}, {queued} queued, running {running}")
    return Outcome(
        operations=len(tasks),
        faults=Counter(entry["kind"] for entry in log)
        + Counter({"coordinator_kill": int(bool(rate))}),
        lost=lost,
        duplicates=duplicates,
        over_admissions=max(0, peak - DAG_CONCURRENCY),
        leaked=held,
        durations=[(e["stopDate"] - e["startDate"]).total_seconds() for e in ended.values()],
    )


@contextlib.contextmanager
def deployed(
    endpoint: str, example: str, variables: dict[str, Any], destroy: bool
) -> Iterator[dict[str, Any]]:
    """examples/<example> applied with ``variables``: its outputs (destroyed after if asked)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    workspace = Workspace(REPO / "examples" / example, endpoint, scratch, log=lambda _: None)
    applied = False
    try:
        progress(f"{example}: terraform apply")
        workspace.init()
        workspace.apply(variables)
        applied = True
        yield workspace.outputs()
    finally:
        if destroy and applied:
            progress(f"{example}: terraform destroy")
            workspace.destroy(variables)
        workspace.close()
        shutil.rmtree(scratch, ignore_errors=True)


# --- orchestration ------------------------------------------------------------------------


def _each_rate(pattern: str, run: Callable[[float], Outcome]) -> list[Outcome]:
    """``run`` at each fault rate in turn, with a progress line each."""
    outcomes = []
    for rate in RATES:
        progress(f"{pattern} at {rate:.0%}")
        outcomes.append(run(rate))
    return outcomes


def run_all(
    endpoint: str,
    patterns: list[str],
    sizes: Sizes,
    destroy: bool,
    *,
    alarms: bool = True,
    warm_up: bool = True,
) -> dict[str, list[Outcome]]:
    """Every pattern at every rate; what was applied is destroyed when ``destroy``.

    ``alarms``: create the semaphore module's CloudWatch alarms (no figure reads them;
    ``--smoke`` leaves them out, fewer resources to apply and destroy). ``warm_up``:
    run each applied example once, untimed, before the 0 % column, so its completion
    times leave the Lambdas' cold starts out; ``--smoke`` (whose times are not quoted,
    and whose counts do not depend on it) skips it.
    """
    results: dict[str, list[Outcome]] = {}
    if "status-table" in patterns:
        results["status-table"] = _each_rate(
            "status-table", lambda rate: run_status_table(endpoint, rate, sizes)
        )
    no_alarms = {} if alarms else {"alarms": {"create": False}}

    def measure(
        example: str,
        variables: dict[str, Any],
        run: Callable[[str, dict[str, Any], float, Sizes], Outcome],
        warm_sizes: Sizes,
        *,
        label: str | None = None,
        prepare: Callable[[dict[str, Any]], Any] | None = None,
    ) -> list[Outcome]:
        """examples/<example> applied, ``run`` at each rate on it (after a warm-up)."""
        with deployed(endpoint, example, variables, destroy) as outputs:
            if prepare:
                prepare(outputs)
            if warm_up:
                # Untimed and fault-free: the 0 % column must not pay the Lambdas' cold
                # starts.
                progress(f"{example}: warm-up")
                run(endpoint, outputs, 0.0, warm_sizes)
            return _each_rate(label or example, lambda rate: run(endpoint, outputs, rate, sizes))

    if "semaphore" in patterns:
        variables = {
            "name_prefix": f"bf-{uuid.uuid4().hex[:5]}",
            "strategy": "callback",
            "max_concurrency": sizes.limit,
            "fallback_seconds": 8,
            "acquire_timeout_seconds": 300,
            "execution_timeout_seconds": 120,
            **no_alarms,
        }
        results["semaphore"] = measure(
            "semaphore",
            variables,
            run_semaphore,
            Sizes(0, 0, sizes.limit + 1, sizes.limit, 0),
            label="semaphore (callback)",
            prepare=lambda outputs: client(endpoint, "events").disable_rule(
                Name=outputs["reconciler_rule_name"]
            ),
        )
    if "job-poller" in patterns:
        variables = {
            "name_prefix": f"bfj-{uuid.uuid4().hex[:5]}",
            "initial_wait_seconds": 1,
            "poll_interval_seconds": 1,
            # A lost event costs one fallback period: long enough for a late (3 s) or
            # doubled event to come first, short enough to keep a lost one's job cheap.
            "fallback_seconds": 6,
            "timeout_seconds": 120,
            "force_destroy": True,
            "task_retry": {"interval_seconds": 1, "max_attempts": 6, "backoff_rate": 2},
            **no_alarms,
        }
        results["job-poller"] = measure(
            "job-poller", variables, run_job_poller, Sizes(0, 0, 0, 0, 0, jobs=1)
        )
    if "sqs-throttle" in patterns:
        variables = {
            "name_prefix": f"bfq-{uuid.uuid4().hex[:5]}",
            "max_concurrency": 4,
            # The bench is the schedule (one starter run after another).
            "schedule_enabled": False,
            "max_seconds_per_run": 20,
            "recheck_seconds": 1,
            # Doubled deliveries and crashed runs count receives: room for them before
            # a message counts as poison.
            "max_receive_count": 10,
            "visibility_timeout_seconds": 30,
            **no_alarms,
        }
        results["sqs-throttle"] = measure(
            "sqs-throttle", variables, run_sqs_throttle, Sizes(0, 0, 0, 0, 1, requests=2)
        )
    if "dag-aggregate" in patterns:
        scratch = Path(tempfile.mkdtemp(prefix="bench-faults-dag-"))
        try:
            workload = DagWorkload.create(endpoint, sizes.dag_tasks, scratch)
            variables = {
                "name_prefix": f"bfd-{uuid.uuid4().hex[:5]}",
                "strategy": "dependency",
                **workgroup_variables(workload.workgroup),
                "max_concurrency": DAG_CONCURRENCY,
                "sql_dir": str(workload.sql_dir),
                **no_alarms,
            }
            results["dag-aggregate"] = measure(
                "dag-aggregate",
                variables,
                lambda endpoint, outputs, rate, _: run_dag_aggregate(
                    endpoint, outputs, workload, rate
                ),
                sizes,
                label="dag-aggregate (dependency)",
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return results


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "n/a"


def rows(pattern: str, outcomes: list[Outcome]) -> list[str]:
    """The Markdown rows of one pattern: one column per rate."""
    base = outcomes[0]
    lines = [f"| **{pattern}** |" + " |" * len(outcomes)]
    lines.append("| operations | " + " | ".join(str(o.operations) for o in outcomes) + " |")
    kinds = sorted({kind for o in outcomes for kind in o.faults})
    lines.append(
        "| faults injected | "
        + " | ".join(
            ", ".join(f"{kind} {o.faults[kind]}" for kind in kinds if o.faults[kind]) or "0"
            for o in outcomes
        )
        + " |"
    )
    for name in COUNTS:
        cells = [o.counts()[name] for o in outcomes]
        lines.append(
            f"| {name} | " + " | ".join("n/a" if c is None else str(c) for c in cells) + " |"
        )
    for pct in (50, 90):
        base_value = percentile(base.durations, pct) if base.durations else 0.0
        cells = [f"{base_value:.1f} s"] + [
            _ratio(percentile(o.durations, pct), base_value) if o.durations else "n/a"
            for o in outcomes[1:]
        ]
        lines.append(f"| completion p{pct} | " + " | ".join(cells) + " |")
    return lines


def table(results: dict[str, list[Outcome]], sizes: Sizes) -> str:
    """The whole Markdown table, and the sizes it was measured at."""
    lines = ["| | " + " | ".join(f"{rate:.0%} faults" for rate in RATES) + " |"]
    lines.append("|---|" + "---:|" * len(RATES))
    for pattern, outcomes in results.items():
        lines += rows(pattern, outcomes)
    lines.append("")
    lines.append(
        f"status-table: {sizes.tasks} tasks, {sizes.workers} worker threads; semaphore "
        f"(callback): {sizes.executions} executions at once, limit {sizes.limit}, "
        f"{sizes.hold:g} s each; job-poller: {sizes.jobs} jobs per poller (Lambda, aws-sdk, "
        "events), 2-3 s each, a third failing by plan, 6 retries per Task; sqs-throttle: "
        f"{sizes.requests} requests, MAX 4, {sizes.hold:g} s each; dag-aggregate "
        f"(dependency): one run of {sizes.dag_tasks} generated tasks per rate, 1 s each, "
        f"max_concurrency {DAG_CONCURRENCY}, the coordinator killed and taken over once "
        "above 0 % (completion: each task execution's start to end); "
        f"seed {SEED}; {bench.localstack_label()} in-process. Completion "
        "p50/p90: seconds at 0 %, ratio to 0 % otherwise."
    )
    return "\n".join(lines)


def failures(results: dict[str, list[Outcome]]) -> list[str]:
    """Every count that is not 0, named."""
    found = []
    for pattern, outcomes in results.items():
        for rate, outcome in zip(RATES, outcomes, strict=True):
            for name, value in outcome.counts().items():
                if value:
                    found.append(f"{pattern} at {rate:.0%}: {name} = {value}")
    return found


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run every pattern at every rate, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog="Set LOCALSTACK_ENDPOINT to use a running LocalStack (what is applied is then "
        "destroyed, unless --keep); otherwise one is started in-process and thrown away. "
        "Exits 1 when a request was lost, a run doubled, a limit exceeded or a slot leaked.",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="smallest run that fills every column: 12 tasks on 3 workers, 3 executions, "
        "2 jobs per poller, 6 requests, a DAG of 6 tasks",
    )
    parser.add_argument(
        "--tasks", type=int, default=200, help="status-table tasks per rate (default 200)"
    )
    parser.add_argument(
        "--workers", type=int, default=8, help="status-table worker threads (default 8)"
    )
    parser.add_argument(
        "--executions", type=int, default=12, help="semaphore executions per rate (default 12)"
    )
    parser.add_argument("--limit", type=int, default=2, help="semaphore limit (default 2)")
    parser.add_argument(
        "--jobs", type=int, default=10, help="job-poller jobs per poller per rate (default 10)"
    )
    parser.add_argument(
        "--requests", type=int, default=24, help="sqs-throttle requests per rate (default 24)"
    )
    parser.add_argument(
        "--dag-tasks",
        type=int,
        default=24,
        help="dag-aggregate tasks in the generated DAG, one run per rate (default 24)",
    )
    parser.add_argument(
        "--hold", type=float, default=2, help="seconds each execution holds its slot (default 2)"
    )
    parser.add_argument(
        "--only", action="append", choices=PATTERNS, help="run only this pattern (repeatable)"
    )
    bench.add_keep_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        # Still contended (3 workers on 12 tasks), still one waiter over the limit of 2.
        args.tasks, args.workers, args.executions, args.hold = 12, 3, 3, 1
        args.jobs, args.requests, args.dag_tasks = 2, 6, 6
    sizes = Sizes(
        args.tasks,
        args.workers,
        args.executions,
        args.limit,
        args.hold,
        jobs=args.jobs,
        requests=args.requests,
        dag_tasks=args.dag_tasks,
    )
    patterns = [p for p in PATTERNS if not args.only or p in args.only]
    with bench.localstack(progress, args.keep) as (endpoint, destroy):
        results = run_all(
            endpoint,
            patterns,
            sizes,
            destroy=destroy,
            alarms=not args.smoke,
            warm_up=not args.smoke,
        )
    progress("done")
    print(table(results, sizes))
    found = failures(results)
    for line in found:
        print(f"NOT 0: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
