"""The demo's HTML report and Gantt charts, rendered from sample data (no LocalStack)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sfn_patterns_cli.dag_aggregate import draw
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_localstack import executions
from sfn_patterns_localstack.demo import patterns
from sfn_patterns_localstack.demo import run as demo
from sfn_patterns_localstack.demo.report import (
    AlarmRow,
    DagRun,
    DemoReport,
    ExecutionSummary,
    MetricSeries,
    PatternResult,
    TaskSpan,
    gantt,
    render,
    write,
)

REPO = Path(__file__).resolve().parents[2]
NASTY = '<script>alert("x")</script> & "quoted" \'single\''


def sample(**overrides: object) -> DemoReport:
    spans = [
        TaskSpan("daily_events", 0.2, 2.1, "Stage 1"),
        TaskSpan("user_segments", 2.2, 4.0, "Stage 2"),
        TaskSpan("kpi_overview", 4.1, 7.5, "Stage 3"),
    ]
    fields: dict[str, object] = {
        "patterns": [
            PatternResult(
                "job-poller",
                "SUCCEEDED",
                7.5,
                10,
                "polled",
                [ExecutionSummary("run-1", "SUCCEEDED", 7.4, 10)],
            ),
            PatternResult("dag-aggregate", "SUCCEEDED", 12.0, 105, "12 SQL tasks"),
        ],
        "dag_runs": [DagRun("parent-level", "SUCCEEDED", 10.8, 105, spans, "history")],
        "dag_svg": draw.svg(plan_from_dir(REPO / "examples" / "dag-aggregate" / "sql")),
        "endpoint": "http://127.0.0.1:4566",
        "generated_at": datetime(2026, 11, 22, 3, 0, tzinfo=UTC),
    }
    fields.update(overrides)
    return DemoReport(**fields)  # type: ignore[arg-type]


def test_report_shows_summary_dag_and_one_gantt_per_strategy() -> None:
    html = render(sample())
    assert html.startswith("<!DOCTYPE html>")
    assert 'id="verdict"' in html and "every pattern succeeded" in html
    for pattern in ("job-poller", "dag-aggregate"):
        assert f'<tr data-pattern="{pattern}">' in html
    assert html.count("<svg") == 2  # the DAG and one Gantt chart
    assert 'data-strategy="parent-level"' in html
    for task in ("daily_events", "user_segments", "kpi_overview"):
        assert f'data-task="{task}"' in html
    assert '<td class="num">105</td>' in html


def test_more_strategies_add_gantt_charts() -> None:
    runs = [
        DagRun(s, "SUCCEEDED", 1.0, 3, [TaskSpan("t", 0, 1, "s")]) for s in ("a-level", "b-dep")
    ]
    html = render(sample(dag_runs=runs))
    assert html.count('class="figure gantt"') == 2
    assert html.count("<svg") == 3


def test_report_is_self_contained() -> None:
    """No script, no external URL: it must open from file:// with no network."""
    html = render(sample())
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html, re.I)
    assert not re.search(r"@import", html, re.I)
    # The only URLs are SVG namespaces and the endpoint text shown to the reader.
    urls = set(re.findall(r"https?://[^\s\"'<)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://127.0.0.1:4566"}


def test_run_data_is_escaped() -> None:
    spans = [TaskSpan(NASTY, 0.0, 1.0, NASTY, "FAILED")]
    report = sample(
        patterns=[
            PatternResult(NASTY, "FAILED", 1.0, 0, NASTY, [ExecutionSummary(NASTY, "FAILED", 1.0)])
        ],
        dag_runs=[DagRun(NASTY, "FAILED", 1.0, 0, spans, NASTY)],
        endpoint=NASTY,
        title=NASTY,
    )
    html = render(report)
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert html.count("&lt;script&gt;") >= 8
    # Attribute values cannot be broken out of either.
    assert 'data-task="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp;' in html or (
        'data-task="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp;' in html
    )


def test_failed_pattern_turns_the_verdict_red_and_opens_its_details() -> None:
    patterns = [
        PatternResult("job-poller", "SUCCEEDED", 1.0, 3),
        PatternResult(
            "sqs-throttle",
            "FAILED",
            2.0,
            4,
            "7 requests; 2 never started",
            [ExecutionSummary("req-1", "TIMED_OUT", 2.0, 4)],
        ),
    ]
    report = sample(patterns=patterns)
    assert not report.ok
    html = render(report)
    assert 'class="verdict failed"' in html
    assert "1 of 2 patterns did not succeed" in html
    assert '<span class="status failed">FAILED</span>' in html
    assert '<span class="status failed">TIMED_OUT</span>' in html
    assert "<details open>" in html  # the failed pattern's executions are shown
    assert html.count("<details>") == 1


def test_empty_dag_and_no_patterns() -> None:
    report = DemoReport(patterns=[])
    assert not report.ok  # nothing ran: not a success
    html = render(report)
    assert "No pattern ran." in html
    assert "No DAG picture" in html
    assert "<svg" not in html
    empty = render(sample(dag_runs=[DagRun("parent-level", "FAILED", 0.0, 0, [])]))
    assert "no task timings recorded" in empty


def test_write_creates_parents_and_returns_absolute_path(tmp_path: Path) -> None:
    path = write(sample(), tmp_path / "a" / "b" / "index.html")
    assert path.is_absolute() and path.is_file()
    assert path.read_text(encoding="utf-8") == render(sample())


# --- gantt --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "step"), [(0, 1.0), (0.05, 0.01), (7.5, 1), (12, 2), (40, 5), (95, 20)]
)
def test_nice_step(total: float, step: float) -> None:
    assert gantt.nice_step(total) == pytest.approx(step)


