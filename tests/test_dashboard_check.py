"""The dashboard-body check accepts AWS's documented examples and names each break."""

from __future__ import annotations

import copy

import pytest

from tests.dashboard_check import problems

# Shaped after "Dashboard Body Structure and Syntax" (CloudWatch API Reference).
VALID = {
    "widgets": [
        {
            "type": "metric",
            "x": 0,
            "y": 0,
            "width": 12,
            "height": 6,
            "properties": {
                "metrics": [
                    ["AWS/EC2", "CPUUtilization", "InstanceId", "i-012345"],
                    [".", "NetworkIn", ".", ".", {"yAxis": "right", "stat": "Sum"}],
                ],
                "period": 300,
                "stat": "Average",
                "region": "us-east-1",
                "title": "EC2 Instance CPU",
            },
        },
        {
            "type": "alarm",
            "x": 12,
            "y": 0,
            "width": 12,
            "height": 6,
            "properties": {"alarms": ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:a"]},
        },
        {
            "type": "text",
            "x": 0,
            "y": 6,
            "width": 24,
            "height": 2,
            "properties": {"markdown": "# hi"},
        },
    ]
}


def test_a_documented_body_is_valid() -> None:
    assert problems(VALID) == []


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        ((0, "type"), "graph", "type 'graph'"),
        ((0, "x"), 20, "24-column grid"),
        ((0, "width"), 25, "width = 25"),
        ((0, "height"), 0, "height = 0"),
        ((0, "properties", "region"), None, "region"),
        ((0, "properties", "period"), 45, "period 45"),
        ((0, "properties", "metrics"), [["AWS/EC2", "CPUUtilization", "InstanceId"]], "pairs"),
        ((0, "properties", "metrics"), [["AWS/EC2", "CPU", {"colour": "red"}]], "'colour'"),
        ((1, "properties", "alarms"), [], "1 to 100"),
        ((1, "properties", "alarms"), ["my-alarm"], "not an alarm ARN"),
        ((2, "properties", "markdown"), None, "markdown"),
    ],
)
def test_each_break_is_named(path: tuple, value: object, says: str) -> None:
    body = copy.deepcopy(VALID)
    target = body["widgets"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    found = problems(body)
    assert any(says in p for p in found), found
