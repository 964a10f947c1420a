"""The harness's commands of ``sfn-patterns``: ``localstack start|stop|status`` and ``demo``.

The CLI distribution finds them through the ``sfn_patterns.commands`` entry points
(this distribution's ``pyproject.toml``), so the layers point one way: the harness
imports the CLI, never the reverse.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

# The modules behind the commands (LocalStack's launcher, boto3, the demo) are imported
# when a command runs, not when ``sfn-patterns`` starts: every other command, such as
# the planner's ``sfn-patterns dag ...``, loads this module through the entry point.


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
def localstack_start(port: int, state_dir: Path) -> None:
    """Start LocalStack in the background and wait until it is healthy."""
    from sfn_patterns_localstack import server

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
def localstack_stop(state_dir: Path) -> None:
    """Stop a LocalStack started with `sfn-patterns localstack start`."""
    from sfn_patterns_localstack import server

    stopped = server.stop_daemon(state_dir=state_dir)
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
def demo_command(
    endpoint: str | None,
    keep: bool,
    report_path: Path,
    name_prefix: str,
    work_dir: Path | None,
) -> None:
    """Deploy every pattern to LocalStack, run each once, print a summary, write a report.

    Progress goes to stderr, the summary table to stdout; the exit code is 0 only
    when every pattern succeeded.
    """
    from sfn_patterns_localstack.demo import run

    sys.exit(
        run.run(
            endpoint=endpoint,
            keep=keep,
            report_path=report_path,
            name_prefix=name_prefix,
            work_dir=work_dir,
        )
    )
