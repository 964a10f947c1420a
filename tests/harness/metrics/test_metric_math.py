"""Which alarms the metric-math patch evaluates, and how it adds a sum's windows.

The shapes are DescribeAlarms' (what LocalStack's scheduler reads); no LocalStack
needed. That a sum alarm fires on LocalStack is tests/alarms' table-system-errors proof.
"""

from __future__ import annotations

from sfn_patterns_localstack.emulation.metrics import metric_math


def _stat(id_: str, operation: str, period: int = 10, stat: str = "Sum") -> dict:
    return {
        "Id": id_,
        "MetricStat": {
            "Metric": {
                "Namespace": "AWS/DynamoDB",
                "MetricName": "SystemErrors",
                "Dimensions": [
                    {"Name": "TableName", "Value": "t"},
                    {"Name": "Operation", "Value": operation},
                ],
            },
            "Period": period,
            "Stat": stat,
        },
        "ReturnData": False,
    }


def _alarm(expression: str, *queries: dict) -> dict:
    total = {"Id": "total", "Expression": expression, "Label": "SystemErrors", "ReturnData": True}
    return {
        "AlarmName": "t-system-errors",
        "EvaluationPeriods": 1,
        "Threshold": 0.0,
        "ComparisonOperator": "GreaterThanThreshold",
        "Metrics": [total, *queries],
    }


def test_a_sum_becomes_one_alarm_per_metric_for_the_scheduler() -> None:
    flat = metric_math.flatten(_alarm("m0+m1", _stat("m0", "GetItem"), _stat("m1", "PutItem")))
    assert (flat["MetricName"], flat["Period"], flat["Statistic"]) == ("SystemErrors", 10, "Sum")
    parts = flat[metric_math.SUM_OF]
    assert [p["Dimensions"][1]["Value"] for p in parts] == ["GetItem", "PutItem"]
    assert all(p["Namespace"] == "AWS/DynamoDB" and "Metrics" not in p for p in parts)
    assert all((p["Period"], p["Statistic"], p["Threshold"]) == (10, "Sum", 0.0) for p in parts)


def test_other_alarms_are_left_as_they_are() -> None:
    one_metric = {"AlarmName": "a", "MetricName": "Errors", "Period": 60, "Statistic": "Sum"}
    assert metric_math.flatten(one_metric) is one_metric
    for expression in ("m0/m1", "FILL(m0, 0)", "m0+m9", "SUM(METRICS())"):
        alarm = _alarm(expression, _stat("m0", "GetItem"), _stat("m1", "PutItem"))
        assert metric_math.SUM_OF not in metric_math.flatten(alarm), expression
    # Parts of different periods or statistics have no one window to add up.
    mixed = _alarm("m0+m1", _stat("m0", "GetItem"), _stat("m1", "PutItem", period=60))
    assert metric_math.SUM_OF not in metric_math.flatten(mixed)


def test_missing_values_count_as_zero_unless_all_are_missing() -> None:
    series = [[None, 1.0, None, 2.0], [None, None, 3.0, 4.0]]
    assert metric_math.add_windows(series) == [None, 1.0, 3.0, 6.0]


def test_the_notice_lists_the_queries_with_aws_dimension_pairs() -> None:
    alarm = _alarm("m0+m1", _stat("m0", "GetItem"), _stat("m1", "PutItem"))
    listed = metric_math.trigger_metrics(alarm["Metrics"])
    assert listed[0] == {
        "Id": "total",
        "Expression": "m0+m1",
        "Label": "SystemErrors",
        "ReturnData": True,
    }
    assert listed[1]["MetricStat"]["Metric"]["Dimensions"] == [
        {"value": "t", "name": "TableName"},
        {"value": "GetItem", "name": "Operation"},
    ]
    assert (listed[2]["MetricStat"]["Period"], listed[2]["ReturnData"]) == (10, False)


def test_the_trigger_is_a_math_alarms_not_an_empty_one_metric() -> None:
    localstack = {
        "MetricName": "",
        "Namespace": "",
        "Unit": None,
        "Period": 0,
        "EvaluationPeriods": 1,
        "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 0.0,
        "TreatMissingData": "notBreaching",
        "EvaluateLowSampleCountPercentile": "",
        "Dimensions": "",
    }
    alarm = _alarm("m0+m1", _stat("m0", "GetItem"), _stat("m1", "PutItem"))
    shaped = metric_math.math_trigger(localstack, alarm["Metrics"])
    # The keys of an AWS notice of a math alarm (its Trigger holds no single metric).
    assert set(shaped) == {
        "Period",
        "EvaluationPeriods",
        "ComparisonOperator",
        "Threshold",
        "TreatMissingData",
        "EvaluateLowSampleCountPercentile",
        "Metrics",
    }
    assert shaped["Period"] == 10
