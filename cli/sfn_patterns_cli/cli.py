"""The ``sfn-patterns`` command line.

One group per pattern (``dag``, ``status``) plus the LocalStack tooling. The
``localstack`` and ``demo`` commands come from the harness distribution
(``sfn-patterns-localstack``, Python 3.13) through the ``sfn_patterns.commands``
entry points; without it they say how to install it.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

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
    "git+https://example.com/sfn-patterns.git@v1.0.0#subdirectory=harness'"
)
# Commands other distributions add to ``sfn-patterns``. The harness adds ``localstack``
# and ``demo`` this way, so the CLI never imports the harness (the layers point one
# way: harness above CLI above runtime); without it installed they say how to get it.
COMMANDS_ENTRY_POINT_GROUP = "sfn_patterns.commands"
HARNESS_COMMANDS = {
    "localstack": "Run LocalStack in-process on loopback (needs sfn-patterns-localstack).",
    "demo": "Deploy every pattern to LocalStack and run each (needs sfn-patterns-localstack).",
}


def plugin_entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of one group (Python 3.9's API has no ``group=``)."""
    found = entry_points()
    if hasattr(found, "select"):
        return list(found.select(group=group))
    return list(found.get(group, []))  # type: ignore[attr-defined]


def missing_harness_command(name: str, help_text: str) -> click.Command:
    """A stand-in for a harness command: it exits 2 naming the install command."""

    @click.command(
        name,
        help=help_text,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
    )
    def command() -> None:
        click.echo(
            "error: this command runs LocalStack in-process and needs the harness "
            f"distribution (Python 3.13); install it with:\n  {HARNESS_INSTALL}",
            err=True,
        )
        sys.exit(2)

    return command


def _add_plugin_commands() -> None:
    """Attach the commands other installed distributions register (the harness's)."""
    for entry_point in plugin_entry_points(COMMANDS_ENTRY_POINT_GROUP):
        main.add_command(entry_point.load(), entry_point.name)
    for name, help_text in HARNESS_COMMANDS.items():
        if name not in main.commands:
            main.add_command(missing_harness_command(name, help_text), name)


def _add_pattern_groups() -> None:
    """Attach each pattern's command group (``sfn-patterns dag``, ...)."""
    from sfn_patterns_cli.dag_aggregate.cli import group as dag_group
    from sfn_patterns_cli.status_table.cli import group as status_group

    main.add_command(dag_group, "dag")
    main.add_command(status_group, "status")


_add_pattern_groups()
_add_plugin_commands()

if __name__ == "__main__":
    main()
