"""Pattern metrics as CloudWatch embedded metric format (EMF): one JSON log line each.

A Lambda's stdout goes to CloudWatch Logs, and CloudWatch turns a line that is an
EMF document into metrics: no PutMetricData call, no extra latency, no permission.
The format ("Specification: Embedded metric format") is a JSON object whose ``_aws``
member names the namespace, the dimension set and each metric's unit; the values and
the dimension values are members of the same object.

Written by hand rather than with Powertools' Metrics utility, which is the anchor for
the format: the runtime ships in every pattern's zip with no dependency (boto3 comes
with Lambda), runs on Python 3.9, and needs one line per call, not Powertools'
buffering, validation and cold-start metric.

Namespace and dimensions name the module instance: the modules set
``SFN_PATTERNS_METRICS_NAMESPACE`` (``sfn-patterns``) and ``SFN_PATTERNS_MODULE`` (the
module's ``name``); the dimension set is ``Module``, plus ``Pattern`` for reading
across modules in the console. Without the namespace variable (a unit test, a caller
outside the modules) nothing is printed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from typing import IO, Union

NAMESPACE_ENV = "SFN_PATTERNS_METRICS_NAMESPACE"
MODULE_ENV = "SFN_PATTERNS_MODULE"
# A metric's value, or (value, unit) with a CloudWatch unit ("Count" by default).
Value = Union[float, int, tuple[float, str]]


def document(
    namespace: str,
    dimensions: Mapping[str, str],
    metrics: Mapping[str, Value],
    timestamp_ms: int | None = None,
    properties: Mapping[str, str] | None = None,
) -> dict:
    """The EMF document of ``metrics`` under one dimension set.

    ``properties`` are members of the document that are neither dimensions nor
    metrics: CloudWatch keeps them in the log event only (searchable with Logs
    Insights), so they cost nothing per value, where each dimension value is a custom
    metric of its own (billed monthly).
    """
    definitions = []
    values: dict = {}
    for name, value in metrics.items():
        number, unit = value if isinstance(value, tuple) else (value, "Count")
        definitions.append({"Name": name, "Unit": unit})
        values[name] = number
    return {
        "_aws": {
            "Timestamp": int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [sorted(dimensions)],
                    "Metrics": definitions,
                }
            ],
        },
        **dict(properties or {}),
        **dict(dimensions),
        **values,
    }


def emit(
    pattern: str,
    metrics: Mapping[str, Value],
    stream: IO[str] | None = None,
    properties: Mapping[str, str] | None = None,
) -> dict | None:
    """Print one EMF line for this module instance; the document, or None when off.

    ``properties`` name what the values are about (a task, a run) without making it
    a dimension (see :func:`document`).
    """
    namespace = os.environ.get(NAMESPACE_ENV)
    if not namespace or not metrics:
        return None
    dimensions = {"Module": os.environ.get(MODULE_ENV, "unknown"), "Pattern": pattern}
    line = document(namespace, dimensions, metrics, properties=properties)
    print(json.dumps(line, separators=(",", ":")), file=stream or sys.stdout, flush=True)
    return line