def test_gantt_rows_follow_start_time_and_failed_tasks_are_red() -> None:
    spans = [
        TaskSpan("late", 5.0, 6.0, "b"),
        TaskSpan("early", 0.0, 2.0, "a"),
        TaskSpan("broken", 1.0, 3.0, "a", "FAILED"),
    ]
    svg = gantt.svg(spans, "t")
    assert [m for m in re.findall(r'data-task="([^"]+)"', svg)] == ["early", "broken", "late"]
    assert svg.count(gantt.FAILED_COLOUR) == 1
    assert svg.count(f'fill="{gantt.STAGE_COLOURS[0]}"') == 2  # bar + legend of stage a
    widths = [
        float(w) for w in re.findall(r'<rect x="[\d.]+" y="\d+" width="([\d.]+)" height="14"', svg)
    ]
    assert widths[0] == pytest.approx(2 * widths[2], abs=0.2)  # 2 s vs 1 s, same scale


# --- demo helpers that feed the report ----------------------------------------------


def _event(kind: str, at: float, **details: object) -> dict:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    return {"type": kind, "timestamp": base + timedelta(seconds=at), **details}


def test_spans_from_history_maps_map_iterations_to_tasks() -> None:
    events = [
        _event("ExecutionStarted", 0),
        _event(
            "MapStateEntered",
            0.1,
            stateEnteredEventDetails={"name": "Stage 1", "input": '{"items": ["a", "b"]}'},
        ),
        _event(
            "MapIterationStarted",
            0.2,
            mapIterationStartedEventDetails={"name": "Stage 1", "index": 0},
        ),
        _event(
            "MapIterationStarted",
            0.3,
            mapIterationStartedEventDetails={"name": "Stage 1", "index": 1},
        ),
        _event(
            "MapIterationSucceeded",
            2.0,
            mapIterationSucceededEventDetails={"name": "Stage 1", "index": 1},
        ),
        _event(
            "MapIterationFailed",
            3.0,
            mapIterationFailedEventDetails={"name": "Stage 1", "index": 0},
        ),
    ]
    spans = patterns.spans_from_history(events, events[0]["timestamp"])
    assert spans == [
        TaskSpan("b", pytest.approx(0.3), pytest.approx(2.0), "Stage 1", "SUCCEEDED"),
        TaskSpan("a", pytest.approx(0.2), pytest.approx(3.0), "Stage 1", "FAILED"),
    ]
    assert (
        patterns.spans_from_history([_event("ExecutionStarted", 0)], events[0]["timestamp"]) == []
    )


def test_peak_overlap() -> None:
    assert executions.peak_overlap([]) == 0
    assert executions.peak_overlap([(0, 1), (1, 2), (2, 3)]) == 1
    assert executions.peak_overlap([(0, 3), (1, 4), (2, 5)]) == 3


