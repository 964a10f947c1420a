#!/usr/bin/env python
"""Benchmark the job poller's three waits: the loop, retry polling and event completion.

Applies modules/job-poller three times (Lambda variant, the sample job, DynamoDB
store) to LocalStack: ``polling = "loop"`` (the 4-state loop of earlier versions),
``polling = "retry"`` (the Lambda variant's default) and ``completion = "event"``.
It runs sample jobs of a few short durations through each and reads every execution
history:

* the module's cost model (its ``cost_model`` output: transitions and history events
  per job and per poll) must give exactly the history's length and its billed
  transitions (states entered plus task retries) for the polls the history shows;
* the number of polls must be what the polling schedule predicts for the job's
  duration: ``ceil((D - W0) / P)`` for the loop and retry polling, ``ceil(D / F) - 1``
  fallback checks for event completion (the job's end arrives as an event);
* the delay from the job's end (its own clock, in its status record) to the execution
  moving on (its Check state) is measured.

Long durations (1 min, 30 min, 6 h) are then computed from the same formulas with
production settings, W0 = 15 min and P = 1 min for polling and F = 10 min for the
event fallback, and printed side by side as Markdown rows (columns ``loop``,
``retry``, ``event``). It exits 1 if any formula disagrees with a history.

Examples::

    .venv/bin/python scripts/bench_job_poller.py                 # starts LocalStack
    LOCALSTACK_ENDPOINT=http://127.0.0.1:4566 .venv/bin/python scripts/bench_job_poller.py
    .venv/bin/python scripts/bench_job_poller.py --smoke         # one job per wait
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3

from sfn_patterns.job_poller.store import execution_key
from sfn_patterns_localstack import bench
from sfn_patterns_localstack.executions import history, wait_stopped
from sfn_patterns_localstack.terraform.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "modules" / "job-poller"
REGION = "us-east-1"
MODES = ("loop", "retry", "event")
# Production settings of the long-duration rows: W0 = 15 min, P = 1 min, F = 10 min.
PRODUCTION = {"initial_wait": 900, "interval": 60, "fallback": 600}
LONG = {"1 min": 60, "30 min": 1800, "6 h": 21600}
# LocalStack's own latency around a poll or a timeout (seconds).
EDGE_SECONDS = 0.5

CONFIG = """
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
variable "initial_wait" { type = number }
variable "interval" { type = number }
variable "fallback" { type = number }
variable "timeout" { type = number }
variable "alarms" { type = bool }

module "loop" {
  source                = "MODULE"
  name                  = "${var.name_prefix}-loop"
  polling               = "loop"
  alarms                = { create = var.alarms }
  initial_wait_seconds  = var.initial_wait
  poll_interval_seconds = var.interval
  timeout_seconds       = var.timeout
  metadata_store        = "dynamodb"
}

module "retry" {
  source                = "MODULE"
  name                  = "${var.name_prefix}-retry"
  polling               = "retry"
  alarms                = { create = var.alarms }
  initial_wait_seconds  = var.initial_wait
  poll_interval_seconds = var.interval
  timeout_seconds       = var.timeout
  metadata_store        = "dynamodb"
}

module "event" {
  source           = "MODULE"
  name             = "${var.name_prefix}-event"
  completion       = "event"
  alarms           = { create = var.alarms }
  fallback_seconds = var.fallback
  timeout_seconds  = var.timeout
  metadata_store   = "dynamodb"
}

