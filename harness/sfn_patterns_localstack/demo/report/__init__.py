"""The demo's HTML report: one self-contained file (inline CSS and SVG, no script, no URL).

``sfn-patterns demo`` fills a :class:`DemoReport` as it runs the five patterns and
:func:`write` renders it through ``report.html.j2``. The page must open from a
file:// URL on a machine without network, so everything is inline: the DAG picture
comes from :mod:`sfn_patterns_cli.dag_aggregate.draw`, the Gantt charts from
:mod:`sfn_patterns_localstack.demo.report.gantt`. Jinja autoescaping is on: every string from a run
(task names, error causes) is escaped; only the SVG our own drawers produce (which
escape their labels themselves) is inserted as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import jinja2
from markupsafe import Markup

from sfn_patterns_localstack.demo.report import alarms as alarms_section
from sfn_patterns_localstack.demo.report import gantt
from sfn_patterns_localstack.demo.report.alarms import AlarmRow, MetricSeries
from sfn_patterns_localstack.demo.report.gantt import TaskSpan

__all__ = [
    "AlarmRow",
    "DagRun",
    "DemoReport",
    "ExecutionSummary",
    "MetricSeries",
    "PatternResult",
    "TaskSpan",
    "render",
    "write",
]

TEMPLATE = "report.html.j2"


@dataclass
class ExecutionSummary:
    """One state machine execution the demo started (or a unit of work it tracked)."""

    name: str
    status: str
    seconds: float
    transitions: int = 0


@dataclass
class PatternResult:
    """What one pattern's demo run did: the row of the summary table."""

    pattern: str
    status: str
    seconds: float
    transitions: int
    detail: str = ""
    executions: list[ExecutionSummary] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the pattern did what the demo expects of it."""
        return self.status == "SUCCEEDED"


@dataclass
class DagRun:
    """One dag-aggregate strategy's execution and the per-task timings read from it."""

    strategy: str
    status: str
    seconds: float
    transitions: int
    spans: list[TaskSpan] = field(default_factory=list)
    source: str = ""  # where the timings came from (execution history, statements)

    @property
    def gantt_svg(self) -> Markup:
        """The Gantt chart of :attr:`spans` (SVG markup, labels escaped)."""
        return Markup(gantt.svg(self.spans, f"dag-aggregate, strategy {self.strategy}"))


@dataclass
class DemoReport:
    """Everything the report shows; :func:`render` turns it into HTML."""

    patterns: list[PatternResult]
    dag_runs: list[DagRun] = field(default_factory=list)
    dag_svg: str | None = None  # trusted SVG from dag_aggregate.draw.svg
    alarms: list[AlarmRow] = field(default_factory=list)
    metrics: list[MetricSeries] = field(default_factory=list)
    endpoint: str = ""
    workspace: str = ""
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    title: str = "sfn-patterns demo"

    @property
    def ok(self) -> bool:
        """Whether every pattern ran and succeeded."""
        return bool(self.patterns) and all(p.ok for p in self.patterns)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(report: DemoReport) -> str:
    """The report as one HTML document string."""
    template = _environment().get_template(TEMPLATE)
    return template.render(
        report=report,
        dag_svg=Markup(report.dag_svg) if report.dag_svg else None,
        sparklines=[Markup(alarms_section.sparkline(s)) for s in report.metrics],
    )


def write(report: DemoReport, path: Path) -> Path:
    """Render the report to ``path`` (parents created) and return its absolute path."""
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(report), encoding="utf-8")
    return path
