"""``sfn-patterns demo``: deploy the examples to LocalStack and run each state machine once.

This is what ``make demo`` runs. It needs no AWS account: LocalStack runs
in-process on loopback (or at ``--endpoint``), Terraform applies the example
through the offline provider mirror, and the state machines invoke real handler
code from ``lambda_src/``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    """What one demo run of one state machine did."""

    name: str
    status: str
    seconds: float
    transitions: int
    detail: str


def _step(message: str) -> None:
    click.secho(f"==> {message}", fg="cyan", err=True)


def count_transitions(sfn: object, execution_arn: str) -> int:
    """State transitions billed for an execution (entered states, as AWS counts them)."""
    count = 0
    for page in sfn.get_paginator("get_execution_history").paginate(executionArn=execution_arn):
        count += sum(1 for event in page["events"] if event["type"].endswith("StateEntered"))
    return count


def run_execution(sfn: object, arn: str, payload: dict, timeout: float = 120) -> dict:
    """Start an execution, wait for it to finish, and return its description."""
    started = sfn.start_execution(stateMachineArn=arn, input=json.dumps(payload))
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=started["executionArn"])
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(0.5)


def _smoke(workspace: object, client: Callable[[str], object]) -> Outcome:
    outputs = workspace.outputs()
    sfn = client("stepfunctions")
    started = time.monotonic()
    described = run_execution(sfn, outputs["state_machine_arn"], {"order": 42})
    seconds = time.monotonic() - started
    detail = described.get("output") or described.get("cause") or ""
    if described["status"] == "SUCCEEDED":
        echo = json.loads(detail)["echo"]
        detail = f"Lambda {echo['function_name']} saw execution {echo['execution_id']}"
    return Outcome(
        "smoke",
        described["status"],
        seconds,
        count_transitions(sfn, described["executionArn"]),
        detail,
    )


def _status_table(workspace: object, client: Callable[[str], object]) -> Outcome:
    """Track five tasks (one of which fails) in the table Terraform created."""
    import os

    from sfn_patterns.status_table import Status, Tracker

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    endpoint = client("dynamodb").meta.endpoint_url
    tracker = Tracker(
        table_name=workspace.outputs()["table_name"],
        use_case_id="demo-orders",
        host=endpoint,
        region="us-east-1",
    )
    started = time.monotonic()
    task_ids = [f"order-{n}" for n in range(1, 6)]
    tracker.create_tasks(task_ids)
    for task_id in task_ids:
        try:
            with tracker.start(task_id):
                if task_id == "order-3":
                    raise ValueError("card declined")
        except ValueError:
            pass
    failed = [task.task_id for task in tracker.query(status=Status.FAILED)]
    succeeded = tracker.query(status=Status.SUCCEEDED)
    ok = failed == ["order-3"] and len(succeeded) == 4
    return Outcome(
        "status-table",
        "SUCCEEDED" if ok else "FAILED",
        time.monotonic() - started,
        0,
        f"{len(succeeded)} tasks succeeded, failed (GSI query): {', '.join(failed)}",
    )


# Example directory -> function that runs it once and reports the outcome.
EXAMPLES: dict[str, Callable[[object, Callable[[str], object]], Outcome]] = {
    "smoke": _smoke,
    "status-table": _status_table,
}


def run(endpoint: str | None = None, keep: bool = False) -> int:
    """Run the demo; return the process exit code (0 when every pattern succeeded)."""
    import boto3

    from sfn_patterns_localstack import server
    from sfn_patterns_localstack.terraform import Workspace

    localstack = None
    if endpoint is None:
        _step("starting LocalStack in-process on 127.0.0.1 (no Docker)")
        localstack = server.start()
        endpoint = localstack.endpoint
    _step(f"LocalStack ready at {endpoint}")

    def client(service: str) -> object:
        return boto3.client(
            service,
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

    scratch = Path(tempfile.mkdtemp(prefix="sfnp-demo-"))
    outcomes: list[Outcome] = []
    try:
        for name, runner in EXAMPLES.items():
            workspace = Workspace(
                REPO_ROOT / "examples" / name,
                endpoint,
                scratch / name,
                log=lambda line: click.echo(f"    {line}", err=True),
            )
            try:
                _step(f"[{name}] terraform init + apply")
                workspace.init()
                workspace.apply()
                _step(f"[{name}] running the pattern once")
                outcomes.append(runner(workspace, client))
                if not keep:
                    _step(f"[{name}] terraform destroy")
                    workspace.destroy()
            finally:
                if not keep:
                    workspace.close()
    finally:
        if localstack is not None and not keep:
            localstack.stop()

    click.echo("")
    click.secho("sfn-patterns demo summary", bold=True)
    click.echo(f"{'pattern':<16}{'status':<12}{'seconds':>8}{'transitions':>13}  detail")
    for outcome in outcomes:
        colour = "green" if outcome.status == "SUCCEEDED" else "red"
        click.echo(
            f"{outcome.name:<16}"
            + click.style(f"{outcome.status:<12}", fg=colour)
            + f"{outcome.seconds:>8.1f}{outcome.transitions:>13}  {outcome.detail}"
        )
    if keep and localstack is not None:
        click.echo(f"\nLocalStack left running at {endpoint} (pid {localstack.process.pid}).")
    return 0 if outcomes and all(o.status == "SUCCEEDED" for o in outcomes) else 1
