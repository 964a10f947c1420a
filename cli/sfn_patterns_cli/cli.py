"""The ``sfn-patterns`` command line.

One group per pattern (``dag``, ``status``) plus the LocalStack tooling. The
``localstack`` and ``demo`` commands need the harness distribution
(``sfn-patterns-localstack``, Python 3.11); without it they say how to install it.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import click

from sfn_patterns_cli import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sfn-patterns")
def main() -> None:
    """AWS Step Functions orchestration patterns: Terraform modules and Lambda packages.

    \b
    Typical use:
      sfn-patterns localstack start                   # LocalStack on 127.0.0.1:4566
      sfn-patterns demo                               # deploy and run the demo
      sfn-patterns dag plan --sql-dir examples/dag-aggregate/sql
      sfn-patterns status list --table T --use-case U --status failed --since 30d
    """


HARNESS_INSTALL = (
    "pip install 'sfn-patterns-localstack @ "
    "git+https://example.com/sfn-patterns.git@v0.2.0#subdirectory=harness'"
)


def harness(module: str) -> ModuleType:
    """Import ``sfn_patterns_localstack.<module>``, or exit 2 naming the install command."""
    try:
        return importlib.import_module(f"sfn_patterns_localstack.{module}")
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith(("sfn_patterns_localstack", "localstack")):
            raise
        click.echo(
            "error: this command runs LocalStack in-process and needs the harness "
            f"distribution (Python 3.11); install it with:\n  {HARNESS_INSTALL}",
            err=True,
        )
        sys.exit(2)


@main.group("localstack")
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
    server = harness("server")

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
    server = harness("server")

    stopped = server.stop_daemon(state_dir=state_dir)
    click.echo("stopped" if stopped else "not running")


@localstack_group.command("status")
@click.option("--endpoint", default="http://127.0.0.1:4566", show_default=True)
def localstack_status(endpoint: str) -> None:
    """Print LocalStack's service health, or exit 1 when it is not reachable."""
    server = harness("server")

    health = server.health(endpoint)
    if health is None:
        click.echo(f"LocalStack is not reachable at {endpoint}", err=True)
        sys.exit(1)
    click.echo(json.dumps(health, indent=2))


@main.command("demo")
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
def demo(
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
    demo_module = harness("demo")

    sys.exit(
        demo_module.run(
            endpoint=endpoint,
            keep=keep,
            report_path=report_path,
            name_prefix=name_prefix,
            work_dir=work_dir,
        )
    )


def _add_pattern_groups() -> None:
    """Attach each pattern's command group (``sfn-patterns dag``, ...)."""
    from sfn_patterns_cli.dag_aggregate.cli import group as dag_group
    from sfn_patterns_cli.status_table.cli import group as status_group

    main.add_command(dag_group, "dag")
    main.add_command(status_group, "status")


_add_pattern_groups()

if __name__ == "__main__":
    main()
