"""Unit tests: every semaphore ASL template renders and validates, with the intended shape."""

from __future__ import annotations

import json

import pytest

from sfn_patterns_localstack.asl import validate

from .render import PREFIX, TEMPLATES, acquire_states, embedded_machine, wrapper_machine

STRATEGIES = ["dynamodb", "oldest-first"]


def test_every_template_is_covered() -> None:
    names = sorted(p.name for p in TEMPLATES.glob("*.tftpl"))
    assert names == [
        "acquire.states.json.tftpl",
        "oldest_first_acquire.states.json.tftpl",
        "oldest_first_release.states.json.tftpl",
        "release.states.json.tftpl",
        "wrapper.states.json.tftpl",
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_embedded_machine_validates(strategy: str) -> None:
    validate(embedded_machine(strategy))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_wrapper_machine_validates(strategy: str) -> None:
    machine = validate(wrapper_machine(strategy))
    run = machine["States"]["Run target"]
    assert run["Resource"] == "arn:aws:states:::states:startExecution.sync:2"
    assert run["Catch"][0]["Next"] == f"{PREFIX}Release after failure"
    assert machine["States"][f"{PREFIX}Release"]["Next"] == "Return target output"


def test_acquire_is_one_atomic_conditional_update() -> None:
    acquire = acquire_states()[f"{PREFIX}Acquire"]
    params = acquire["Parameters"]
    assert acquire["Resource"] == "arn:aws:states:::dynamodb:updateItem"
    # A true `<`, never the sample's `<>`, and never twice for one execution.
    assert "#count < :limit" in params["ConditionExpression"]
    assert "attribute_not_exists(#holder)" in params["ConditionExpression"]
    assert params["ExpressionAttributeValues"][":limit"] == {"N": "3"}
    assert "States.Hash($$.Execution.Id, 'MD5')" in params["ExpressionAttributeNames"]["#holder.$"]
    lease = params["ExpressionAttributeValues"][":lease"]["M"]
    assert set(lease) == {"execution_arn", "acquired_at", "lease_seconds"}
    assert acquire["Catch"][0]["ErrorEquals"] == ["DynamoDB.ConditionalCheckFailedException"]
    # The condition failure is never retried in place: it goes to the bounded wait.
    for retrier in acquire["Retry"]:
        assert "DynamoDB.ConditionalCheckFailedException" not in retrier["ErrorEquals"]
        assert "States.ALL" not in retrier["ErrorEquals"]


def test_wait_is_jittered_and_bounded() -> None:
    states = acquire_states()
    check = states[f"{PREFIX}Check holder"]
    assert check["ResultSelector"]["next_wait_seconds.$"] == "States.MathRandom(5, 15)"
    choice = states[f"{PREFIX}Held or wait?"]["Choices"]
    assert choice[0]["Next"] == "Critical section"
    assert choice[1] == {
        "Variable": "$.semaphore.waited_seconds",
        "NumericGreaterThanEquals": 3600,
        "Next": f"{PREFIX}Acquire timed out",
    }
    assert states[f"{PREFIX}Acquire timed out"]["Error"] == "Semaphore.AcquireTimeout"
    assert states[f"{PREFIX}Wait for a slot"]["Next"] == f"{PREFIX}Acquire"


def test_release_cannot_go_negative_and_failure_is_reraised() -> None:
    machine = embedded_machine()
    states = machine["States"]
    for name in (f"{PREFIX}Release", f"{PREFIX}Release after failure"):
        params = states[name]["Parameters"]
        assert params["UpdateExpression"] == "SET #count = #count - :one REMOVE #holder"
        assert params["ConditionExpression"] == "attribute_exists(#holder)"
    assert states[f"{PREFIX}Release"]["End"] is True
    assert states[f"{PREFIX}Release after failure"]["Next"] == f"{PREFIX}Re-raise"
    reraise = states[f"{PREFIX}Re-raise"]
    assert reraise["ErrorPath"] == "$.semaphore_error.Error"
    assert reraise["CausePath"] == "$.semaphore_error.Cause"


def test_holder_name_matches_the_python_side() -> None:
    from sfn_patterns.semaphore.lease import holder_attribute

    arn = "arn:aws:states:us-east-1:000000000000:execution:m:abc"
    name = holder_attribute(arn)
    assert name.startswith("h_")
    assert len(name) == 2 + 32
    assert json.dumps(name) == json.dumps(name.lower())


def test_validate_rejects_a_broken_fragment() -> None:
    machine = embedded_machine()
    del machine["States"]["Critical section"]
    with pytest.raises(ValueError, match="Critical section"):
        validate(machine)
