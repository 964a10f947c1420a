"""CloudWatch embedded metric format (EMF): log lines that are metrics.

On AWS, CloudWatch Logs turns a Lambda log line that is an EMF document into
metrics; LocalStack 4.14.0 stores the line and nothing else (localstack#10397). This
module parses one line by the specification ("Specification: Embedded metric
format", CloudWatch User Guide):

* the line is a JSON object whose ``_aws`` member holds ``Timestamp`` (epoch
  milliseconds) and ``CloudWatchMetrics``, a list of directives;
* a directive has a ``Namespace`` (1-255 characters), ``Dimensions`` (a list of
  dimension sets, each a list of at most 30 member names, possibly empty) and
  ``Metrics`` (at most 100 of ``{"Name", "Unit"?, "StorageResolution"?}``);
* each metric's value is the root member of that name: a number or a list of at most
  100 numbers; each dimension's value is the root member of that name, a string;
* one datum per value, per metric, per dimension set.

A line that breaks a rule yields no metric at all, as on AWS (the log line is kept
either way). The units are the ones PutMetricData accepts.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .sink import Datum

UNITS = frozenset(
    (
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    )
)
MAX_DIMENSIONS = 30
MAX_METRICS = 100
MAX_VALUES = 100


class InvalidEmf(ValueError):
    """The line is EMF-shaped (it has ``_aws``) but breaks the specification."""


def parse_line(line: str) -> list[Datum]:
    """The data an EMF log line carries; [] for a line that is not EMF."""
    line = line.strip()
    if not line.startswith("{") or '"_aws"' not in line:
        return []
    try:
        document = json.loads(line)
    except ValueError:
        return []
    if not isinstance(document, dict) or "_aws" not in document:
        return []
    try:
        return parse_document(document)
    except InvalidEmf:
        return []


def parse_document(document: dict[str, Any]) -> list[Datum]:
    """The data of a parsed EMF document; InvalidEmf names the broken rule."""
    meta = document.get("_aws")
    if not isinstance(meta, dict):
        raise InvalidEmf("_aws must be an object")
    timestamp = meta.get("Timestamp")
    if not _is_number(timestamp):
        raise InvalidEmf("_aws.Timestamp must be epoch milliseconds")
    directives = meta.get("CloudWatchMetrics")
    if not isinstance(directives, list):
        raise InvalidEmf("_aws.CloudWatchMetrics must be a list")
    data: list[Datum] = []
    for directive in directives:
        data.extend(_directive(document, directive, timestamp / 1000.0))
    return data


def _directive(document: dict[str, Any], directive: Any, timestamp: float) -> list[Datum]:
    if not isinstance(directive, dict):
        raise InvalidEmf("a metric directive must be an object")
    namespace = directive.get("Namespace")
    if not isinstance(namespace, str) or not 1 <= len(namespace) <= 255:
        raise InvalidEmf("Namespace must be 1-255 characters")
    dimension_sets = directive.get("Dimensions")
    if not isinstance(dimension_sets, list):
        raise InvalidEmf("Dimensions must be a list of dimension sets")
    metrics = directive.get("Metrics")
    if not isinstance(metrics, list) or len(metrics) > MAX_METRICS:
        raise InvalidEmf(f"Metrics must be a list of at most {MAX_METRICS}")
    resolved_sets = [_dimension_set(document, names) for names in dimension_sets] or [()]
    data = []
    for metric in metrics:
        name, unit, resolution = _metric(metric)
        for value in _values(document, name):
            data.extend(
                Datum(namespace, name, value, dims, unit, timestamp, resolution)
                for dims in resolved_sets
            )
    return data


def _dimension_set(document: dict[str, Any], names: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(names, list) or len(names) > MAX_DIMENSIONS:
        raise InvalidEmf(f"a dimension set must be a list of at most {MAX_DIMENSIONS} names")
    pairs = []
    for name in names:
        value = document.get(name) if isinstance(name, str) else None
        if not isinstance(value, str) or not value:
            raise InvalidEmf(f"dimension {name!r} needs a non-empty string member")
        pairs.append((name, value))
    return tuple(sorted(pairs))


def _metric(metric: Any) -> tuple[str, str | None, int | None]:
    if not isinstance(metric, dict) or not isinstance(metric.get("Name"), str):
        raise InvalidEmf("a metric definition needs a Name")
    unit = metric.get("Unit")
    if unit is not None and unit not in UNITS:
        raise InvalidEmf(f"unit {unit!r} is not a CloudWatch unit")
    resolution = metric.get("StorageResolution")
    if resolution is not None and resolution not in (1, 60):
        raise InvalidEmf("StorageResolution must be 1 or 60")
    return metric["Name"], unit, resolution


def _values(document: dict[str, Any], name: str) -> list[float]:
    value = document.get(name)
    values = value if isinstance(value, list) else [value]
    if not values or len(values) > MAX_VALUES or not all(_is_number(v) for v in values):
        raise InvalidEmf(f"metric {name!r} needs a number or up to {MAX_VALUES} numbers")
    return [float(v) for v in values]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
