"""The runtime's EMF lines are what the specification says (the harness's parser, which
implements the specification independently, reads them back)."""

from __future__ import annotations

import io
import json

import pytest

from sfn_patterns import metrics
from sfn_patterns_localstack.emulation.metrics import emf


def test_one_line_per_call_under_the_module_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(metrics.NAMESPACE_ENV, "sfn-patterns")
    monkeypatch.setenv(metrics.MODULE_ENV, "orders")
    out = io.StringIO()
    metrics.emit("semaphore", {"SlotsHeld": 3, "OldestWaiterAgeSeconds": (12.5, "Seconds")}, out)
    (line,) = out.getvalue().splitlines()
    data = {d.name: d for d in emf.parse_line(line)}
    assert set(data) == {"SlotsHeld", "OldestWaiterAgeSeconds"}
    held = data["SlotsHeld"]
    assert (held.namespace, held.value, held.unit) == ("sfn-patterns", 3.0, "Count")
    assert held.dimensions == (("Module", "orders"), ("Pattern", "semaphore"))
    assert data["OldestWaiterAgeSeconds"].unit == "Seconds"
    assert json.loads(line)["Module"] == "orders"


def test_nothing_without_the_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(metrics.NAMESPACE_ENV, raising=False)
    out = io.StringIO()
    assert metrics.emit("semaphore", {"SlotsHeld": 1}, out) is None
    assert out.getvalue() == ""


def test_properties_name_the_subject_without_becoming_dimensions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(metrics.NAMESPACE_ENV, "sfn-patterns")
    monkeypatch.setenv(metrics.MODULE_ENV, "nightly")
    out = io.StringIO()
    metrics.emit("dag-aggregate", {"TaskFailures": 1}, out, properties={"Task": "orders"})
    (line,) = out.getvalue().splitlines()
    (failures,) = emf.parse_line(line)
    assert failures.dimensions == (("Module", "nightly"), ("Pattern", "dag-aggregate"))
    assert json.loads(line)["Task"] == "orders"  # in the log event, for Logs Insights
