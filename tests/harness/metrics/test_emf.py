"""EMF lines become the data the specification says, and a broken line none."""

from __future__ import annotations

import json

import pytest

from sfn_patterns_localstack.emulation.metrics import emf, lambda_metrics

# The specification's own example ("Specification: Embedded metric format").
SPEC_EXAMPLE = {
    "_aws": {
        "Timestamp": 1574109732004,
        "CloudWatchMetrics": [
            {
                "Namespace": "lambda-function-metrics",
                "Dimensions": [["functionVersion"]],
                "Metrics": [{"Name": "time", "Unit": "Milliseconds", "StorageResolution": 60}],
            }
        ],
    },
    "functionVersion": "$LATEST",
    "time": 100,
    "requestId": "989ffbf8-9ace-4817-a57c-e4dd734019ee",
}


def test_the_specification_example() -> None:
    (datum,) = emf.parse_line(json.dumps(SPEC_EXAMPLE))
    assert datum.namespace == "lambda-function-metrics"
    assert datum.name == "time"
    assert datum.value == 100.0
    assert datum.unit == "Milliseconds"
    assert datum.storage_resolution == 60
    assert datum.dimensions == (("functionVersion", "$LATEST"),)
    assert datum.timestamp == pytest.approx(1574109732.004)


def test_every_dimension_set_and_every_value() -> None:
    document = {
        "_aws": {
            "Timestamp": 1000,
            "CloudWatchMetrics": [
                {
                    "Namespace": "N",
                    "Dimensions": [["Module", "Task"], ["Module"], []],
                    "Metrics": [{"Name": "Failures"}, {"Name": "Latency", "Unit": "Seconds"}],
                }
            ],
        },
        "Module": "m1",
        "Task": "t1",
        "Failures": 2,
        "Latency": [1, 2.5],
    }
    data = emf.parse_document(document)
    failures = [d for d in data if d.name == "Failures"]
    assert sorted(d.dimensions for d in failures) == [
        (),
        (("Module", "m1"),),
        (("Module", "m1"), ("Task", "t1")),
    ]
    latencies = sorted((d.dimensions, d.value) for d in data if d.name == "Latency")
    assert len(latencies) == 6 and {v for _, v in latencies} == {1.0, 2.5}


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d["_aws"].pop("Timestamp"),
        lambda d: d["_aws"].update(Timestamp="yesterday"),
        lambda d: d["_aws"]["CloudWatchMetrics"][0].update(Namespace=""),
        lambda d: d["_aws"]["CloudWatchMetrics"][0].update(Dimensions=[["missing"]]),
        lambda d: d["_aws"]["CloudWatchMetrics"][0].update(
            Dimensions=[[f"d{i}" for i in range(31)]]
        ),
        lambda d: d["_aws"]["CloudWatchMetrics"][0]["Metrics"][0].update(Unit="Furlongs"),
        lambda d: d["_aws"]["CloudWatchMetrics"][0]["Metrics"][0].update(StorageResolution=5),
        lambda d: d.update(time="fast"),
        lambda d: d.update(time=[1] * 101),
        lambda d: d.update(time=True),
        lambda d: d.update(functionVersion=7),
    ],
)
def test_a_line_that_breaks_a_rule_yields_nothing(breakage) -> None:
    document = json.loads(json.dumps(SPEC_EXAMPLE))
    breakage(document)
    assert emf.parse_line(json.dumps(document)) == []


@pytest.mark.parametrize("line", ["", "plain text", "{not json", '{"a": 1}', "[1, 2]", '"_aws"'])
def test_lines_that_are_not_emf(line: str) -> None:
    assert emf.parse_line(line) == []


def test_an_invoke_gives_its_duration_and_its_emf_lines() -> None:
    logs = (
        "START RequestId: r1 Version: $LATEST\n"
        "plain line\n"
        f"{json.dumps(SPEC_EXAMPLE)}\n"
        "END RequestId: r1\n"
        "REPORT RequestId: r1\tDuration: 1234.50 ms\tMemory Size: 128 MB\n"
    )
    data = lambda_metrics.invoke_data("orders", logs)
    duration = [d for d in data if d.namespace == "AWS/Lambda"]
    assert [(d.name, d.value, d.unit, d.dimensions) for d in duration] == [
        ("Duration", 1234.5, "Milliseconds", (("FunctionName", "orders"),))
    ]
    assert [d.name for d in data if d.namespace == "lambda-function-metrics"] == ["time"]
