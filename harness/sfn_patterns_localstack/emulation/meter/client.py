"""Read the request meter of a LocalStack over HTTP (benchmarks and tests)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

PATH = "/_sfnp/meter"


def _call(endpoint: str, method: str) -> dict[str, Any]:
    request = urllib.request.Request(endpoint.rstrip("/") + PATH, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def start(endpoint: str) -> dict[str, Any]:
    """Reset the meter and switch it on."""
    return _call(endpoint, "POST")


def read(endpoint: str) -> dict[str, Any]:
    """The meter's counters now."""
    return _call(endpoint, "GET")


def stop(endpoint: str) -> dict[str, Any]:
    """Switch the meter off; returns its last counters."""
    return _call(endpoint, "DELETE")


def calls(
    document: dict[str, Any],
    service: str | None = None,
    operation: str | None = None,
    *,
    roles_only: bool = False,
    exclude_resources: tuple[str, ...] = (),
) -> int:
    """Requests in a meter document matching the filters.

    ``roles_only``: only calls signed by a role session (Step Functions tasks, Lambda
    functions), not the account's own keys (the benchmark's clients, Terraform).
    """
    return sum(
        row["calls"]
        for row in document["requests"]
        if (service is None or row["service"] == service)
        and (operation is None or row["operation"] == operation)
        and (not roles_only or row["caller"] != "account")
        and not any(row["resource"].endswith(suffix) for suffix in exclude_resources)
    )


def items_read(document: dict[str, Any], operation: str, table_suffix: str = "") -> dict[str, int]:
    """Pages, items read (``ScannedCount``) and items returned by ``operation`` (Query, Scan)."""
    total = {"pages": 0, "scanned": 0, "returned": 0}
    for row in document["reads"]:
        if row["operation"] == operation and row["table"].endswith(table_suffix):
            for key in total:
                total[key] += row[key]
    return total
