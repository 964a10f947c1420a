"""A throttled state transition waits and is reported; others pass untouched (no LocalStack).

The environment is what LocalStack's interpreter gives a state: only the context
object's state machine id is read.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults import transitions
from sfn_patterns_localstack.emulation.faults.injector import INJECTOR

MACHINE = "arn:aws:states:eu-west-1:123456789012:stateMachine:orders"
OTHER = "arn:aws:states:eu-west-1:123456789012:stateMachine:billing"


def _env(machine: str) -> Any:
    data = {"StateMachine": {"Id": machine, "Name": machine.rsplit(":", 1)[1]}}
    return SimpleNamespace(
        states=SimpleNamespace(context_object=SimpleNamespace(context_object_data=data))
    )


@pytest.fixture
def throttled_orders(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The global injector with one transition_throttle fault (first 2 transitions of
    ``orders``, 1.5 s each); what the listeners heard."""
    fault = {
        "service": "stepfunctions",
        "operation": "StateTransition",
        "kind": "transition_throttle",
        "resource": "*:stateMachine:orders",
        "seconds": 1.5,
        "first": 2,
    }
    INJECTOR.set_plan(plans.parse({"seed": 1, "faults": [fault]}))
    heard: list[tuple] = []
    monkeypatch.setattr(transitions, "LISTENERS", [lambda *args: heard.append(args)])
    yield heard
    INJECTOR.clear()


def test_a_throttled_transition_waits_and_is_reported(throttled_orders: list[tuple]) -> None:
    slept: list[float] = []
    assert transitions.throttle(_env(MACHINE), sleep=slept.append) == 1.5
    assert slept == [1.5]
    assert throttled_orders == [(MACHINE, "123456789012", "eu-west-1")]


def test_other_machines_and_transitions_past_first_pass_untouched(
    throttled_orders: list[tuple],
) -> None:
    slept: list[float] = []
    assert transitions.throttle(_env(OTHER), sleep=slept.append) == 0.0
    for _ in range(3):
        transitions.throttle(_env(MACHINE), sleep=slept.append)
    assert slept == [1.5, 1.5]  # first: 2
    assert [heard[0] for heard in throttled_orders] == [MACHINE, MACHINE]


def test_an_environment_without_a_machine_is_never_throttled(throttled_orders: list) -> None:
    assert transitions.state_machine_arn(SimpleNamespace()) is None
    assert transitions.throttle(SimpleNamespace(), sleep=lambda s: None) == 0.0
    assert throttled_orders == []


def test_a_failing_listener_does_not_stop_the_transition(
    throttled_orders: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("listener bug")

    monkeypatch.setattr(transitions, "LISTENERS", [broken])
    assert transitions.throttle(_env(MACHINE), sleep=lambda s: None) == 1.5