def test_pattern_outputs_cut_the_complete_example_outputs() -> None:
    outputs = {
        "job_poller": {"state_machine_arn": "jp"},
        "sqs_throttle": {
            "queue_url": "q",
            "starter_function_name": "s",
            "max_concurrency": 3,
        },
        "semaphore": {"wrapper_state_machine_arn": "w", "max_concurrency": 2},
        "dag_aggregate": {"state_machine_arn": "dag"},
        "status_table": {"table_name": "t"},
        "throttled_work_state_machine_arn": "tw",
        "critical_work_state_machine_arn": "cw",
        "dag_warehouse": {
            "workgroup_name": "wg",
            "database": "dev",
            "sql_dir": "s",
            "setup_sql": "u",
        },
    }
    cut = demo.pattern_outputs(outputs)
    assert set(cut) == set(demo.PATTERNS) == set(patterns.RUNNERS)
    assert cut["sqs-throttle"]["target_state_machine_arn"] == "tw"
    assert cut["semaphore"]["target_state_machine_arn"] == "cw"
    assert cut["dag-aggregate"]["state_machines"] == {"parent-level": "dag"}
    assert cut["dag-aggregate"]["workgroup"] == "wg"


def test_several_provisioned_strategies_each_get_a_run() -> None:
    outputs = {
        "job_poller": {"state_machine_arn": "jp"},
        "sqs_throttle": {},
        "semaphore": {},
        "dag_aggregate": {"state_machine_arn": "x", "state_machine_arns": {"a": "1", "b": "2"}},
        "status_table": {},
        "throttled_work_state_machine_arn": "tw",
        "critical_work_state_machine_arn": "cw",
        "dag_warehouse": {
            "workgroup_name": "wg",
            "database": "dev",
            "sql_dir": "s",
            "setup_sql": "u",
        },
    }
    assert demo.pattern_outputs(outputs)["dag-aggregate"]["state_machines"] == {"a": "1", "b": "2"}
    outputs["dag_aggregate"] = {"state_machine_arn": "x"}
    cut = demo.pattern_outputs(outputs, "dependency")
    assert cut["dag-aggregate"]["state_machines"] == {"dependency": "x"}


class FakeRedshift:
    def __init__(self, statements: list[dict]) -> None:
        self.statements = statements

    def get_paginator(self, name: str) -> FakeRedshift:
        assert name == "list_statements"
        return self

    def paginate(self, **kwargs: object) -> list[dict]:
        assert kwargs == {"StatementName": "sfn-dag ", "Status": "ALL"}
        return [{"Statements": self.statements}]


def test_spans_from_statements_keeps_the_execution_window() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def statement(name: str, start: float, end: float, status: str = "FINISHED") -> dict:
        return {
            "Id": name,
            "StatementName": f"sfn-dag {name}",
            "CreatedAt": t0 + timedelta(seconds=start),
            "UpdatedAt": t0 + timedelta(seconds=end),
            "Status": status,
        }

    redshift = FakeRedshift(
        [
            statement("a", 1, 2),
            statement("b", 2, 4, "FAILED"),
            statement("before", -5, -4),  # another run's statement
            statement("after", 11, 12),
        ]
    )
    described = {"startDate": t0, "stopDate": t0 + timedelta(seconds=10)}
    spans = patterns.spans_from_statements(redshift, described)
    assert [(s.task, s.start, s.end, s.status) for s in spans] == [
        ("a", 1.0, 2.0, "SUCCEEDED"),
        ("b", 2.0, 4.0, "FAILED"),
    ]


def test_the_alarms_section_lists_every_alarm_and_charts_the_pattern_metrics() -> None:
    html = render(
        sample(
            alarms=[
                AlarmRow(
                    "demo-throttle-dlq-messages", "OK", "AWS/SQS ApproximateNumberOfMessagesVisible"
                ),
                AlarmRow(f"demo-{NASTY}", "ALARM", "AWS/Lambda Errors"),
            ],
            metrics=[MetricSeries("demo-semaphore", "SlotsHeld", [0.0, 2.0, 1.0])],
        )
    )
    section = html[html.index("<h2>Alarms</h2>") : html.index("<h2>Executions per pattern</h2>")]
    assert section.count("<tr><td><code>") == 3  # two alarms, one metric
    assert "demo-throttle-dlq-messages" in section
    assert '<span class="status failed">ALARM</span>' in section
    assert NASTY not in section and "&lt;script&gt;" in section
    assert section.count("<polyline") == 1
    assert "<svg" in section and "SlotsHeld" in section


def test_without_alarms_the_section_says_so() -> None:
    assert "No alarm found." in render(sample())
