"""The offline ASL checks catch what AWS's CreateStateMachine would reject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sfn_patterns_localstack.asl import render_tftpl, validate

REPO_ROOT = Path(__file__).resolve().parents[2]


def _machine(states: dict, start: str = "A") -> str:
    return json.dumps({"StartAt": start, "States": states})


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("{not json", "not JSON"),
        (_machine({"A": {"Type": "Wait", "End": True}}), "invalid ASL"),
        (_machine({"A": {"Type": "Pass", "Next": "B"}}), "goes to unknown 'B'"),
        (_machine({"A": {"Type": "Pass", "End": True}}, start="Z"), "StartAt 'Z'"),
        (
            _machine({"A": {"Type": "Pass", "End": True}, "B": {"Type": "Pass", "End": True}}),
            "unreachable states ['B']",
        ),
        (
            _machine(
                {
                    "A": {
                        "Type": "Map",
                        "ItemProcessor": {
                            "StartAt": "X",
                            "States": {"X": {"Type": "Pass", "Next": "Q"}},
                        },
                        "End": True,
                    }
                }
            ),
            "state A/'X' goes to unknown 'Q'",
        ),
    ],
)
def test_invalid_definitions_are_rejected(definition: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(definition)


def test_render_tftpl_inserts_strings_verbatim_and_numbers_as_json(tmp_path: Path) -> None:
    template = tmp_path / "t.tftpl"
    template.write_text('{"a": "${name}", "b": ${seconds}}')
    assert json.loads(render_tftpl(template, {"name": "x", "seconds": 5})) == {"a": "x", "b": 5}
    with pytest.raises(KeyError):
        render_tftpl(template, {"name": "x"})


def test_smoke_definition_renders_and_validates() -> None:
    definition = render_tftpl(
        REPO_ROOT / "templates/smoke/definition.asl.json.tftpl",
        {"function_arn": "arn:aws:lambda:us-east-1:000000000000:function:f", "partition": "aws"},
    )
    parsed = validate(definition)
    assert parsed["States"]["Echo"]["Parameters"]["Payload.$"] == "$$"
    assert parsed["States"]["Echo"]["Resource"] == "arn:aws:states:::lambda:invoke"
