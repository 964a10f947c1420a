#!/usr/bin/env python3
"""Measured makespans of the three dag-aggregate strategies on LocalStack.

The example DAG (examples/dag-aggregate/sql, 12 tasks, 4 levels) is copied with each
task's statement slowed by a ``/* sfnp:sleep=N */`` comment, N drawn from a seeded
lognormal and scaled so that the lower bound max(critical path, total work / N) is
``--target`` seconds. Each task also gets ``duration=N`` (the dependency strategy's
priority estimate) and ``wait=N`` (its first status poll lands when it should be
done; later polls every second). Then the example is applied once per strategy in one
workspace and run; the makespan is the execution's start-to-stop time as Step
Functions records it, so it includes every overhead (child executions, Lambda calls,
polls), and is printed next to the simulated makespan and the lower bound.

Run: .venv/bin/python scripts/bench_dag_strategies.py [--endpoint URL] [--target 45]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import boto3

from sfn_patterns_cli.dag_aggregate import ddl
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.simulate import critical_path, lower_bound, simulate
from sfn_patterns_cli.dag_aggregate.synthetic import heavy_tailed_durations
from sfn_patterns_localstack.terraform import Workspace

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dag-aggregate"
STRATEGIES = ("simple-level", "parent-level", "dependency")
_CONFIG = re.compile(r"^\s*--\s*sfn:(.*)$")


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


def run(args: argparse.Namespace, endpoint: str) -> int:
    """Apply the example once per strategy, run it, print the table."""
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
    workgroup = f"wg-bench-{uuid.uuid4().hex[:6]}"
    for statement in statements(sql_dir):
        run_sql(aws("redshift-data"), workgroup, statement)

    floor = lower_bound(plan.reduced, durations, args.max_concurrency)
    simulated = simulate(plan.reduced, plan.stages, durations, args.max_concurrency)["makespan"]
    workspace = Workspace(EXAMPLE, endpoint, scratch / "tf", log=lambda line: None)
    variables: dict[str, object] = {}
    measured: dict[str, float] = {}
    try:
        workspace.init()
        for strategy in args.strategies:
            variables = {
                "name_prefix": f"bench-{uuid.uuid4().hex[:5]}",
                "strategy": strategy,
                "redshift_workgroup_name": workgroup,
                "max_concurrency": args.max_concurrency,
                "sql_dir": str(sql_dir),
            }
            # Same workspace: the apply replaces the previous strategy's resources.
            workspace.apply(variables)
            arn = workspace.outputs()["state_machine_arn"]
            sfn = aws("stepfunctions")
            execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps({}))
            while (described := sfn.describe_execution(executionArn=execution["executionArn"]))[
                "status"
            ] == "RUNNING":
                time.sleep(0.5)
            if described["status"] != "SUCCEEDED":
                raise RuntimeError(f"{strategy}: {described['status']}")
            measured[strategy] = (described["stopDate"] - described["startDate"]).total_seconds()
            print(f"  {strategy}: {measured[strategy]:.1f} s", file=sys.stderr)
    finally:
        try:
            if variables:
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
    print("| strategy | simulated (s) | measured (s) | measured / lower bound |")
    print("|---|---:|---:|---:|")
    for strategy in args.strategies:
        print(
            f"| {strategy} | {simulated[strategy]:.1f} | {measured[strategy]:.1f} | "
            f"{measured[strategy] / floor:.2f} |"
        )
    return 0


def main() -> int:
    """Parse arguments, start LocalStack unless --endpoint is given, run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", help="an existing LocalStack (default: start one)")
    parser.add_argument("--target", type=float, default=45, help="lower bound to aim for (s)")
    parser.add_argument("--max-concurrency", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
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
