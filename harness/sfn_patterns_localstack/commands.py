"""The harness's commands of ``sfn-patterns``: ``localstack start|stop|status`` and ``demo``.

The CLI distribution finds them through the ``sfn_patterns.commands`` entry points
(this distribution's ``pyproject.toml``), so the layers point one way: the harness
imports the CLI, never the reverse.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

# The modules behind the commands (LocalStack's launcher, boto3, the demo) are imported
# when a command runs, not when ``sfn-patterns`` starts: every other command, such as
# the planner's ``sfn-patterns dag ...``, loads this module through the entry point.


def stock_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--stock PORT`` option of ``start`` and ``stop`` (a stock LocalStack's port)."""
    return click.option(
        "--stock", "stock_port", type=int, metavar="PORT", default=None, help=help_text
    )


@click.group("localstack")
def localstack_group() -> None:
    """Run LocalStack in-process on loopback (no Docker), with this project's plugins."""


@localstack_group.command("start")
@click.option("--port", default=4566, show_default=True, help="Gateway port on 127.0.0.1.")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".localstack"),
    show_default=True,
    help="Where the pid file and log are kept.",
)
@stock_option(
    "Start a stock LocalStack on PORT instead: none of the project's fixes, IAM, faults or "
    "metrics (Lambda on local processes and DynamoDB on moto, as there is no Docker). It "
    "runs beside the project's own; the portable suite targets it."
)
def localstack_start(port: int, state_dir: Path, stock_port: int | None) -> None:
    """Start LocalStack in the background and wait until it is healthy."""
    from sfn_patterns_localstack import server

    if stock_port is not None:
        endpoint = server.start_daemon(port=stock_port, state_dir=state_dir, stock=True)
    else:
        endpoint = server.start_daemon(port=port, state_dir=state_dir)
    click.echo(endpoint)


@localstack_group.command("stop")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".localstack"),
    show_default=True,
    help="Where `start` kept the pid file.",
)
@stock_option("Stop the stock LocalStack that `start --stock PORT` started.")
def localstack_stop(state_dir: Path, stock_port: int | None) -> None:
    """Stop a LocalStack started with `sfn-patterns localstack start`."""
    from sfn_patterns_localstack import server

    stopped = server.stop_daemon(state_dir=state_dir, stock_port=stock_port)
    click.echo("stopped" if stopped else "not running")


@localstack_group.command("status")
@click.option("--endpoint", default="http://127.0.0.1:4566", show_default=True)
def localstack_status(endpoint: str) -> None:
    """Print LocalStack's service health, or exit 1 when it is not reachable."""
    from sfn_patterns_localstack import server

    health = server.health(endpoint)
    if health is None:
        click.echo(f"LocalStack is not reachable at {endpoint}", err=True)
        sys.exit(1)
    click.echo(json.dumps(health, indent=2))


@click.command("demo")
@click.option("--endpoint", help="Use this LocalStack instead of starting one.")
@click.option("--keep", is_flag=True, help="Leave the deployment and LocalStack running.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("build/demo-report/index.html"),
    show_default=True,
    help="Where to write the self-contained HTML report.",
)
@click.option(
    "--name-prefix",
    default="sfnp-demo",
    show_default=True,
    help="Prefix of every resource name (use a distinct one on a shared LocalStack).",
)
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep Terraform state and data here (default: a new temporary directory).",
)
@click.option(
    "--aws-owned-keys",
    is_flag=True,
    help="Encrypt with AWS's keys instead of the customer managed KMS key the demo "
    "creates (examples/complete's create_kms_key = false).",
)
def demo_command(  # noqa: PLR0917 (click passes each option by position)
    endpoint: str | None,
    keep: bool,
    report_path: Path,
    name_prefix: str,
    work_dir: Path | None,
    aws_owned_keys: bool,
) -> None:
    """Deploy every pattern to LocalStack, run each once, print a summary, write a report.

    Everything is encrypted with a customer managed KMS key the demo creates, as a
    regulated account would (--aws-owned-keys: AWS's keys). Progress goes to stderr,
    the summary table to stdout; the exit code is 0 only when every pattern succeeded.
    """
    from sfn_patterns_localstack.demo import run

    sys.exit(
        run.run(
            endpoint=endpoint,
            keep=keep,
            report_path=report_path,
            name_prefix=name_prefix,
            work_dir=work_dir,
            customer_key=not aws_owned_keys,
        )
    )


@localstack_group.group("faults")
def faults_group() -> None:
    """Inject AWS failure modes into a running LocalStack from a fault plan.

    A plan is a JSON document: {"seed": 1, "faults": [{"service": "dynamodb",
    "operation": "PutItem", "kind": "throttle", "probability": 0.2}]}. Kinds: throttle,
    internal_error, unavailable, error, latency, stale_list, duplicate_delivery,
    event_duplicate, event_delay, event_drop, kill, timeout, transition_throttle. The
    schema is in the harness README (Fault injection) and
    sfn_patterns_localstack.emulation.faults.
    """


ENDPOINT_OPTION = click.option(
    "--endpoint",
    default="http://127.0.0.1:4566",
    show_default=True,
    help="URL of the running LocalStack (started by this harness).",
)


@faults_group.command("set")
@click.argument("plan_path", metavar="PLAN.json", type=click.Path(exists=True, dir_okay=False))
@ENDPOINT_OPTION
def faults_set(plan_path: str, endpoint: str) -> None:
    """Load PLAN.json (replacing any plan; its clock, counters and log start now).

    Each fault matches "service" and "operation" (or "*"), optionally "caller_role"
    and "resource" (globs), and fires with "probability", on the "first" n matching
    calls, or in a window ("after_seconds", "for_seconds"). An invalid plan is refused
    with the field named, and the running plan stays.
    """
    from sfn_patterns_localstack.emulation.faults import client
    from sfn_patterns_localstack.emulation.faults.plan import PlanError

    try:
        answer = client.set_plan(endpoint, plan_path)
    except PlanError as error:
        raise click.ClickException(f"{plan_path}: {error}") from None
    except client.FaultRouteError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{answer['faults']} fault(s) loaded at {endpoint}")


@faults_group.command("clear")
@ENDPOINT_OPTION
def faults_clear(endpoint: str) -> None:
    """Unload the plan: calls run fault-free again (the log is kept until the next set)."""
    from sfn_patterns_localstack.emulation.faults import client

    try:
        client.clear(endpoint)
    except client.FaultRouteError as error:
        raise click.ClickException(str(error)) from None
    click.echo("faults cleared")


@faults_group.command("log")
@ENDPOINT_OPTION
def faults_log(endpoint: str) -> None:
    """Print every fault injected since the plan was set, one JSON object a line."""
    from sfn_patterns_localstack.emulation.faults import client

    try:
        entries = client.log(endpoint)
    except client.FaultRouteError as error:
        raise click.ClickException(str(error)) from None
    for entry in entries:
        click.echo(json.dumps(entry, sort_keys=True))
