#!/usr/bin/env python3
"""Measured makespans and per-task costs of the three dag-aggregate strategies on LocalStack.

The example DAG (examples/dag-aggregate/sql, 12 tasks, 4 levels) is copied with each
task's statement slowed by a ``/* sfnp:sleep=N */`` comment, N drawn from a seeded
lognormal and scaled so that the lower bound max(critical path, total work / N) is
``--target`` seconds. Each task also gets ``duration=N`` (the dependency strategy's
priority estimate) and ``wait=N`` (with polls, its first status poll lands when it
should be done; later polls every second). Then the example is applied once per
strategy and completion mode (``event``: each statement's status-change event resumes
its task; ``poll``: describeStatement polls) in one workspace and run. The makespan is
the execution's start-to-stop time as Step Functions records it, so it includes every
overhead (child executions, Lambda calls, polls, events), and is printed next to the
simulated makespan and the lower bound.

Per task, from the execution histories: billed state transitions (states entered plus
task retries) and history events, for the level strategies the run's single
execution divided by its 12 tasks (stage overhead included), for the dependency
strategy the mean over its 12 task executions (the coordinator's few events left
out). Each history's length is also checked against the plan-time budget's formula
(``sfn_patterns_cli.dag_aggregate.history``) for the polls it shows; the script
exits 1 on any difference.

Run: .venv/bin/python scripts/bench_dag_strategies.py [--target 45] [--smoke]
(LOCALSTACK_ENDPOINT=URL to use a running LocalStack; what is applied is destroyed.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import boto3

from sfn_patterns_cli.dag_aggregate import ddl, history
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.simulate import critical_path, lower_bound, simulate
from sfn_patterns_cli.dag_aggregate.synthetic import heavy_tailed_durations
from sfn_patterns_localstack.terraform import Workspace

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dag-aggregate"
STRATEGIES = ("simple-level", "parent-level", "dependency")
COMPLETIONS = ("event", "poll")
_CONFIG = re.compile(r"^\s*--\s*sfn:(.*)$")
# With 1-s polls the level strategies' history budget allows short task timeouts only.
POLL_TASK_TIMEOUT = 120


def slowed_copy(source: Path, target: Path, durations: dict[str, int]) -> None:
    """Copy the task files with sleep hints and duration/wait config for each task."""
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.sql")):
        lines = path.read_text().splitlines()
        config = [
            token
            for line in lines
            if (match := _CONFIG.match(line))
            for token in match.group(1).split()
            if not token.startswith(("wait=", "duration="))
        ]
        body = [line for line in lines if not _CONFIG.match(line)]
        seconds = durations[path.stem]
        header = " ".join([*config, f"wait={seconds}", f"duration={seconds}"])
        text = f"-- sfn: {header}\n/* sfnp:sleep={seconds} */\n" + "\n".join(body) + "\n"
        (target / path.name).write_text(text)


def scaled_durations(tasks: list[str], graph: Any, slots: int, target: float, seed: int) -> dict:
    """Integer seconds (>= 1) whose lower bound is about ``target``."""
    raw = heavy_tailed_durations(tasks, seed)
    scale = target / lower_bound(graph, raw, slots)
    return {t: max(1, round(v * scale)) for t, v in raw.items()}


def run_sql(client: Any, workgroup: str, sql: str) -> None:
    """Run one set-up statement to completion."""
    sid = client.execute_statement(WorkgroupName=workgroup, Database="dev", Sql=sql)["Id"]
    while (status := client.describe_statement(Id=sid)["Status"]) not in ("FINISHED", "FAILED"):
        time.sleep(0.05)
    if status != "FINISHED":
        raise RuntimeError(f"set-up failed: {sql[:80]}")


def statements(sql_dir: Path) -> list[str]:
    """The example's set-up script plus one CREATE TABLE per task."""
    return ddl.setup_statements((EXAMPLE / "setup.sql").read_text(), plan_from_dir(sql_dir))


