"""Unit tests: every semaphore ASL template renders and validates, with the intended shape."""

from __future__ import annotations

import json

import pytest

from sfn_patterns_localstack.asl import validate

from .render import PREFIX, TEMPLATES, acquire_states, embedded_machine, wrapper_machine

STRATEGIES = ["callback", "dynamodb", "oldest-first"]
VARIANTS = [
    ("callback", "none"),
    ("dynamodb", "none"),
    ("dynamodb", "fifo"),
    ("oldest-first", "none"),
]


def test_every_template_is_covered() -> None:
    names = sorted(p.name for p in TEMPLATES.glob("*.tftpl"))
    assert names == [
        "acquire.states.json.tftpl",
        "callback_acquire.states.json.tftpl",
        "callback_release.states.json.tftpl",
        "fifo_acquire.states.json.tftpl",
        "oldest_first_acquire.states.json.tftpl",
        "oldest_first_release.states.json.tftpl",
        "release.states.json.tftpl",
        "reraise.states.json.tftpl",
        "wrapper.states.json.tftpl",
    ]


@pytest.mark.parametrize(("strategy", "fairness"), VARIANTS)
def test_embedded_machine_validates(strategy: str, fairness: str) -> None:
    validate(embedded_machine(strategy, fairness))


@pytest.mark.parametrize(("strategy", "fairness"), VARIANTS)
def test_wrapper_machine_validates(strategy: str, fairness: str) -> None:
    machine = validate(wrapper_machine(strategy, fairness=fairness))
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


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_states_errors_are_reraised_under_the_module_name(strategy: str) -> None:
    """A Fail state may not raise States.*: those become Semaphore.CriticalSectionFailed."""
    states = embedded_machine(strategy)["States"]
    reraise = states[f"{PREFIX}Re-raise"]
    assert reraise["Type"] == "Choice"
    assert reraise["Choices"][0]["StringMatches"] == "States.*"
    wrapped = states[reraise["Choices"][0]["Next"]]
    fail = states[wrapped["Next"]]
    assert fail == {
        "Type": "Fail",
        "Comment": fail["Comment"],
        "Error": "Semaphore.CriticalSectionFailed",
        "CausePath": "$.semaphore_error.Cause",
    }
    passthrough = states[reraise["Default"]]
    assert passthrough["ErrorPath"] == "$.semaphore_error.Error"
    assert passthrough["CausePath"] == "$.semaphore_error.Cause"


def test_callback_parks_on_a_task_token_with_a_fallback() -> None:
    states = acquire_states("callback")
    assert set(states) == {f"{PREFIX}Acquire", f"{PREFIX}Re-check"}
    for name, other in (
        (f"{PREFIX}Acquire", f"{PREFIX}Re-check"),
        (f"{PREFIX}Re-check", f"{PREFIX}Acquire"),
    ):
        task = states[name]
        assert task["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
        assert task["Parameters"]["Payload"]["task_token.$"] == "$$.Task.Token"
        assert task["TimeoutSeconds"] == 300
        assert task["Catch"] == [
            {
                "ErrorEquals": ["States.Timeout", "States.HeartbeatTimeout"],
                "ResultPath": None,
                "Next": other,
            }
        ]
        assert task["Next"] == "Critical section"


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


def test_fifo_only_the_head_ticket_takes_a_slot() -> None:
    states = acquire_states(fairness="fifo")
    fast = states[f"{PREFIX}Acquire"]["Parameters"]
    # The fast path admits an arrival only when nobody is queued.
    assert "#served = #next" in fast["ConditionExpression"]
    assert states[f"{PREFIX}Acquire"]["Catch"][0]["Next"] == f"{PREFIX}Take ticket"
    take = states[f"{PREFIX}Take ticket"]
    assert take["Parameters"]["ReturnValues"] == "UPDATED_NEW"
    assert "#next = if_not_exists(#next, :zero) + :one" in take["Parameters"]["UpdateExpression"]
    join = states[f"{PREFIX}Join queue"]["Parameters"]
    assert join["ConditionExpression"] == "#served <= :ticket"
    in_turn = states[f"{PREFIX}Acquire in turn"]["Parameters"]
    assert in_turn["ConditionExpression"].startswith("#served = :ticket AND #count < :limit")
    assert "#served = #served + :one" in in_turn["UpdateExpression"]
    assert in_turn["UpdateExpression"].endswith("REMOVE #mine")
    skip = states[f"{PREFIX}Skip abandoned ticket"]["Parameters"]
    assert skip["ConditionExpression"] == "#served = :head AND attribute_not_exists(#head)"
    # A skip is tried only when the head did not move for a whole wait.
    skip_rule = states[f"{PREFIX}My turn?"]["Choices"][-2]
    assert skip_rule["Next"] == f"{PREFIX}Skip abandoned ticket"
    assert {
        "Variable": "$.semaphore.check.served",
        "NumericEqualsPath": "$.semaphore.last_served",
    } in skip_rule["And"]


def test_fifo_timeout_gives_the_ticket_back() -> None:
    states = acquire_states(fairness="fifo")
    choice = states[f"{PREFIX}My turn?"]["Choices"]
    timeout = next(c for c in choice if c.get("Variable") == "$.semaphore.waited_seconds")
    assert timeout == {
        "Variable": "$.semaphore.waited_seconds",
        "NumericGreaterThanEquals": 3600,
        "Next": f"{PREFIX}Leave queue, timed out",
    }
    leave = states[f"{PREFIX}Leave queue, timed out"]
    assert leave["Parameters"]["UpdateExpression"] == "REMOVE #mine"
    assert leave["Next"] == f"{PREFIX}Acquire timed out"
    assert states[f"{PREFIX}Acquire timed out"]["Error"] == "Semaphore.AcquireTimeout"


def test_fifo_head_polls_at_the_shortest_wait() -> None:
    states = acquire_states(fairness="fifo")
    choice = states[f"{PREFIX}My turn?"]
    assert choice["Choices"][-1] == {
        "Variable": "$.semaphore.check.served",
        "NumericEqualsPath": "$.semaphore.queue.ticket",
        "Next": f"{PREFIX}Count wait, head",
    }
    head = states[f"{PREFIX}Count wait, head"]["Parameters"]
    assert head["wait_seconds"] == 5  # wait_min_seconds
    assert head["waited_seconds.$"] == "States.MathAdd($.semaphore.waited_seconds, 5)"
    assert choice["Default"] == f"{PREFIX}Count wait"
