"""The report's "Alarms" section: every alarm of the deployment, and the pattern metrics.

Read from CloudWatch after the demo ran: DescribeAlarms by the deployment's name
prefix (every module names its alarms ``<module name>-<signal>``), and the runtime's
EMF metrics (namespace ``sfn-patterns``, dimension ``Module`` starting with the
prefix) as small line charts. The charts are our own SVG, labels escaped.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from html import escape
from typing import Any

NAMESPACE = "sfn-patterns"
WINDOW = datetime.timedelta(minutes=30)
PERIOD = 60


@dataclass
class AlarmRow:
    """One alarm and its state after the demo."""

    name: str
    state: str
    metric: str
    reason: str = ""


@dataclass
class MetricSeries:
    """One pattern metric of one module instance over the demo's window."""

    module: str
    name: str
    values: list[float] = field(default_factory=list)

    @property
    def total(self) -> float:
        """The sum of the series (what a count metric adds up to)."""
        return sum(self.values)


def alarms(cloudwatch: Any, prefix: str) -> list[AlarmRow]:
    """Every metric alarm whose name starts with ``prefix``, by name."""
    rows = []
    for page in cloudwatch.get_paginator("describe_alarms").paginate(AlarmNamePrefix=prefix):
        for alarm in page.get("MetricAlarms", []):
            metric = alarm.get("MetricName") or "metric math"
            if alarm.get("Namespace"):
                metric = f"{alarm['Namespace']} {metric}"
            rows.append(
                AlarmRow(
                    alarm["AlarmName"], alarm["StateValue"], metric, alarm.get("StateReason", "")
                )
            )
    return sorted(rows, key=lambda r: r.name)


def pattern_metrics(
    cloudwatch: Any, prefix: str, now: datetime.datetime | None = None
) -> list[MetricSeries]:
    """The runtime's EMF metrics of the modules named ``prefix...``, one series each."""
    now = now or datetime.datetime.now(datetime.UTC)
    found = []
    for page in cloudwatch.get_paginator("list_metrics").paginate(Namespace=NAMESPACE):
        for metric in page.get("Metrics", []):
            dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
            if dims.get("Module", "").startswith(prefix):
                found.append((dims["Module"], metric["MetricName"], metric["Dimensions"]))
    series = []
    for module, name, dims in sorted(
        {(m, n, tuple((d["Name"], d["Value"]) for d in ds)) for m, n, ds in found}
    ):
        result = cloudwatch.get_metric_data(
            MetricDataQueries=[
                {
                    "Id": "m",
                    "MetricStat": {
                        "Metric": {
                            "Namespace": NAMESPACE,
                            "MetricName": name,
                            "Dimensions": [{"Name": k, "Value": v} for k, v in dims],
                        },
                        "Period": PERIOD,
                        "Stat": "Maximum" if name in ("SlotsHeld", "Waiters", "Running") else "Sum",
                    },
                }
            ],
            StartTime=now - WINDOW,
            EndTime=now,
        )["MetricDataResults"][0]
        points = sorted(zip(result["Timestamps"], result["Values"], strict=True))
        series.append(MetricSeries(module, name, [v for _, v in points]))
    return series


def sparkline(series: MetricSeries, width: int = 160, height: int = 36) -> str:
    """A small line chart of the series (SVG markup; the label escaped)."""
    values = series.values or [0.0]
    top = max(*values, 1.0)
    step = width / max(len(values) - 1, 1)
    points = " ".join(
        f"{i * step:.1f},{height - 4 - (v / top) * (height - 8):.1f}" for i, v in enumerate(values)
    )
    label = escape(f"{series.module} {series.name}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{label}"><title>{label}</title>'
        f'<polyline fill="none" stroke="#2b6cb0" stroke-width="1.5" points="{points}"/></svg>'
    )
