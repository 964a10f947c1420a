"""Install every metrics patch, when CloudWatch is one of LocalStack's services.

``SFNP_METRICS=localstack`` leaves LocalStack's own metric publishing and alarm
evaluation as they are (nothing of this package applies): scripts/metrics_overhead.py
uses it to measure what the sink saves.
"""

from __future__ import annotations

import os

from . import alarm_evaluation, dimension_search, lambda_metrics, sfn_metrics, sqs_metrics


def install() -> dict[str, bool]:
    """Apply the patches; which of them applied (none when CloudWatch is off)."""
    from localstack.utils.bootstrap import is_api_enabled

    if not is_api_enabled("cloudwatch") or os.environ.get("SFNP_METRICS") == "localstack":
        return {}
    return {
        "alarm_evaluation": alarm_evaluation.apply(),
        "dimension_search": dimension_search.apply(),
        "lambda": lambda_metrics.apply(),
        "states": sfn_metrics.apply(),
        "sqs": sqs_metrics.apply(),
    }
