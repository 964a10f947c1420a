"""ListExecutions as of n seconds ago: what started since is missing, what stopped since runs."""

from __future__ import annotations

import datetime

from sfn_patterns_localstack.emulation.faults import stale_list

T0 = datetime.datetime(2026, 11, 25, 12, 0, 0, tzinfo=datetime.UTC)


def _at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def _execution(name: str, start: float, stop: float | None, status: str) -> dict:
    item = {"executionArn": f"arn:x:{name}", "name": name, "status": status}
    item["startDate"] = _at(start)
    if stop is not None:
        item["stopDate"] = _at(stop)
    return item


NOW = [
    _execution("new", 50, None, "RUNNING"),
    _execution("just-done", 10, 45, "SUCCEEDED"),
    _execution("long-done", 5, 20, "FAILED"),
    _execution("old-running", 1, None, "RUNNING"),
]


def test_the_view_as_of_a_cutoff() -> None:
    view = stale_list.as_of(NOW, _at(30))
    by_name = {e["name"]: e for e in view}
    assert list(by_name) == ["just-done", "long-done", "old-running"]  # newest first, "new" missing
    assert by_name["just-done"]["status"] == "RUNNING"
    assert "stopDate" not in by_name["just-done"]
    assert by_name["long-done"] == NOW[2]
    assert by_name["old-running"] == NOW[3]
    assert NOW[1]["status"] == "SUCCEEDED"  # the provider's answer is not modified


def test_the_original_filter_and_page_apply_to_the_view() -> None:
    view = stale_list.as_of(NOW, _at(30))
    running = stale_list.page(view, {"statusFilter": "RUNNING"})
    assert [e["name"] for e in running["executions"]] == ["just-done", "old-running"]
    assert "nextToken" not in running
    first = stale_list.page(view, {"maxResults": 2})
    assert [e["name"] for e in first["executions"]] == ["just-done", "long-done"]
    rest = stale_list.page(view, {"maxResults": 2, "nextToken": first["nextToken"]})
    assert [e["name"] for e in rest["executions"]] == ["old-running"]
    assert "nextToken" not in rest


def test_the_provider_is_asked_for_everything() -> None:
    wide = stale_list.widened(
        {"stateMachineArn": "arn:sm", "statusFilter": "RUNNING", "maxResults": 5, "nextToken": "x"}
    )
    assert wide == {"stateMachineArn": "arn:sm", "maxResults": 1000}
