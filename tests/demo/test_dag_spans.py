"""The demo's Gantt chart of a dependency run comes from the run document (run_results v1)."""

from __future__ import annotations

from datetime import UTC, datetime

from sfn_patterns_localstack.demo.patterns import spans_from_run_results

STARTED = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _result(task: str, status: str, start: str | None, end: str | None) -> dict:
    return {"task": task, "status": status, "attempt": 1, "started_at": start, "finished_at": end}


def test_reported_tasks_become_spans_relative_to_the_execution_start() -> None:
    document = {
        "metadata": {"schema_version": "sfn-patterns/dag-aggregate/run-results/v1"},
        "results": [
            _result("a", "success", "2026-01-01T12:00:01.500Z", "2026-01-01T12:00:04Z"),
            _result("b", "error", "2026-01-01T12:00:04.250+00:00", "2026-01-01T12:00:05.250Z"),
            _result("c", "skipped", None, None),
        ],
    }
    spans = spans_from_run_results(document, STARTED)
    assert [(s.task, s.start, s.end, s.status) for s in spans] == [
        ("a", 1.5, 4.0, "SUCCEEDED"),
        ("b", 4.25, 5.25, "FAILED"),
    ]


def test_a_document_of_another_schema_version_gives_no_spans() -> None:
    document = {
        "metadata": {"schema_version": "sfn-patterns/dag-aggregate/run-results/v2"},
        "results": [_result("a", "success", "2026-01-01T12:00:01Z", "2026-01-01T12:00:02Z")],
    }
    assert spans_from_run_results(document, STARTED) == []
