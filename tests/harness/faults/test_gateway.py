"""The gateway handlers: nothing touched without a plan; each kind's error is the service's."""

from __future__ import annotations

import pytest

from sfn_patterns_localstack.emulation.faults import gateway
from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults.injector import Injector


class Untouchable:
    """A request context that fails the test if a handler reads anything from it."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the handler read context.{name} with no plan loaded")


def test_without_a_plan_the_handlers_return_at_once() -> None:
    gateway.on_request(None, Untouchable(), None, injector=Injector())


def test_the_response_handler_reads_one_attribute_only() -> None:
    class Context:
        def __getattr__(self, name: str) -> object:
            if name == gateway.CONTEXT_ATTRIBUTE:
                raise AttributeError(name)
            raise AssertionError(f"read context.{name}")

    gateway.on_response(None, Context(), None)


def _fault(kind: str, **extra: object) -> plans.Fault:
    document = {"service": "x", "operation": "Op", "kind": kind, **extra}
    return plans.parse({"seed": 1, "faults": [document]}).faults[0]


@pytest.mark.parametrize(
    ("kind", "service", "operation", "code", "status"),
    [
        ("throttle", "dynamodb", "PutItem", "ProvisionedThroughputExceededException", 400),
        (
            "throttle",
            "dynamodb",
            "TransactWriteItems",
            "ProvisionedThroughputExceededException",
            400,
        ),
        ("throttle", "dynamodb", "CreateTable", "ThrottlingException", 400),
        ("throttle", "stepfunctions", "StartExecution", "ThrottlingException", 400),
        ("throttle", "lambda", "Invoke", "TooManyRequestsException", 429),
        ("throttle", "sqs", "SendMessage", "RequestThrottled", 400),
        ("throttle", "events", "PutEvents", "ThrottlingException", 400),
        ("throttle", "scheduler", "CreateSchedule", "ThrottlingException", 429),
        ("throttle", "s3", "PutObject", "SlowDown", 503),
        ("throttle", "sts", "AssumeRole", "Throttling", 400),
        ("internal_error", "lambda", "Invoke", "ServiceException", 500),
        ("internal_error", "dynamodb", "GetItem", "InternalServerError", 500),
        ("internal_error", "stepfunctions", "StartExecution", "InternalFailure", 500),
        ("internal_error", "events", "PutEvents", "InternalException", 500),
        ("unavailable", "stepfunctions", "ListExecutions", "ServiceUnavailable", 503),
    ],
)
def test_each_service_answers_its_own_error(
    kind: str, service: str, operation: str, code: str, status: int
) -> None:
    error = gateway.exception_for(_fault(kind), service, operation)
    assert (error.code, error.status_code, error.sender_fault) == (code, status, status < 500)


def test_kind_error_answers_what_the_plan_says() -> None:
    error = gateway.exception_for(
        _fault("error", code="KMSDisabledException", status=400, message="key disabled"),
        "lambda",
        "Invoke",
    )
    assert (error.code, error.status_code, error.message) == (
        "KMSDisabledException",
        400,
        "key disabled",
    )
