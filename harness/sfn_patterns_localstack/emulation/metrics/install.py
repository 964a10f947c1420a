"""Install every metrics patch, when CloudWatch is one of LocalStack's services.

``SFNP_METRICS=localstack`` leaves LocalStack's own metric publishing and alarm
evaluation as they are (nothing of this package applies): scripts/bench_metrics_overhead.py
uses it to measure what the sink saves.
"""

from __future__ import annotations

import os

from . import (
    alarm_evaluation,
    alarm_tags,
    dimension_search,
    dynamodb_metrics,
    events_metrics,
    lambda_metrics,
    metric_index,
    metric_math,
    sfn_metrics,
    sqs_metrics,
)


def cloudwatch_enabled() -> bool:
    """Whether SERVICES names CloudWatch (or is empty: every service).

    Read from the environment, not with LocalStack's ``is_api_enabled``: this runs
    while LocalStack imports its provider entry points, and asking the service manager
    then resolved the provider list before this module's ``dynamodb:moto`` entry point
    was in it (DynamoDB then answered "not enabled" for the whole run).
    """
    services = [s.strip().split(":")[0] for s in os.environ.get("SERVICES", "").split(",")]
    return services == [""] or "cloudwatch" in services


def install() -> dict[str, bool]:
    """Apply the patches; which of them applied (none when CloudWatch is off)."""
    if not cloudwatch_enabled() or os.environ.get("SFNP_METRICS") == "localstack":
        return {}
    return {
        "alarm_evaluation": alarm_evaluation.apply(),
        "alarm_tags": alarm_tags.apply(),
        "dimension_search": dimension_search.apply(),
        "dynamodb": dynamodb_metrics.apply(),
        "events": events_metrics.apply(),
        "lambda": lambda_metrics.apply(),
        "metric_index": metric_index.apply(),
        "metric_math": metric_math.apply(),
        "states": sfn_metrics.apply(),
        "sqs": sqs_metrics.apply(),
    }
