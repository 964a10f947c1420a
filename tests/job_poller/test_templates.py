"""The job-poller templates stay renderable by Python as well as by Terraform.

dag-aggregate renders them in Python (sfn_patterns_cli.templating.render_tftpl),
which supports plain ``${name}`` interpolation only; a directive or an escaped
``$${`` would render differently there. That both renderers then agree is checked
on a deployed module in test_two_pollers.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TEMPLATES = sorted(
    (Path(__file__).resolve().parents[2] / "templates" / "job-poller").glob("*.tftpl")
)


@pytest.mark.parametrize("template", TEMPLATES, ids=[t.name for t in TEMPLATES])
def test_template_uses_plain_interpolation_only(template: Path) -> None:
    text = template.read_text()
    assert "%{" not in text
    assert "$${" not in text


def test_every_wait_has_a_template() -> None:
    assert {t.name for t in TEMPLATES} == {
        "definition.asl.json.tftpl",
        "poll-loop.asl.json.tftpl",
        "poll-loop-assign.asl.json.tftpl",
        "poll-retry.asl.json.tftpl",
        "poll-event.asl.json.tftpl",
        "poll-event-sdk.asl.json.tftpl",
    }
