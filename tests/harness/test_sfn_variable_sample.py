"""fixes.sfn_variable_sample: a JSONPath variable read is answered without the Java VM.

LocalStack 4.14.0's ``StringVariableSample`` is run here in-process, on a real
``VariableStore``, with its JSONata evaluation (the call into the Java VM) replaced by a
recorder. Without the fix every read reaches the recorder, and the first test fails.
The expected values are the variables' own values, written by hand; they are also what
4.14.0 answers on its VM for these values (checked through its Step Functions API when
the fix was written: a machine per reference, outputs compared with and without it).
"""

from __future__ import annotations

from typing import Any

import pytest

from sfn_patterns_localstack.emulation.fixes import sfn_variable_sample

string_expression = pytest.importorskip(
    "localstack.services.stepfunctions.asl.component.common.string.string_expression"
)
from localstack.services.stepfunctions.asl.component.common.query_language import (  # noqa: E402
    QueryLanguageMode,
)
from localstack.services.stepfunctions.asl.eval.variable_store import (  # noqa: E402
    VariableStore,
)

VARIABLES = {
    "polls": 3,
    "doc": {"one": [5], "arr": [7, 8, 9], "objs": [{"k": 1}], "z": None, "f": 1.5, "t": True},
    "name": "job-é-1",
    "quoted": 'say "hi"',
    "escaped": "a\\b",
    "integral": 2.0,
    "big": 2**60,
}


class States:
    """An execution's ``$states`` (read only in JSONata mode): nothing to declare here."""

    @staticmethod
    def to_variable_declarations(variable_references: object) -> str:
        return ""


class Env:
    """What ``_eval_body`` uses of an execution's Environment: its variables and stack."""

    def __init__(self) -> None:
        self.variable_store = VariableStore(VARIABLES)
        self.stack: list[Any] = []
        self.states = States()


@pytest.fixture
def vm_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Apply the fix (undone afterwards) and record each expression sent to the VM."""
    cls = string_expression.StringVariableSample
    monkeypatch.setattr(cls, "_eval_body", cls._eval_body)  # restored on teardown
    assert sfn_variable_sample.apply()
    calls: list[str] = []

    def vm(expression: str) -> Any:
        calls.append(expression)
        return "from the VM"

    monkeypatch.setattr(string_expression, "eval_jsonata_expression", vm)
    return calls


def read(expression: str, mode: QueryLanguageMode = QueryLanguageMode.JSONPath) -> Any:
    env = Env()
    sample = string_expression.StringVariableSample(query_language_mode=mode, expression=expression)
    sample._eval_body(env)
    (value,) = env.stack
    return value


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("$polls", 3),
        ("$name", "job-é-1"),
        ("$doc.one", [5]),
        ("$doc.arr[1]", 8),
        ("$doc.objs[0].k", 1),
        ("$doc.objs[0]", {"k": 1}),
        ("$doc.z", None),
        ("$doc.f", 1.5),
        ("$doc.t", True),
        ("$doc", VARIABLES["doc"]),
    ],
)
def test_a_plain_reference_is_read_in_python(
    vm_calls: list[str], expression: str, expected: Any
) -> None:
    assert read(expression) == expected
    assert vm_calls == []


def test_the_value_read_is_a_copy(vm_calls: list[str]) -> None:
    """A later state changing what it read must not change the variable (4.14.0 decodes a
    new value from the VM's answer)."""
    env = Env()
    sample = string_expression.StringVariableSample(
        query_language_mode=QueryLanguageMode.JSONPath, expression="$doc.arr"
    )
    sample._eval_body(env)
    env.stack[-1].append(10)
    assert env.variable_store.get("doc")["arr"] == [7, 8, 9]


@pytest.mark.parametrize(
    "expression",
    [
        "$doc.nope",  # a missing field: 4.14.0 answers null; AWS fails the state
        "$nothere",  # an unassigned variable
        "$doc.arr[5]",  # an index past the end
        "$polls[0]",  # an index into a number (JSONata treats it as a one-item array)
        "$doc.arr[*]",  # a wildcard
        "$quoted",  # 4.14.0 stores a literal string escaped; its VM decodes it
        "$escaped",
        "$integral",  # JSONata4Java hands 2.0 back as 2
        "$big",  # ... and an integer beyond 2**53 rounded
    ],
)
def test_anything_else_goes_to_the_vm_unchanged(vm_calls: list[str], expression: str) -> None:
    assert read(expression) == "from the VM"
    assert len(vm_calls) == 1 and vm_calls[0].endswith(expression + ")"), vm_calls


def test_jsonata_mode_is_left_to_the_vm(vm_calls: list[str]) -> None:
    assert read("$polls", QueryLanguageMode.JSONata) == "from the VM"
    assert len(vm_calls) == 1