output "pollers" {
  value = {
    for name, poller in { loop = module.loop, retry = module.retry, event = module.event } :
    name => {
      arn   = poller.state_machine_arn
      model = poller.cost_model
      table = poller.metadata_table_name
    }
  }
}
"""


def progress(message: str) -> None:
    """Progress on stderr; the table alone goes to stdout."""
    print(f"bench_job_poller: {message}", file=sys.stderr, flush=True)


def polls_for(
    mode: str, duration: float, initial_wait: float, interval: float, fallback: float
) -> int:
    """Status checks after the first (fallback checks for events) a job of ``duration`` needs.

    Polling: the first check comes after W0, then one every P until the job is done.
    Events: the end arrives as an event; the fallback fires every F before it.
    """
    if mode == "event":
        return max(0, math.ceil(duration / fallback) - 1)
    return max(0, math.ceil((duration - initial_wait) / interval))


def measure(mode: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """Polls, billed transitions, history length and task invocations of one execution."""
    types = [e["type"] for e in events]
    entered = sum(1 for t in types if t.endswith("StateEntered"))
    retries = types.count("TaskScheduled") - types.count("TaskStateEntered")
    polls = {
        "loop": sum(
            1
            for e in events
            if e["type"] == "PassStateEntered"
            and e["stateEnteredEventDetails"]["name"].endswith(" Count")
        ),
        "retry": sum(
            1
            for e in events
            if e["type"] == "TaskFailed"
            and e["taskFailedEventDetails"].get("error") == "JobStillRunning"
        ),
        "event": types.count("TaskTimedOut"),
    }[mode]
    # The execution moves on at its last Check; it starts waiting when Run Job returns.
    check = [
        e["timestamp"]
        for e in events
        if e["type"] == "ChoiceStateEntered"
        and e["stateEnteredEventDetails"]["name"].endswith(" Check")
    ][-1]
    waiting = next(e["timestamp"] for e in events if e["type"] == "TaskStateExited")
    # Lambda tasks after Run Job: the status checks of the loop and of retry polling.
    lambdas = [
        e["timestamp"].timestamp()
        for e in events
        if e["type"] == "TaskScheduled"
        and e["taskScheduledEventDetails"]["resourceType"] == "lambda"
    ]
    return {
        "polls": polls,
        "transitions": entered + retries,
        "events": len(events),
        "task_invocations": len(lambdas),
        "checks": [t - waiting.timestamp() for t in lambdas[1:]],
        "moved_on": check.timestamp(),
        "waiting_from": waiting.timestamp(),
    }


def job_end(ddb: Any, table: str, execution_arn: str) -> float:
    """When the sample job ended, by its own clock (``at`` in its status record)."""
    item = ddb.get_item(
        TableName=table,
        Key={"pk": {"S": f"{execution_key(execution_arn)}#job"}, "sk": {"S": "status"}},
        ConsistentRead=True,
    )["Item"]
    return float(json.loads(item["doc"]["S"])["at"])


def cost(model: dict[str, Any], polls: int) -> dict[str, int]:
    """What the module's cost model says a job with ``polls`` polls costs."""
    return {
        "transitions": model["transitions_fixed"] + polls * model["transitions_per_poll"],
        "events": model["history_events_fixed"] + polls * model["history_events_per_poll"],
        "invocations": model["lambda_invocations_fixed"]
        + polls * model["lambda_invocations_per_poll"],
    }