def history_of(sfn: Any, arn: str) -> list[dict[str, Any]]:
    """Every event of one execution."""
    events, token = [], None
    while True:
        page = sfn.get_execution_history(
            executionArn=arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


def costs(events: list[dict[str, Any]], completion: str) -> dict[str, int]:
    """Billed transitions, history events and polls (or fallback checks) of one history."""
    types = [e["type"] for e in events]
    if completion == "event":
        polls = types.count("TaskTimedOut")
    else:
        polls = sum(
            1
            for e in events
            if e["type"] == "WaitStateEntered"
            and e["stateEnteredEventDetails"]["name"].endswith("Poll Wait Poll")
        )
    entered = sum(1 for t in types if t.endswith("StateEntered"))
    retries = types.count("TaskScheduled") - types.count("TaskStateEntered")
    return {"transitions": entered + retries, "events": len(events), "polls": polls}


def task_costs(
    sfn: Any, outputs: dict, strategy: str, *, execution: dict, options: RenderOptions, plan: Any
) -> tuple[float, float, list[str]]:
    """Per-task transitions and history events, and every mismatch with the formulas."""
    problems = []
    if strategy != "dependency":
        measured = costs(history_of(sfn, execution["executionArn"]), options.completion)
        expected = history.level_history(plan, strategy, options, measured["polls"])
        if measured["events"] != expected:
            problems.append(f"{strategy}: {measured['events']} history events, formula {expected}")
        tasks = len(plan.level)
        return measured["transitions"] / tasks, measured["events"] / tasks, problems
    runs = sfn.list_executions(stateMachineArn=outputs["task_state_machine_arn"])["executions"]
    per_task = [costs(history_of(sfn, r["executionArn"]), options.completion) for r in runs]
    for measured in per_task:
        expected = history.task_execution_history(options, measured["polls"])
        if measured["events"] != expected:
            problems.append(f"dependency task: {measured['events']} events, formula {expected}")
    return (
        statistics.mean(m["transitions"] for m in per_task),
        statistics.mean(m["events"] for m in per_task),
        problems,
    )


def run(args: argparse.Namespace, endpoint: str, destroy: bool) -> int:
    """Apply the example once per strategy and completion mode, run it, print the table."""
    session = boto3.Session(
        aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )

    def aws(service: str) -> Any:
        return session.client(service, endpoint_url=endpoint)

    scratch = Path(tempfile.mkdtemp(prefix="bench-dag-"))
    plan = plan_from_dir(EXAMPLE / "sql")
    durations = scaled_durations(
        sorted(plan.tasks), plan.reduced, args.max_concurrency, args.target, args.seed
    )
    sql_dir = scratch / "sql"
    slowed_copy(EXAMPLE / "sql", sql_dir, durations)
    slowed = plan_from_dir(sql_dir)

    floor = lower_bound(plan.reduced, durations, args.max_concurrency)
    simulated = simulate(plan.reduced, plan.stages, durations, args.max_concurrency)["makespan"]
    workspace = Workspace(EXAMPLE, endpoint, scratch / "tf", log=lambda line: None)
    variables: dict[str, object] = {}
    rows: dict[tuple[str, str], dict[str, float]] = {}
    problems: list[str] = []
    try:
        workspace.init()
        for completion in args.completions:
            for strategy in args.strategies:
                # A warehouse per run: each starts from the example's empty tables.
                workgroup = f"wg-bench-{uuid.uuid4().hex[:6]}"
                for statement in statements(sql_dir):
                    run_sql(aws("redshift-data"), workgroup, statement)
                timeout = 600 if completion == "event" else POLL_TASK_TIMEOUT
                variables = {
                    "name_prefix": f"bench-{uuid.uuid4().hex[:5]}",
                    "strategy": strategy,
                    "redshift_workgroup_name": workgroup,
                    "max_concurrency": args.max_concurrency,
                    "sql_dir": str(sql_dir),
                    "completion": completion,
                    "task_timeout_seconds": timeout,
                }
                # Same workspace: the apply replaces the previous run's resources.
                workspace.apply(variables)
                outputs = workspace.outputs()
                sfn = aws("stepfunctions")
                execution = sfn.start_execution(
                    stateMachineArn=outputs["state_machine_arn"], input=json.dumps({})
                )
                while (described := sfn.describe_execution(executionArn=execution["executionArn"]))[
                    "status"
                ] == "RUNNING":
                    time.sleep(0.5)
                if described["status"] != "SUCCEEDED":
                    raise RuntimeError(f"{strategy}, {completion}: {described['status']}")
                options = RenderOptions(
                    target=Target(database="dev", workgroup_name=workgroup),
                    completion=completion,
                    completion_function_arn="arn:aws:lambda:us-east-1:000000000000:function:x",
                    default_wait=1,
                    poll_interval=1,
                    default_timeout=timeout,
                )
                transitions, events, mismatches = task_costs(
                    sfn, outputs, strategy, execution=described, options=options, plan=slowed
                )
                problems += mismatches
                measured = (described["stopDate"] - described["startDate"]).total_seconds()
                rows[(strategy, completion)] = {
                    "measured": measured,
                    "transitions": transitions,
                    "events": events,
                }
                print(
                    f"  {strategy}, {completion}: {measured:.1f} s, {transitions:.1f} "
                    f"transitions and {events:.1f} history events per task",
                    file=sys.stderr,
                )
    finally:
        try:
            if variables and destroy:
                workspace.destroy(variables)
        finally:
            workspace.close()

    print(
        f"example DAG, 12 tasks, max_concurrency {args.max_concurrency}, seed {args.seed}; "
        f"durations (s): {json.dumps(durations, sort_keys=True)}"
    )
    print(
        f"critical path {critical_path(plan.reduced, durations):.0f} s, total work "
        f"{sum(durations.values())} s, lower bound {floor:.1f} s\n"
    )
    print(
        "| strategy | completion | simulated (s) | measured (s) | measured / lower bound "
        "| transitions per task | history events per task |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for (strategy, completion), row in rows.items():
        print(
            f"| {strategy} | {completion} | {simulated[strategy]:.1f} | {row['measured']:.1f} | "
            f"{row['measured'] / floor:.2f} | {row['transitions']:.1f} | {row['events']:.1f} |"
        )
    for problem in problems:
        print(f"MISMATCH {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start LocalStack unless LOCALSTACK_ENDPOINT is set, run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=45, help="lower bound to aim for (s)")
    parser.add_argument("--max-concurrency", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--completions", nargs="+", default=list(COMPLETIONS), choices=COMPLETIONS)
    parser.add_argument(
        "--smoke", action="store_true", help="a 6-s DAG, parent-level and dependency, events"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.target, args.strategies, args.completions = (
            6,
            ["parent-level", "dependency"],
            ["event"],
        )
    endpoint = os.environ.get("LOCALSTACK_ENDPOINT")
    if endpoint:
        return run(args, endpoint.rstrip("/"), destroy=True)
    from sfn_patterns_localstack import server

    instance = server.start()
    try:
        return run(args, instance.endpoint, destroy=False)
    finally:
        instance.stop()


if __name__ == "__main__":
    sys.exit(main())
