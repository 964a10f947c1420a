"""A CloudWatch dashboard body against the structure AWS documents.

LocalStack stores a dashboard body without looking at it; CloudWatch refuses a body
that breaks "Dashboard Body Structure and Syntax" (CloudWatch API Reference). This
checks what the modules' bodies use, from that page:

* the body is an object with ``widgets``, a list (and optionally ``start``, ``end``,
  ``periodOverride``, ``variables``);
* a widget has ``type`` (metric, text, log, alarm, explorer, custom), ``properties``
  (an object), and ``x`` (0-23), ``y`` (0 or more), ``width`` (1-24), ``height``
  (1-1000) as whole numbers, with ``x + width`` at most 24;
* a metric widget's properties have ``region``, and ``metrics``: a list of metric
  arrays, each ``[Namespace, MetricName, DimName, DimValue, ..., {options}]`` with
  strings in pairs after the first two (or ``"."``/``"..."`` repeats of the row
  above) and an optional last object of rendering options; ``view`` and ``period``
  where given take their documented values;
* an alarm widget's properties have ``alarms``: 1 to 100 alarm ARNs;
* a text widget's properties have ``markdown``.
"""

from __future__ import annotations

import json
import re
from typing import Any

WIDGET_TYPES = {"metric", "text", "log", "alarm", "explorer", "custom"}
VIEWS = {"timeSeries", "singleValue", "gauge", "bar", "pie", "table"}
RENDERING = {
    "accountId", "color", "expression", "id", "label", "period", "region", "stat",
    "visible", "yAxis", "unit",
}  # fmt: skip
ALARM_ARN = re.compile(r"^arn:aws[a-z-]*:cloudwatch:[a-z0-9-]+:\d{12}:alarm:.+$")
TOP_LEVEL = {"widgets", "start", "end", "periodOverride", "variables"}


def problems(body: Any) -> list[str]:
    """What in ``body`` breaks the documented structure; [] for a valid body."""
    if not isinstance(body, dict) or not isinstance(body.get("widgets"), list):
        return ["the body must be an object with a widgets list"]
    found = [f"unknown top-level field {k!r}" for k in body if k not in TOP_LEVEL]
    for i, widget in enumerate(body["widgets"]):
        found.extend(f"widget {i}: {p}" for p in _widget(widget))
    return found


def _widget(widget: Any) -> list[str]:
    if not isinstance(widget, dict):
        return ["not an object"]
    found = []
    kind = widget.get("type")
    if kind not in WIDGET_TYPES:
        found.append(f"type {kind!r} is not one of {sorted(WIDGET_TYPES)}")
    found.extend(_placement(widget))
    properties = widget.get("properties")
    if not isinstance(properties, dict):
        return [*found, "properties must be an object"]
    if kind == "metric":
        found.extend(_metric_properties(properties))
    elif kind == "alarm":
        alarms = properties.get("alarms")
        if not isinstance(alarms, list) or not 1 <= len(alarms) <= 100:
            found.append("an alarm widget needs 1 to 100 alarms")
        else:
            found.extend(
                f"{a!r} is not an alarm ARN" for a in alarms if not ALARM_ARN.match(str(a))
            )
    elif kind == "text" and not isinstance(properties.get("markdown"), str):
        found.append("a text widget needs markdown")
    return found


def _placement(widget: dict) -> list[str]:
    found = []
    bounds = {"x": (0, 23), "y": (0, None), "width": (1, 24), "height": (1, 1000)}
    for name, (low, high) in bounds.items():
        value = widget.get(name)
        if value is None:
            continue  # optional (CloudWatch places the widget)
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < low
            or (high is not None and value > high)
        ):
            found.append(f"{name} = {value!r} is outside {low}..{high or 'any'}")
    x, width = widget.get("x"), widget.get("width")
    if isinstance(x, int) and isinstance(width, int) and x + width > 24:
        found.append("x + width is over the 24-column grid")
    return found


def _metric_properties(properties: dict) -> list[str]:
    found = []
    if not isinstance(properties.get("region"), str):
        found.append("a metric widget needs its region")
    if "view" in properties and properties["view"] not in VIEWS:
        found.append(f"view {properties['view']!r} is not one of {sorted(VIEWS)}")
    period = properties.get("period")
    if period is not None and not (period in (1, 5, 10, 30) or (period >= 60 and period % 60 == 0)):
        found.append(f"period {period!r} is not 1, 5, 10, 30 or a multiple of 60")
    metrics = properties.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        return [*found, "a metric widget needs a metrics list"]
    for row in metrics:
        found.extend(_metric_row(row))
    return found


def _metric_row(row: Any) -> list[str]:
    if not isinstance(row, list) or not row:
        return [f"metric row {row!r} is not a non-empty list"]
    options = row[-1] if isinstance(row[-1], dict) else None
    names = row[:-1] if options is not None else row
    found = []
    if options is not None:
        found.extend(f"unknown rendering option {k!r}" for k in options if k not in RENDERING)
        if options.get("yAxis", "left") not in ("left", "right"):
            found.append("yAxis must be left or right")
        if "expression" in options:
            return found
    if not all(isinstance(n, str) and n for n in names):
        found.append(f"metric row {row!r}: names and dimensions must be non-empty strings")
    elif len(names) < 2 or len(names) % 2:
        found.append(f"metric row {row!r}: namespace, name, then dimension name/value pairs")
    return found


def deployed_body(aws: Any, name: str) -> dict:
    """The body CloudWatch (LocalStack) holds for dashboard ``name``, parsed."""
    return json.loads(aws("cloudwatch").get_dashboard(DashboardName=name)["DashboardBody"])


def assert_module_dashboard(
    body: dict, *, module: str, pattern: str, metrics: set[str], alarm_arns: list[str]
) -> list[list]:
    """A pattern module's dashboard: a valid body, the pattern's metrics under the module
    instance's dimensions, and one alarm widget with every alarm of the module.

    ``metrics``: what the runtime prints for the pattern, written
    by the caller. Returns the metric rows for checks of the caller's own.
    """
    found = problems(body)
    assert found == [], found
    rows = [
        row
        for widget in body["widgets"]
        if widget["type"] == "metric"
        for row in widget["properties"]["metrics"]
    ]
    pattern_rows = [row for row in rows if row[0] == "sfn-patterns"]
    assert {row[1] for row in pattern_rows} == metrics, pattern_rows
    assert all(row[2:6] == ["Module", module, "Pattern", pattern] for row in pattern_rows), (
        pattern_rows
    )
    (alarm_widget,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert sorted(alarm_widget["properties"]["alarms"]) == sorted(alarm_arns)
    return rows
