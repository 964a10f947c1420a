"""``sfn-patterns status``: inspect and reset tasks of a status table from a shell.

The operator's two questions are "what failed recently?" and "give the parked tasks
another try", so there are two commands: ``list`` and ``reset``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

import click
from pynamodb.exceptions import PynamoDBException

from sfn_patterns.status_table.model import TaskRecord
from sfn_patterns.status_table.statuses import RESETTABLE, Status
from sfn_patterns.status_table.tracker import Tracker

_DURATION = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str, now: datetime | None = None) -> datetime:
    """``30d``/``12h``/``15m``/``45s``/``2w`` ago, or an ISO date/datetime (UTC if naive)."""
    now = now or datetime.now(timezone.utc)
    match = _DURATION.match(value.strip())
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither a duration like 30d/12h/15m nor an ISO date"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _table_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--table", required=True, help="DynamoDB table name."),
        click.option("--use-case", "use_case", required=True, help="The use_case_id."),
        click.option("--region", default=None, help="AWS region (default: AWS config/env)."),
        click.option(
            "--endpoint-url",
            default=None,
            envvar="AWS_ENDPOINT_URL",
            help="DynamoDB endpoint, e.g. LocalStack's http://localhost:4566.",
        ),
        click.option(
            "--shards",
            default=4,
            show_default=True,
            type=click.IntRange(1, 99),
            help="n_shards the writers use (must match, or tasks are missed).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _tracker(
    table: str, use_case: str, region: str | None, endpoint: str | None, shards: int
) -> Tracker:
    try:
        tracker = Tracker(table, use_case, region=region, host=endpoint, n_shards=shards)
        exists = tracker.table_exists()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except PynamoDBException as exc:
        raise click.ClickException(f"cannot reach DynamoDB: {exc}") from None
    if not exists:
        where = f" at {endpoint}" if endpoint else (f" in {region}" if region else "")
        raise click.UsageError(f"table {table!r} does not exist{where}")
    return tracker


def _table_rows(records: Iterable[TaskRecord]) -> str:
    header = ("TASK_ID", "STATUS", "ATTEMPT", "RETRY", "UPDATED", "LAST_ERROR")
    rows = [header]
    for r in records:
        last = r.errors[-1] if r.errors else None
        error = f"{last.error_type}: {last.message}"[:60] if last else ""
        rows.append(
            (
                r.task_id,
                r.status.value,
                str(r.attempt),
                str(r.retry),
                r.update_time.isoformat(timespec="seconds"),
                error.replace("\n", " "),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    )


@click.group("status", context_settings={"help_option_names": ["-h", "--help"]})
def group() -> None:
    """Inspect and reset tasks in a status table (pending/in_progress/failed/succeeded/ignored).

    \b
    Examples:
      sfn-patterns status list --table tasks --use-case orders --status failed --since 30d
      sfn-patterns status reset --table tasks --use-case orders --status ignored --dry-run
    """


@group.command("list")
@_table_options
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in Status]),
    help="Status to list (repeatable). Default: every status.",
)
@click.option(
    "--since",
    default=None,
    help="Only tasks updated since: a duration (30d, 12h, 15m) or an ISO date (UTC if naive).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N per status.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "table"]),
    default="json",
    show_default=True,
    help="json: one JSON object per line and task; table: aligned columns.",
)
def list_cmd(
    *,
    table: str,
    use_case: str,
    region: str | None,
    endpoint_url: str | None,
    shards: int,
    statuses: tuple[str, ...],
    since: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """List tasks by status and last-update time (a GSI Query per status, never a Scan)."""
    since_at = parse_since(since) if since else None
    tracker = _tracker(table, use_case, region, endpoint_url, shards)
    records: list[TaskRecord] = []
    for status in statuses or [s.value for s in Status]:
        records.extend(tracker.query(status, since=since_at, limit=limit))
    if fmt == "table":
        click.echo(_table_rows(records))
        return
    for record in records:
        click.echo(json.dumps(record.to_json(), sort_keys=True))


@group.command("reset")
@_table_options
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(sorted(s.value for s in RESETTABLE)),
    help="Status to reset (repeatable). Default: ignored.",
)
@click.option(
    "--task-id",
    "task_ids",
    multiple=True,
    help="Reset only these tasks (repeatable); they must still be in one of --status.",
)
@click.option("--dry-run", is_flag=True, help="Count what would be reset; change nothing.")
def reset_cmd(
    *,
    table: str,
    use_case: str,
    region: str | None,
    endpoint_url: str | None,
    shards: int,
    statuses: tuple[str, ...],
    task_ids: tuple[str, ...],
    dry_run: bool,
) -> None:
    """Send ignored (or failed) tasks back to pending with retry 0, for another try.

    Tasks a worker picks up while the reset runs are skipped, never yanked back.
    """
    tracker = _tracker(table, use_case, region, endpoint_url, shards)
    count = tracker.reset(
        statuses=statuses or (Status.IGNORED.value,),
        task_ids=list(task_ids) or None,
        dry_run=dry_run,
    )
    verb = "would reset" if dry_run else "reset"
    click.echo(f"{verb} {count} task(s) to pending")
