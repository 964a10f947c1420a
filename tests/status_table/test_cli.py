from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from sfn_patterns.status_table import Status, Tracker
from sfn_patterns_cli.status_table.cli import group, parse_since

MakeTracker = Callable[..., Tracker]


class Boom(Exception):
    pass


@pytest.fixture
def populated(make_tracker: MakeTracker, clock) -> Tracker:
    clock.now = datetime.now(UTC)  # the CLI's --since is relative to the real clock
    tracker = make_tracker(max_retry=1)
    tracker.create_tasks(["ok", "bad", "fresh"])
    with tracker.start("ok"):
        pass
    with pytest.raises(Boom), tracker.start("bad"):
        raise Boom("it broke\nbadly")
    return tracker


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.output


def test_list_json_filters_by_status_and_since(populated: Tracker) -> None:
    base = ["list", "--table", populated.table_name, "--use-case", "orders"]
    code, out = run(*base, "--status", "ignored", "--since", "1h")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["task_id"], r["status"]) for r in rows] == [("bad", "ignored")]
    assert rows[0]["errors"][0]["message"] == "it broke\nbadly"
    code, out = run(*base)
    assert sorted(json.loads(line)["task_id"] for line in out.splitlines()) == [
        "bad",
        "fresh",
        "ok",
    ]
    code, out = run(*base, "--status", "ignored", "--since", "2999-01-01")
    assert (code, out) == (0, "")


def test_list_table_format(populated: Tracker) -> None:
    code, out = run(
        "list", "--table", populated.table_name, "--use-case", "orders", "--format", "table"
    )
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].split() == ["TASK_ID", "STATUS", "ATTEMPT", "RETRY", "UPDATED", "LAST_ERROR"]
    bad = next(line for line in lines if line.startswith("bad"))
    assert "ignored" in bad and "Boom: it broke badly" in bad
    # Columns are aligned: every row has its status exactly under the STATUS header.
    offset = lines[0].index("STATUS")
    assert sorted(line[offset:].split()[0] for line in lines[1:]) == [
        "ignored",
        "pending",
        "succeeded",
    ]


def test_reset_and_dry_run(populated: Tracker) -> None:
    base = ["reset", "--table", populated.table_name, "--use-case", "orders"]
    assert run(*base, "--dry-run") == (0, "would reset 1 task(s) to pending\n")
    assert populated.get("bad").status is Status.IGNORED
    assert run(*base, "--task-id", "ok") == (0, "reset 0 task(s) to pending\n")
    assert run(*base, "--status", "ignored") == (0, "reset 1 task(s) to pending\n")
    task = populated.get("bad")
    assert (task.status, task.retry) == (Status.PENDING, 0)


def test_missing_table_is_a_usage_error(moto_env: None) -> None:
    code, out = run("list", "--table", "no-such-table", "--use-case", "orders")
    assert code == 2
    assert "no-such-table" in out and "does not exist" in out


def test_bad_since_and_status_are_rejected(populated: Tracker) -> None:
    base = ["list", "--table", populated.table_name, "--use-case", "orders"]
    code, out = run(*base, "--since", "yesterday")
    assert code == 2 and "yesterday" in out
    code, out = run(
        "reset", "--table", populated.table_name, "--use-case", "orders", "--status", "succeeded"
    )
    assert code == 2


def test_parse_since() -> None:
    now = datetime(2026, 3, 31, tzinfo=UTC)
    assert parse_since("30d", now) == datetime(2026, 3, 1, tzinfo=UTC)
    assert parse_since("12h", now) == datetime(2026, 3, 30, 12, tzinfo=UTC)
    assert parse_since("2026-02-01", now) == datetime(2026, 2, 1, tzinfo=UTC)


def test_help_texts() -> None:
    for args in (["--help"], ["list", "--help"], ["reset", "--help"]):
        assert run(*args)[0] == 0
    assert "--since" in run("list", "--help")[1]
    assert "--dry-run" in run("reset", "--help")[1]