def run(args: argparse.Namespace, endpoint: str, destroy: bool) -> int:
    """Apply the three pollers, run the jobs, check the formulas, print the table."""

    def client(service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

    sfn, ddb = client("stepfunctions"), client("dynamodb")
    scratch = Path(tempfile.mkdtemp(prefix="jpbench-"))
    config = scratch / "config"
    config.mkdir()
    # A relative source: Terraform copies a module given by absolute path, which
    # breaks the module's own relative sources (../lambda-function).
    (config / "main.tf").write_text(CONFIG.replace("MODULE", os.path.relpath(MODULE, config)))
    variables = {
        "name_prefix": f"jpb-{int(time.time()) % 100000}",
        "initial_wait": args.initial_wait,
        "interval": args.interval,
        "fallback": args.fallback,
        "timeout": int(max(args.durations) * 3 + 60),
        # What is measured is the wait, not its alarms: --smoke leaves the module's
        # alarms out (about a fifth of the resources a smoke would apply and destroy).
        "alarms": not args.smoke,
    }
    workspace = Workspace(config, endpoint, scratch, log=lambda line: None)
    try:
        progress("applying three pollers (loop, retry, event) ...")
        workspace.init()
        workspace.apply(variables)
        pollers = workspace.outputs()["pollers"]
        progress("warming the Lambdas up (one 1-s job per wait) ...")
        warm = [
            sfn.start_execution(
                stateMachineArn=pollers[mode]["arn"],
                input=json.dumps({"job": {"duration_seconds": 1}}),
            )["executionArn"]
            for mode in MODES
        ]
        wait_stopped(sfn, warm, timeout=120)
        started = {
            (mode, duration): sfn.start_execution(
                stateMachineArn=pollers[mode]["arn"],
                input=json.dumps({"job": {"duration_seconds": duration}}),
            )["executionArn"]
            for mode in MODES
            for duration in args.durations
        }
        progress(f"running {len(started)} jobs ({', '.join(map(str, args.durations))} s) ...")
        # One describe call per interval (of the first execution still running), not one
        # per pending execution: the waiting itself is not what is measured.
        stopped = wait_stopped(sfn, list(started.values()), max(args.durations) * 3 + 120)
        if len(stopped) < len(started):
            progress("some executions did not finish in time")
            return 1
        results: dict[tuple[str, float], dict[str, Any]] = {}
        for key, arn in started.items():
            measured = measure(key[0], history(sfn, arn))
            measured["status"] = stopped[arn]["status"]
            ended = job_end(ddb, pollers[key[0]]["table"], arn)
            measured["delay"] = measured["moved_on"] - ended
            # The job as the poller saw it: from Run Job's return to the job's end
            # (the runner's own start may lag the request by a cold start).
            measured["waited"] = ended - measured["waiting_from"]
            results[key] = measured
        return report(args, pollers, results)
    finally:
        if destroy:
            progress("destroying ...")
            try:
                workspace.destroy(variables)
            finally:
                workspace.close()
                shutil.rmtree(scratch, ignore_errors=True)


def polled(measured: dict[str, Any], args: argparse.Namespace, most: int) -> int | str:
    """The polls the loop's or retry polling's own status checks account for.

    With no latency the checks come at exactly W0, W0 + P, ... after Run Job returns, and
    the polls are ``polls_for`` the job's duration. A loaded machine only delays them
    (each cycle is P plus LocalStack's and the Lambda's latency, which piles up over the
    cycles), so the schedule is checked on the history's own clock instead: the first
    check no sooner than W0 and each next one no sooner than P after the one before, but
    less than one more interval late (a poller waiting twice would fail); every check
    before the job's end a poll (within EDGE_SECONDS of it either way); and never more
    polls than the schedule allows (``most``). Returns the polls expected, or what broke.
    """
    checks = measured["checks"]
    if not checks:
        return "no status check"
    first = (args.initial_wait - EDGE_SECONDS, args.initial_wait + args.interval)
    if not first[0] <= checks[0] < first[1]:
        return f"first check {checks[0]:.2f} s after Run Job, outside {first}"
    for before, after in itertools.pairwise(checks):
        gap = after - before
        if not args.interval - EDGE_SECONDS <= gap < 2 * args.interval:
            return f"checks {gap:.2f} s apart, interval {args.interval} s"
    waited, polls = measured["waited"], measured["polls"]
    low = sum(1 for at in checks if at < waited - EDGE_SECONDS)
    high = sum(1 for at in checks if at < waited + EDGE_SECONDS)
    if not low <= polls <= high:
        return f"{low} to {high} (checks before the job's end)"
    return polls if polls <= most else most


def report(args: argparse.Namespace, pollers: dict[str, Any], results: dict) -> int:
    """Check every formula against the histories, then print the table; 0 when all agree."""
    problems = []
    for (mode, duration), measured in sorted(results.items()):
        model = pollers[mode]["model"]
        # Polls the schedule predicts for the job as the poller saw it; within
        # EDGE_SECONDS of a poll boundary either neighbour is accepted (latency).
        allowed = {
            polls_for(mode, waited, args.initial_wait, args.interval, args.fallback)
            for waited in (measured["waited"] - EDGE_SECONDS, measured["waited"] + EDGE_SECONDS)
        }
        if mode == "event":
            expected_polls = measured["polls"] if measured["polls"] in allowed else min(allowed)
        else:
            expected_polls = polled(measured, args, max(allowed))
        predicted = cost(model, measured["polls"])
        task_invocations = predicted["invocations"] - (1 if mode == "event" else 0)
        checks = {
            "status": (measured["status"], "SUCCEEDED"),
            "polls (schedule)": (measured["polls"], expected_polls),
            "transitions (cost model)": (measured["transitions"], predicted["transitions"]),
            "history events (cost model)": (measured["events"], predicted["events"]),
            "task invocations (cost model)": (measured["task_invocations"], task_invocations),
        }
        for what, (got, want) in checks.items():
            if got != want:
                problems.append(f"{mode}, {duration:g} s job: {what} {got}, expected {want}")
        progress(
            f"{mode:>5} {duration:>5g} s (waited {measured['waited']:.2f} s): {measured['polls']}"
            f" polls, {measured['transitions']} transitions, {measured['events']} events, "
            f"delay {measured['delay']:.2f} s"
        )
    for problem in problems:
        progress(f"MISMATCH {problem}")

    settings = dict(PRODUCTION)
    rows: list[tuple[str, list[str]]] = []

    def at(duration: float, field: str) -> list[str]:
        cells = []
        for mode in MODES:
            polls = polls_for(
                mode, duration, settings["initial_wait"], settings["interval"], settings["fallback"]
            )
            cells.append(f"{cost(pollers[mode]['model'], polls)[field]:,}")
        return cells

    for label, seconds in LONG.items():
        rows.append((f"transitions per job, {label}", at(seconds, "transitions")))
    rows.append(("history events per job, 30 min", at(LONG["30 min"], "events")))
    rows.append(
        (
            "history events per poll",
            [str(pollers[m]["model"]["history_events_per_poll"]) for m in MODES],
        )
    )
    rows.append(("Lambda invocations per job, 30 min", at(LONG["30 min"], "invocations")))
    rows.append(
        (
            "delay after job end, median (s)",
            [
                f"{statistics.median(r['delay'] for (m, _), r in results.items() if m == mode):.2f}"
                for mode in MODES
            ],
        )
    )
    rows.append(
        (
            "LocalStack runs checked against the formulas",
            [f"{sum(1 for (m, _), r in results.items() if m == mode)}" for mode in MODES],
        )
    )
    jobs = ", ".join(f"{d:g}" for d in args.durations)
    print(
        f"Per job, from the module's cost model with W0 = {settings['initial_wait']} s and "
        f"P = {settings['interval']} s (loop, retry), F = {settings['fallback']} s (event); "
        f"formulas checked on LocalStack with jobs of {jobs} s (W0 = {args.initial_wait} s, "
        f"P = {args.interval} s, F = {args.fallback} s; delays measured there). Event: the "
        "job's end arrives as an event; the fallback fires every F before it.\n"
    )
    print("| per job | loop | retry | event |")
    print("|---|---:|---:|---:|")
    for label, cells in rows:
        print(f"| {label} | {' | '.join(cells)} |")
    if problems:
        print(f"\nMISMATCH in {len(problems)} check(s): see stderr")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start LocalStack unless LOCALSTACK_ENDPOINT is set, run."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Set LOCALSTACK_ENDPOINT to use a running LocalStack (what is applied is then "
        "destroyed, unless --keep); otherwise one is started in-process and thrown away.",
    )
    parser.add_argument(
        "--durations", type=float, nargs="+", default=[3.5, 6.5, 9.5], help="job seconds"
    )
    parser.add_argument("--initial-wait", type=int, default=2, help="W0 on LocalStack (s)")
    parser.add_argument("--interval", type=int, default=3, help="P on LocalStack (s)")
    parser.add_argument("--fallback", type=int, default=4, help="F on LocalStack (s)")
    parser.add_argument(
        "--smoke", action="store_true", help="one 8-s job per wait (P = 4 s, F = 5 s)"
    )
    bench.add_keep_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        # One 8-s job: 2 polls (W0 = 2, P = 4: checks due at 2, 6 and 10 s) and 1
        # fallback check (F = 5: due at 5 and 10 s), each boundary 2 s or more away, so
        # a loaded machine's late checks and late events still give the scheduled count.
        args.durations, args.interval, args.fallback = [8.0], 4, 5
    with bench.localstack(progress, args.keep) as (endpoint, destroy):
        return run(args, endpoint, destroy=destroy)


if __name__ == "__main__":
    sys.exit(main())
