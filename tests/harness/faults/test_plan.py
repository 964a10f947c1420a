"""Fault plans: a valid document parses; an invalid one fails naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults.plan import PlanError


def _one(**fault: Any) -> dict[str, Any]:
    return {"seed": 1, "faults": [fault]}


THROTTLE = {"service": "dynamodb", "operation": "PutItem", "kind": "throttle"}


def test_a_full_fault_parses_with_every_field() -> None:
    parsed = plans.parse(
        {
            "seed": "run-7",
            "faults": [
                dict(
                    THROTTLE,
                    caller_role="arn:aws:iam::*:role/app-*",
                    resource="orders",
                    probability=0.25,
                    first=3,
                    after_seconds=2,
                    for_seconds=10,
                    message="slow down",
                ),
                {
                    "service": "stepfunctions",
                    "operation": "ListExecutions",
                    "kind": "stale_list",
                    "seconds": 5,
                },
                {
                    "service": "lambda",
                    "operation": "*",
                    "kind": "error",
                    "code": "KMSAccessDeniedException",
                    "status": 502,
                },
            ],
        }
    )
    first, stale, error = parsed.faults
    assert parsed.seed == "run-7"
    assert (first.index, first.probability, first.first, first.after_seconds) == (0, 0.25, 3, 2.0)
    assert (first.for_seconds, first.stage) == (10.0, "request")
    assert first.caller_role == "arn:aws:iam::*:role/app-*"
    assert (stale.index, stale.seconds, stale.stage) == (1, 5.0, "response")
    assert (error.code, error.status, error.operation) == ("KMSAccessDeniedException", 502, "*")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"faults": []}, "seed: required"),
        ({"seed": True, "faults": []}, "seed: must be an integer or a string"),
        ({"seed": 1}, "faults: must be a list"),
        ({"seed": 1, "faults": [], "fault": []}, "fault: unknown field"),
        (_one(**THROTTLE, probabilty=0.5), "faults[0].probabilty: unknown field"),
        (_one(service="dynamodb", kind="throttle"), "faults[0].operation: required"),
        (_one(**dict(THROTTLE, kind="slow")), "faults[0].kind: 'slow' is not one of"),
        (_one(**dict(THROTTLE, service="DynamoDB")), "faults[0].service: 'DynamoDB' is not"),
        (_one(**dict(THROTTLE, operation="put_item")), "faults[0].operation: 'put_item' is"),
        (_one(**THROTTLE, probability=1.5), "faults[0].probability: must be between 0.0 and 1.0"),
        (_one(**THROTTLE, probability="half"), "faults[0].probability: must be a number"),
        (_one(**THROTTLE, first=0), "faults[0].first: must be an integer >= 1"),
        (_one(**THROTTLE, after_seconds=-1), "faults[0].after_seconds: must be >= 0.0"),
        (_one(**THROTTLE, for_seconds="1m"), "faults[0].for_seconds: must be a number"),
        (_one(**dict(THROTTLE, kind="latency")), "faults[0].seconds: required for kind 'latency'"),
        (
            _one(**dict(THROTTLE, kind="stale_list", seconds=1)),
            "faults[0].kind: 'stale_list' applies only to service 'stepfunctions' "
            "operation 'ListExecutions'",
        ),
        (_one(**dict(THROTTLE, kind="error")), "faults[0]: kind 'error' needs 'code' and 'status'"),
        (
            _one(**dict(THROTTLE, kind="error", code="X", status=200)),
            "faults[0].status: must be an HTTP",
        ),
        (_one(**THROTTLE, code="X"), "faults[0].code: only kind 'error' takes"),
        (
            _one(service="lambda", operation="Invoke", kind="kill", caller_role="arn:*"),
            "faults[0].caller_role: kind 'kill' acts on a delivery or an invocation",
        ),
        (_one(**THROTTLE, resource=""), "faults[0].resource: must be a non-empty string"),
        (
            _one(service="stepfunctions", operation="StartExecution", kind="transition_throttle"),
            "faults[0].kind: 'transition_throttle' applies only to service 'stepfunctions' "
            "operation 'StateTransition'",
        ),
        (
            _one(service="stepfunctions", operation="StateTransition", kind="transition_throttle"),
            "faults[0].seconds: required for kind 'transition_throttle'",
        ),
        (
            _one(service="sqs", operation="SendMessage", kind="transaction_conflict"),
            "faults[0].kind: 'transaction_conflict' applies only to service 'dynamodb'",
        ),
        (
            _one(service="dynamodb", operation="Query", kind="transaction_conflict"),
            "faults[0].kind: 'transaction_conflict' applies only to service 'dynamodb' "
            "operations DeleteItem, PutItem, TransactGetItems, TransactWriteItems, "
            "UpdateItem or '*', not 'dynamodb' 'Query'",
        ),
        ({"seed": 1, "faults": [THROTTLE, "throttle"]}, "faults[1]: must be an object"),
    ],
)
def test_an_invalid_plan_names_the_field(document: dict[str, Any], message: str) -> None:
    with pytest.raises(PlanError) as raised:
        plans.parse(document)
    assert message in str(raised.value)


def test_load_names_the_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_one(**THROTTLE)))
    assert plans.load(good).faults[0].kind == "throttle"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_one(**THROTTLE, first=-2)))
    with pytest.raises(PlanError, match=r"bad\.json: faults\[0\]\.first"):
        plans.load(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{seed: 1")
    with pytest.raises(PlanError, match=r"broken\.json: not JSON"):
        plans.load(broken)


@pytest.mark.parametrize(
    ("call", "matches"),
    [
        (("dynamodb", "PutItem", None, "orders"), True),
        (("dynamodb", "GetItem", None, "orders"), False),
        (("sqs", "PutItem", None, "orders"), False),
        (("dynamodb", "PutItem", None, "invoices"), False),
        (("dynamodb", "PutItem", None, None), False),
    ],
)
def test_service_operation_and_resource_must_all_match(call: tuple, matches: bool) -> None:
    fault = plans.parse(_one(**THROTTLE, resource="ord*")).faults[0]
    assert fault.matches(*call) is matches


def test_any_operation_and_a_caller_role_glob() -> None:
    fault = plans.parse(
        _one(
            service="lambda",
            operation="*",
            kind="throttle",
            caller_role="arn:aws:iam::*:role/sfn-*",
        )
    ).faults[0]
    assert fault.matches("lambda", "Invoke", "arn:aws:iam::000000000000:role/sfn-app", None)
    assert fault.matches("lambda", "GetFunction", "arn:aws:iam::1:role/sfn-x", "f")
    assert not fault.matches("lambda", "Invoke", "arn:aws:iam::000000000000:role/other", None)
    assert not fault.matches("lambda", "Invoke", None, None)  # the account itself: no role


def test_a_plan_applied_for_a_block_is_cleared_however_the_block_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sfn_patterns_localstack.emulation.faults import client

    calls: list[str] = []
    monkeypatch.setattr(client, "set_plan", lambda endpoint, plan: calls.append("set") or {})
    monkeypatch.setattr(client, "clear", lambda endpoint: calls.append("clear"))
    with client.applied("http://x", {"seed": 1, "faults": []}):
        assert calls == ["set"]
    with pytest.raises(RuntimeError), client.applied("http://x", {"seed": 1, "faults": []}):
        raise RuntimeError("the test failed inside")
    assert calls == ["set", "clear", "set", "clear"]
