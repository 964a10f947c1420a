"""Alarms on a sum of metrics (``m0+m1+...``) evaluated, as AWS does (LocalStack 4.14.0).

LocalStack's alarm scheduler evaluates an alarm on one metric only: an alarm whose
``Metrics`` hold a math expression lacks ``MetricName``, ``Period`` and ``Statistic``,
so ``_is_alarm_supported`` turns it down and it stays ``INSUFFICIENT_DATA`` for good.
The modules build one such alarm per table: DynamoDB publishes ``SystemErrors`` per
``TableName`` and ``Operation`` only, and the alarm adds up the operations the module
calls.

This patch evaluates the one expression shape the modules use, the sum of metric
ids: every other query of the alarm a ``MetricStat`` of one period and statistic, the
returned one an expression ``id + id + ...`` of them. Each metric's values are
collected with LocalStack's own ``collect_metric_data`` (its windows and its look-back),
and added per window as AWS's metric math does ("missing values in a time series are
treated as 0": a window is missing only when every metric misses it). Threshold,
M of N, ``TreatMissingData`` and the actions stay LocalStack's. Any other expression
(division, functions, ``FILL``) is left as LocalStack leaves it: not evaluated.

The SNS notice of any math alarm also lists its queries under ``Trigger.Metrics``, as
AWS's does; LocalStack's described a one-metric alarm only.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
_ID = r"[a-z][A-Za-z0-9_]*"
_SUM = re.compile(rf"^\s*{_ID}(\s*\+\s*{_ID})*\s*$")
SUM_OF = "_sfnp_sum_of"  # the per-metric details a sum alarm's details carry


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.cloudwatch import alarm_scheduler, provider_v2
    except ImportError:
        return False
    details_of = getattr(alarm_scheduler, "get_metric_alarm_details_for_alarm_arn", None)
    collect = getattr(alarm_scheduler, "collect_metric_data", None)
    if (
        version.__version__ != LOCALSTACK_VERSION
        or details_of is None
        or collect is None
        or not hasattr(provider_v2, "create_message_response_update_state_sns")
    ):
        LOG.warning("sfn-patterns metric math not applied (localstack %s)", version.__version__)
        return False
    if getattr(collect, "_sfnp_patched", False):
        return True

    @functools.wraps(details_of)
    def details_for(alarm_arn: str) -> Any:
        details = details_of(alarm_arn)
        return flatten(details) if details else details

    @functools.wraps(collect)
    def collect_data(alarm_details: Any, client: Any) -> list[float | None]:
        parts = alarm_details.get(SUM_OF)
        if not parts:
            return collect(alarm_details, client)
        return add_windows([collect(part, client) for part in parts])

    collect_data._sfnp_patched = True
    alarm_scheduler.get_metric_alarm_details_for_alarm_arn = details_for
    alarm_scheduler.collect_metric_data = collect_data
    _patch_notice()
    return True


def _patch_notice() -> None:
    """The SNS notice of a math alarm names its metrics (``Trigger.Metrics``), as AWS's does.

    LocalStack's notice describes the alarm's single metric only, so a math alarm's
    ``Trigger`` said nothing of what it watches (``MetricName`` "").
    """
    import json

    from localstack.services.cloudwatch import provider_v2

    original = provider_v2.create_message_response_update_state_sns

    @functools.wraps(original)
    def notice(alarm: Any, old_state: Any) -> str:
        message = original(alarm, old_state)
        queries = alarm.alarm.get("Metrics")
        if not queries:
            return message
        body = json.loads(message)
        body["Trigger"] = math_trigger(body["Trigger"], queries)
        return json.dumps(body)

    provider_v2.create_message_response_update_state_sns = notice


def math_trigger(trigger: dict[str, Any], queries: list[dict[str, Any]]) -> dict[str, Any]:
    """A math alarm's ``Trigger`` as AWS writes it: the queries, and no single metric.

    AWS's has no ``MetricName``, ``Namespace``, ``Dimensions`` or statistic (LocalStack
    wrote them empty), and its ``Period`` is the queries' (LocalStack wrote 0).
    """
    single = ("MetricName", "Namespace", "Unit", "Dimensions", "StatisticType", "Statistic")
    shaped = {k: v for k, v in trigger.items() if k not in single}
    periods = [q["MetricStat"]["Period"] for q in queries if q.get("MetricStat")]
    if periods:
        shaped["Period"] = periods[0]
    shaped["Metrics"] = trigger_metrics(queries)
    return shaped


def trigger_metrics(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An alarm's metric queries as a notice's ``Trigger.Metrics`` lists them.

    AWS's notice writes dimensions as ``{"value", "name"}`` pairs (as LocalStack's
    notice already does for a one-metric alarm's ``Dimensions``).
    """
    listed = []
    for query in queries:
        entry = {k: query[k] for k in ("Id", "Expression", "Label", "ReturnData") if k in query}
        stat = query.get("MetricStat")
        if stat:
            metric = stat["Metric"]
            entry["MetricStat"] = {
                "Metric": {
                    "Dimensions": [
                        {"value": d["Value"], "name": d["Name"]}
                        for d in metric.get("Dimensions", [])
                    ],
                    "MetricName": metric["MetricName"],
                    "Namespace": metric.get("Namespace", ""),
                },
                "Period": stat["Period"],
                "Stat": stat["Stat"],
            }
        listed.append(entry)
    return listed


def flatten(details: dict[str, Any]) -> dict[str, Any]:
    """A sum alarm's details as a one-metric alarm's (plus its parts); others unchanged.

    The scheduler reads ``Period`` (how often to evaluate), ``Statistic`` and
    ``MetricName`` (whether it can); each part is the one-metric details LocalStack's
    ``collect_metric_data`` takes.
    """
    queries = details.get("Metrics")
    if not queries or details.get("MetricName"):
        return details
    returned = [q for q in queries if q.get("ReturnData", True) and q.get("Expression")]
    if len(returned) != 1 or not _SUM.match(returned[0]["Expression"]):
        return details
    stats = {q["Id"]: q["MetricStat"] for q in queries if q.get("MetricStat")}
    ids = [part.strip() for part in returned[0]["Expression"].split("+")]
    if any(i not in stats for i in ids):
        return details
    periods = {stats[i]["Period"] for i in ids}
    statistics = {stats[i]["Stat"] for i in ids}
    if len(periods) != 1 or len(statistics) != 1:
        return details
    (period,), (statistic,) = periods, statistics
    parts = []
    for i in ids:
        metric = stats[i]["Metric"]
        part = {**details, "MetricName": metric["MetricName"], "Period": period}
        part.update(Statistic=statistic, Namespace=metric.get("Namespace"))
        part["Dimensions"] = metric.get("Dimensions", [])
        part.pop("Metrics", None)
        parts.append(part)
    label = returned[0].get("Label") or returned[0]["Id"]
    return {**details, "MetricName": label, "Period": period, "Statistic": statistic, SUM_OF: parts}


def add_windows(series: list[list[float | None]]) -> list[float | None]:
    """Per window, the sum of the metrics' values; None where every metric has none."""
    sums: list[float | None] = []
    for window in zip(*series, strict=True):
        present = [value for value in window if value is not None]
        sums.append(sum(present) if present else None)
    return sums
